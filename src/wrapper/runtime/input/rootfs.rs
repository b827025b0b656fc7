//! Reaching a container's own files from the host, as root, without
//! acting on what it put there: a path is resolved below a descriptor of
//! its root as if that were `/` (`openat2`, `RESOLVE_IN_ROOT |
//! RESOLVE_NO_MAGICLINKS`: no link leads out), with `O_PATH`, which opens
//! nothing: a device node the container made (`/dev/watchdog`'s numbers
//! reboot the host) or a FIFO is only named, and `fstat`ed by the caller.
//! What the caller then wants to read it reopens through that descriptor,
//! the very inode it checked.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// An `O_PATH` descriptor of the folder `path`.
pub fn folder(path: &Path) -> io::Result<File> {
    let path = CString::new(path.as_os_str().as_bytes())?;
    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(path.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Finds `path` inside the tree below `root`, as if `root` were `/`: links
/// resolved inside it, magic links refused. An `O_PATH` descriptor: the
/// file is named, not opened (no device's open, no FIFO's wait).
pub fn find_in(root: &File, path: &str) -> io::Result<File> {
    let resolve = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS;
    find(root.as_raw_fd(), Path::new(path), resolve)
}

/// Finds the host's `path`, an absolute path with no link in it (one
/// resolved when the engine made it), following none: a link put in
/// its place since, by a container writing in a folder above it, fails
/// with `ELOOP`. An `O_PATH` descriptor, as [`find_in`]'s.
pub fn find_without_links(path: &Path) -> io::Result<File> {
    let resolve = libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    find(libc::AT_FDCWD, path, resolve)
}

/// `openat2(at, path, O_PATH | O_CLOEXEC, resolve)`: a new descriptor.
fn find(at: libc::c_int, path: &Path, resolve: u64) -> io::Result<File> {
    let name = CString::new(path.as_os_str().as_bytes())?;
    // The kernel's struct open_how, laid out as libc's (whose own is
    // non-exhaustive): flags, mode, resolve.
    let how: [u64; 3] = [(libc::O_PATH | libc::O_CLOEXEC) as u64, 0, resolve];
    // SAFETY: `name` is a C string and `how` an open_how of the size given,
    // both alive for the call; the result is a new descriptor or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            at,
            name.as_ptr(),
            how.as_ptr(),
            std::mem::size_of_val(&how),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
    // SAFETY: openat2 returned a new descriptor that nothing else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Opens for reading the very file an `O_PATH` descriptor names (the same
/// inode, whatever its path has become since), through its entry in
/// `/proc/self/fd`.
pub fn reopen(found: &File) -> io::Result<File> {
    let name = CString::new(format!("/proc/self/fd/{}", found.as_raw_fd()))?;
    let flags = libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK;
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(name.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    let file = unsafe { File::from_raw_fd(fd) };
    let (was, is) = (found.metadata()?, file.metadata()?);
    if (was.dev(), was.ino()) != (is.dev(), is.ino()) || !is.is_file() {
        return Err(io::Error::from_raw_os_error(libc::ESTALE));
    }
    Ok(file)
}
