//! What kind of program a command is, read from its ELF file: whether the
//! dynamic loader will run it (and so honour `LD_PRELOAD`), and whether it
//! is a Go program, which makes its system calls itself even when it is
//! dynamically linked.
//!
//! Only headers are read, with positioned reads: no mapping, no parsing of
//! anything the kernel would not look at, and any oddity answers "not
//! known", which leaves the command to be run as asked.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// What a program is, as far as `LD_PRELOAD` is concerned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// Has an interpreter (the dynamic loader) and is not Go.
    Dynamic,
    /// No interpreter: the loader never runs, `LD_PRELOAD` is never read.
    Static,
    /// Go's build information is in it: Go calls the kernel directly.
    Go,
    /// Not ELF, or not readable: a script's interpreter is followed first.
    Unknown,
}

const PT_INTERP: u32 = 3;
const PT_LOAD: u32 = 1;
const PF_W: u32 = 2;
/// The start of Go's build information (`.go.buildinfo`).
const GO_BUILDINFO_MAGIC: &[u8] = b"\xff Go buildinf:";
/// How far into a writable segment Go's build information is looked for.
const GO_SCAN_LIMIT: u64 = 64 * 1024;
/// `#!` lines followed, as the kernel's own limit.
const MAX_SCRIPT_DEPTH: usize = 4;

/// The kind of the program `path` names, following `#!` lines.
pub fn kind(path: &Path) -> Kind {
    let mut path = path.to_owned();
    for _ in 0..=MAX_SCRIPT_DEPTH {
        let Ok(file) = File::open(&path) else {
            return Kind::Unknown;
        };
        match interpreter_of_script(&file) {
            Some(next) => path = next,
            None => return elf_kind(&file).unwrap_or(Kind::Unknown),
        }
    }
    Kind::Unknown
}

/// The program a `#!` line names, if the file starts with one.
fn interpreter_of_script(file: &File) -> Option<PathBuf> {
    let mut head = [0u8; 256];
    let read = file.read_at(&mut head, 0).ok()?;
    let line = head[..read].strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let name = line
        .split(|b| b.is_ascii_whitespace())
        .find(|word| !word.is_empty())?;
    use std::os::unix::ffi::OsStrExt;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(name)))
}

/// The fields of an ELF header we need, in either class and byte order.
struct Header {
    is64: bool,
    little: bool,
    phoff: u64,
    phentsize: u64,
    phnum: u64,
    shoff: u64,
    shentsize: u64,
    shnum: u64,
    shstrndx: u64,
}

impl Header {
    fn parse(bytes: &[u8; 64]) -> Option<Header> {
        if &bytes[..4] != b"\x7fELF" {
            return None;
        }
        let is64 = match bytes[4] {
            1 => false,
            2 => true,
            _ => return None,
        };
        let little = match bytes[5] {
            1 => true,
            2 => false,
            _ => return None,
        };
        let field = Field { is64, little };
        let (ph, sh) = if is64 { (0x20, 0x28) } else { (0x1c, 0x20) };
        let sizes = if is64 { 0x36 } else { 0x2a };
        Some(Header {
            is64,
            little,
            phoff: field.word(bytes, ph)?,
            shoff: field.word(bytes, sh)?,
            phentsize: field.uint(bytes, sizes, 2)?,
            phnum: field.uint(bytes, sizes + 2, 2)?,
            shentsize: field.uint(bytes, sizes + 4, 2)?,
            shnum: field.uint(bytes, sizes + 6, 2)?,
            shstrndx: field.uint(bytes, sizes + 8, 2)?,
        })
    }

    fn field(&self) -> Field {
        Field {
            is64: self.is64,
            little: self.little,
        }
    }
}

/// Reads integers of a file's class and byte order.
#[derive(Clone, Copy)]
struct Field {
    is64: bool,
    little: bool,
}

