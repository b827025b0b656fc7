//! Whether this process eats its syncs, keeps `O_DIRECT`, and reports.
//!
//! Environment switches (named in `src/protocol.rs`), read once per process
//! and inherited by its children like any other variable:
//!
//! - `EATMYDATA_DISABLE=1` makes the library a pure pass-through, for images
//!   that set `LD_PRELOAD` globally and want durability back for one command;
//! - `EATMYDATA_KEEP_DIRECT=1` keeps `O_DIRECT`, which is otherwise dropped
//!   because a database on direct I/O still waits for the disk on each write;
//! - `EATMYDATA_REPORT=FILE`, set by `eatmydata --report`, has each process
//!   count what it skipped and append a line to FILE at exit;
//! - `EATMYDATA_FLUSH_LIST=FILE`, set by `eatmydata --sync-at-exit`, has each
//!   process record in FILE the file systems on which it skipped a sync;
//! - `EATMYDATA_KEEP=PATH:...` and `EATMYDATA_ONLY=PATH:...` (`--keep`,
//!   `--only`) scope the eating by mount (`keep.rs` learns which).
//!
//! A hook may run before our constructor, so the switches are read lazily
//! from `environ`, without `getenv` locks or allocation.

use core::ffi::{CStr, c_char, c_int};
use core::sync::atomic::{AtomicU8, Ordering};

use crate::protocol::{self, switch_on};

const KNOWN: u8 = 1;
const DISABLED: u8 = 2;
const KEEP_DIRECT: u8 = 4;
const REPORT: u8 = 8;
const FLUSH: u8 = 16;
const SCOPED: u8 = 32;

static STATE: AtomicU8 = AtomicU8::new(0);

unsafe extern "C" {
    static environ: *const *const c_char;
}

/// An environment entry `NAME=value` split in two.
fn split_entry(entry: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = entry.iter().position(|&b| b == b'=')?;
    let (name, value) = entry.split_at(at);
    Some((name, value.get(1..).unwrap_or_default()))
}

/// The state bits that an environment entry `NAME=value` contributes.
pub fn bits_of(entry: &[u8]) -> u8 {
    let Some((name, value)) = split_entry(entry) else {
        return 0;
    };
    if name == protocol::DISABLE.as_bytes() && switch_on(value) {
        DISABLED
    } else if name == protocol::KEEP_DIRECT.as_bytes() && switch_on(value) {
        KEEP_DIRECT
    } else if name == protocol::REPORT.as_bytes() && !value.is_empty() {
        REPORT
    } else if name == protocol::FLUSH_LIST.as_bytes() && !value.is_empty() {
        FLUSH
    } else if (name == protocol::KEEP.as_bytes() || name == protocol::ONLY.as_bytes())
        && !value.is_empty()
    {
        SCOPED
    } else {
        0
    }
}

/// What every switch's name starts with (`protocol.rs`).
const SWITCH_PREFIX: &[u8] = b"EATMYDATA_";

/// Whether the C string at `string` starts with `prefix`, which holds no
/// NUL; read a byte at a time, so that the other entries of a long
/// environment cost a byte or two each, not a strlen.
///
/// # Safety
/// `string` points to a NUL-terminated string.
unsafe fn starts_with(string: *const c_char, prefix: &[u8]) -> bool {
    // c_char is i8 on x86_64 and u8 on aarch64: read the bytes as u8.
    let bytes = string.cast::<u8>();
    for (offset, &wanted) in prefix.iter().enumerate() {
        // SAFETY: the bytes before this one matched the prefix, so none of
        // them was the terminator: this one is still in the string.
        if unsafe { *bytes.add(offset) } != wanted {
            return false;
        }
    }
    true
}

/// Calls `visit` with each entry of the environment that starts with
/// `prefix`, as getenv reads it: without locks or allocation.
fn each_entry(prefix: &[u8], mut visit: impl FnMut(&'static CStr)) {
    // SAFETY: environ is libc's NULL-terminated array of C strings.
    let mut entry = unsafe { environ };
    while !entry.is_null() {
        // SAFETY: `entry` points into the array, before its terminator.
        let string = unsafe { *entry };
        if string.is_null() {
            break;
        }
        // SAFETY: each entry is a NUL-terminated string that libc keeps.
        if unsafe { starts_with(string, prefix) } {
            // SAFETY: as above.
            visit(unsafe { CStr::from_ptr(string) });
        }
        // SAFETY: the terminator has not been reached, so the next slot exists.
        entry = unsafe { entry.add(1) };
    }
}

/// The value of environment variable `name`, with its terminating NUL.
pub fn variable(name: &str) -> Option<&'static CStr> {
    let name = name.as_bytes();
    let mut found = None;
    each_entry(name, |entry| {
        let bytes = entry.to_bytes_with_nul();
        // each_entry visits only entries that start with the name.
        if found.is_none() && bytes.len() > name.len() && bytes.get(name.len()) == Some(&b'=') {
            found = bytes
                .get(name.len() + 1..)
                .and_then(|value| CStr::from_bytes_with_nul(value).ok());
        }
    });
    found
}

