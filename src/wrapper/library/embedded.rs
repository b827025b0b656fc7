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

use std::ffi::{CString, OsStr};
use std::fs::{File, Metadata, Permissions};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::{env, fs};

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
    let mut bytes = Vec::with_capacity(BYTES.len());
    let read = (&file).take(BYTES.len() as u64 + 1).read_to_end(&mut bytes);
    read.is_ok() && bytes == BYTES
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

fn c_name(name: &str) -> io::Result<CString> {
    CString::new(OsStr::new(name).as_bytes()).map_err(|_| io::ErrorKind::InvalidInput.into())
}

/// `openat(2)` relative to `dir`.
fn open_at(dir: &File, name: &str, flags: i32, mode: libc::mode_t) -> io::Result<File> {
    let name = c_name(name)?;
    // SAFETY: an open descriptor, a NUL-terminated name; the mode is read
    // only with O_CREAT, as a promoted unsigned int.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: openat just gave us this descriptor, which nothing else owns.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// `renameat(2)` within `dir`: replaces `to` whatever it is, link or not.
fn rename_at(dir: &File, from: &str, to: &str) -> io::Result<()> {
    let (from, to) = (c_name(from)?, c_name(to)?);
    let fd = dir.as_raw_fd();
    // SAFETY: an open descriptor and two NUL-terminated names.
    if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `unlinkat(2)` within `dir`.
fn unlink_at(dir: &File, name: &str) -> io::Result<()> {
    let name = c_name(name)?;
    // SAFETY: an open descriptor and a NUL-terminated name.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn plain(error: &io::Error) -> String {
    crate::error::plain(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_carries_the_hash() {
        if carried() {
            assert_eq!(SHA256.len(), 64);
            assert_eq!(file_name(), format!("libeatmydata-{}.so", &SHA256[..16]));
        }
    }
}
