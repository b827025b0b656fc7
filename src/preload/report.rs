//! What the library skipped in this process, for `eatmydata --report`.
//!
//! Counting is on only when `EATMYDATA_REPORT` names a file: then each skip
//! adds one to an atomic counter, and at exit the process appends one line
//! to that file, which the command sums up once its child has finished. The
//! line is written with a single `write(2)` on an `O_APPEND` descriptor, so
//! lines from processes ending at the same time do not interleave. The file
//! must exist already: a stray variable never makes the library create one.
//!
//! A process that ends by `_exit`, `exec` or a signal writes nothing.
//!
//! A skip that stands for a flush ([`Skip::is_flush`]) is also counted by
//! file system, for the estimate of what the flushes would have cost: in a
//! fixed table of atomics, a device and a counter per slot, filled in
//! order and never emptied, so no lock and no allocation. That costs a
//! `statx` per skipped flush on a descriptor (a read of `/proc/self/maps`
//! per skipped `MS_SYNC`), only when reporting.

use core::ffi::{c_char, c_int};
use core::sync::atomic::{AtomicU64, Ordering};

use crate::flush;
use crate::kernel::{append_own, raw};
use crate::place::{self, Place};
use crate::policy;
use crate::protocol::{self, Counts, Device, Flushes, PLACES, SKIPS};

/// The kinds of skip, one counter each (defined with the line's format).
pub use crate::protocol::Skip;

static COUNTS: [AtomicU64; SKIPS.len()] = [const { AtomicU64::new(0) }; SKIPS.len()];

/// The file systems flushes were skipped on, as `MAJOR << 32 | MINOR` plus
/// one (0 is free), and beside each, how many.
static DEVICES: [AtomicU64; PLACES] = [const { AtomicU64::new(0) }; PLACES];
static ON_DEVICE: [AtomicU64; PLACES] = [const { AtomicU64::new(0) }; PLACES];

/// Flushes skipped where no file system could be named, or past the table.
static UNNAMED: AtomicU64 = AtomicU64::new(0);

/// Counts one skip where no file system can be named, when reporting.
pub fn count(skip: Skip) {
    count_at(skip, Place::Unknown);
}

/// Counts one skip at `place`, when reporting.
fn count_at(skip: Skip, place: Place) {
    if !policy::reporting() {
        return;
    }
    if let Some(counter) = COUNTS.get(skip as usize) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
    if skip.is_flush() {
        match place {
            Place::Device(device) => on_device(device),
            Place::Nothing => {}
            Place::Unknown => {
                UNNAMED.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Adds a flush skipped on `device` to its slot, taking a free one the
/// first time; to the unnamed when all are taken by others.
fn on_device(device: Device) {
    let key = (u64::from(device.0) << 32 | u64::from(device.1)) + 1;
    for (slot, counter) in DEVICES.iter().zip(&ON_DEVICE) {
        match slot.compare_exchange(0, key, Ordering::AcqRel, Ordering::Acquire) {
            Err(seen) if seen != key => continue,
            _ => {
                counter.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
    }
    UNNAMED.fetch_add(1, Ordering::Relaxed);
}

/// A skip of `kind` on `fd`, counted with its file system for `--report`
/// and that recorded for `--sync-at-exit`, whichever is on; `fd`'s file
/// system is asked once for both.
pub fn skipped_on_fd(kind: Skip, fd: c_int) {
    let switches = policy::switches();
    if switches.reporting() || switches.flushing() {
        let place = place::of_fd(fd);
        count_at(kind, place);
        flush::note(place);
    }
}

/// [`skipped_on_fd`] for a skip of `kind` on the `length` bytes mapped at
/// `address`.
pub fn skipped_on_mapping(kind: Skip, address: usize, length: usize) {
    let switches = policy::switches();
    if switches.reporting() || switches.flushing() {
        let place = place::of_mapping(address, length);
        count_at(kind, place);
        flush::note(place);
    }
}

/// `after`, the flags a call goes on with, counting a skip of `kind` when
/// they differ from `before`, what the program asked for.
pub fn counted(kind: Skip, before: c_int, after: c_int) -> c_int {
    if after != before {
        count(kind);
    }
    after
}

unsafe extern "C" {
    /// glibc's short name of the program, as `errx` prints it.
    static program_invocation_short_name: *const c_char;
}

/// `eatmydata_forget_counts`: run in a forked child (`pthread_atfork`), so
/// that its line counts only its own skips, not those its parent made.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_forget_counts() {
    for counter in COUNTS.iter().chain(&ON_DEVICE).chain([&UNNAMED]) {
        counter.store(0, Ordering::Relaxed);
    }
}

/// This process's flushes by file system, as the counters hold them now.
fn flushes() -> Flushes {
    let mut flushes = Flushes::NONE;
    for (slot, counter) in DEVICES.iter().zip(&ON_DEVICE) {
        let (key, count) = (
            slot.load(Ordering::Acquire),
            counter.load(Ordering::Relaxed),
        );
        if key != 0 && count > 0 {
            let key = key - 1;
            flushes.add(((key >> 32) as u32, key as u32), count);
        }
    }
    flushes.unnamed = UNNAMED.load(Ordering::Relaxed);
    flushes
}

/// `eatmydata_report_at_exit`: appends this process's line to the report.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_report_at_exit() {
    if !policy::reporting() {
        return;
    }
    let Some(path) = policy::variable(protocol::REPORT) else {
        return;
    };
    let counts: Counts = COUNTS.each_ref().map(|c| c.load(Ordering::Relaxed));
    // SAFETY: glibc sets the name before any constructor and never frees it.
    let name = unsafe { program_invocation_short_name };
    let name = if name.is_null() {
        &b"?"[..]
    } else {
        // SAFETY: a NUL-terminated string, as above.
        unsafe { core::ffi::CStr::from_ptr(name) }.to_bytes()
    };
    let pid = raw(libc::SYS_getpid, [0; 6]);
    let mut line = [0; protocol::REPORT_LINE_MAX];
    let len = protocol::write_report(&mut line, pid as u64, name, &counts, &flushes());
    append_own(path, line.get(..len).unwrap_or_default());
}
