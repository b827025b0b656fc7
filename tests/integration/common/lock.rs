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
//!
//! [`locked`], the flock(2) step alone, serves other locks too (one
//! engine's store for the container tests).

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

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
    locked(&folder().join(name), how)
}

/// The file at `path`, made when missing, locked `how` with flock(2),
/// blocking until granted; the lock goes when the file is closed.
pub fn locked(path: &Path, how: libc::c_int) -> File {
    // flock(2) needs no write access: any user opens what root made. A
    // link at the name (another user's, in /run/lock or /tmp, which every
    // user may write) is not followed: root would make its target.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .or_else(|_| {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o666)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
        })
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

/// What this thread holds.
#[derive(Clone, Copy, PartialEq)]
enum Held {
    Nothing,
    /// This many [`QuietDisks`].
    Shared(usize),
    /// Inside [`whole_machine_sync`]: no one else reads the disks.
    Exclusive,
}

thread_local! {
    static HELD: Cell<Held> = const { Cell::new(Held::Nothing) };
}

/// Held while a test counts flushes or looks for unwritten data: no
/// sync(2) of the tests runs meanwhile. Released when dropped.
pub struct QuietDisks {
    _held: Option<File>,
}

/// Waits until no sync(2) caller runs or waits, then holds the lock shared.
/// A thread that holds it already takes it again at once (through the
/// turnstile, it would wait for a sync(2) caller that waits for it), and
/// one inside [`whole_machine_sync`] has all it needs.
pub fn quiet_disks() -> QuietDisks {
    let (file, now) = match HELD.get() {
        Held::Exclusive => (None, Held::Exclusive),
        Held::Shared(n) => (Some(flock(DISKS, libc::LOCK_SH)), Held::Shared(n + 1)),
        Held::Nothing => {
            let _turnstile = flock(TURNSTILE, libc::LOCK_EX);
            (Some(flock(DISKS, libc::LOCK_SH)), Held::Shared(1))
        }
    };
    HELD.set(now);
    QuietDisks { _held: file }
}

impl Drop for QuietDisks {
    fn drop(&mut self) {
        if let Held::Shared(n) = HELD.get() {
            HELD.set(if n > 1 {
                Held::Shared(n - 1)
            } else {
                Held::Nothing
            });
        }
    }
}

/// Whether this thread is inside [`whole_machine_sync`]: it needs no
/// [`quiet_disks`] then, and must not keep one made there.
pub fn in_whole_machine_sync() -> bool {
    HELD.get() == Held::Exclusive
}

/// Runs `f`, which may call sync(2), while no test counts flushes or looks
/// for data not yet written back. A test whose own count includes its own
/// sync(2) takes this around the whole count, not [`quiet_disks`]: taken
/// inside it, this would wait for itself, and panics instead.
pub fn whole_machine_sync<T>(f: impl FnOnce() -> T) -> T {
    match HELD.get() {
        Held::Exclusive => return f(),
        Held::Shared(_) => {
            panic!("whole_machine_sync inside quiet_disks: take it around the count")
        }
        Held::Nothing => {}
    }
    let _turnstile = flock(TURNSTILE, libc::LOCK_EX);
    let _exclusive = flock(DISKS, libc::LOCK_EX);
    HELD.set(Held::Exclusive);
    // Reset however f ends, a panic included.
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            HELD.set(Held::Nothing);
        }
    }
    let _reset = Reset;
    f()
}
