//! The rings a program set up through libc's `syscall()`, and where their
//! submission queues are mapped: what `io_uring_enter` needs to find the
//! entries the kernel is about to read.
//!
//! A fixed table of [`RINGS`] slots of atomics, claimed at
//! `io_uring_setup`, no lock and no allocation. A ring is rewritten only
//! once both of its mappings (the SQ ring at `IORING_OFF_SQ_RING`, the
//! entries at `IORING_OFF_SQES`) were seen on a descriptor that is an
//! io_uring, and stops being rewritten when either is unmapped or mapped
//! over: the library never writes memory that is not a ring's. Past the
//! slots, or for a ring set up before the library was loaded, inherited or
//! received over a socket, submissions go to the kernel unchanged.

use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// How many rings at once a process has rewritten: fio makes one per job
/// thread, a database a handful.
pub const RINGS: usize = 16;

/// `struct io_sqring_offsets`'s fields used here, in its order.
pub const HEAD: usize = 0;
pub const TAIL: usize = 1;
pub const FLAGS: usize = 4;
pub const ARRAY: usize = 6;

/// What a slot knows of its ring; `fd` is [`FREE`] when it knows nothing.
pub struct Ring {
    fd: AtomicI32,
    /// The setup flags the kernel got, and [`SQPOLL_DROPPED`].
    flags: AtomicU32,
    entries: AtomicU32,
    /// `sq_off`: head, tail, ring_mask, ring_entries, flags, dropped, array.
    offsets: [AtomicU32; 7],
    sq_ring: AtomicUsize,
    sq_len: AtomicUsize,
    sqes: AtomicUsize,
    sqes_len: AtomicUsize,
    /// How far entries were rewritten (the tail of the last submission).
    pub seen: AtomicU32,
    /// Which fixed-file slots (0 to 63) hold a file that reaches a disk.
    pub fixed: AtomicU64,
}

pub const FREE: i32 = -1;
/// A slot being filled in: no descriptor matches it.
const CLAIMING: i32 = -2;
/// A flag of ours, beside the setup flags: the program asked for SQPOLL
/// and the kernel was not told.
pub const SQPOLL_DROPPED: u32 = 1 << 31;
/// `IORING_SETUP_NO_SQARRAY` (6.6): entries are taken in ring order.
pub const SETUP_NO_SQARRAY: u32 = 1 << 16;

static TABLE: [Ring; RINGS] = [const {
    Ring {
        fd: AtomicI32::new(FREE),
        flags: AtomicU32::new(0),
        entries: AtomicU32::new(0),
        offsets: [const { AtomicU32::new(0) }; 7],
        sq_ring: AtomicUsize::new(0),
        sq_len: AtomicUsize::new(0),
        sqes: AtomicUsize::new(0),
        sqes_len: AtomicUsize::new(0),
        seen: AtomicU32::new(0),
        fixed: AtomicU64::new(0),
    }
}; RINGS];

/// `eatmydata_uring_watching`: whether any ring was set up here. Until
/// then the shim's mmap and munmap hooks read this one byte (C `_Bool`)
/// and tell nothing.
#[allow(non_upper_case_globals)] // a C name
#[unsafe(no_mangle)]
pub static eatmydata_uring_watching: AtomicBool = AtomicBool::new(false);

#[inline(always)]
pub fn watching() -> bool {
    eatmydata_uring_watching.load(Ordering::Relaxed)
}

/// A ring's submission queue, as mapped: what [`Ring::view`] gives.
#[derive(Clone, Copy, Debug)]
pub struct View {
    pub flags: u32,
    pub entries: u32,
    pub offsets: [u32; 7],
    pub sq_ring: usize,
    pub sqes: usize,
    /// 64 or 128.
    pub entry_size: usize,
}

/// The bytes of the SQ ring that must be mapped for `offsets` and
/// `entries`: up to its index array, or its flags word without one.
pub const fn sq_ring_needs(flags: u32, offsets: &[u32; 7], entries: u32) -> usize {
    let mut end = offsets[HEAD] as usize + 4;
    let mut i = 0;
    while i < 5 {
        let field = offsets[i] as usize + 4;
        if field > end {
            end = field;
        }
        i += 1;
    }
    if flags & SETUP_NO_SQARRAY == 0 {
        let array = offsets[ARRAY] as usize + 4 * entries as usize;
        if array > end {
            end = array;
        }
    }
    end
}

