//! Any bytes, as the memory of a loaded object whose dynamic section the
//! library's lookup reads in place: the reader must answer (found or not)
//! without panicking and in bounded time, whatever the tables say.
//!
//! The first 16 bytes choose the load bias and where the dynamic section
//! is; the rest is the object's memory, placed at an address near the bias
//! so that both readings of a table's address (moved by the loader or not)
//! are tried.

#![no_main]

use eatmydata_dynsym::{Memory, Tables};
use libfuzzer_sys::fuzz_target;

/// The object's memory: `bytes` from address `at`.
struct Flat<'a> {
    bytes: &'a [u8],
    at: u64,
}

impl Memory for Flat<'_> {
    fn bytes(&self, address: u64, len: u64) -> Option<&[u8]> {
        let start = usize::try_from(address.checked_sub(self.at)?).ok()?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        self.bytes.get(start..end)
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((head, memory)) = data.split_first_chunk::<16>() else {
        return;
    };
    let base = u64::from_le_bytes(head[..8].try_into().unwrap());
    let offset = u64::from_le_bytes(head[8..].try_into().unwrap());
    // The memory at the bias itself, or at address 0 (a program's).
    let at = if base & 1 == 0 { base & !0xfff } else { 0 };
    let flat = Flat { bytes: memory, at };
    let dynamic = at.wrapping_add(offset % (memory.len() as u64 + 1));
    if let Some(tables) = Tables::read(&flat, base, dynamic) {
        for name in [&b"fsync"[..], b"", b"open64", b"io_uring_submit", b"a"] {
            let _ = tables.find(&flat, name);
        }
    }
});
