//! io_uring through libc's `syscall()` and `mmap()` (fio's own engine):
//! the ring is learnt at `io_uring_setup` (its flags and `sq_off`) and at
//! the mmaps of its SQ ring and entries ([`super::rings`]); at each
//! `io_uring_enter` the entries between the kernel's head and the
//! program's tail are rewritten, then the call goes on as made.
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
//! is not rewritten.
//!
//! Fixed files: `io_uring_register` of files (and their updates) is
//! followed for slots 0 to 63, each probed as `fsync(2)` probes a
//! descriptor; any entry or registration that may change slots otherwise
//! (a direct open, accept or close, `FILES_UPDATE`, a file sent by
//! `MSG_RING`) makes the ring's slots unknown, and their syncs are kept.

use core::ffi::{c_int, c_long};
use core::ptr;
use core::sync::atomic::{AtomicU32, Ordering};

use super::rings::{self, ARRAY, HEAD, SETUP_NO_SQARRAY, SQPOLL_DROPPED, TAIL};
use super::{Batch, SETUP_SQE_MIXED, eat};
use crate::caller::{copy_from_caller, copy_to_caller};
use crate::durability::sqe;
use crate::errno;
use crate::kernel::{close_own, raw};
use crate::{policy, sync};

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
const ENTER_REGISTERED_RING: c_long = 1 << 4;

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

/// What an entry does to a ring's fixed files besides using them.
#[derive(Debug, PartialEq, Eq)]
pub enum Slots {
    Same,
    /// Its own ring's slots may change.
    Changed,
    /// Another ring's slots may change (a file sent by `MSG_RING`).
    Sent,
}

/// Whether `entry` may change fixed-file slots when it runs.
pub fn slots_after(entry: &[u8; sqe::SIZE]) -> Slots {
    const ACCEPT: u8 = 13;
    const CLOSE: u8 = 19;
    const FILES_UPDATE: u8 = 20;
    const MSG_RING: u8 = 40;
    const SOCKET: u8 = 45;
    const PIPE: u8 = 62;
    const MSG_SEND_FD: u8 = 1;
    let file_index = entry[sqe::SPLICE_FD_IN..sqe::SPLICE_FD_IN + 4] != [0; 4];
    match entry[sqe::OPCODE] {
        FILES_UPDATE => Slots::Changed,
        ACCEPT | sqe::OP_OPENAT | CLOSE | sqe::OP_OPENAT2 | SOCKET | PIPE if file_index => {
            Slots::Changed
        }
        MSG_RING if entry[sqe::ADDR] == MSG_SEND_FD => Slots::Sent,
        op if op > PIPE => Slots::Changed,
        _ => Slots::Same,
    }
}

/// `io_uring_enter(fd, to_submit, ...)`: the entries the kernel is about to
/// read rewritten, then the call. On a ring whose SQPOLL was dropped,
/// every pending entry is submitted and the answer is `to_submit`.
pub fn enter(a: [c_long; 6]) -> c_long {
    let [fd, to_submit, _, flags, ..] = a;
    let ring = rings::find(fd as i32).filter(|_| flags & ENTER_REGISTERED_RING == 0);
    let Some((ring, view)) = ring.and_then(|ring| Some((ring, ring.view()?))) else {
        return raw(libc::SYS_io_uring_enter, a);
    };
    let sqpoll = view.flags & SQPOLL_DROPPED != 0;
    let Some(batch) = Batch::new(ring.fixed.load(Ordering::Relaxed)) else {
        return raw(libc::SYS_io_uring_enter, a);
    };
    if to_submit == 0 && !sqpoll {
        return raw(libc::SYS_io_uring_enter, a);
    }
    // SAFETY: the SQ ring is mapped (the view says so) and holds its head
    // and tail words, which the kernel and the program update atomically.
    let (head, tail) = unsafe {
        let word = |at: u32| AtomicU32::from_ptr((view.sq_ring + at as usize) as *mut u32);
        (
            word(view.offsets[HEAD]).load(Ordering::Acquire),
            word(view.offsets[TAIL]).load(Ordering::Acquire),
        )
    };
    let pending = tail.wrapping_sub(head);
    if pending > view.entries {
        // Not a state the kernel leaves: its answer, as made.
        return raw(libc::SYS_io_uring_enter, a);
    }
    eat_pending(ring, &view, head, tail, batch);
    if !sqpoll {
        return raw(libc::SYS_io_uring_enter, a);
    }
    let mut all = a;
    all[1] = pending.into();
    let submitted = raw(libc::SYS_io_uring_enter, all);
    if submitted < 0 { submitted } else { to_submit }
}

/// Rewrites the entries from `head` to `tail` not rewritten yet (a
/// submission the kernel took only in part leaves some seen).
fn eat_pending(ring: &rings::Ring, view: &rings::View, head: u32, tail: u32, mut batch: Batch) {
    let seen = ring.seen.load(Ordering::Relaxed);
    let start = if seen.wrapping_sub(head) <= tail.wrapping_sub(head) {
        seen
    } else {
        head
    };
    let entries =
        || (0..tail.wrapping_sub(start)).filter_map(|n| entry_at(view, start.wrapping_add(n)));
    if batch.fixed != 0 {
        for at in entries() {
            // SAFETY: an entry of the mapped array (entry_at), copied.
            let entry = unsafe { ptr::read(at as *const [u8; sqe::SIZE]) };
            match slots_after(&entry) {
                Slots::Same => continue,
                Slots::Changed => ring.fixed.store(0, Ordering::Relaxed),
                Slots::Sent => rings::forget_all_fixed(),
            }
            batch.fixed = 0;
            break;
        }
    }
    for at in entries() {
        // SAFETY: as above; published by the program, not yet read by
        // the kernel, which reads it only in this call.
        unsafe { eat(at, &batch) };
    }
    ring.seen.store(tail, Ordering::Relaxed);
}

