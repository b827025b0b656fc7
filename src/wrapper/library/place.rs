//! The placed copy: the carried library written once beside the command,
//! `PREFIX/lib/eatmydata/libeatmydata-<sha256[..16]>.so`, where PREFIX is
//! the parent of the folder holding the command's real path.
//!
//! Written by `configure` and `install` at registration ([`place`]), and
//! by the command or the runtime themselves when they run as root (or as
//! uid 0 of a user namespace) and find it missing ([`get`]). Used only
//! when the rule of `trust.rs` holds for the file and every folder from
//! `/` down to it, and the file holds the carried bytes exactly.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use super::at::{noexec, unlink_at};
use super::carried;
use super::trust::{self, Folder, Shared, Trust};
use super::{Unwritable, at};
use crate::error::Error;

/// The folder under PREFIX.
const FOLDER: [&str; 2] = ["lib", "eatmydata"];

/// Where the placed copy for `command` (its real path) goes.
pub fn placed_path(command: &Path) -> PathBuf {
    let bin = command.parent().unwrap_or(Path::new("/"));
    let prefix = bin.parent().unwrap_or(bin);
    prefix.join(FOLDER.join("/")).join(carried::file_name())
}

/// Writes the placed copy for `command` under `root` ("/", or "/host" for
/// a node installer), unless the right bytes are there already; returns
/// its path as seen from `root`.
pub fn place(root: &Path, command: &Path) -> Result<PathBuf, Error> {
    // From our own root, the command's real path; under another, as given.
    let real;
    let command = if root == Path::new("/") {
        real = command
            .canonicalize()
            .unwrap_or_else(|_| command.to_owned());
        &real
    } else {
        command
    };
    let seen = placed_path(command);
    let refused = |why: String| {
        Error::LibraryUnwritable(Unwritable::Placed {
            path: seen.clone(),
            why,
        })
    };
    if !carried::carried() {
        return Err(refused(NOT_CARRIED.into()));
    }
    get(&under(root, &seen), &Trust::caller(), true).map_err(refused)?;
    Ok(seen)
}

/// Removes every placed copy (of this build or another) beside `command`
/// under `root`, and the folder `lib/eatmydata` if it is then empty;
/// returns the files removed, as seen from `root`.
pub fn unplace(root: &Path, command: &Path) -> Result<Vec<PathBuf>, Error> {
    let seen = placed_path(command);
    let folder = seen.parent().unwrap_or(Path::new("/"));
    let refused = |why: String| {
        Error::LibraryUnwritable(Unwritable::Unplace {
            path: folder.to_owned(),
            why,
        })
    };
    let trust = Trust::caller();
    let lib = folder.parent().unwrap_or(Path::new("/"));
    let lib = match trust::open(&under(root, lib), &trust, Shared::Refused, |_| Ok(())) {
        Ok(lib) => lib,
        Err(_) if !under(root, lib).exists() => return Ok(Vec::new()),
        Err(why) => return Err(refused(why)),
    };
    let name = OsStr::new(FOLDER[1]);
    let dir = match trust::descend(&lib, name, &trust, Shared::Refused, false) {
        Ok(dir) => dir,
        Err(_) if !lib.path.join(name).exists() => return Ok(Vec::new()),
        Err(why) => return Err(refused(why)),
    };
    // The folder is trusted: its names are what we list, until we unlink.
    let entries = std::fs::read_dir(&dir.path).map_err(|e| refused(plain(&e)))?;
    let mut removed = Vec::new();
    for entry in entries {
        let name = entry.map_err(|e| refused(plain(&e)))?.file_name();
        if name.to_str().is_some_and(carried::is_a_copy_name) {
            unlink_at(&dir.fd, &name, false).map_err(|e| refused(plain(&e)))?;
            removed.push(folder.join(name));
        }
    }
    match unlink_at(&lib.fd, name, true) {
        Err(e) if e.raw_os_error() != Some(libc::ENOTEMPTY) => Err(refused(plain(&e))),
        _ => Ok(removed),
    }
}

