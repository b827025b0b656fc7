//! The copy of libeatmydata.so this command carries, written out as a file
//! the dynamic loader can map, once per content.
//!
//! `build/embed.rs` builds it and names it by its SHA-256. At run time it
//! goes to the first place that suits, of `$TMPDIR`, `/tmp`, `/var/tmp`
//! and `/dev/shm`: one every user can traverse (a server that drops to
//! another user must load it too), on a file system mounted without
//! `noexec` (the loader cannot map from one), in a folder
//! `eatmydata-<uid>` of our own, mode 0755, as `libeatmydata-<hash>.so`,
//! mode 0644.
//!
//! Shared folders are someone else's ground, so nothing found there is
//! trusted: the folder must be a real folder (no link), ours, and writable
//! by us alone, or the place is passed over; a file already there is used
//! only if it is a regular file, ours, writable by us alone, and holds the
//! embedded bytes exactly. Anything else (a link, someone else's file,
//! other bytes, a half-written copy) is replaced: the copy is written
//! under a fresh name made with `O_EXCL`, then renamed over it, all
//! relative to the folder's descriptor and without following a link.

use std::ffi::CString;
use std::fs::{File, Metadata, Permissions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::{env, fs};

use super::at::{open_at, rename_at, unlink_at};

/// The library, as built with the command (empty if built without it).
pub static BYTES: &[u8] = include_bytes!(env!("EATMYDATA_EMBEDDED_FILE"));
/// Its SHA-256, in hexadecimal (empty if built without it).
pub const SHA256: &str = env!("EATMYDATA_EMBEDDED_SHA256");

/// The places to try, in order.
const PLACES: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

/// Whether this command carries a library.
pub fn carried() -> bool {
    !BYTES.is_empty()
}

/// The file's name: two builds with other bytes never share one.
pub fn file_name() -> String {
    format!("libeatmydata-{}.so", SHA256.get(..16).unwrap_or(SHA256))
}

/// The library as a file: its path and whether this run wrote it, or why
/// each place was passed over.
pub fn write_out() -> Result<(PathBuf, bool), Vec<(PathBuf, String)>> {
    let tmpdir = env::var_os("TMPDIR").filter(|dir| Path::new(dir).is_absolute());
    let places = tmpdir.map(PathBuf::from).into_iter();
    let places = places.chain(PLACES.iter().map(PathBuf::from));
    // SAFETY: geteuid cannot fail and touches no memory.
    let uid = unsafe { libc::geteuid() };
    let mut refused = Vec::new();
    for place in places {
        if refused.iter().any(|(seen, _)| *seen == place) {
            continue;
        }
        match write_at(&place, uid) {
            Ok(found) => return Ok(found),
            Err(why) => refused.push((place, why)),
        }
    }
    Err(refused)
}

/// The library in `place`'s folder for `uid`, checked or written now.
fn write_at(place: &Path, uid: u32) -> Result<(PathBuf, bool), String> {
    let place = place.canonicalize().map_err(|e| plain(&e))?;
    suits(&place, uid)?;
    let folder = place.join(format!("eatmydata-{uid}"));
    let dir = own_folder(&folder, uid)?;
    let name = file_name();
    if holds_the_library(&dir, &name, uid) {
        return Ok((folder.join(name), false));
    }
    write(&dir, &name).map_err(|e| plain(&e))?;
    Ok((folder.join(name), true))
}

/// Whether every user can reach `place`, and the loader map from it.
fn suits(place: &Path, uid: u32) -> Result<(), String> {
    for ancestor in place.ancestors() {
        let meta = fs::metadata(ancestor).map_err(|e| plain(&e))?;
        if meta.mode() & 0o001 == 0 {
            return Err(format!(
                "{} cannot be entered by other users",
                ancestor.display()
            ));
        }
    }
    let meta = fs::metadata(place).map_err(|e| plain(&e))?;
    // Where others may write, only the sticky bit keeps them from
    // renaming our folder away, and only if they do not own the place.
    let sticky = meta.mode() & 0o1000 != 0;
    let owner_trusted = meta.uid() == 0 || meta.uid() == uid;
    if meta.mode() & 0o022 != 0 && !(sticky && owner_trusted) {
        return Err("others can rename what is in it".into());
    }
    if noexec(place)? {
        return Err("mounted noexec, which the dynamic loader cannot map from".into());
    }
    Ok(())
}

/// Whether the file system holding `place` is mounted `noexec`.
fn noexec(place: &Path) -> Result<bool, String> {
    let path = CString::new(place.as_os_str().as_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: statvfs is plain data, for which all zeroes is a valid value.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a statvfs buffer of our own.
    if unsafe { libc::statvfs(path.as_ptr(), &mut stat) } != 0 {
        return Err(plain(&io::Error::last_os_error()));
    }
    Ok(stat.f_flag & libc::ST_NOEXEC != 0)
}

/// Opens our folder at `folder`, making it if it is not there.
fn own_folder(folder: &Path, uid: u32) -> Result<File, String> {
    match fs::DirBuilder::new().mode(0o755).create(folder) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(plain(&e)),
    }
    let dir = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(folder)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP | libc::ENOTDIR) => {
                format!("{} is not a folder (a link?)", folder.display())
            }
            _ => plain(&e),
        })?;
    let meta = dir.metadata().map_err(|e| plain(&e))?;
    if meta.uid() != uid {
        return Err(format!(
            "{} belongs to user {}, not to us",
            folder.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!("{} is writable by others", folder.display()));
    }
    // Made under a tight umask, or by hand: others must get in to load.
    if meta.mode() & 0o7777 != 0o755 {
        dir.set_permissions(Permissions::from_mode(0o755))
            .map_err(|e| plain(&e))?;
    }
    Ok(dir)
}

