//! Whether this process eats its syncs, and whether it keeps `O_DIRECT`.
//!
//! Two environment switches, read once per process and inherited by its
//! children like any other variable:
//!
//! - `EATMYDATA_DISABLE=1` makes the library a pure pass-through, for images
//!   that set `LD_PRELOAD` globally and want durability back for one command;
//! - `EATMYDATA_KEEP_DIRECT=1` keeps `O_DIRECT`, which is otherwise dropped
//!   because a database on direct I/O still waits for the disk on each write.
//!
//! A hook may run before our constructor, so the switches are read lazily
//! from `environ`, without `getenv` locks or allocation.

use core::ffi::{CStr, c_char, c_int};
use core::sync::atomic::{AtomicU8, Ordering};

const KNOWN: u8 = 1;
const DISABLED: u8 = 2;
const KEEP_DIRECT: u8 = 4;

static STATE: AtomicU8 = AtomicU8::new(0);

unsafe extern "C" {
    static environ: *const *const c_char;
}

/// Whether a switch's value turns it on: set, non-empty and not `0`.
pub fn switch_on(value: &[u8]) -> bool {
    !value.is_empty() && value != b"0"
}

/// The state bits that an environment entry `NAME=value` contributes.
pub fn bits_of(entry: &[u8]) -> u8 {
    let (name, value) = match entry.iter().position(|&b| b == b'=') {
        Some(at) => entry.split_at(at),
        None => return 0,
    };
    let value = value.get(1..).unwrap_or_default();
    match name {
        b"EATMYDATA_DISABLE" if switch_on(value) => DISABLED,
        b"EATMYDATA_KEEP_DIRECT" if switch_on(value) => KEEP_DIRECT,
        _ => 0,
    }
}

fn read_environment() -> u8 {
    let mut state = KNOWN;
    // SAFETY: environ is libc's NULL-terminated array of C strings; we only
    // read it, as getenv does.
    let mut entry = unsafe { environ };
    while !entry.is_null() {
        // SAFETY: `entry` points into the array, before its terminator.
        let string = unsafe { *entry };
        if string.is_null() {
            break;
        }
        // SAFETY: each entry is a NUL-terminated string.
        state |= bits_of(unsafe { CStr::from_ptr(string) }.to_bytes());
        // SAFETY: the terminator has not been reached, so the next slot exists.
        entry = unsafe { entry.add(1) };
    }
    state
}

fn state() -> u8 {
    let state = STATE.load(Ordering::Relaxed);
    if state & KNOWN != 0 {
        return state;
    }
    let state = read_environment();
    STATE.store(state, Ordering::Relaxed);
    state
}

/// Whether the library is eating syncs in this process.
pub fn eating() -> bool {
    state() & DISABLED == 0
}

/// Whether `O_DIRECT` is dropped from opens and `F_SETFL`.
pub fn drop_direct() -> bool {
    state() & (DISABLED | KEEP_DIRECT) == 0
}

/// `eatmydata_eating`: the shim's question, as a C boolean.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_eating() -> c_int {
    c_int::from(eating())
}

/// `eatmydata_warm_up`: called by the shim's constructor, so that the first
/// hooked call of a normal start-up finds everything ready.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_warm_up() {
    state();
    crate::syscall::warm_up();
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
