//! Where a test makes the folders root must trust (the rule for root's
//! home, `src/wrapper/library/mod.rs`: every folder from `/` down root's
//! and writable by root alone), on a disk. One answer for the library's
//! unit tests (`src/wrapper/library/trust.rs` includes this file with
//! `#[path]`) and the integration tests (`TempDir::trusted`).
//!
//! - Beside the test's own files, when root could trust that chain (a
//!   checkout in a folder of root's), or when the tests do not run as
//!   root.
//! - Else (a checkout under `/tmp` or `/var/tmp`, sticky and writable by
//!   every user, or in a user's home): `/var/lib/eatmydata-test/PID`, a
//!   folder of root's, mode 0755 so that another user may pass through,
//!   named by the process (each test is a process of its own under
//!   nextest). Removed at exit; those of processes that are gone (killed
//!   past a time limit) at the next process's first use. Not under `/run`
//!   or `/dev/shm`: those are tmpfs, where a sync reaches no disk, and
//!   some tests need a disk's file system.
//!
//! Both also when another user could not pass through a folder above
//! (a checkout under `/root`, mode 0700): the tests run the command, the
//! probes and servers as other users, who must reach what they are given.
//!
//! The sweep of folders named by pid and their removal (mounts first) are
//! `home.rs`'s too, for the homes under `/run`.

use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The folder of the processes' folders: root's, on a disk, and not the
/// machine's `/var/lib/eatmydata`.
pub const PARENT: &str = "/var/lib/eatmydata-test";

/// Where this process makes folders root must trust: `beside` (where the
/// test makes its folders otherwise; it must exist) when root could trust
/// it and every user pass through it, or the caller is not root, else
/// [`own`].
pub fn base(beside: &Path) -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || (root_trusts(beside) && others_pass(beside)) {
        return beside.to_owned();
    }
    own()
}

/// This process's folder under [`PARENT`], made on first use.
pub fn own() -> PathBuf {
    static MADE: OnceLock<PathBuf> = OnceLock::new();
    MADE.get_or_init(make).clone()
}

/// Whether every user may pass through `folder` (its real path) and every
/// folder above it.
pub fn others_pass(folder: &Path) -> bool {
    every_above(folder, |meta| meta.mode() & 0o001 != 0)
}

/// Whether `folder` (its real path) and every folder above it are root's
/// and writable by root alone.
pub fn root_trusts(folder: &Path) -> bool {
    every_above(folder, |meta| meta.uid() == 0 && meta.mode() & 0o022 == 0)
}

/// Whether `holds` for `folder`'s real path and every folder above it.
fn every_above(folder: &Path, holds: impl Fn(&fs::Metadata) -> bool) -> bool {
    let Ok(real) = folder.canonicalize() else {
        return false;
    };
    real.ancestors()
        .all(|above| fs::symlink_metadata(above).is_ok_and(|meta| holds(&meta)))
}

/// This process's folder under [`PARENT`], both mode 0755; removed at exit.
fn make() -> PathBuf {
    let ours = Path::new(PARENT).join(std::process::id().to_string());
    // Another process removes the parent when it leaves it empty, maybe
    // between our two folders: a few tries.
    for _ in 0..10 {
        let _ = fs::create_dir(PARENT);
        match fs::create_dir(&ours) {
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            _ => break,
        }
    }
    for folder in [Path::new(PARENT), &ours] {
        fs::set_permissions(folder, fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("make {}: {e}", folder.display()));
    }
    sweep(Path::new(PARENT), "", remove);
    // SAFETY: registers a plain function with no arguments.
    unsafe { libc::atexit(remove_ours) };
    ours
}

/// Removes this process's folder at exit, and the parent when empty.
extern "C" fn remove_ours() {
    remove(&Path::new(PARENT).join(std::process::id().to_string()));
    let _ = fs::remove_dir(PARENT);
}

/// Removes with `remove` each folder in `parent` named `prefix` and the
/// pid of a process that is gone (ended by a signal, as a test past its
/// time limit is); the homes of `home.rs` are swept the same way.
pub fn sweep(parent: &Path, prefix: &str, remove: fn(&Path)) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let gone = name
            .to_str()
            .and_then(|name| name.strip_prefix(prefix))
            .and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(|pid| !Path::new("/proc").join(pid.to_string()).exists());
        if gone {
            remove(&entry.path());
        }
    }
}

/// Removes `folder` and all below it, first taking away what is mounted
/// there (a test's loop device; the runtime mounts a tmpfs per container
/// in its home's `containers/`, and a test that deletes a container
/// through runc alone leaves it mounted), where `remove_dir_all` cannot
/// take it.
pub fn remove(folder: &Path) {
    let Ok(info) = fs::read_to_string("/proc/self/mountinfo") else {
        let _ = fs::remove_dir_all(folder);
        return;
    };
    let mut below: Vec<PathBuf> = info
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(PathBuf::from)
        .filter(|point| point.starts_with(folder) && point != folder)
        .collect();
    // The deepest first.
    below.sort_by_key(|point| std::cmp::Reverse(point.components().count()));
    for point in below {
        let Ok(point) = std::ffi::CString::new(point.into_os_string().into_encoded_bytes()) else {
            continue;
        };
        // SAFETY: a NUL-terminated path; umount2 reads it and nothing else.
        unsafe { libc::umount2(point.as_ptr(), libc::MNT_DETACH) };
    }
    let _ = fs::remove_dir_all(folder);
}
