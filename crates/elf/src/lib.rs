//! What kind of program a command is, read from its ELF file: whether the
//! dynamic loader will run it (and so honour `LD_PRELOAD`), whether that
//! loader is of the library's class (a 32-bit program's is not), which
//! libc's loader it is, and whether it is a Go program, which makes its
//! system calls itself even when it is dynamically linked.
//!
//! Only headers (and the interpreter's name) are read, with positioned
//! reads, and a dynamic program's code for one instruction pattern
//! ([`uring`]): no mapping, no parsing of anything the kernel would not look at,
//! and any oddity answers "not known", which leaves the command to be run
//! as asked. A crate of its own, so that a fuzz target (`fuzz/`) can feed
//! it malformed files: it must answer, never crash or hang, whatever the
//! bytes.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// What a program is, as far as `LD_PRELOAD` is concerned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// Has an interpreter (the dynamic loader) and is not Go.
    Dynamic,
    /// Has an interpreter that cannot load the library: see [`Foreign`].
    Foreign(Foreign),
    /// No interpreter: the loader never runs, `LD_PRELOAD` is never read.
    Static,
    /// Go's build information is in it: Go calls the kernel directly.
    Go,
    /// Dynamic, and its own code makes `io_uring_enter` system calls
    /// (fio's io_uring engine): the library serves its other calls, but
    /// the entries those submit never pass through libc.
    EntersUring,
    /// Not ELF, or not readable: a script's interpreter is followed first.
    Unknown,
}

/// Why a dynamically linked program cannot have the library preloaded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Foreign {
    /// A 32-bit program under this 64-bit command: its loader is 32-bit,
    /// the library 64-bit.
    Bits32,
    /// Its loader is neither glibc's nor musl's, which the library is made
    /// and tested for.
    UnknownLoader,
    /// A musl program, and the library found names something musl lacks
    /// (set by the command, which knows the library).
    LibraryNotForMusl,
    /// Built for another architecture (an arm64 program run by qemu-user
    /// on x86_64): its loader cannot open this machine's library.
    Machine,
    /// Links a sanitizer runtime (`libasan`, `libtsan` ...: see
    /// [`needed::is_sanitizer`]) that checks it comes first in the link
    /// map and exits otherwise.
    Sanitizer,
}

/// Whose dynamic loader a program names (its `PT_INTERP`).
#[derive(Clone, Debug, PartialEq)]
pub enum Loader {
    /// glibc's `ld-linux*.so.*` (or `ld64.so.*` on some architectures).
    Glibc,
    /// musl's `ld-musl-ARCH.so.1`, which is musl's libc as well.
    Musl,
    /// Another loader, by its path as the file gives it.
    Other(PathBuf),
}

/// What the command needs to know about a program.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub kind: Kind,
    /// The loader, for a program that has one.
    pub loader: Option<Loader>,
}

/// Positioned reads from a file, or from bytes in memory (the fuzz target).
pub trait ReadAt {
    /// Reads up to `buffer.len()` bytes at `offset`; fewer at the end.
    fn read_at(&self, buffer: &mut [u8], offset: u64) -> io::Result<usize>;
}

impl ReadAt for File {
    fn read_at(&self, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
        FileExt::read_at(self, buffer, offset)
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
        let start = usize::try_from(offset).map_or(self.len(), |at| at.min(self.len()));
        let available = self.get(start..).unwrap_or_default();
        let count = available.len().min(buffer.len());
        buffer[..count].copy_from_slice(&available[..count]);
        Ok(count)
    }
}

