//! The command alone, as `cargo install` leaves it or an image copies it:
//! it writes out the library it carries, safely, once per content, where
//! every program it starts can load it: as root, placed beside itself
//! (`PREFIX/lib/eatmydata/`); as a user without a placed copy, in a
//! temporary place of its own.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Outcome, Run, TempDir, command, probe};

mod home; // root from /tmp, /var/tmp, a user's ~/.cargo/bin: root's home, never a planted library
mod install; // cargo install --path as a user, then SQLite's 1,000 commits eaten
mod mariadb; // eatmydata mariadbd --user=mysql: a server that drops to another user
mod planted; // a link, someone else's file, other bytes, someone else's folder: never used
mod root; // root: the placed copy beside the command, never a shared temporary folder
mod rootless; // uid 0 of a user namespace: the user's placed copy, nothing in /tmp
mod squatted; // eatmydata-<uid> taken in /tmp, /var/tmp and /dev/shm: a private folder
mod swapped; // renameat2(RENAME_EXCHANGE) in a loop in a folder of nobody's: never their library
mod unwritable; // read-only, full, noexec places: exit 125, and why each was passed over

/// A user who is not root, the caller of the tests of the temporary places.
pub const USER: u32 = 4242;
/// The uid of `nobody`, the someone else of these tests.
pub const NOBODY: u32 = 65534;

/// A copy of the command alone in `dir/bin`, no library anywhere near it.
pub fn lonely(dir: &TempDir) -> PathBuf {
    let path = dir.join("bin/eatmydata");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::copy(command(), &path).unwrap();
    path
}

/// The SHA-256 the command's `--version` gives for the library it carries.
pub fn carried_hash() -> String {
    let output = Command::new(command()).arg("--version").output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let hash = text
        .lines()
        .find_map(|line| line.strip_prefix("library: embedded, sha256 "))
        .unwrap_or_else(|| panic!("--version names no embedded library: {text}"));
    assert_eq!(hash.len(), 64, "{text}");
    hash.to_owned()
}

/// The file the command writes its library to, in `place`, run as `uid`.
pub fn written_in(place: &Path, uid: u32) -> PathBuf {
    let hash = carried_hash();
    place.join(format!("eatmydata-{uid}/libeatmydata-{}.so", &hash[..16]))
}

/// The placed copy of the command at `eatmydata` (`PREFIX/bin/eatmydata`).
pub fn placed_for(eatmydata: &Path) -> PathBuf {
    let hash = carried_hash();
    let prefix = eatmydata.parent().unwrap().parent().unwrap();
    prefix.join(format!("lib/eatmydata/libeatmydata-{}.so", &hash[..16]))
}

/// A place (a `TMPDIR`) of the test's own, mode 0755 as `/tmp`'s parents
/// are, owned by `USER`.
pub fn place(dir: &TempDir) -> PathBuf {
    let place = dir.join("tmp");
    fs::create_dir_all(&place).unwrap();
    fs::set_permissions(&place, fs::Permissions::from_mode(0o755)).unwrap();
    chown(&place, Some(USER), Some(USER)).unwrap();
    place
}

/// `eatmydata -v sync_calls FILE` by the command at `eatmydata`, as
/// `USER`, with `TMPDIR` at `place`, under strace; asserts its fsync was
/// eaten.
pub fn eats_with(eatmydata: &Path, place: &Path, data: &Path) -> Outcome {
    fs::write(data, "").unwrap();
    chown(data, Some(USER), Some(USER)).unwrap();
    let eaten = as_user(USER)
        .arg(eatmydata)
        .arg("-v")
        .arg(probe("sync_calls", &[]))
        .arg(data)
        .env("TMPDIR", place)
        .trace(&["fsync"])
        .run()
        .success();
    assert!(eaten.calls_of("fsync").is_empty(), "{:?}", eaten.calls);
    eaten
}

/// A run as `uid` (group the same, no other groups), through setpriv.
pub fn as_user(uid: u32) -> Run {
    Run::new("setpriv").args([
        format!("--reuid={uid}"),
        format!("--regid={uid}"),
        "--clear-groups".into(),
    ])
}

/// `/tmp/eatmydata-<uid>`, where the command run as `uid` with no `TMPDIR`
/// it may use rightly writes the library it carries: removed when dropped
/// if the test made it (nothing there when watched), a folder of `uid`'s,
/// so that the machine's `/tmp` is left as it was.
pub struct MadeInTmp {
    path: Option<PathBuf>,
    uid: u32,
}

impl MadeInTmp {
    pub fn watch(uid: u32) -> MadeInTmp {
        let path = PathBuf::from(format!("/tmp/eatmydata-{uid}"));
        let path = fs::symlink_metadata(&path).is_err().then_some(path);
        MadeInTmp { path, uid }
    }
}

impl Drop for MadeInTmp {
    fn drop(&mut self) {
        let Some(path) = &self.path else {
            return;
        };
        if fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir() && meta.uid() == self.uid) {
            let _ = fs::remove_dir_all(path);
        }
    }
}

/// The control: `sync_calls` alone makes its fsync.
pub fn fsyncs_alone(data: &Path) {
    let plain = Run::new(probe("sync_calls", &[]))
        .arg(data)
        .trace(&["fsync"])
        .run()
        .success();
    assert_eq!(plain.calls_of("fsync").len(), 1, "{:?}", plain.calls);
}

#[test]
fn written_once_per_content_readable_by_all() {
    let dir = TempDir::trusted("written-once");
    let (place, eatmydata) = (place(&dir), lonely(&dir));
    let path = written_in(&place, USER);
    // As a user, under a umask that would keep every other user out.
    let run = || {
        as_user(USER)
            .args(["sh", "-c", "umask 077; exec \"$0\" -v true"])
            .arg(&eatmydata)
            .env("TMPDIR", &place)
            .run()
            .success()
    };
    let first = run();
    assert_eq!(
        first.stderr(),
        format!(
            "eatmydata: running /usr/bin/true with {} preloaded (the copy embedded in \
             eatmydata, written out now)\n",
            path.display()
        )
    );
    let meta = fs::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o7777), (USER, 0o644));
    let folder = fs::metadata(path.parent().unwrap()).unwrap();
    assert_eq!((folder.uid(), folder.mode() & 0o7777), (USER, 0o755));
    // Another user (a server that dropped to its own) can read it all.
    let read = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(read.stdout, fs::read(&path).unwrap());

    let second = run();
    assert!(
        second
            .stderr()
            .ends_with("preloaded (the copy embedded in eatmydata)\n"),
        "{}",
        second.stderr()
    );
    assert_eq!(
        fs::metadata(&path).unwrap().ino(),
        meta.ino(),
        "written again"
    );
    assert!(!placed_for(&eatmydata).exists(), "a user placed a copy");
}
