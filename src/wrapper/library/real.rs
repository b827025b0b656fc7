//! A file's real path, found by walking to it under the rule of
//! `trust.rs`: each folder opened relative to the one above it,
//! `O_NOFOLLOW`, and checked; a link is read only where it lies in a
//! folder already checked (so no one else can change where it leads), and
//! its target walked the same way. The path this gives names only folders
//! that passed, so ld.so, resolving it again by name from `/`, finds what
//! the walk saw.
//!
//! Why not `canonicalize()` and then the check: a link another user
//! planted (`/tmp/lib/libeatmydata.so -> /usr/lib/.../libsomething.so`)
//! resolves to a root-owned file in root's folders, which would pass; the
//! choice of *which* file root loads would still be theirs. Here the link
//! itself is refused, as the folder holding it is.

use std::collections::VecDeque;
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use super::at::open_at;
use super::trust::{self, Folder, Shared, Trust};

/// Links followed on one path at most, as the kernel's own limit.
const LINKS: usize = 40;

/// Why a file could not be had.
#[derive(Debug, PartialEq)]
pub enum Refused {
    /// Nothing by that name (on the way or at the end).
    Absent,
    /// There, but the rule refuses it: why.
    Unsafe(String),
}

/// The real path of the regular file at `path` (absolute), when it and
/// every folder and link on the way pass the rule for `trust` (no sticky
/// folder either): a file of a trusted owner, written by it alone.
pub fn file(path: &Path, trust: &Trust) -> Result<PathBuf, Refused> {
    let unsafe_ = Refused::Unsafe;
    let mut todo: VecDeque<OsString> = VecDeque::new();
    let mut components = path.components();
    if components.next() != Some(Component::RootDir) {
        return Err(unsafe_(format!(
            "{} is not an absolute path",
            path.display()
        )));
    }
    todo.extend(components.map(|c| c.as_os_str().to_owned()));
    let root = File::open("/").map_err(|e| unsafe_(plain(&e)))?;
    let meta = root.metadata().map_err(|e| unsafe_(plain(&e)))?;
    let mut stack = vec![Folder {
        fd: root,
        path: PathBuf::from("/"),
        meta,
    }];
    // The first refusal; the walk goes on only to tell a refused file
    // from one that is not there (for which nothing needs saying).
    let mut refused = trust::check(&stack[0], trust, Shared::Refused).err();
    let mut links = 0;
    while let Some(name) = todo.pop_front() {
        if name == "." || name.is_empty() {
            continue;
        }
        if name == ".." {
            if stack.len() > 1 {
                stack.pop();
            }
            continue;
        }
        let dir = stack.last().expect("the root stays");
        let here = dir.path.join(&name);
        let flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let fd = match open_at(&dir.fd, &name, flags, 0) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(Refused::Absent),
            Err(e) => return Err(unsafe_(format!("{}: {}", here.display(), plain(&e)))),
            Ok(fd) => fd,
        };
        let meta = fd.metadata().map_err(|e| unsafe_(plain(&e)))?;
        if meta.file_type().is_symlink() {
            links += 1;
            if links > LINKS {
                return Err(unsafe_(format!("{}: too many links", path.display())));
            }
            let target = read_link(&dir.fd, &name)
                .map_err(|e| unsafe_(format!("{}: {}", here.display(), plain(&e))))?;
            let target = PathBuf::from(target);
            let mut parts = target.components();
            if target.is_absolute() {
                parts.next();
                stack.truncate(1);
            }
            for part in parts.rev() {
                todo.push_front(part.as_os_str().to_owned());
            }
            continue;
        }
        if todo.is_empty() {
            if let Some(why) = refused {
                return Err(unsafe_(why));
            }
            return fits(&meta, trust)
                .map(|()| here.clone())
                .map_err(|why| unsafe_(format!("{} {why}", here.display())));
        }
        if !meta.is_dir() {
            return Err(unsafe_(format!("{} is not a folder", here.display())));
        }
        let folder = Folder {
            fd,
            path: here,
            meta,
        };
        if let Err(why) = trust::check(&folder, trust, Shared::Refused) {
            refused.get_or_insert(why);
        }
        stack.push(folder);
    }
    Err(unsafe_(format!("{} names a folder", path.display())))
}