fn read_environment() -> u8 {
    let mut state = KNOWN;
    each_entry(SWITCH_PREFIX, |entry| state |= bits_of(entry.to_bytes()));
    state
}

/// The switches, read on first use: every hook asks, so the known case is
/// one load, inlined, and the first reading is out of line.
#[inline(always)]
fn state() -> u8 {
    let state = STATE.load(Ordering::Relaxed);
    if state & KNOWN != 0 {
        return state;
    }
    first_state()
}

#[cold]
#[inline(never)]
fn first_state() -> u8 {
    let state = read_environment();
    STATE.store(state, Ordering::Relaxed);
    state
}

/// The switches as read once, for a decision that asks several questions.
#[derive(Clone, Copy)]
pub struct Switches(u8);

impl Switches {
    /// Whether the library is eating syncs in this process.
    #[inline(always)]
    pub fn eating(self) -> bool {
        self.0 & DISABLED == 0
    }

    /// Whether `O_DIRECT` is dropped from opens and `F_SETFL`.
    #[inline(always)]
    pub fn drop_direct(self) -> bool {
        self.0 & (DISABLED | KEEP_DIRECT) == 0
    }

    /// Whether this process counts what it skips, for `eatmydata --report`.
    #[inline(always)]
    pub fn reporting(self) -> bool {
        self.0 & (DISABLED | REPORT) == REPORT
    }

    /// Whether this process records where it skips syncs, for
    /// `eatmydata --sync-at-exit`.
    #[inline(always)]
    pub fn flushing(self) -> bool {
        self.0 & (DISABLED | FLUSH) == FLUSH
    }

    /// Whether `EATMYDATA_KEEP` or `EATMYDATA_ONLY` scopes the eating by
    /// mount, so that each sync asks where its file is (`keep.rs`).
    #[inline(always)]
    pub fn scoped(self) -> bool {
        self.0 & (DISABLED | SCOPED) == SCOPED
    }
}

/// This process's switches.
#[inline(always)]
pub fn switches() -> Switches {
    Switches(state())
}

/// Whether the library is eating syncs in this process.
pub fn eating() -> bool {
    switches().eating()
}

/// Whether `O_DIRECT` is dropped from opens and `F_SETFL`.
pub fn drop_direct() -> bool {
    switches().drop_direct()
}

/// Whether this process counts what it skips, for `eatmydata --report`.
pub fn reporting() -> bool {
    switches().reporting()
}

/// Whether this process records where it skips syncs, for
/// `eatmydata --sync-at-exit`.
#[inline(always)]
pub fn flushing() -> bool {
    switches().flushing()
}

/// `eatmydata_eating`: the shim's question, as a C boolean.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_eating() -> c_int {
    c_int::from(eating())
}

/// Reads the switches now, for the constructor's warm-up.
pub fn warm_up() {
    state();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_read_like_booleans() {
        assert_eq!(bits_of(b"EATMYDATA_DISABLE=1"), DISABLED);
        assert_eq!(bits_of(b"EATMYDATA_DISABLE=yes"), DISABLED);
        assert_eq!(bits_of(b"EATMYDATA_DISABLE=0"), 0);
        assert_eq!(bits_of(b"EATMYDATA_DISABLE="), 0);
        assert_eq!(bits_of(b"EATMYDATA_KEEP_DIRECT=1"), KEEP_DIRECT);
        assert_eq!(bits_of(b"EATMYDATA_REPORT=/tmp/r"), REPORT);
        assert_eq!(bits_of(b"EATMYDATA_REPORT="), 0);
        assert_eq!(bits_of(b"EATMYDATA_FLUSH_LIST=/tmp/f"), FLUSH);
        assert_eq!(bits_of(b"EATMYDATA_FLUSH_LIST="), 0);
        assert_eq!(bits_of(b"EATMYDATA_KEEP=/b"), SCOPED);
        assert_eq!(bits_of(b"EATMYDATA_ONLY=/a:/c"), SCOPED);
        assert_eq!(bits_of(b"EATMYDATA_KEEP="), 0);
        assert_eq!(bits_of(b"EATMYDATA_KEEP_DIRECT=/b"), KEEP_DIRECT);
    }

    #[test]
    fn other_entries_are_ignored() {
        assert_eq!(bits_of(b"EATMYDATA_DISABLED=1"), 0);
        assert_eq!(bits_of(b"XEATMYDATA_DISABLE=1"), 0);
        assert_eq!(bits_of(b"EATMYDATA_DISABLE"), 0);
        assert_eq!(bits_of(b"=1"), 0);
        assert_eq!(bits_of(b""), 0);
    }
}
