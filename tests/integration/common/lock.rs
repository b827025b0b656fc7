//! One lock for the whole machine between tests that call sync(2), which
//! flushes every file system, and tests that count a loop device's flushes
//! or look for data not yet written back to it: a sync(2) in the middle of
//! either would change what they see.
//!
//! It is a pair of `flock(2)` files at a fixed path, so that it holds
//! between the threads of `cargo test`, the processes of `cargo nextest`
//! and test runs of other checkouts alike. Readers of the disks take it
//! shared, sync(2) callers exclusive; a waiting sync(2) caller goes first
//! (the turnstile), so that a stream of readers cannot starve it.
//!
//! `scripts/check-aarch64` takes the same files with flock(1).

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// The folder of the two files: /run/lock where it exists, else /tmp.
fn folder() -> PathBuf {
    let run_lock = PathBuf::from("/run/lock");
    if run_lock.is_dir() {
        run_lock
    } else {
        PathBuf::from("/tmp")
    }
}

/// `name` in the lock folder, locked `how` (blocking until granted).
fn flock(name: &str, how: libc::c_int) -> File {
    let path = folder().join(name);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    loop {
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), how) } == 0 {
            return file;
        }
        let error = std::io::Error::last_os_error();
        assert_eq!(
            error.kind(),
            std::io::ErrorKind::Interrupted,
            "flock {}: {error}",
            path.display()
        );
    }
}

const DISKS: &str = "eatmydata-tests.lock";
const TURNSTILE: &str = "eatmydata-tests.turnstile";

thread_local! {
    /// How many [`QuietDisks`] this thread holds.
    static HELD: Cell<usize> = const { Cell::new(0) };
}

/// Held while a test counts flushes or looks for unwritten data: no
/// sync(2) of the tests runs meanwhile. Released when dropped.
pub struct QuietDisks {
    _held: File,
}

/// Waits until no sync(2) caller runs or waits, then holds the lock shared.
/// A thread that holds it already takes it again at once: through the
/// turnstile, it would wait for a sync(2) caller that waits for it.
pub fn quiet_disks() -> QuietDisks {
    let held = if HELD.get() > 0 {
        flock(DISKS, libc::LOCK_SH)
    } else {
        let _turnstile = flock(TURNSTILE, libc::LOCK_EX);
        flock(DISKS, libc::LOCK_SH)
    };
    HELD.set(HELD.get() + 1);
    QuietDisks { _held: held }
}

impl Drop for QuietDisks {
    fn drop(&mut self) {
        HELD.set(HELD.get().saturating_sub(1));
    }
}

/// Runs `f`, which may call sync(2), while no test counts flushes or looks
/// for data not yet written back. Never call it while holding
/// [`quiet_disks`] in the same test: it would wait for itself.
pub fn whole_machine_sync<T>(f: impl FnOnce() -> T) -> T {
    assert_eq!(HELD.get(), 0, "whole_machine_sync inside quiet_disks");
    let _turnstile = flock(TURNSTILE, libc::LOCK_EX);
    let _exclusive = flock(DISKS, libc::LOCK_EX);
    f()
}