/// Whether a file found is one the rule lets be loaded.
fn fits(meta: &std::fs::Metadata, trust: &Trust) -> Result<(), String> {
    if !meta.file_type().is_file() {
        return Err("is not a regular file".into());
    }
    if !trust.owns(meta.uid()) {
        return Err(format!("belongs to user {}", meta.uid()));
    }
    if meta.mode() & 0o022 != 0 {
        return Err("is writable by others than its owner".into());
    }
    Ok(())
}

/// `readlinkat(2)` of `name` in `dir`, bounded to `PATH_MAX`.
fn read_link(dir: &File, name: &OsStr) -> io::Result<OsString> {
    let name = CString::new(name.as_bytes()).map_err(|_| io::ErrorKind::InvalidInput)?;
    let mut buffer = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: an open descriptor, a NUL-terminated name, a buffer of ours
    // of the length given.
    let got = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buffer.as_mut_ptr().cast(),
            buffer.len(),
        )
    };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    buffer.truncate(got as usize);
    Ok(OsString::from_vec(buffer))
}

fn plain(error: &io::Error) -> String {
    crate::error::plain(error)
}

#[cfg(test)]
mod tests {
    use super::super::trust::tests::Scratch;
    use super::*;
    use std::fs;
    use std::os::unix::fs::{PermissionsExt, chown, symlink};

    fn caller() -> Trust {
        Trust::caller()
    }

    #[test]
    fn a_link_in_a_safe_folder_is_followed_to_the_real_path() {
        let s = Scratch::new("real-follow");
        fs::create_dir_all(s.0.join("lib/real")).unwrap();
        fs::write(s.0.join("lib/real/libx.so.1.0"), b"x").unwrap();
        fs::set_permissions(
            s.0.join("lib/real/libx.so.1.0"),
            fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        symlink("libx.so.1.0", s.0.join("lib/real/libx.so.1")).unwrap();
        symlink("real/../real", s.0.join("lib/via")).unwrap();
        let found = file(&s.0.join("lib/via/libx.so.1"), &caller());
        assert_eq!(found, Ok(s.0.join("lib/real/libx.so.1.0")));
        assert_eq!(
            file(&s.0.join("lib/none/libx.so"), &caller()),
            Err(Refused::Absent)
        );
    }

    #[test]
    fn a_link_or_a_file_in_a_folder_others_may_write_is_refused() {
        let s = Scratch::new("real-open");
        fs::create_dir_all(s.0.join("safe")).unwrap();
        fs::write(s.0.join("safe/lib.so"), b"x").unwrap();
        fs::create_dir(s.0.join("open")).unwrap();
        fs::set_permissions(s.0.join("open"), fs::Permissions::from_mode(0o1777)).unwrap();
        symlink(s.0.join("safe/lib.so"), s.0.join("open/lib.so")).unwrap();
        let why = format!("{} is writable by every user", s.0.join("open").display());
        assert_eq!(
            file(&s.0.join("open/lib.so"), &caller()),
            Err(Refused::Unsafe(why))
        );
        // Nothing there: nothing to say, whatever the folder.
        assert_eq!(
            file(&s.0.join("open/none.so"), &caller()),
            Err(Refused::Absent)
        );
        // The file itself writable by others.
        fs::set_permissions(s.0.join("safe/lib.so"), fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(
            file(&s.0.join("safe/lib.so"), &caller()),
            Err(Refused::Unsafe(format!(
                "{} is writable by others than its owner",
                s.0.join("safe/lib.so").display()
            )))
        );
    }

    #[test]
    fn someone_elses_file_is_refused() {
        if !Trust::caller().is_root() {
            return; // chown needs root; the tests run as root
        }
        let s = Scratch::new("real-theirs");
        fs::write(s.0.join("lib.so"), b"x").unwrap();
        fs::set_permissions(s.0.join("lib.so"), fs::Permissions::from_mode(0o644)).unwrap();
        chown(s.0.join("lib.so"), Some(65534), Some(65534)).unwrap();
        assert_eq!(
            file(&s.0.join("lib.so"), &caller()),
            Err(Refused::Unsafe(format!(
                "{} belongs to user 65534",
                s.0.join("lib.so").display()
            )))
        );
    }
}
