//! Keep by mount for the command (`--keep PATH`, `--only PATH`): the paths
//! checked before anything runs, the values of `EATMYDATA_KEEP` and
//! `EATMYDATA_ONLY` the command is given (`protocol.rs` defines their
//! format), and the [`Scope`] the seccomp supervisor applies for programs
//! the library cannot reach, resolved as the library resolves it.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use crate::durability::mount::{Mount, Scope};
use crate::error::Error;
use crate::protocol::{self, mount_path_ok, parse_paths};

/// `STATX_MNT_ID` (Linux 5.8): `stx_mnt_id` is filled.
const STATX_MNT_ID: u32 = 0x1000;

/// The paths of `option` (`--keep`, `--only`) as the library will be told
/// them: absolute, their links followed. A path that is not there, or
/// that the variable cannot hold (a colon in it), is bad usage.
pub fn resolve(option: &str, paths: &[OsString]) -> Result<Vec<PathBuf>, Error> {
    paths
        .iter()
        .map(|path| {
            let shown = PathBuf::from(path);
            let found = std::fs::canonicalize(path).map_err(|error| {
                Error::Usage(format!(
                    "{option} {}: {}",
                    shown.display(),
                    crate::error::plain(&error)
                ))
            })?;
            if !mount_path_ok(found.as_os_str().as_bytes()) {
                return Err(Error::Usage(format!(
                    "{option} {}: a path with ':' cannot be named (the list's separator); \
                     name a folder above it on the same mount",
                    found.display()
                )));
            }
            Ok(found)
        })
        .collect()
}

/// The value of a variable holding `inherited`'s entries (if any) and then
/// `paths`, in the format `protocol::write_paths` makes.
pub fn value(inherited: Option<&OsStr>, paths: &[PathBuf]) -> OsString {
    let inherited = inherited.map(OsStr::as_bytes).unwrap_or_default();
    let mut entries: Vec<&[u8]> = parse_paths(inherited).collect();
    entries.extend(paths.iter().map(|path| path.as_os_str().as_bytes()));
    // An inherited entry the format cannot hold again is passed on as it
    // was: the library judges it, as it would have.
    let mut out = vec![0; protocol::paths_len(&entries)];
    match protocol::write_paths(&mut out, &entries) {
        Some(len) => out.truncate(len),
        None => out = entries.join(&protocol::PATH_SEPARATOR),
    }
    OsString::from_vec(out)
}

/// The mount that holds `entry`, as the library finds it (`keep.rs` in
/// the library): `statx` of the path, its mount id where the kernel gives
/// one, else its device.
fn mount_of(entry: &[u8]) -> Option<Mount> {
    if !mount_path_ok(entry) {
        return None;
    }
    let path = CString::new(entry).ok()?;
    // SAFETY: statx is plain data, for which zero is a valid value.
    let mut stat: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a statx buffer.
    let rc = unsafe { libc::statx(libc::AT_FDCWD, path.as_ptr(), 0, STATX_MNT_ID, &mut stat) };
    (rc == 0).then(|| Mount {
        id: (stat.stx_mask & STATX_MNT_ID != 0).then_some(stat.stx_mnt_id),
        dev: (stat.stx_dev_major, stat.stx_dev_minor),
    })
}

/// The scope the values of `EATMYDATA_KEEP` and `EATMYDATA_ONLY` the
/// command runs with make, resolved here, in the program's mount
/// namespace (a program that makes one of its own is judged by ours).
pub fn scope(keep: Option<&OsStr>, only: Option<&OsStr>) -> Scope {
    let mut scope = Scope::ALL;
    let keep = keep.map(OsStr::as_bytes).unwrap_or_default();
    for entry in parse_paths(keep) {
        scope.keep(mount_of(entry));
    }
    if let Some(only) = only.map(OsStr::as_bytes).filter(|value| !value.is_empty()) {
        for entry in parse_paths(only) {
            scope.only(mount_of(entry));
        }
        scope.only(None);
    }
    scope
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_absolute_and_bad_ones_refused() {
        let found = resolve("--keep", &["/proc/self/..".into(), ".".into()]).unwrap();
        assert_eq!(found[0], PathBuf::from("/proc"));
        assert!(found[1].is_absolute());
        let missing = resolve("--keep", &["/no/such/place".into()]).unwrap_err();
        assert_eq!(missing.exit_code(), 2);
        assert!(
            missing.to_string().contains("--keep /no/such/place"),
            "{missing}"
        );
        let dir = std::env::temp_dir().join(format!("keep:{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let colon = resolve("--only", &[dir.clone().into()]);
        std::fs::remove_dir(&dir).unwrap();
        assert!(colon.unwrap_err().to_string().contains("':'"));
    }

    #[test]
    fn values_add_to_what_was_inherited() {
        let paths = [PathBuf::from("/b"), PathBuf::from("/c")];
        assert_eq!(value(None, &paths), "/b:/c");
        assert_eq!(value(Some(OsStr::new("/a:")), &paths), "/a:/b:/c");
        assert_eq!(value(Some(OsStr::new("rel")), &paths), "rel:/b:/c");
        assert_eq!(value(Some(OsStr::new("/a")), &[]), "/a");
    }

    #[test]
    fn the_scope_is_the_librarys() {
        assert!(!scope(None, None).scoped());
        let root = mount_of(b"/").unwrap();
        let kept = scope(Some(OsStr::new("/")), None);
        assert!(!kept.eats(Some(root)));
        let proc_mount = mount_of(b"/proc/self").unwrap();
        assert!(kept.eats(Some(proc_mount)));
        let only = scope(None, Some(OsStr::new("/proc")));
        assert!(only.eats(Some(proc_mount)) && !only.eats(Some(root)));
        let gone = scope(Some(OsStr::new("/no/such/place")), None);
        assert!(!gone.eats(Some(proc_mount)), "unsure is durable");
    }
}
