//! The `*at(2)` calls the library's places are made with, relative to the
//! descriptor of a folder already checked, so that no name is looked up
//! again from the root after the check.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::ErrorKind::InvalidInput.into())
}

/// `openat(2)` relative to `dir`.
pub fn open_at(
    dir: &File,
    name: impl AsRef<OsStr>,
    flags: i32,
    mode: libc::mode_t,
) -> io::Result<File> {
    let name = c_name(name.as_ref())?;
    // SAFETY: an open descriptor, a NUL-terminated name; the mode is read
    // only with O_CREAT, as a promoted unsigned int.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: openat just gave us this descriptor, which nothing else owns.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// `mkdirat(2)` in `dir`.
pub fn mkdir_at(dir: &File, name: impl AsRef<OsStr>, mode: libc::mode_t) -> io::Result<()> {
    let name = c_name(name.as_ref())?;
    // SAFETY: an open descriptor and a NUL-terminated name.
    if unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), mode) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `renameat(2)` within `dir`: replaces `to` whatever it is, link or not.
pub fn rename_at(dir: &File, from: impl AsRef<OsStr>, to: impl AsRef<OsStr>) -> io::Result<()> {
    let (from, to) = (c_name(from.as_ref())?, c_name(to.as_ref())?);
    let fd = dir.as_raw_fd();
    // SAFETY: an open descriptor and two NUL-terminated names.
    if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `unlinkat(2)` within `dir`, of a file or (`folder`) an empty folder.
pub fn unlink_at(dir: &File, name: impl AsRef<OsStr>, folder: bool) -> io::Result<()> {
    let name = c_name(name.as_ref())?;
    let flags = if folder { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: an open descriptor and a NUL-terminated name.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `fstatvfs(2)`: whether the file system holding `file` is mounted
/// `noexec`, from which the dynamic loader cannot map a library.
pub fn noexec(file: &File) -> io::Result<bool> {
    // SAFETY: statvfs is plain data, for which all zeroes is a valid value.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: an open descriptor (O_PATH ones too) and a buffer of our own.
    if unsafe { libc::fstatvfs(file.as_raw_fd(), &mut stat) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(stat.f_flag & libc::ST_NOEXEC != 0)
}

/// `n` bytes from `getrandom(2)`, for a name no one can guess.
pub fn random(n: usize) -> io::Result<Vec<u8>> {
    let mut bytes = vec![0u8; n];
    let mut filled = 0;
    while filled < n {
        // SAFETY: the rest of a buffer of our own, its length as given.
        let got = unsafe { libc::getrandom(bytes[filled..].as_mut_ptr().cast(), n - filled, 0) };
        if got < 0 {
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(error);
            }
            continue;
        }
        filled += got as usize;
    }
    Ok(bytes)
}