/// Fills `buffer` from `offset`, or fails.
fn read_exact_at_into(
    source: &(impl ReadAt + ?Sized),
    buffer: &mut [u8],
    offset: u64,
) -> Option<()> {
    let mut done = 0;
    while done < buffer.len() {
        let at = offset.checked_add(u64::try_from(done).ok()?)?;
        match source.read_at(&mut buffer[done..], at) {
            Ok(0) => return None,
            Ok(count) => done += count,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(())
}

const PT_INTERP: u32 = 3;
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PF_W: u32 = 2;
/// The start of Go's build information (`.go.buildinfo`).
const GO_BUILDINFO_MAGIC: &[u8] = b"\xff Go buildinf:";
/// How far into a writable segment Go's build information is looked for.
const GO_SCAN_LIMIT: u64 = 64 * 1024;
/// Writable segments looked into for Go's build information (Go's linker
/// makes one or two; a crafted file must not make us read gigabytes).
const MAX_SCANNED_SEGMENTS: usize = 8;
/// The longest interpreter path read.
const PATH_MAX: u64 = 4096;
/// `#!` lines followed, as the kernel's own limit.
const MAX_SCRIPT_DEPTH: usize = 4;

/// The kind of the program `path` names, following `#!` lines.
pub fn kind(path: &Path) -> Kind {
    inspect(path).kind
}

/// What the program `path` names is, following `#!` lines.
pub fn inspect(path: &Path) -> Program {
    let unknown = Program {
        kind: Kind::Unknown,
        loader: None,
    };
    let mut path = path.to_owned();
    for _ in 0..=MAX_SCRIPT_DEPTH {
        let Ok(file) = File::open(&path) else {
            return unknown;
        };
        match interpreter_of_script(&file) {
            Some(next) => path = next,
            None => return inspect_elf(&file).unwrap_or(unknown),
        }
    }
    unknown
}

/// What an ELF file (or bytes) is; `None` when it is not one. Never panics,
/// and reads at most a few megabytes whatever the headers claim.
pub fn inspect_elf(source: &(impl ReadAt + ?Sized)) -> Option<Program> {
    let mut bytes = [0u8; 64];
    let read = source.read_at(&mut bytes, 0).ok()?;
    if read < 52 {
        return None;
    }
    let header = Header::parse(&bytes)?;
    let segments = segments(source, &header)?;
    let go = has_go_section(source, &header).unwrap_or(false)
        || segments
            .writable
            .iter()
            .take(MAX_SCANNED_SEGMENTS)
            .any(|&(offset, size)| has_go_magic(source, offset, size));
    let loader = segments
        .interpreter
        .map(|(offset, size)| loader_at(source, offset, size));
    let kind = if go {
        Kind::Go
    } else if loader.is_none() {
        Kind::Static
    } else if !header.is64 && cfg!(target_pointer_width = "64") {
        Kind::Foreign(Foreign::Bits32)
    } else if !machine::native(u16::try_from(header.machine).unwrap_or(u16::MAX)) {
        Kind::Foreign(Foreign::Machine)
    } else if let Some(Loader::Other(_)) = loader {
        Kind::Foreign(Foreign::UnknownLoader)
    } else if needed::links_sanitizer(source, &header, &segments) {
        Kind::Foreign(Foreign::Sanitizer)
    } else if uring::enters_uring(source, &header) {
        Kind::EntersUring
    } else {
        Kind::Dynamic
    };
    Some(Program { kind, loader })
}

/// Whether an ELF file (a loader, a library) is of this machine's class
/// and architecture, which is what a loader that is to take the library
/// must be; `None` when it is not ELF. Only its header is read.
pub fn is_native(source: &(impl ReadAt + ?Sized)) -> Option<bool> {
    let mut bytes = [0u8; 64];
    if source.read_at(&mut bytes, 0).ok()? < 52 {
        return None;
    }
    let header = Header::parse(&bytes)?;
    let class = header.is64 == cfg!(target_pointer_width = "64");
    Some(class && machine::native(u16::try_from(header.machine).ok()?))
}

/// The program a `#!` line names, if the file starts with one.
fn interpreter_of_script(file: &File) -> Option<PathBuf> {
    let mut head = [0u8; 256];
    let read = ReadAt::read_at(file, &mut head, 0).ok()?;
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
    /// `e_machine`.
    machine: u64,
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
            machine: field.uint(bytes, 18, 2)?,
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

/// `len` bytes at `offset`, when there are that many and no more than a
/// megabyte (no header is believed beyond that).
fn read_exact_at(source: &(impl ReadAt + ?Sized), len: u64, offset: u64) -> Option<Vec<u8>> {
    let mut buffer = vec![0u8; usize::try_from(len).ok().filter(|&n| n <= 1 << 20)?];
    read_exact_at_into(source, &mut buffer, offset)?;
    Some(buffer)
}

/// What the program headers say: the interpreter's name, where it is, and
/// the writable segments (where Go's build information may be).
struct Segments {
    interpreter: Option<(u64, u64)>,
    writable: Vec<(u64, u64)>,
    /// The dynamic section's place in the file.
    dynamic: Option<(u64, u64)>,
    /// Every loaded segment: address, offset, size in the file.
    loads: Vec<(u64, u64, u64)>,
}

fn segments(source: &(impl ReadAt + ?Sized), header: &Header) -> Option<Segments> {
    let field = header.field();
    let table = read_exact_at(
        source,
        header.phnum.checked_mul(header.phentsize)?,
        header.phoff,
    )?;
    let mut found = Segments {
        interpreter: None,
        writable: Vec::new(),
        dynamic: None,
        loads: Vec::new(),
    };
    let entry_size = usize::try_from(header.phentsize).ok().filter(|&n| n > 0)?;
    for entry in table.chunks_exact(entry_size) {
        let p_type = field.uint(entry, 0, 4)?;
        // p_flags sits after p_type in ELF64, near the end in ELF32.
        let (flags_at, offset_at, vaddr_at, filesz_at) = if header.is64 {
            (4, 8, 0x10, 0x20)
        } else {
            (0x18, 4, 8, 0x10)
        };
        let flags = field.uint(entry, flags_at, 4)?;
        let place = (field.word(entry, offset_at)?, field.word(entry, filesz_at)?);
        if p_type == u64::from(PT_INTERP) {
            found.interpreter = Some(place);
        } else if p_type == u64::from(PT_DYNAMIC) {
            found.dynamic = Some(place);
        } else if p_type == u64::from(PT_LOAD) {
            found
                .loads
                .push((field.word(entry, vaddr_at)?, place.0, place.1));
            if flags & u64::from(PF_W) != 0 {
                found.writable.push(place);
            }
        }
    }
    Some(found)
}

/// Whose loader the `PT_INTERP` at `offset` names.
fn loader_at(source: &(impl ReadAt + ?Sized), offset: u64, size: u64) -> Loader {
    let name = read_exact_at(source, size.min(PATH_MAX), offset).unwrap_or_default();
    let name = name.split(|&b| b == 0).next().unwrap_or_default();
    loader_named(name)
}

/// The loader a `PT_INTERP` path names, by its file name.
pub fn loader_named(path: &[u8]) -> Loader {
    match loader::Loader::named(path) {
        loader::Loader::Musl => Loader::Musl,
        loader::Loader::Glibc => Loader::Glibc,
        loader::Loader::Other => {
            use std::os::unix::ffi::OsStrExt;
            Loader::Other(PathBuf::from(std::ffi::OsStr::from_bytes(path)))
        }
    }
}

/// Whether a section is named `.go.buildinfo`.
fn has_go_section(source: &(impl ReadAt + ?Sized), header: &Header) -> Option<bool> {
    let field = header.field();
    let table = read_exact_at(
        source,
        header.shnum.checked_mul(header.shentsize)?,
        header.shoff,
    )?;
    let entries: Vec<&[u8]> = table
        .chunks_exact(usize::try_from(header.shentsize).ok().filter(|&n| n > 0)?)
        .collect();
    let strings = entries.get(usize::try_from(header.shstrndx).ok()?)?;
    let (offset_at, size_at) = if header.is64 {
        (0x18, 0x20)
    } else {
        (0x10, 0x14)
    };
    let names = read_exact_at(
        source,
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
fn has_go_magic(source: &(impl ReadAt + ?Sized), offset: u64, size: u64) -> bool {
    let Some(data) = read_exact_at(source, size.min(GO_SCAN_LIMIT), offset) else {
        return false;
    };
    data.chunks(16)
        .any(|chunk| chunk.starts_with(GO_BUILDINFO_MAGIC))
}

#[path = "../../../src/durability/loader.rs"]
mod loader; // whose loader a PT_INTERP names, shared with the exec rule
#[path = "../../../src/durability/machine.rs"]
mod machine; // this machine's e_machine, shared with the exec rule
pub mod needed; // the libraries a program names (DT_NEEDED): a sanitizer runtime?
mod uring; // whether the code makes its own io_uring_enter calls

#[cfg(test)]
mod tests;
