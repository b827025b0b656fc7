//! `io_uring_setup(2)` and the mmaps of a ring, through libc's
//! `syscall()` and `mmap()` (fio's own engine does both): the ring is
//! learnt from its flags and `sq_off`, then from where its SQ ring and
//! entries are mapped ([`super::rings`]), for [`super::enter`].
//!
//! SQPOLL: a kernel thread would read published entries with no call at
//! all, so a ring that asks for it is made without it (with `SQ_AFF` and
//! `SINGLE_ISSUER`, which only mean something with it), when the kernel
//! would accept the flags either way. The program gets its own flags back
//! in its `io_uring_params`, and the ring's `IORING_SQ_NEED_WAKEUP` is set
//! for good: a program that follows SQPOLL's rule (check that flag, and
//! wake the thread with `io_uring_enter` when it is set) enters the kernel
//! after queuing, and that call submits every pending entry and answers
//! `to_submit`, as an SQPOLL ring does. A program that queues and never
//! enters would hang without eatmydata too, once its thread idles. A ring
//! with `IOPOLL`, whose completions the thread would reap, keeps SQPOLL and
//! is not learnt: its thread may read an entry at any time.

use core::ffi::{c_int, c_long};
use core::sync::atomic::{AtomicU32, Ordering};

use super::SETUP_SQE_MIXED;
use super::rings::{self, SQPOLL_DROPPED};
use crate::caller::{copy_from_caller, copy_to_caller};
use crate::errno;
use crate::kernel::{close_own, raw};

const SETUP_IOPOLL: u32 = 1;
const SETUP_SQPOLL: u32 = 1 << 1;
const SETUP_SQ_AFF: u32 = 1 << 2;
const SETUP_COOP_TASKRUN: u32 = 1 << 8;
const SETUP_TASKRUN_FLAG: u32 = 1 << 9;
const SETUP_SINGLE_ISSUER: u32 = 1 << 12;
const SETUP_DEFER_TASKRUN: u32 = 1 << 13;
const SETUP_NO_MMAP: u32 = 1 << 14;
const SETUP_REGISTERED_FD_ONLY: u32 = 1 << 15;
const SETUP_SQ_REWIND: u32 = 1 << 20;
const SQ_NEED_WAKEUP: u32 = 1;

/// Whether a ring made with `flags` can be learnt: not one in the
/// program's own memory (`NO_MMAP`), one with no descriptor
/// (`REGISTERED_FD_ONLY`), entries of mixed sizes, `SQ_REWIND`, or flags
/// of kernels to come.
pub const fn learnable(flags: u32) -> bool {
    let unknown = !0u32 << 21;
    flags
        & (SETUP_NO_MMAP
            | SETUP_REGISTERED_FD_ONLY
            | SETUP_SQE_MIXED
            | SETUP_SQ_REWIND
            | SQPOLL_DROPPED
            | unknown)
        == 0
}

/// The setup flags the kernel is told instead of `flags`, when SQPOLL is
/// taken out: only where the kernel accepts the flags with SQPOLL and
/// without it alike (it refuses the task-run flags beside SQPOLL), and not
/// for `IOPOLL`.
pub const fn without_sqpoll(flags: u32) -> Option<u32> {
    let refused = SETUP_COOP_TASKRUN | SETUP_TASKRUN_FLAG | SETUP_DEFER_TASKRUN;
    if flags & SETUP_SQPOLL == 0 || flags & (SETUP_IOPOLL | refused) != 0 {
        return None;
    }
    Some(flags & !(SETUP_SQPOLL | SETUP_SQ_AFF | SETUP_SINGLE_ISSUER))
}

/// `struct io_uring_params` as 30 u32: `sq_entries`, `cq_entries`,
/// `flags`, ..., then `sq_off` from index 10 and `cq_off` from 20.
type Params = [u32; 30];
const P_SQ_ENTRIES: usize = 0;
const P_FLAGS: usize = 2;
const P_SQ_OFF: usize = 10;

