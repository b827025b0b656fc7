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
//!
//! With kept mounts (`keep.rs`), a flush that goes to the kernel because
//! its mount is kept is counted the same way in a table of its own (the
//! account by mount shows where syncs were kept and where eaten): the
//! same `statx`, on a call that then waits for a disk. Kept entries of
//! io_uring and AIO requests, and what a program that never loaded the
//! library keeps, are not counted.

use core::ffi::{c_char, c_int};
use core::sync::atomic::{AtomicU64, Ordering};

use crate::flush;
use crate::keep;
use crate::kernel::{append_own, raw};
use crate::place::{self, Place};
use crate::policy;
use crate::protocol::{self, Counts, Device, Flushes, PLACES, SKIPS};

/// The kinds of skip, one counter each (defined with the line's format).
pub use crate::protocol::Skip;

static COUNTS: [AtomicU64; SKIPS.len()] = [const { AtomicU64::new(0) }; SKIPS.len()];

/// Flushes by file system: the devices, as `MAJOR << 32 | MINOR` plus one
/// (0 is free), beside each how many, filled in order and never emptied;
/// and those where no file system could be named, or past the table.
struct Places {
    devices: [AtomicU64; PLACES],
    on_device: [AtomicU64; PLACES],
    unnamed: AtomicU64,
}

impl Places {
    const fn new() -> Places {
        Places {
            devices: [const { AtomicU64::new(0) }; PLACES],
            on_device: [const { AtomicU64::new(0) }; PLACES],
            unnamed: AtomicU64::new(0),
        }
    }

    /// Adds a flush at `place`: to its device's slot, or the unnamed.
    fn add(&self, place: Place) {
        match place {
            Place::Device(device) => self.on(device),
            Place::Nothing => {}
            Place::Unknown => {
                self.unnamed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Adds a flush on `device` to its slot, taking a free one the first
    /// time; to the unnamed when all are taken by others.
    fn on(&self, device: Device) {
        let key = (u64::from(device.0) << 32 | u64::from(device.1)) + 1;
        for (slot, counter) in self.devices.iter().zip(&self.on_device) {
            match slot.compare_exchange(0, key, Ordering::AcqRel, Ordering::Acquire) {
                Err(seen) if seen != key => continue,
                _ => {
                    counter.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            }
        }
        self.unnamed.fetch_add(1, Ordering::Relaxed);
    }

    /// Every count back to 0 (the devices stay where they are).
    fn forget(&self) {
        for counter in self.on_device.iter().chain([&self.unnamed]) {
            counter.store(0, Ordering::Relaxed);
        }
    }

    /// The counts as they are now.
    fn now(&self) -> Flushes {
        let mut flushes = Flushes::NONE;
        for (slot, counter) in self.devices.iter().zip(&self.on_device) {
            let (key, count) = (
                slot.load(Ordering::Acquire),
                counter.load(Ordering::Relaxed),
            );
            if key != 0 && count > 0 {
                let key = key - 1;
                flushes.add(((key >> 32) as u32, key as u32), count);
            }
        }
        flushes.unnamed = self.unnamed.load(Ordering::Relaxed);
        flushes
    }
}

/// The flushes skipped, by file system.
static SKIPPED: Places = Places::new();

/// The flushes kept (keep by mount: they went to the kernel), by file
/// system.
static KEPT: Places = Places::new();

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
        SKIPPED.add(place);
    }
}

/// Counts one call of `kind` kept at `place` (its mount is kept, or the
/// whole `sync()` was made), when reporting and when `kind` stands for a
/// flush, as skipped flushes are counted.
pub fn kept_at(kind: Skip, place: Place) {
    if policy::reporting() && kind.is_flush() {
        KEPT.add(place);
    }
}

/// [`kept_at`] the file system of `fd`: a `statx` of it, only when
/// reporting, on the path of a call that then flushes a disk.
pub fn kept_on_fd(kind: Skip, fd: c_int) {
    if policy::reporting() && kind.is_flush() {
        KEPT.add(place::of_fd(fd));
    }
}

/// [`kept_on_fd`] for the `length` bytes mapped at `address`.
pub fn kept_on_mapping(kind: Skip, address: usize, length: usize) {
    if policy::reporting() && kind.is_flush() {
        KEPT.add(place::of_mapping(address, length));
    }
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
    for counter in &COUNTS {
        counter.store(0, Ordering::Relaxed);
    }
    SKIPPED.forget();
    KEPT.forget();
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
    let (skipped, kept) = (SKIPPED.now(), KEPT.now());
    let mut len = 0;
    keep::unread(|unread| {
        let flushes = (&skipped, &kept);
        len = protocol::write_report(&mut line, pid as u64, name, &counts, flushes, unread);
    });
    append_own(path, line.get(..len).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flushes_are_counted_by_device_until_the_table_is_full() {
        let places = Places::new();
        places.add(Place::Device((7, 3)));
        places.add(Place::Device((7, 4)));
        places.add(Place::Device((7, 3)));
        places.add(Place::Unknown);
        places.add(Place::Nothing);
        let now = places.now();
        assert_eq!(now.on(), [((7, 3), 2), ((7, 4), 1)]);
        assert_eq!(now.unnamed, 1);
        places.forget();
        assert_eq!(places.now(), Flushes::NONE, "a forked child's start");
        places.add(Place::Device((7, 4)));
        assert_eq!(places.now().on(), [((7, 4), 1)]);
        for minor in 0..PLACES as u32 + 1 {
            places.add(Place::Device((9, minor)));
        }
        let now = places.now();
        // (7, 3) holds its slot at 0, shown no more.
        assert_eq!(now.on().len(), PLACES - 1);
        assert_eq!(now.unnamed, 3, "past the table: (9, 14), (9, 15), (9, 16)");
    }
}
