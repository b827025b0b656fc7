//! The libraries a dynamic program names (`DT_NEEDED` in its dynamic
//! section), read as its loader reads them: the dynamic section found by
//! `PT_DYNAMIC`, the string table by the address `DT_STRTAB` gives, mapped
//! to the file through the `PT_LOAD` segments. Bounded like the rest: at
//! most [`MAX_ENTRIES`] entries and a megabyte of names.
//!
//! Asked for one thing: whether a sanitizer runtime is among them. ASan,
//! TSan, MSan, HWASan and LSan check at start-up that they come first in
//! the link map and exit otherwise ("ASan runtime does not come first in
//! initial library list"), which any `LD_PRELOAD` breaks.

use super::{Header, ReadAt, Segments, read_exact_at};

const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;
const DT_STRSZ: u64 = 10;
/// Dynamic entries read at most (a real program has a few dozen).
const MAX_ENTRIES: u64 = 4096;

#[allow(dead_code)] // is_sanitizer_path: for LD_PRELOAD entries, which this crate never reads
#[path = "../../../src/durability/sanitizer.rs"]
mod sanitizer;
pub use sanitizer::is_sanitizer;

/// Whether the program names a sanitizer runtime among its libraries;
/// `false` when its dynamic section cannot be read.
pub(crate) fn links_sanitizer(
    source: &(impl ReadAt + ?Sized),
    header: &Header,
    segments: &Segments,
) -> bool {
    needed(source, header, segments)
        .unwrap_or_default()
        .iter()
        .any(|name| is_sanitizer(name))
}

/// The `DT_NEEDED` names, in order.
fn needed(
    source: &(impl ReadAt + ?Sized),
    header: &Header,
    segments: &Segments,
) -> Option<Vec<Vec<u8>>> {
    let field = header.field();
    let (offset, size) = segments.dynamic?;
    let word = if header.is64 { 8 } else { 4 };
    let size = size.min(MAX_ENTRIES * 2 * word);
    let dynamic = read_exact_at(source, size, offset)?;
    let (mut names, mut strtab, mut strsz) = (Vec::new(), None, None);
    let entry_size = usize::try_from(2 * word).ok()?;
    for entry in dynamic.chunks_exact(entry_size) {
        let tag = field.word(entry, 0)?;
        let value = field.word(entry, entry_size / 2)?;
        match tag {
            DT_NULL => break,
            DT_NEEDED => names.push(value),
            DT_STRTAB => strtab = Some(value),
            DT_STRSZ => strsz = Some(value),
            _ => {}
        }
    }
    let address = strtab?;
    let at = segments.loads.iter().find_map(|&(vaddr, offset, filesz)| {
        let into = address.checked_sub(vaddr)?;
        (into < filesz).then(|| offset.checked_add(into))?
    })?;
    let strings = read_exact_at(source, strsz?.min(1 << 20), at)?;
    let name = |at: u64| {
        let rest = strings.get(usize::try_from(at).ok()?..)?;
        Some(rest.split(|&b| b == 0).next()?.to_vec())
    };
    names.into_iter().map(name).collect()
}
