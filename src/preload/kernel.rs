//! The library's own kernel calls: [`raw`], through libc's `syscall`, and
//! the few files the library opens, reads and appends to for itself
//! (`/proc/self/maps`, the report, the flush list).
//!
//! libc's `syscall` is found with [`Next`]: the library exports `syscall`
//! itself, and a call by name would come back into its own hook.

use core::ffi::{CStr, c_int, c_long};

use crate::errno;
use crate::next::Next;

type SyscallFn = unsafe extern "C" fn(c_long, ...) -> c_long;

// SAFETY: syscall(2)'s prototype.
static SYSCALL: Next<SyscallFn> = unsafe { Next::new(c"syscall") };

/// libc's own `syscall(2)`: -1 with errno set on failure, ENOSYS when libc
/// has none.
pub fn raw(number: c_long, a: [c_long; 6]) -> c_long {
    let Some(next) = SYSCALL.get() else {
        return errno::missing().into();
    };
    // SAFETY: glibc's and musl's syscall read six longs whatever the number;
    // an unknown number fails with ENOSYS.
    unsafe { next(number, a[0], a[1], a[2], a[3], a[4], a[5]) }
}

/// `eatmydata_kernel`: [`raw`] for the shim's own kernel calls.
///
/// # Safety
/// `args` points to six longs, and the call is one the kernel may be asked
/// for with them.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_kernel(number: c_long, args: *const [c_long; 6]) -> c_long {
    // SAFETY: the shim passes an array of six.
    raw(number, unsafe { *args })
}

/// Opens one of the library's own files (`/proc/self/maps`, a report or
/// flush list) by the kernel, close-on-exec: the descriptor, or `None`.
pub fn open_own(path: &CStr, flags: c_int) -> Option<c_long> {
    let flags = flags | libc::O_CLOEXEC;
    let at = libc::AT_FDCWD.into();
    let fd = raw(
        libc::SYS_openat,
        [at, path.as_ptr() as c_long, flags.into(), 0, 0, 0],
    );
    (fd >= 0).then_some(fd)
}

/// Appends `bytes` to the file at `path`, which must exist and be a
/// regular file, with one `write(2)` on an `O_APPEND` descriptor: lines
/// appended by processes at the same time do not interleave. Another
/// root's file at that name (a chroot's) is not written to unless it is a
/// regular file, and a FIFO there never holds the program (`O_NONBLOCK`).
pub fn append_own(path: &CStr, bytes: &[u8]) {
    let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_NONBLOCK | libc::O_NOCTTY;
    if let Some(fd) = open_own(path, flags) {
        if status(fd, c"", libc::AT_EMPTY_PATH).is_some_and(|(kind, _)| kind == libc::S_IFREG) {
            raw(
                libc::SYS_write,
                [fd, bytes.as_ptr() as c_long, bytes.len() as c_long, 0, 0, 0],
            );
        }
        close_own(fd);
    }
}

/// The kind of the file at `path` relative to `dirfd` (`S_IFMT` of its
/// mode), and its `(st_dev, st_ino)`; links followed (`AT_EMPTY_PATH` and
/// an empty path: `dirfd` itself).
pub fn status(dirfd: c_long, path: &CStr, flags: c_int) -> Option<(u32, (u64, u64))> {
    // SAFETY: statx is plain data, all zeroes a valid value.
    let mut stat: libc::statx = unsafe { core::mem::zeroed() };
    let args = [
        dirfd,
        path.as_ptr() as c_long,
        flags.into(),
        (libc::STATX_TYPE | libc::STATX_INO).into(),
        (&raw mut stat) as c_long,
        0,
    ];
    if raw(libc::SYS_statx, args) != 0 {
        return None;
    }
    let dev = (u64::from(stat.stx_dev_major) << 32) | u64::from(stat.stx_dev_minor);
    let kind = u32::from(stat.stx_mode) & libc::S_IFMT;
    Some((kind, (dev, stat.stx_ino)))
}

/// Reads from one of the library's own descriptors into `buffer`.
pub fn read_own(fd: c_long, buffer: &mut [u8]) -> c_long {
    let (at, len) = (buffer.as_mut_ptr() as c_long, buffer.len() as c_long);
    raw(libc::SYS_read, [fd, at, len, 0, 0, 0])
}

/// Closes one of the library's own descriptors.
pub fn close_own(fd: c_long) {
    raw(libc::SYS_close, [fd, 0, 0, 0, 0, 0]);
}
