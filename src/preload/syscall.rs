//! `syscall(2)`: programs that call the kernel by number through libc get
//! the same treatment as those that call the named functions. Every number
//! we do not know passes through untouched, with all six arguments.

use core::ffi::{c_int, c_long};
use core::mem;

use crate::next::Next;
use crate::{errno, fcntl, mman, policy, sync};

static SYSCALL: Next = Next::new(c"syscall");

type SyscallFn = unsafe extern "C" fn(c_long, ...) -> c_long;

/// libc's own `syscall(2)`: -1 with errno set on failure. Also how the
/// library makes its own checks, without going through its own hooks.
pub fn raw(number: c_long, a: [c_long; 6]) -> c_long {
    let next = SYSCALL.get();
    if next.is_null() {
        return errno::missing().into();
    }
    // SAFETY: dlsym found libc's `syscall`, whose prototype this is.
    let next: SyscallFn = unsafe { mem::transmute(next) };
    // SAFETY: glibc's syscall reads six longs whatever the number; an unknown
    // number fails with ENOSYS.
    unsafe { next(number, a[0], a[1], a[2], a[3], a[4], a[5]) }
}

pub fn warm_up() {
    SYSCALL.get();
}

/// The size of `struct open_how` we copy to change its flags; a larger one
/// (from a kernel not yet written) passes through unchanged.
const OPEN_HOW_MAX: usize = 64;
const OPEN_HOW_MIN: usize = mem::size_of::<u64>() * 3;

/// `openat2(dirfd, path, how, size)` with the sync flags dropped from `how`.
///
/// # Safety
/// `a` holds the caller's arguments; `how` is read as the kernel would read
/// it, so a wild pointer there faults here rather than returning EFAULT.
unsafe fn openat2(a: [c_long; 6]) -> c_long {
    let (how, size) = (a[2] as *const u8, a[3] as usize);
    if how.is_null() || !(OPEN_HOW_MIN..=OPEN_HOW_MAX).contains(&size) {
        return raw(libc::SYS_openat2, a);
    }
    let mut copy = [0u8; OPEN_HOW_MAX];
    // SAFETY: the caller's `how` spans `size` bytes, which fit in `copy`.
    unsafe { core::ptr::copy_nonoverlapping(how, copy.as_mut_ptr(), size) };
    let mut flags = [0u8; 8];
    flags.copy_from_slice(&copy[..8]);
    let old = u64::from_ne_bytes(flags);
    let new = fcntl::open_flags(old as c_int) as u32 as u64 | (old & !0xffff_ffff);
    if new == old {
        return raw(libc::SYS_openat2, a);
    }
    copy[..8].copy_from_slice(&new.to_ne_bytes());
    raw(
        libc::SYS_openat2,
        [a[0], a[1], copy.as_ptr() as c_long, a[3], a[4], a[5]],
    )
}

/// Replaces the int argument at `at` with `f` of it.
fn with_flags(mut a: [c_long; 6], at: usize, f: fn(c_int) -> c_int) -> [c_long; 6] {
    a[at] = f(a[at] as c_int).into();
    a
}

fn msync_flags(flags: c_int) -> c_int {
    mman::without_sync(flags)
}

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
    let fd = a[0] as c_int;
    match number {
        libc::SYS_fsync | libc::SYS_fdatasync => sync::fsync_status(fd).into(),
        libc::SYS_syncfs => sync::syncfs_status(fd).into(),
        libc::SYS_sync => 0,
        libc::SYS_sync_file_range => {
            sync::sync_file_range_status(fd, a[1], a[2], a[3] as u32).into()
        }
        libc::SYS_msync => raw(number, with_flags(a, 2, msync_flags)),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open => raw(number, with_flags(a, 1, fcntl::open_flags)),
        libc::SYS_openat => raw(number, with_flags(a, 2, fcntl::open_flags)),
        // SAFETY: the arguments are the caller's, for openat2.
        libc::SYS_openat2 => unsafe { openat2(a) },
        libc::SYS_fcntl if a[1] == c_long::from(libc::F_SETFL) => {
            raw(number, with_flags(a, 2, fcntl::setfl_flags))
        }
        _ => raw(number, a),
    }
}