/// Whether `name` in `dir` is a regular file of `uid`'s that only it can
/// write, everyone can read, and that holds the embedded bytes.
fn holds_the_library(dir: &File, name: &str, uid: u32) -> bool {
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    let Ok(file) = open_at(dir, name, flags, 0) else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    if !trusted(&meta, uid) || meta.len() != BYTES.len() as u64 {
        return false;
    }
    // Its length is ours already (fstat): one read of exactly that many
    // bytes, and no one but us can write to it meanwhile.
    let mut bytes = vec![0; BYTES.len()];
    (&file).read_exact(&mut bytes).is_ok() && bytes == BYTES
}

/// A regular file of `uid`'s, writable by it alone and readable by all.
fn trusted(meta: &Metadata, uid: u32) -> bool {
    meta.file_type().is_file()
        && meta.uid() == uid
        && meta.mode() & 0o022 == 0
        && meta.mode() & 0o444 == 0o444
}

/// Writes the library to a fresh name in `dir`, then renames it to `name`.
fn write(dir: &File, name: &str) -> io::Result<()> {
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let (temporary, mut file) = (0..100)
        .map(|n| format!(".{name}.{}.{n}", std::process::id()))
        .find_map(|temporary| match open_at(dir, &temporary, flags, 0o644) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => None,
            opened => Some(opened.map(|file| (temporary, file))),
        })
        .unwrap_or_else(|| Err(io::ErrorKind::AlreadyExists.into()))?;
    let written = file
        .write_all(BYTES)
        .and_then(|()| file.set_permissions(Permissions::from_mode(0o644)))
        .and_then(|()| rename_at(dir, &temporary, name));
    if written.is_err() {
        let _ = unlink_at(dir, &temporary);
    }
    written
}

fn plain(error: &io::Error) -> String {
    crate::error::plain(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A place of the test's own under /tmp, mode `mode`, removed on drop.
    struct Place(PathBuf);

    impl Place {
        fn new(label: &str, mode: u32) -> Place {
            let path = PathBuf::from(format!(
                "/tmp/eatmydata-unit-{label}-{}",
                std::process::id()
            ));
            let _ = fs::remove_dir_all(&path);
            fs::create_dir(&path).unwrap();
            fs::set_permissions(&path, Permissions::from_mode(mode)).unwrap();
            Place(path)
        }
    }

    impl Drop for Place {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn uid() -> u32 {
        // SAFETY: geteuid cannot fail and touches no memory.
        unsafe { libc::geteuid() }
    }

    #[test]
    fn written_once_then_found() {
        let place = Place::new("once", 0o755);
        let (path, written) = write_at(&place.0, uid()).unwrap();
        assert!(written);
        assert_eq!(path.file_name().unwrap().to_str(), Some(&file_name()[..]));
        assert_eq!(fs::read(&path).unwrap(), BYTES);
        assert_eq!(write_at(&place.0, uid()).unwrap(), (path, false));
    }

    #[test]
    fn a_folder_closed_to_others_is_opened_for_them() {
        let place = Place::new("closed", 0o755);
        let folder = place.0.join(format!("eatmydata-{}", uid()));
        fs::DirBuilder::new().mode(0o700).create(&folder).unwrap();
        fs::set_permissions(&folder, Permissions::from_mode(0o700)).unwrap();
        write_at(&place.0, uid()).unwrap();
        let mode = fs::metadata(&folder).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o755);
    }

    #[test]
    fn a_place_anyone_may_rename_in_is_passed_over() {
        let open = Place::new("open", 0o777);
        let why = write_at(&open.0, uid()).unwrap_err();
        assert_eq!(why, "others can rename what is in it");
        assert!(!open.0.join(format!("eatmydata-{}", uid())).exists());
        // The sticky bit, as /tmp has it, makes it safe.
        let sticky = Place::new("sticky", 0o1777);
        assert!(write_at(&sticky.0, uid()).is_ok());
    }

    #[test]
    fn a_place_others_cannot_enter_is_passed_over() {
        let outer = Place::new("shut", 0o700);
        let inner = outer.0.join("inner");
        fs::create_dir(&inner).unwrap();
        let why = write_at(&inner, uid()).unwrap_err();
        assert_eq!(
            why,
            format!("{} cannot be entered by other users", outer.0.display())
        );
    }

    #[test]
    fn the_name_carries_the_hash() {
        assert!(carried(), "built without the library (EATMYDATA_EMBED=0)");
        assert_eq!(SHA256.len(), 64);
        assert_eq!(file_name(), format!("libeatmydata-{}.so", &SHA256[..16]));
    }
}