fn read_params(at: usize) -> Option<Params> {
    let mut bytes = [0u8; 120];
    copy_from_caller(&mut bytes, at).then(|| {
        let mut params = [0u32; 30];
        for (value, chunk) in params.iter_mut().zip(bytes.chunks_exact(4)) {
            *value = u32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        params
    })
}

fn params_bytes(params: &Params) -> [u8; 120] {
    let mut bytes = [0u8; 120];
    for (chunk, value) in bytes.chunks_exact_mut(4).zip(params) {
        chunk.copy_from_slice(&value.to_ne_bytes());
    }
    bytes
}

/// `io_uring_setup(entries, params)`: SQPOLL taken out where it can be,
/// and the ring noted.
pub fn setup(a: [c_long; 6]) -> c_long {
    let [entries, at, ..] = a;
    let Some(asked) = read_params(at as usize) else {
        return raw(libc::SYS_io_uring_setup, a); // the kernel's EFAULT
    };
    let flags = asked[P_FLAGS];
    if !learnable(flags) {
        return raw(libc::SYS_io_uring_setup, a);
    }
    let (fd, given) = match without_sqpoll(flags) {
        None => (raw(libc::SYS_io_uring_setup, a), flags),
        Some(given) => match made_without_sqpoll(entries, at as usize, asked, given) {
            Some(fd) => (fd, given | SQPOLL_DROPPED),
            None => return -1,
        },
    };
    // A ring that keeps SQPOLL (with IOPOLL) is read by its kernel thread
    // at any time: never written here.
    if fd >= 0
        && given & SETUP_SQPOLL == 0
        && let Some(params) = read_params(at as usize)
    {
        let offsets = [0, 1, 2, 3, 4, 5, 6].map(|i| params[P_SQ_OFF + i]);
        rings::set_up(fd as i32, given, params[P_SQ_ENTRIES], offsets);
    }
    fd
}

/// The ring made with `given` in a copy of the program's params, which
/// then get what the kernel wrote back, with the program's own flags.
/// `None` (errno set) when the kernel refuses, or the params cannot be
/// written back (the kernel's EFAULT, the ring closed again).
fn made_without_sqpoll(entries: c_long, at: usize, asked: Params, given: u32) -> Option<c_long> {
    let mut params = asked;
    params[P_FLAGS] = given;
    let args = [entries, params.as_mut_ptr() as c_long, 0, 0, 0, 0];
    let fd = raw(libc::SYS_io_uring_setup, args);
    if fd < 0 {
        return None;
    }
    params[P_FLAGS] = asked[P_FLAGS];
    if !copy_to_caller(at, &params_bytes(&params)) {
        close_own(fd);
        errno::set(libc::EFAULT);
        return None;
    }
    Some(fd)
}

/// The mmap of a ring seen (`len` bytes at `at`, from `fd` at `offset`):
/// noted when `fd` is an io_uring the library saw set up.
pub fn mapped(at: usize, len: usize, fd: c_int, offset: u64) {
    if !matches!(offset, rings::OFF_SQ_RING | rings::OFF_SQES) || rings::find(fd).is_none() {
        return;
    }
    let saved = errno::get();
    if is_io_uring(fd)
        && let Some(flags) = rings::mapped(fd, offset, at, len)
    {
        // SAFETY: the SQ ring was just mapped, `len` bytes long, which
        // covers its flags word (rings::mapped checked); the kernel
        // updates the word atomically, and so does this.
        let word = unsafe { AtomicU32::from_ptr((at + flags) as *mut u32) };
        word.fetch_or(SQ_NEED_WAKEUP, Ordering::AcqRel);
    }
    errno::set(saved);
}

/// Whether `fd` is an io_uring now (the number may have been reused since
/// the setup): `/proc/self/fd/N` says `anon_inode:[io_uring]`.
fn is_io_uring(fd: c_int) -> bool {
    let mut path = *b"/proc/self/fd/0000000000\0";
    let mut n = fd as u32;
    let mut end = 24;
    loop {
        end -= 1;
        path[end] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    path.copy_within(end..25, 14);
    let mut link = [0u8; 32];
    let args = [
        libc::AT_FDCWD.into(),
        path.as_ptr() as c_long,
        link.as_mut_ptr() as c_long,
        link.len() as c_long,
        0,
        0,
    ];
    let len = raw(libc::SYS_readlinkat, args);
    link.get(..len.max(0) as usize) == Some(b"anon_inode:[io_uring]")
}

/// `mmap(2)` by number: a ring's mapping noted, and one mapped over
/// forgotten first.
pub fn mmap(a: [c_long; 6]) -> c_long {
    let [address, len, _, flags, fd, offset] = a;
    if rings::watching() && flags & c_long::from(libc::MAP_FIXED) != 0 {
        rings::unmapping(address as usize, len as usize);
    }
    let at = raw(libc::SYS_mmap, a);
    if at != -1 && fd >= 0 && rings::watching() {
        mapped(at as usize, len as usize, fd as c_int, offset as u64);
    }
    at
}

/// `munmap(2)` by number: a ring mapped there forgotten first.
pub fn munmap(a: [c_long; 6]) -> c_long {
    let [at, len, ..] = a;
    if rings::watching() {
        rings::unmapping(at as usize, len as usize);
    }
    raw(libc::SYS_munmap, a)
}

/// `eatmydata_uring_mapped`: [`mapped`] for the shim's mmap hooks.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_uring_mapped(at: usize, len: usize, fd: c_int, offset: i64) {
    mapped(at, len, fd, offset as u64);
}

/// `eatmydata_uring_unmapping`: [`rings::unmapping`] for the shim's munmap
/// hook and its `MAP_FIXED` mmaps.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_uring_unmapping(at: usize, len: usize) {
    rings::unmapping(at, len);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uring::SETUP_SQE128;
    use crate::uring::rings::SETUP_NO_SQARRAY;

    #[test]
    fn sqpoll_goes_only_where_the_kernel_takes_the_flags_either_way() {
        let cqsize = 1 << 3;
        assert_eq!(without_sqpoll(cqsize), None);
        assert_eq!(without_sqpoll(SETUP_SQPOLL | cqsize), Some(cqsize));
        assert_eq!(
            without_sqpoll(SETUP_SQPOLL | SETUP_SQ_AFF | SETUP_SINGLE_ISSUER),
            Some(0)
        );
        // fio's first tries, which the kernel refuses: still refused.
        assert_eq!(without_sqpoll(SETUP_SQPOLL | SETUP_COOP_TASKRUN), None);
        assert_eq!(without_sqpoll(SETUP_SQPOLL | SETUP_DEFER_TASKRUN), None);
        assert_eq!(without_sqpoll(SETUP_SQPOLL | SETUP_IOPOLL), None);
    }

    #[test]
    fn rings_outside_the_process_or_of_new_kernels_are_not_learnt() {
        assert!(learnable(SETUP_SQPOLL | SETUP_NO_SQARRAY | SETUP_SQE128));
        assert!(!learnable(SETUP_NO_MMAP));
        assert!(!learnable(SETUP_REGISTERED_FD_ONLY));
        assert!(!learnable(SETUP_SQE_MIXED));
        assert!(!learnable(1 << 21));
    }

    #[test]
    fn only_an_io_uring_is_taken_for_one() {
        let mut params = [0u32; 30];
        // SAFETY: a params struct of the kernel's size.
        let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 4, params.as_mut_ptr()) };
        assert!(fd > 2, "io_uring_setup: {fd}");
        assert!(is_io_uring(fd as c_int));
        // SAFETY: our own descriptor.
        unsafe { libc::close(fd as c_int) };
        assert!(!is_io_uring(fd as c_int));
        assert!(!is_io_uring(-1));
        let file = std::fs::File::open("/proc/self/status").unwrap();
        assert!(!is_io_uring(std::os::fd::AsRawFd::as_raw_fd(&file)));
    }
}