/// The placed copy at `path`, checked, or (when `write`) written now if
/// missing or other bytes; whether this call wrote it.
pub fn get(path: &Path, trust: &Trust, write: bool) -> Result<bool, String> {
    let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(format!("{} names no file", path.display()));
    };
    let prefix = folder
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("/"));
    let mut dir = trust::open(prefix, trust, Shared::Refused, |_| Ok(()))?;
    for part in FOLDER {
        dir = made(&dir, OsStr::new(part), trust, write)?;
    }
    let name = name.to_str().unwrap_or_default();
    if carried::holds(&dir.fd, name, trust) {
        return Ok(false);
    }
    if !write {
        return Err(format!("{} is not there", path.display()));
    }
    if noexec(&dir.fd).map_err(|e| plain(&e))? {
        return Err(format!(
            "{} is on a file system mounted noexec, which the dynamic loader cannot map from",
            dir.path.display()
        ));
    }
    carried::write(&dir.fd, name).map_err(|e| format!("{}: {}", path.display(), plain(&e)))?;
    Ok(true)
}

/// `name` in `dir`, made mode 0755 when `make` and missing (whatever the
/// umask: programs that drop to another user must reach the library).
pub(super) fn made(
    dir: &Folder,
    name: &OsStr,
    trust: &Trust,
    make: bool,
) -> Result<Folder, String> {
    let existed = dir.path.join(name).symlink_metadata().is_ok();
    let folder = trust::descend(dir, name, trust, Shared::Refused, make)?;
    if make && !existed {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if folder.meta.mode() & 0o7777 != 0o755 {
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
            at::open_at(&folder.fd, ".", flags, 0)
                .and_then(|opened| opened.set_permissions(std::fs::Permissions::from_mode(0o755)))
                .map_err(|e| format!("{}: {}", folder.path.display(), plain(&e)))?;
        }
    }
    Ok(folder)
}

