//! This library's GNU build ID, and whether a file carries it: how the
//! exec check knows, in whatever root the process has come to, that the
//! library's path still names this library, without learning anything at
//! start-up (most processes never exec).
//!
//! The ID is read from the library's own note segments in memory, and
//! from a file's by its program headers: ELF64, little-endian, as this
//! library is.

use core::ffi::{CStr, c_long};

use crate::kernel::{close_own, open_own, raw, status};
use crate::objects::Own;

/// `NT_GNU_BUILD_ID`, under the owner name `GNU`.
const NT_GNU_BUILD_ID: u32 = 3;
const GNU: &[u8] = b"GNU\0";
const PT_NOTE: u32 = 4;
/// Program headers read at most, and the size of each (ELF64).
const MAX_HEADERS: usize = 64;
const PHENT: usize = 56;
/// A note segment read at most from a file.
const MAX_NOTE: usize = 1024;

/// The build ID among `notes` (a note segment's bytes), if one is.
pub fn in_notes(mut notes: &[u8]) -> Option<&[u8]> {
    let word = |bytes: &[u8], at: usize| {
        let four = bytes.get(at..at.checked_add(4)?)?;
        four.try_into().ok().map(u32::from_le_bytes)
    };
    while notes.len() >= 12 {
        let name = usize::try_from(word(notes, 0)?).ok()?;
        let desc = usize::try_from(word(notes, 4)?).ok()?;
        let kind = word(notes, 8)?;
        let desc_at = 12usize.checked_add(name.checked_add(3)? & !3)?;
        let end = desc_at.checked_add(desc.checked_add(3)? & !3)?;
        let name_bytes = notes.get(12..12usize.checked_add(name)?)?;
        if kind == NT_GNU_BUILD_ID && name_bytes == GNU {
            return notes.get(desc_at..desc_at.checked_add(desc)?);
        }
        notes = notes.get(end..)?;
    }
    None
}

/// This library's build ID, from its notes as loaded.
pub fn own(own: &Own) -> Option<&'static [u8]> {
    own.notes.iter().find_map(|notes| in_notes(notes))
}

/// A descriptor of a file the check reads, closed when dropped.
struct File(c_long);

impl Drop for File {
    fn drop(&mut self) {
        close_own(self.0);
    }
}

impl File {
    /// Fills `buffer` from `offset`, or fails.
    fn read_at(&self, buffer: &mut [u8], offset: u64) -> Option<()> {
        let offset = c_long::try_from(offset).ok()?;
        let (at, len) = (buffer.as_mut_ptr() as c_long, buffer.len() as c_long);
        let read = raw(libc::SYS_pread64, [self.0, at, len, offset, 0, 0]);
        (read == len).then_some(())
    }
}

/// Whether the file at `path` (links followed) carries the build ID `id`,
/// and then the file's `(st_dev, st_ino)`, read from the descriptor read,
/// so that both tell of one file. Only a regular file is opened: in
/// another root, whoever owns it may have put a device node at the
/// library's name, whose open alone acts (a watchdog's starts it).
pub fn carried(path: &CStr, id: &[u8]) -> Option<(u64, u64)> {
    let (kind, named) = status(libc::AT_FDCWD.into(), path, 0)?;
    if kind != libc::S_IFREG {
        return None;
    }
    let flags = libc::O_RDONLY | libc::O_NOCTTY | libc::O_NONBLOCK;
    let file = File(open_own(path, flags)?);
    // The file opened is the one judged, not one put there since.
    if status(file.0, c"", libc::AT_EMPTY_PATH) != Some((kind, named)) {
        return None;
    }
    let mut head = [0u8; 64];
    file.read_at(&mut head, 0)?;
    let header = crate::image::header(&head)?;
    if !header.bits64 || !header.little || header.phentsize != PHENT {
        return None;
    }
    let mut table = [0u8; MAX_HEADERS * PHENT];
    let table = table.get_mut(..header.phnum.min(MAX_HEADERS) * PHENT)?;
    file.read_at(table, header.phoff)?;
    let mut found = false;
    for entry in table.chunks_exact(PHENT) {
        let field = |at: usize| Some(u64::from_le_bytes(entry.get(at..at + 8)?.try_into().ok()?));
        if entry.get(..4) != Some(&PT_NOTE.to_le_bytes()) {
            continue;
        }
        let size = usize::try_from(field(0x20)?).ok()?.min(MAX_NOTE);
        let mut notes = [0u8; MAX_NOTE];
        let notes = notes.get_mut(..size)?;
        file.read_at(notes, field(8)?)?;
        if in_notes(notes) == Some(id) {
            found = true;
            break;
        }
    }
    found.then_some(named)
}

/// The device and inode of the file at `path` relative to `dirfd`, links
/// followed (`AT_EMPTY_PATH` and an empty path: `dirfd` itself).
pub fn identity(dirfd: c_long, path: &CStr, flags: libc::c_int) -> Option<(u64, u64)> {
    status(dirfd, path, flags).map(|(_, identity)| identity)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One note: owner `name`, type `kind`, descriptor `desc`, padded.
    fn note(name: &[u8], kind: u32, desc: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend((name.len() as u32).to_le_bytes());
        bytes.extend((desc.len() as u32).to_le_bytes());
        bytes.extend(kind.to_le_bytes());
        bytes.extend(name);
        bytes.resize(bytes.len().next_multiple_of(4), 0);
        bytes.extend(desc);
        bytes.resize(bytes.len().next_multiple_of(4), 0);
        bytes
    }

    #[test]
    fn the_build_id_is_found_after_other_notes() {
        let id = [0xab; 20];
        let mut notes = note(b"GNU\0", 5, &[1, 2, 3, 4, 5, 6, 7, 8]);
        notes.extend(note(b"Go\0", 3, &[9; 7]));
        notes.extend(note(b"GNU\0", NT_GNU_BUILD_ID, &id));
        assert_eq!(in_notes(&notes), Some(&id[..]));
    }

    #[test]
    fn no_build_id_and_cut_notes_give_none() {
        let notes = note(b"GNU\0", 1, &[0; 16]);
        assert_eq!(in_notes(&notes), None);
        let whole = note(b"GNU\0", NT_GNU_BUILD_ID, &[7; 20]);
        for cut in 0..whole.len() {
            assert_eq!(in_notes(&whole[..cut]), None, "{cut}");
        }
        assert_eq!(in_notes(&[0xff; 12]), None);
    }
}
