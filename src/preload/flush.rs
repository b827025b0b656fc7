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

use core::ffi::{c_int, c_long};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::errno;
use crate::kernel::{append_own, raw};
use crate::maps::{self, Mapping};
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

/// Records the file system of the file mapped at `address`, whose
/// `MS_SYNC` was just skipped for `length` bytes; all of them when the
/// mapping cannot be told or the range goes past it.
#[inline]
pub fn note_mapping(address: usize, length: usize) {
    if policy::flushing() {
        note_mapping_of(address, length);
    }
}

#[cold]
fn note_mapping_of(address: usize, length: usize) {
    let saved = errno::get();
    match maps::of(address) {
        Some((mapping, end)) if (address as u64).saturating_add(length as u64) <= end => {
            if let Mapping::File(major, minor) = mapping {
                note_device(major, minor);
            }
        }
        _ => note_all(),
    }
    errno::set(saved);
}

#[cold]
fn note_device_of(fd: c_int) {
    let saved = errno::get();
    match device_of(fd) {
        Some((major, minor)) => note_device(major, minor),
        None => note_all(),
    }
    errno::set(saved);
}

/// The device of the file system `fd` is on, from `statx(2)`, whose
/// `stx_dev_major` and `stx_dev_minor` are filled whatever the mask.
fn device_of(fd: c_int) -> Option<(u32, u32)> {
    // SAFETY: statx is plain data, for which zero is a valid value.
    let mut stat: libc::statx = unsafe { core::mem::zeroed() };
    let args = [
        fd.into(),
        c"".as_ptr() as c_long,
        libc::AT_EMPTY_PATH.into(),
        0,
        &raw mut stat as c_long,
        0,
    ];
    (raw(libc::SYS_statx, args) == 0).then_some((stat.stx_dev_major, stat.stx_dev_minor))
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
