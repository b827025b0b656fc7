//! The file systems on which this process skipped a sync, for
//! `eatmydata --sync-at-exit`, which flushes them once the command is over.
//!
//! On only when `EATMYDATA_FLUSH_LIST` names a file. Each process records a
//! file system once, at the first skip on it, not at exit: a process killed
//! by SIGKILL has told already. The record is one `write(2)` of a fixed-size
//! line on an `O_APPEND` descriptor (`protocol::write_flush`), so records of
//! processes writing at once do not interleave. Which file systems are
//! recorded is kept in a fixed array of atomics: no lock, no allocation.
//! A forked child inherits it, rightly: its parent has recorded them.
//!
//! The cost when on: one `statx` per skip on a descriptor, a read of
//! `/proc/self/maps` per skipped `MS_SYNC`, and three system calls per file
//! system and process. Off, one bit test.

use core::ffi::c_int;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::kernel::append_own;
use crate::place::{self, Place};
use crate::policy;
use crate::protocol::{self, Flush};

/// How many file systems a process tells apart; past that, it asks for
/// `sync(2)`, which flushes them all.
const SLOTS: usize = 16;

/// The file systems recorded, as `MAJOR << 32 | MINOR` plus one; 0 is free.
static SEEN: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];

/// Whether the record asking for `sync(2)` is written.
static ALL: AtomicBool = AtomicBool::new(false);

/// Records the file system of `fd`, on which a sync was just skipped.
#[inline]
pub fn note_fd(fd: c_int) {
    if policy::flushing() {
        note_device_of(fd);
    }
}

/// Records that a sync was skipped where no file system can be named.
#[inline]
pub fn note_all() {
    if policy::flushing() && !ALL.swap(true, Ordering::Relaxed) {
        write_record(Flush::All);
    }
}

/// Records `place`, where a sync was just skipped, found already (all file
/// systems when it is unknown: see `place.rs`).
pub fn note(place: Place) {
    if policy::flushing() {
        note_place(place);
    }
}

#[cold]
fn note_device_of(fd: c_int) {
    note_place(place::of_fd(fd));
}

#[cold]
fn note_place(place: Place) {
    match place {
        Place::Device((major, minor)) => note_device(major, minor),
        Place::Nothing => {}
        Place::Unknown => note_all(),
    }
}

/// Writes the record of a device the first time this process sees it.
fn note_device(major: u32, minor: u32) {
    let key = (u64::from(major) << 32 | u64::from(minor)) + 1;
    for slot in &SEEN {
        match slot.compare_exchange(0, key, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return write_record(Flush::Device(major, minor)),
            Err(seen) if seen == key => return,
            Err(_) => {}
        }
    }
    note_all();
}

/// Appends a record to the list; nothing if the file is not there.
fn write_record(record: Flush) {
    let Some(path) = policy::variable(protocol::FLUSH_LIST) else {
        return;
    };
    append_own(path, &protocol::write_flush(record));
}
