//! Any bytes, as the file a user points `eatmydata` at: the reader must
//! answer (a kind, or "not ELF") without panicking, and in bounded time.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = eatmydata_elf::inspect_elf(data);
    let _ = eatmydata_elf::loader_named(data);
});