/// The address of the entry the kernel takes `n`-th from the ring, if it
/// is one (an index past the array is dropped by the kernel).
fn entry_at(view: &rings::View, n: u32) -> Option<*mut u8> {
    let slot = n & view.entries.wrapping_sub(1);
    let index = if view.flags & SETUP_NO_SQARRAY != 0 {
        slot
    } else {
        let at = view.sq_ring + view.offsets[ARRAY] as usize + 4 * slot as usize;
        // SAFETY: the array is inside the mapped SQ ring (rings::mapped
        // checked its length); the program wrote it before the tail.
        unsafe { AtomicU32::from_ptr(at as *mut u32) }.load(Ordering::Relaxed)
    };
    (index < view.entries).then_some((view.sqes + index as usize * view.entry_size) as *mut u8)
}

const REGISTER_FILES: c_long = 2;
const UNREGISTER_FILES: c_long = 3;
const REGISTER_FILES_UPDATE: c_long = 6;
const REGISTER_FILES2: c_long = 13;
const REGISTER_FILES_UPDATE2: c_long = 14;
const REGISTER_USE_REGISTERED_RING: c_long = 1 << 31;
const FILES_SKIP: i32 = -2;

/// `io_uring_register(fd, opcode, arg, nr)`: made, then the ring's fixed
/// files followed when it registered or updated them.
pub fn register(a: [c_long; 6]) -> c_long {
    let answer = raw(libc::SYS_io_uring_register, a);
    let [fd, opcode, arg, nr, ..] = a;
    let files = matches!(
        opcode & !REGISTER_USE_REGISTERED_RING,
        REGISTER_FILES
            | UNREGISTER_FILES
            | REGISTER_FILES_UPDATE
            | REGISTER_FILES2
            | REGISTER_FILES_UPDATE2
    );
    if !files || answer < 0 {
        return answer;
    }
    let Some(ring) = rings::find(fd as i32).filter(|_| opcode & REGISTER_USE_REGISTERED_RING == 0)
    else {
        rings::forget_all_fixed();
        return answer;
    };
    let fixed = match opcode {
        REGISTER_FILES => disk_slots(0, arg as usize, nr as usize, 0),
        REGISTER_FILES_UPDATE => {
            let mut update = [0u8; 16];
            if copy_from_caller(&mut update, arg as usize) {
                let offset = u32::from_ne_bytes([update[0], update[1], update[2], update[3]]);
                let mut fds = [0u8; 8];
                fds.copy_from_slice(&update[8..]);
                let fds = u64::from_ne_bytes(fds) as usize;
                let before = ring.fixed.load(Ordering::Relaxed);
                disk_slots(offset as usize, fds, answer as usize, before)
            } else {
                0
            }
        }
        _ => 0,
    };
    ring.fixed.store(fixed, Ordering::Relaxed);
    answer
}

/// The fixed slots known to reach a disk after `count` descriptors (at
/// `fds` in the program's memory) went into slots from `first` on, the
/// others as `before` had them.
fn disk_slots(first: usize, fds: usize, count: usize, before: u64) -> u64 {
    let count = count.min(64usize.saturating_sub(first));
    let mut bytes = [0u8; 4 * 64];
    let Some(buffer) = bytes.get_mut(..4 * count) else {
        return 0;
    };
    if !copy_from_caller(buffer, fds) {
        return 0;
    }
    let mut fixed = before;
    for (n, chunk) in buffer.chunks_exact(4).enumerate() {
        let fd = i32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let bit = 1u64 << (first + n);
        if fd == FILES_SKIP {
            continue;
        }
        if fd >= 0 && sync::fsync_would_succeed(fd) {
            fixed |= bit;
        } else {
            fixed &= !bit;
        }
    }
    fixed
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

/// `eatmydata_uring_watching`: whether mmap and munmap must tell
/// [`mapped`] and [`rings::unmapping`], for the shim.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_uring_watching() -> c_int {
    c_int::from(rings::watching() && policy::eating())
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
        assert!(learnable(
            SETUP_SQPOLL | SETUP_NO_SQARRAY | super::super::SETUP_SQE128
        ));
        assert!(!learnable(SETUP_NO_MMAP));
        assert!(!learnable(SETUP_REGISTERED_FD_ONLY));
        assert!(!learnable(SETUP_SQE_MIXED));
        assert!(!learnable(1 << 21));
    }

    fn entry(opcode: u8) -> [u8; sqe::SIZE] {
        let mut entry = [0; sqe::SIZE];
        entry[sqe::OPCODE] = opcode;
        entry
    }

    #[test]
    fn entries_that_move_fixed_files_are_told_apart() {
        assert_eq!(slots_after(&entry(sqe::OP_FSYNC)), Slots::Same);
        assert_eq!(slots_after(&entry(sqe::OP_OPENAT)), Slots::Same);
        let mut direct = entry(sqe::OP_OPENAT);
        direct[sqe::SPLICE_FD_IN] = 3;
        assert_eq!(slots_after(&direct), Slots::Changed);
        assert_eq!(slots_after(&entry(20)), Slots::Changed);
        let mut send = entry(40);
        send[sqe::ADDR] = 1;
        assert_eq!(slots_after(&send), Slots::Sent);
        assert_eq!(slots_after(&entry(40)), Slots::Same);
        assert_eq!(slots_after(&entry(200)), Slots::Changed);
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