impl Field {
    fn uint(self, bytes: &[u8], at: usize, size: usize) -> Option<u64> {
        let slice = bytes.get(at..at.checked_add(size)?)?;
        let fold = |acc: u64, &b: &u8| (acc << 8) | u64::from(b);
        Some(if self.little {
            slice.iter().rev().fold(0, fold)
        } else {
            slice.iter().fold(0, fold)
        })
    }

    /// An address or offset: 8 bytes in ELF64, 4 in ELF32.
    fn word(self, bytes: &[u8], at: usize) -> Option<u64> {
        self.uint(bytes, at, if self.is64 { 8 } else { 4 })
    }
}

fn read_exact_at(file: &File, len: u64, offset: u64) -> Option<Vec<u8>> {
    let mut buffer = vec![0u8; usize::try_from(len).ok().filter(|&n| n <= 1 << 20)?];
    file.read_exact_at(&mut buffer, offset).ok()?;
    Some(buffer)
}

/// The kind of an ELF file; `None` when it is not one.
fn elf_kind(file: &File) -> Option<Kind> {
    let mut bytes = [0u8; 64];
    let read = file.read_at(&mut bytes, 0).ok()?;
    if read < 52 {
        return None;
    }
    let header = Header::parse(&bytes)?;
    let field = header.field();
    let table = read_exact_at(file, header.phnum * header.phentsize, header.phoff)?;
    let mut interpreter = false;
    let mut writable = Vec::new();
    for entry in table.chunks_exact(usize::try_from(header.phentsize).ok()?) {
        let p_type = field.uint(entry, 0, 4)?;
        // p_flags sits after p_type in ELF64, near the end in ELF32.
        let (flags_at, offset_at, filesz_at) = if header.is64 {
            (4, 8, 0x20)
        } else {
            (0x18, 4, 0x10)
        };
        let flags = field.uint(entry, flags_at, 4)?;
        if p_type == u64::from(PT_INTERP) {
            interpreter = true;
        } else if p_type == u64::from(PT_LOAD) && flags & u64::from(PF_W) != 0 {
            writable.push((field.word(entry, offset_at)?, field.word(entry, filesz_at)?));
        }
    }
    if has_go_section(file, &header).unwrap_or(false)
        || writable
            .iter()
            .any(|&(offset, size)| has_go_magic(file, offset, size))
    {
        return Some(Kind::Go);
    }
    Some(if interpreter {
        Kind::Dynamic
    } else {
        Kind::Static
    })
}

/// Whether a section is named `.go.buildinfo`.
fn has_go_section(file: &File, header: &Header) -> Option<bool> {
    let field = header.field();
    let table = read_exact_at(file, header.shnum * header.shentsize, header.shoff)?;
    let entries: Vec<&[u8]> = table
        .chunks_exact(usize::try_from(header.shentsize).ok()?)
        .collect();
    let strings = entries.get(usize::try_from(header.shstrndx).ok()?)?;
    let (offset_at, size_at) = if header.is64 {
        (0x18, 0x20)
    } else {
        (0x10, 0x14)
    };
    let names = read_exact_at(
        file,
        field.word(strings, size_at)?,
        field.word(strings, offset_at)?,
    )?;
    Some(entries.iter().any(|entry| {
        let name_at = field
            .uint(entry, 0, 4)
            .and_then(|n| usize::try_from(n).ok());
        let name = name_at.and_then(|at| names.get(at..)).unwrap_or_default();
        name.starts_with(b".go.buildinfo\0")
    }))
}

/// Whether Go's build information starts at a 16-byte boundary in the
/// first `GO_SCAN_LIMIT` bytes of a segment, where Go's linker puts it (a
/// file without section headers is still found).
fn has_go_magic(file: &File, offset: u64, size: u64) -> bool {
    let Some(data) = read_exact_at(file, size.min(GO_SCAN_LIMIT), offset) else {
        return false;
    };
    data.chunks(16)
        .any(|chunk| chunk.starts_with(GO_BUILDINFO_MAGIC))
}

#[cfg(test)]
mod tests;