/// `path` (absolute) as seen from `root`, from here.
fn under(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

pub const NOT_CARRIED: &str =
    "this command was built without the library inside it (EATMYDATA_EMBED=0)";

fn plain(error: &io::Error) -> String {
    crate::error::plain(error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::carried::BYTES;
    use std::fs;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    /// A prefix of the test's own in a chain root trusts
    /// ([`base`](super::super::trust::tests::base)), removed on drop.
    struct Prefix(PathBuf);

    impl Prefix {
        fn new(label: &str) -> Prefix {
            let path = super::super::trust::tests::base().join(format!(
                "eatmydata-unit-place-{label}-{}",
                std::process::id()
            ));
            let _ = fs::remove_dir_all(&path);
            fs::create_dir_all(path.join("bin")).unwrap();
            Prefix(path)
        }
    }

    impl Drop for Prefix {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn the_placed_path_is_in_the_commands_prefix() {
        let name = carried::file_name();
        assert_eq!(
            placed_path(Path::new("/usr/local/bin/eatmydata")),
            Path::new("/usr/local/lib/eatmydata").join(&name)
        );
        assert_eq!(
            placed_path(Path::new("/home/u/.local/bin/eatmydata-runtime")),
            Path::new("/home/u/.local/lib/eatmydata").join(&name)
        );
        assert_eq!(
            placed_path(Path::new("/eatmydata")),
            Path::new("/lib/eatmydata").join(&name)
        );
    }

    #[test]
    fn placed_once_then_found_then_unplaced() {
        let prefix = Prefix::new("once");
        let command = prefix.0.join("bin/eatmydata");
        let placed = place(Path::new("/"), &command).unwrap();
        assert_eq!(placed, placed_path(&command));
        assert_eq!(fs::read(&placed).unwrap(), BYTES);
        let meta = fs::metadata(&placed).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o644);
        let folder = fs::metadata(placed.parent().unwrap()).unwrap();
        assert_eq!(folder.mode() & 0o7777, 0o755);
        let trust = Trust::caller();
        assert_eq!(get(&placed, &trust, false), Ok(false));
        assert_eq!(get(&placed, &trust, true), Ok(false), "written again");
        assert_eq!(meta.ino(), fs::metadata(&placed).unwrap().ino());

        // Another build's copy goes too; a file of someone else's stays.
        let old = placed.with_file_name("libeatmydata-0123456789abcdef.so");
        fs::write(&old, b"old").unwrap();
        let kept = placed.with_file_name("notes.txt");
        fs::write(&kept, b"kept").unwrap();
        let mut removed = unplace(Path::new("/"), &command).unwrap();
        removed.sort();
        let mut expected = vec![placed.clone(), old];
        expected.sort();
        assert_eq!(removed, expected);
        assert!(kept.exists());
        fs::remove_file(&kept).unwrap();
        assert_eq!(
            unplace(Path::new("/"), &command).unwrap(),
            Vec::<PathBuf>::new()
        );
        assert!(!placed.parent().unwrap().exists(), "the empty folder stays");
        assert!(prefix.0.join("lib").exists());
    }

    #[test]
    fn placed_under_another_root_as_a_node_installer_does() {
        let host = Prefix::new("host");
        fs::create_dir_all(host.0.join("usr/local/bin")).unwrap();
        let command = Path::new("/usr/local/bin/eatmydata-runtime");
        let seen = place(&host.0, command).unwrap();
        assert_eq!(seen, placed_path(command));
        assert!(seen.starts_with("/usr/local/lib/eatmydata"));
        let on_host = host.0.join(seen.strip_prefix("/").unwrap());
        assert_eq!(fs::read(&on_host).unwrap(), BYTES);
        assert_eq!(unplace(&host.0, command).unwrap(), vec![seen]);
        assert!(!on_host.exists());
    }

    #[test]
    fn other_bytes_are_replaced_by_root_and_refused_by_a_reader() {
        let prefix = Prefix::new("bytes");
        let command = prefix.0.join("bin/eatmydata");
        let placed = place(Path::new("/"), &command).unwrap();
        fs::write(&placed, b"not the library").unwrap();
        let trust = Trust::caller();
        assert!(get(&placed, &trust, false).is_err());
        assert_eq!(get(&placed, &trust, true), Ok(true));
        assert_eq!(fs::read(&placed).unwrap(), BYTES);
    }

    #[test]
    fn a_copy_of_someone_elses_is_refused_then_replaced_by_root() {
        use std::os::unix::fs::chown;
        if !Trust::caller().is_root() {
            return; // chown needs root; the tests run as root
        }
        let prefix = Prefix::new("theirs");
        let command = prefix.0.join("bin/eatmydata");
        let placed = place(Path::new("/"), &command).unwrap();
        chown(&placed, Some(65534), Some(65534)).unwrap();
        let trust = Trust::caller();
        assert!(get(&placed, &trust, false).is_err(), "nobody's copy used");
        assert_eq!(get(&placed, &trust, true), Ok(true));
        assert_eq!(fs::metadata(&placed).unwrap().uid(), 0);
    }

    #[test]
    fn a_folder_others_may_write_is_refused() {
        let prefix = Prefix::new("open");
        let command = prefix.0.join("bin/eatmydata");
        fs::create_dir_all(prefix.0.join("lib")).unwrap();
        fs::set_permissions(prefix.0.join("lib"), fs::Permissions::from_mode(0o777)).unwrap();
        let Err(Error::LibraryUnwritable(Unwritable::Placed { why, .. })) =
            place(Path::new("/"), &command)
        else {
            panic!("placed in a folder every user may write");
        };
        let lib = prefix.0.join("lib").canonicalize().unwrap();
        assert_eq!(why, format!("{} is writable by every user", lib.display()));
        assert!(!prefix.0.join("lib/eatmydata").exists());
    }
}
