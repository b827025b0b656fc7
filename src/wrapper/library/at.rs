//! The `*at(2)` calls the write-out makes, relative to the descriptor of
//! the folder it checked, so that no name is looked up again from the
//! root after the check.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

fn c_name(name: &str) -> io::Result<CString> {
    CString::new(OsStr::new(name).as_bytes()).map_err(|_| io::ErrorKind::InvalidInput.into())
}

/// `openat(2)` relative to `dir`.
pub fn open_at(dir: &File, name: &str, flags: i32, mode: libc::mode_t) -> io::Result<File> {
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
pub fn rename_at(dir: &File, from: &str, to: &str) -> io::Result<()> {
    let (from, to) = (c_name(from)?, c_name(to)?);
    let fd = dir.as_raw_fd();
    // SAFETY: an open descriptor and two NUL-terminated names.
    if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `unlinkat(2)` within `dir`.
pub fn unlink_at(dir: &File, name: &str) -> io::Result<()> {
    let name = c_name(name)?;
    // SAFETY: an open descriptor and a NUL-terminated name.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
