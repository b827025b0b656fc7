//! Keep by mount for the command (`--keep PATH`, `--only PATH`): the paths
//! checked before anything runs, the values of `EATMYDATA_KEEP` and
//! `EATMYDATA_ONLY` the command is given (`protocol.rs` defines their
//! format), and the [`Scope`] the seccomp supervisor applies for programs
//! the library cannot reach, read by the library's own reading
//! (`Scope::learn`): a list with an entry that cannot be read keeps every
//! sync, and [`said`] tells which entry and why.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use crate::durability::mount::{Mount, Scope};
use crate::error::Error;
use crate::protocol::{self, BadEntry, Unreadable, mount_path_ok};

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
/// `paths`. The inherited value is passed on as it was, whatever it holds:
/// an entry in it that cannot be read is read so again, by the library
/// and the supervisor alike, and keeps every sync.
pub fn value(inherited: Option<&OsStr>, paths: &[PathBuf]) -> OsString {
    let inherited = inherited.map(OsStr::as_bytes).filter(|v| !v.is_empty());
    let ours: Vec<&[u8]> = paths
        .iter()
        .map(|path| path.as_os_str().as_bytes())
        .collect();
    let mut out = vec![0; protocol::paths_len(&ours)];
    // `resolve` let no path through that the format cannot hold.
    let len = protocol::write_paths(&mut out, &ours).unwrap_or_default();
    out.truncate(len);
    match (inherited, out.is_empty()) {
        (Some(inherited), true) => OsString::from_vec(inherited.to_vec()),
        (Some(inherited), false) => OsString::from_vec([inherited, b":", &out].concat()),
        (None, _) => OsString::from_vec(out),
    }
}

/// What a user reads of a list that could not be read, `source` naming
/// where it came from (`EATMYDATA_KEEP`, the annotation): which entry,
/// why, and what that means.
pub fn said(source: &str, bad: BadEntry) -> String {
    format!(
        "{source} entry {:?} {}: every sync is kept",
        String::from_utf8_lossy(bad.entry),
        bad.why.words()
    )
}

/// [`said`] of a list one of the variables holds.
pub fn said_of(unread: Unreadable) -> String {
    said(unread.list.variable(), unread.bad)
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
/// namespace (a program that makes one of its own is judged by ours); and
/// when one could not be read, what a user reads of it ([`said`]).
pub fn scope(keep: Option<&OsStr>, only: Option<&OsStr>) -> (Scope, Option<String>) {
    let keep = keep.map(OsStr::as_bytes).unwrap_or_default();
    let only = only.map(OsStr::as_bytes).unwrap_or_default();
    let (scope, unread) = Scope::learn(keep, only, mount_of);
    (scope, unread.map(said_of))
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
        assert_eq!(value(Some(OsStr::new("")), &paths), "/b:/c");
        assert_eq!(value(Some(OsStr::new("/a")), &paths), "/a:/b:/c");
        // What cannot be read stays so: it keeps every sync.
        assert_eq!(value(Some(OsStr::new("/a:")), &paths), "/a::/b:/c");
        assert_eq!(value(Some(OsStr::new("rel")), &paths), "rel:/b:/c");
        assert_eq!(value(Some(OsStr::new("/a:")), &[]), "/a:");
    }

    #[test]
    fn the_scope_is_the_librarys() {
        assert_eq!(scope(None, None), (Scope::ALL, None));
        let root = mount_of(b"/").unwrap();
        let (kept, said) = scope(Some(OsStr::new("/")), None);
        assert_eq!(said, None);
        assert!(!kept.eats(Some(root)));
        let proc_mount = mount_of(b"/proc/self").unwrap();
        assert!(kept.eats(Some(proc_mount)));
        let (only, _) = scope(None, Some(OsStr::new("/proc")));
        assert!(only.eats(Some(proc_mount)) && !only.eats(Some(root)));
        for (keep, only, told) in [
            (
                "/no/such/place",
                "",
                r#"EATMYDATA_KEEP entry "/no/such/place" names no mount"#,
            ),
            ("data", "", r#"EATMYDATA_KEEP entry "data" is relative"#),
            (
                "/proc:",
                "",
                r#"EATMYDATA_KEEP entry "/proc:" cannot be parsed"#,
            ),
            ("/", "proc", r#"EATMYDATA_ONLY entry "proc" is relative"#),
        ] {
            let (gone, said) = scope(Some(OsStr::new(keep)), Some(OsStr::new(only)));
            assert_eq!(gone, Scope::NONE, "unsure is durable");
            let said = said.unwrap();
            assert!(said.starts_with(told), "{said}");
            assert!(said.ends_with(": every sync is kept"), "{said}");
        }
    }
}