impl Ring {
    /// This ring's view, when both of its mappings are known.
    pub fn view(&self) -> Option<View> {
        let sq_ring = self.sq_ring.load(Ordering::Acquire);
        let sqes = self.sqes.load(Ordering::Acquire);
        if sq_ring == 0 || sqes == 0 {
            return None;
        }
        let flags = self.flags.load(Ordering::Relaxed);
        Some(View {
            flags,
            entries: self.entries.load(Ordering::Relaxed),
            offsets: self.offsets.each_ref().map(|o| o.load(Ordering::Relaxed)),
            sq_ring,
            sqes,
            entry_size: if flags & super::SETUP_SQE128 != 0 {
                128
            } else {
                64
            },
        })
    }
}

/// The slot of ring `fd`, if the library saw it set up.
pub fn find(fd: i32) -> Option<&'static Ring> {
    if fd < 0 {
        return None;
    }
    TABLE
        .iter()
        .find(|ring| ring.fd.load(Ordering::Acquire) == fd)
}

/// Ring `fd` was set up with `flags`, `entries` and `offsets`; its
/// mappings are not known yet. A slot that held the same descriptor (a
/// ring closed, its number reused) is taken over.
pub fn set_up(fd: i32, flags: u32, entries: u32, offsets: [u32; 7]) {
    eatmydata_uring_watching.store(true, Ordering::Relaxed);
    let slot = find(fd).or_else(|| {
        TABLE.iter().find(|ring| {
            ring.fd
                .compare_exchange(FREE, fd, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })
    });
    let Some(ring) = slot else {
        return;
    };
    ring.sq_ring.store(0, Ordering::Release);
    ring.sqes.store(0, Ordering::Release);
    ring.flags.store(flags, Ordering::Relaxed);
    ring.entries.store(entries, Ordering::Relaxed);
    for (field, value) in ring.offsets.iter().zip(offsets) {
        field.store(value, Ordering::Relaxed);
    }
    ring.seen.store(0, Ordering::Relaxed);
    ring.fixed.store(0, Ordering::Relaxed);
    ring.fd.store(fd, Ordering::Release);
}

/// `len` bytes at `at` were mapped from ring `fd` at `offset` (the
/// descriptor checked to be an io_uring). When this was the SQ ring of a
/// ring whose SQPOLL was dropped, returns the offset of its flags word, for
/// the caller to raise `IORING_SQ_NEED_WAKEUP` there.
pub fn mapped(fd: i32, offset: u64, at: usize, len: usize) -> Option<usize> {
    let ring = find(fd)?;
    let flags = ring.flags.load(Ordering::Relaxed);
    let entries = ring.entries.load(Ordering::Relaxed);
    let offsets = ring.offsets.each_ref().map(|o| o.load(Ordering::Relaxed));
    match offset {
        OFF_SQ_RING if sq_ring_needs(flags, &offsets, entries) <= len => {
            ring.sq_len.store(len, Ordering::Relaxed);
            ring.sq_ring.store(at, Ordering::Release);
            (flags & SQPOLL_DROPPED != 0).then_some(offsets[FLAGS] as usize)
        }
        OFF_SQES => {
            let size = if flags & super::SETUP_SQE128 != 0 {
                128
            } else {
                64
            };
            if (entries as usize).saturating_mul(size) <= len {
                ring.sqes_len.store(len, Ordering::Relaxed);
                ring.sqes.store(at, Ordering::Release);
            }
            None
        }
        _ => None,
    }
}

/// `IORING_OFF_SQ_RING` and `IORING_OFF_SQES`, the mmap offsets.
pub const OFF_SQ_RING: u64 = 0;
pub const OFF_SQES: u64 = 0x1000_0000;

/// `len` bytes at `at` are being unmapped or mapped over: a ring mapped
/// there is forgotten, before its memory goes.
pub fn unmapping(at: usize, len: usize) {
    let end = at.saturating_add(len);
    // A mapping takes whole pages.
    let overlaps = |start: usize, size: usize| {
        start != 0 && start < end && at < start.saturating_add(size.next_multiple_of(4096))
    };
    for ring in &TABLE {
        let fd = ring.fd.load(Ordering::Relaxed);
        if fd == FREE {
            continue;
        }
        let mut went = false;
        for (start, size) in [(&ring.sq_ring, &ring.sq_len), (&ring.sqes, &ring.sqes_len)] {
            if overlaps(start.load(Ordering::Relaxed), size.load(Ordering::Relaxed)) {
                start.store(0, Ordering::Release);
                went = true;
            }
        }
        // A ring with neither mapping left is done with: its slot is free
        // for the next one (a program may make many in turn).
        let unmapped =
            ring.sq_ring.load(Ordering::Relaxed) == 0 && ring.sqes.load(Ordering::Relaxed) == 0;
        if went && unmapped {
            let _ = ring
                .fd
                .compare_exchange(fd, FREE, Ordering::AcqRel, Ordering::Relaxed);
        }
    }
}

/// Whether any ring was ever told fixed slots that reach a disk: until
/// then a submission asks no slot.
static FIXED_SEEN: AtomicBool = AtomicBool::new(false);

/// Which fixed slots of ring `fd` are known to reach a disk.
#[inline]
pub fn fixed_for(fd: i32) -> u64 {
    if !FIXED_SEEN.load(Ordering::Relaxed) {
        return 0;
    }
    find(fd).map_or(0, |ring| ring.fixed.load(Ordering::Relaxed))
}

/// Ring `fd`'s fixed slots that reach a disk are `bits` (a liburing ring,
/// not learnt through `syscall()`, takes a slot of its own, with no
/// mappings, so that it is never rewritten at `io_uring_enter`; its slot
/// is freed when it has nothing to know).
pub fn store_fixed(fd: i32, bits: u64) {
    if bits != 0 {
        FIXED_SEEN.store(true, Ordering::Relaxed);
    }
    if let Some(ring) = find(fd) {
        ring.fixed.store(bits, Ordering::Relaxed);
        let mapped =
            ring.sq_ring.load(Ordering::Relaxed) != 0 || ring.sqes.load(Ordering::Relaxed) != 0;
        let learnt = ring.entries.load(Ordering::Relaxed) != 0;
        if bits == 0 && !mapped && !learnt {
            let _ = ring
                .fd
                .compare_exchange(fd, FREE, Ordering::AcqRel, Ordering::Relaxed);
        }
        return;
    }
    if bits == 0 || fd < 0 {
        return;
    }
    let claimed = TABLE.iter().find(|ring| {
        ring.fd
            .compare_exchange(FREE, CLAIMING, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    });
    if let Some(ring) = claimed {
        ring.sq_ring.store(0, Ordering::Release);
        ring.sqes.store(0, Ordering::Release);
        ring.entries.store(0, Ordering::Relaxed);
        ring.fixed.store(bits, Ordering::Relaxed);
        ring.fd.store(fd, Ordering::Release);
    }
}

/// Forgets which fixed slots reach a disk, on every ring: a file was sent
/// to a ring not told which.
pub fn forget_all_fixed() {
    for ring in &TABLE {
        ring.fixed.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sq_ring_must_hold_its_array_unless_it_has_none() {
        // fio's ring of one entry, as strace shows it on 6.18.
        let offsets = [0, 4, 16, 24, 36, 32, 128];
        assert_eq!(sq_ring_needs(0, &offsets, 1), 132);
        assert_eq!(sq_ring_needs(0, &offsets, 8), 160);
        assert_eq!(sq_ring_needs(SETUP_NO_SQARRAY, &offsets, 8), 40);
    }

    #[test]
    fn a_ring_is_rewritten_only_once_both_mappings_are_seen() {
        let offsets = [0, 4, 16, 24, 36, 32, 128];
        set_up(900, 0, 8, offsets);
        let ring = find(900).unwrap();
        assert!(ring.view().is_none());
        mapped(900, OFF_SQ_RING, 0x10000, 100);
        mapped(900, OFF_SQES, 0x20000, 512);
        assert!(ring.view().is_none(), "an SQ ring too short is not taken");
        assert_eq!(mapped(900, OFF_SQ_RING, 0x10000, 4096), None);
        let view = ring.view().unwrap();
        assert_eq!(
            (view.sq_ring, view.sqes, view.entry_size),
            (0x10000, 0x20000, 64)
        );
        unmapping(0x20000 + 4095, 1);
        assert!(ring.view().is_none(), "the entries went");
        mapped(900, OFF_SQES, 0x30000, 512);
        assert!(ring.view().is_some());
        unmapping(0x0, 0x10000);
        assert!(ring.view().is_some(), "a range just below it");
        set_up(900, SQPOLL_DROPPED, 8, offsets);
        assert!(ring.view().is_none(), "the same number, a new ring");
        assert_eq!(mapped(900, OFF_SQ_RING, 0x10000, 4096), Some(36));
        unmapping(0x10000, 4096);
        assert!(find(900).is_none(), "no mapping left: the slot is free");
        assert!(find(901).is_none());
    }
}
