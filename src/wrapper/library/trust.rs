//! The secure-path rule, as sudo applies it to its `secure_path`: a place
//! the library is read from or written to is used only if every folder
//! from `/` down to it belongs to root or to the caller and no one else
//! can write to it.
//!
//! Why that is enough: to swap a name for another (a link, another
//! folder, with `rename(2)` or `renameat2(RENAME_EXCHANGE)`), one needs
//! write permission on the folder holding the name. When every folder on
//! the path can be written only by root or by the caller, no one else can
//! change what any name on it leads to, now or later. So what this check
//! saw is what the dynamic loader finds when it resolves the same path
//! again, by name, from `/`, in the program it starts.
//!
//! The check itself is made on descriptors, not names: each folder is
//! opened relative to the one above it, already checked, with
//! `O_NOFOLLOW|O_DIRECTORY` (a link is refused, never followed), and its
//! owner and mode read with `fstat` on that descriptor. A swap made while
//! the walk goes on therefore changes nothing it decides: either the name
//! was swapped before we opened it (and we check what we opened), or
//! after (and the folder holding it was writable by someone else, which
//! fails the check on the folder we hold).
//!
//! A folder writable by others is fine only where the caller asks for it
//! (`Shared::Sticky`, the temporary places of a non-root caller), if it
//! has the sticky bit: there no one but a name's owner, or the folder's
//! (root, or the caller), can rename or remove it, and the next folder
//! down must be the caller's or root's. A group may write only when it is
//! root's group.
//!
//! Inside a user namespace (rootless podman runs the runtime as its uid
//! 0), the kernel shows every id the namespace does not map as the
//! overflow id (65534): the host's root, whose `/`, `/home` and `/usr`
//! are, among them. There the overflow id counts as root. A folder of
//! another host user on the way would pass too; the same check made
//! outside the namespace (`configure`, as the user) sees the real ids.

use std::ffi::OsStr;
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use super::at::{mkdir_at, open_at};

/// Who may own the folders on a trusted path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trust {
    /// The caller's effective uid.
    pub uid: u32,
    /// In a user namespace, the id that unmapped owners show as.
    pub overflow: Option<u32>,
}

impl Trust {
    /// The running process's.
    pub fn caller() -> Trust {
        // SAFETY: geteuid cannot fail and touches no memory.
        let uid = unsafe { libc::geteuid() };
        let overflow = in_user_namespace().then(overflow_uid).flatten();
        Trust { uid, overflow }
    }

    /// Whether a folder or file of `owner`'s may be on the path.
    pub fn owns(&self, owner: u32) -> bool {
        owner == 0 || owner == self.uid || Some(owner) == self.overflow
    }

    /// Whether the caller is root, of the machine or of a user namespace.
    pub fn is_root(&self) -> bool {
        self.uid == 0
    }
}

/// Whether folders others may write to are fine on the way, if sticky.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shared {
    Refused,
    Sticky,
}

/// A folder opened and checked, from `/` down.
#[derive(Debug)]
pub struct Folder {
    /// Opened `O_PATH`: enough to look names up and `fstat`.
    pub fd: File,
    pub path: PathBuf,
    pub meta: Metadata,
}

/// Opens the folder at `path` (absolute, no `..`), checking every folder
/// from `/` down; `each` also sees each one, for checks of the caller's.
pub fn open(
    path: &Path,
    trust: &Trust,
    shared: Shared,
    mut each: impl FnMut(&Folder) -> Result<(), String>,
) -> Result<Folder, String> {
    let mut components = path.components();
    if components.next() != Some(Component::RootDir) {
        return Err(format!("{} is not an absolute path", path.display()));
    }
    let root = File::open("/").map_err(|e| plain(&e))?;
    let meta = root.metadata().map_err(|e| plain(&e))?;
    let mut folder = Folder {
        fd: root,
        path: PathBuf::from("/"),
        meta,
    };
    check(&folder, trust, shared)?;
    each(&folder)?;
    for component in components {
        folder = match component {
            Component::Normal(name) => descend(&folder, name, trust, shared, false)?,
            Component::CurDir => continue,
            _ => return Err(format!("{} goes up with ..", path.display())),
        };
        each(&folder)?;
    }
    Ok(folder)
}

/// Opens `name` in `dir` as a folder, made first (mode 0755) when `make`
/// and missing, and checks it.
pub fn descend(
    dir: &Folder,
    name: &OsStr,
    trust: &Trust,
    shared: Shared,
    make: bool,
) -> Result<Folder, String> {
    let folder = open_child(dir, name, make)?;
    check(&folder, trust, shared)?;
    Ok(folder)
}

/// Opens `name` in `dir` as a folder, without following a link, made
/// first (mode 0755) when `make` and missing; not checked yet.
pub fn open_child(dir: &Folder, name: &OsStr, make: bool) -> Result<Folder, String> {
    let path = dir.path.join(name);
    if make {
        match mkdir_at(&dir.fd, name, 0o755) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
                return Err(format!("cannot make {}: {}", path.display(), plain(&e)));
            }
            _ => {}
        }
    }
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let fd = open_at(&dir.fd, name, flags, 0).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP | libc::ENOTDIR) => {
            format!("{} is not a folder (a link?)", path.display())
        }
        _ => format!("{}: {}", path.display(), plain(&e)),
    })?;
    let meta = fd.metadata().map_err(|e| plain(&e))?;
    // O_PATH|O_NOFOLLOW may open a link itself: refuse anything not a folder.
    if !meta.is_dir() {
        return Err(format!("{} is not a folder (a link?)", path.display()));
    }
    Ok(Folder { fd, path, meta })
}

