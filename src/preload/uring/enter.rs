//! `io_uring_enter(2)` through libc's `syscall()`: on a ring learnt at
//! setup and mmap ([`super::setup`]), the entries between the kernel's
//! head and the program's tail are rewritten, then the call goes on as
//! made. A ring not learnt (set up before the library was loaded,
//! inherited, received over a socket, entered by its registered index)
//! goes to the kernel unchanged.

use core::ffi::c_long;
use core::ptr;
use core::sync::atomic::{AtomicU32, Ordering};

use super::fixed::{Slots, slots_after};
use super::rings::{self, ARRAY, HEAD, SETUP_NO_SQARRAY, SQPOLL_DROPPED, TAIL};
use super::{Batch, eat};
use crate::durability::sqe;
use crate::kernel::raw;

const ENTER_REGISTERED_RING: c_long = 1 << 4;

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
        unsafe {
            if sqe::may_rewrite(at.read()) {
                eat(at, &batch);
            }
        }
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
