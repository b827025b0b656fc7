//! `syscall(2)`: programs that call the kernel by number through libc get
//! the same treatment as those that call the named functions, from the same
//! decisions. Every number we do not know passes through untouched, with all
//! six arguments.

use core::ffi::{c_char, c_int, c_long};

use crate::kernel::raw;
use crate::uring::{enter, fixed, setup};
use crate::{linux_aio, mman, open, policy, sync, uio};

/// Replaces the int argument at `at` with `f` of it.
fn with_flags(mut a: [c_long; 6], at: usize, f: impl FnOnce(c_int) -> c_int) -> [c_long; 6] {
    if let Some(arg) = a.get_mut(at) {
        *arg = f(*arg as c_int).into();
    }
    a
}

/// Replaces the int argument at `at` with `f` of the descriptor (the first
/// argument) and it.
fn with_fd_flags(a: [c_long; 6], at: usize, f: fn(c_int, c_int) -> c_int) -> [c_long; 6] {
    let [fd, ..] = a;
    with_flags(a, at, |flags| f(fd as c_int, flags))
}

/// An open by number of the path `path` under `dirfd` with its flags at
/// `at` decided, and the descriptor it returns recorded when they were
/// changed.
fn opened(number: c_long, a: [c_long; 6], dirfd: c_long, path: c_long, at: usize) -> c_long {
    let asked = a.get(at).copied().unwrap_or(0) as c_int;
    let given = open::kept_open_flags(dirfd as c_int, path as *const c_char, asked);
    let fd = raw(number, with_flags(a, at, |_| given));
    open::opened(fd, asked, given)
}

/// The argument that holds `pwritev2(2)`'s flags: after the offset, which
/// the kernel takes in two halves (`pos_l`, `pos_h`) on every ABI.
const PWRITEV2_FLAGS: usize = 5;

/// `eatmydata_syscall`: the shim's `syscall` with its six arguments read.
///
/// # Safety
/// `args` points to six longs; the call is made under syscall(2)'s contract.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_syscall(number: c_long, args: *const [c_long; 6]) -> c_long {
    // SAFETY: the shim passes an array of six.
    let a = unsafe { *args };
    if !policy::eating() {
        return raw(number, a);
    }
    let [first, second, third, fourth, ..] = a;
    let fd = first as c_int;
    match number {
        libc::SYS_fsync | libc::SYS_fdatasync => sync::fsync_status(fd, number).into(),
        libc::SYS_syncfs => sync::syncfs_status(fd).into(),
        libc::SYS_sync => sync::sync_status().into(),
        libc::SYS_sync_file_range => {
            sync::sync_file_range_status(fd, second, third, fourth as u32).into()
        }
        libc::SYS_msync => {
            let (address, length) = (first as usize, second as usize);
            raw(
                number,
                with_flags(a, 2, |flags| mman::msync_flags(address, length, flags)),
            )
        }
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open => opened(number, a, libc::AT_FDCWD.into(), first, 1),
        libc::SYS_openat => opened(number, a, first, second, 2),
        libc::SYS_openat2 => open::openat2(a),
        libc::SYS_fcntl if second == c_long::from(libc::F_SETFL) => {
            raw(number, with_fd_flags(a, 2, open::setfl_flags))
        }
        libc::SYS_pwritev2 => raw(number, with_fd_flags(a, PWRITEV2_FLAGS, uio::rwf_flags)),
        libc::SYS_io_submit => linux_aio::submit(a),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_io_getevents => linux_aio::get_events(number, a),
        linux_aio::SYS_IO_PGETEVENTS => linux_aio::get_events(number, a),
        libc::SYS_io_destroy => linux_aio::destroy(a),
        libc::SYS_io_uring_setup => setup::setup(a),
        libc::SYS_io_uring_enter => enter::enter(a),
        libc::SYS_io_uring_register => fixed::register(a),
        libc::SYS_mmap => setup::mmap(a),
        libc::SYS_munmap => setup::munmap(a),
        _ => raw(number, a),
    }
}