/// Whether `folder` may be on a trusted path.
pub fn check(folder: &Folder, trust: &Trust, shared: Shared) -> Result<(), String> {
    let (meta, path) = (&folder.meta, folder.path.display());
    if !trust.owns(meta.uid()) {
        return Err(format!("{path} belongs to user {}", meta.uid()));
    }
    let sticky = shared == Shared::Sticky && meta.mode() & 0o1000 != 0;
    if meta.mode() & 0o002 != 0 && !sticky {
        return Err(format!("{path} is writable by every user"));
    }
    if meta.mode() & 0o020 != 0 && meta.gid() != 0 && !sticky {
        return Err(format!("{path} is writable by group {}", meta.gid()));
    }
    Ok(())
}

/// A file's owner and mode as the rule wants them for the library: a
/// regular file of a trusted owner, writable by it alone, readable by all.
pub fn file_fits(meta: &Metadata, trust: &Trust) -> bool {
    meta.file_type().is_file()
        && trust.owns(meta.uid())
        && meta.mode() & 0o022 == 0
        && meta.mode() & 0o444 == 0o444
}

/// Whether this process is in a user namespace other than the machine's:
/// the machine's maps every id to itself.
fn in_user_namespace() -> bool {
    let Ok(file) = File::open("/proc/self/uid_map") else {
        return false;
    };
    let mut map = String::new();
    // A few lines at most; more is not the machine's identity map.
    if file.take(4096).read_to_string(&mut map).is_err() {
        return false;
    }
    map.split_whitespace().collect::<Vec<_>>() != ["0", "0", "4294967295"]
}

/// The id unmapped owners show as (`/proc/sys/kernel/overflowuid`).
fn overflow_uid() -> Option<u32> {
    let file = File::open("/proc/sys/kernel/overflowuid").ok()?;
    let mut text = String::new();
    file.take(32).read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

fn plain(error: &io::Error) -> String {
    crate::error::plain(error)
}

/// Folders root trusts for tests, shared with the integration tests.
#[cfg(test)]
#[path = "../../../tests/integration/common/trusted.rs"]
mod trusted;

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::{PermissionsExt, chown};

    /// Where the tests of this module and its neighbours make their
    /// folders: beside the test binary when root could trust that chain,
    /// else (a checkout in /tmp, /var/tmp or a user's home) a folder of
    /// root's under /var/lib, removed at exit: the integration tests'
    /// answer ([`trusted`]).
    pub fn base() -> PathBuf {
        let here = std::env::current_exe().unwrap();
        trusted::base(here.parent().unwrap())
    }

    /// A folder of the test's own, mode 0755, its real path; removed on
    /// drop (`real.rs`'s and `home.rs`'s tests take it too).
    pub struct Scratch(pub PathBuf);

    impl Scratch {
        pub fn new(label: &str) -> Scratch {
            let path = base().join(format!(
                "eatmydata-unit-trust-{label}-{}",
                std::process::id()
            ));
            let _ = fs::remove_dir_all(&path);
            fs::create_dir(&path).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
            Scratch(path.canonicalize().unwrap())
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn as_root() -> Trust {
        Trust {
            uid: 0,
            overflow: None,
        }
    }

    fn ok(_: &Folder) -> Result<(), String> {
        Ok(())
    }

    #[test]
    fn a_sticky_folder_only_where_asked() {
        let tmp = Path::new("/tmp");
        assert!(open(tmp, &as_root(), Shared::Sticky, ok).is_ok());
        assert_eq!(
            open(tmp, &as_root(), Shared::Refused, ok).unwrap_err(),
            "/tmp is writable by every user"
        );
    }

    #[test]
    fn another_users_folder_on_the_way_is_refused() {
        if !Trust::caller().is_root() {
            return; // chown needs root; the integration tests run as root
        }
        let scratch = Scratch::new("other");
        let theirs = scratch.0.join("theirs");
        fs::create_dir_all(theirs.join("below")).unwrap();
        chown(&theirs, Some(65534), Some(65534)).unwrap();
        let why = open(&theirs.join("below"), &as_root(), Shared::Refused, ok).unwrap_err();
        assert_eq!(why, format!("{} belongs to user 65534", theirs.display()));
        // The same folder, in a user namespace where 65534 stands for root.
        let in_namespace = Trust {
            uid: 0,
            overflow: Some(65534),
        };
        assert!(open(&theirs.join("below"), &in_namespace, Shared::Refused, ok).is_ok());
    }

    #[test]
    fn a_link_on_the_way_is_refused() {
        let scratch = Scratch::new("link");
        fs::create_dir(scratch.0.join("real")).unwrap();
        std::os::unix::fs::symlink(scratch.0.join("real"), scratch.0.join("link")).unwrap();
        let why = open(&scratch.0.join("link"), &as_root(), Shared::Refused, ok).unwrap_err();
        assert_eq!(
            why,
            format!(
                "{} is not a folder (a link?)",
                scratch.0.join("link").display()
            )
        );
    }

    #[test]
    fn a_group_may_write_only_when_it_is_roots() {
        let scratch = Scratch::new("group");
        let shared = scratch.0.join("shared");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o775)).unwrap();
        let trust = Trust::caller();
        let gid = fs::metadata(&shared).unwrap().gid();
        let opened = open(&shared, &trust, Shared::Refused, ok);
        if gid == 0 {
            assert!(opened.is_ok());
        } else {
            assert_eq!(
                opened.unwrap_err(),
                format!("{} is writable by group {gid}", shared.display())
            );
        }
    }
}
