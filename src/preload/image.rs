//! What a program about to be executed is, read from its file for the exec
//! rule (`durability/exec.rs`): its class, machine, loader, and whether it
//! names a sanitizer runtime among its libraries; a `#!` script's
//! interpreter is read in its place, as the kernel would run it.
//!
//! Everything is read with the library's own kernel calls into buffers on
//! the stack, at most a few kilobytes in a handful of `pread`s, as the
//! loader reads it (program headers; the dynamic section by `PT_DYNAMIC`;
//! the names by `DT_STRTAB`, mapped to the file through the `PT_LOAD`
//! segments). Anything odd answers `None`, "not known", and the program
//! is then taken as this machine's, as the runtime takes one it cannot
//! read. The parsing is pure and tested alone, and beside the ELF reader
//! the command uses (`crates/elf`) on real programs.

use core::ffi::{CStr, c_int, c_long};

use crate::durability::exec::{Image, Loader};
use crate::durability::machine;
use crate::durability::sanitizer::is_sanitizer;
use crate::errno;
use crate::kernel::{close_own, raw, status};

/// `#!` lines followed, as the kernel's own limit.
const MAX_SCRIPT_DEPTH: usize = 4;
/// The longest `#!` line the kernel reads (`BINPRM_BUF_SIZE`).
const SCRIPT_HEAD: usize = 256;
/// Program headers read at most (real programs have about a dozen).
const MAX_HEADERS: usize = 64;
/// Loadable segments kept at most.
const MAX_LOADS: usize = 16;
/// Dynamic entries read at most, in chunks of [`CHUNK`].
const MAX_DYNAMIC: usize = 1024;
const CHUNK: usize = 32;
/// `DT_NEEDED` names looked at at most, each by its first bytes.
const MAX_NEEDED: usize = 64;
const NAME: usize = 64;

const PT_LOAD: u64 = 1;
const PT_DYNAMIC: u64 = 2;
const PT_INTERP: u64 = 3;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;

/// A descriptor of the program's file, closed when dropped.
struct File(c_long);

impl Drop for File {
    fn drop(&mut self) {
        close_own(self.0);
    }
}

impl File {
    /// Opens `path` relative to `dirfd` as `execveat` would look it up
    /// with `flags`: `AT_EMPTY_PATH` and an empty path reads `dirfd` itself
    /// (through `/proc/self/fd`, which also opens an `O_PATH` descriptor).
    fn open(dirfd: c_int, path: &CStr, flags: c_int) -> Option<File> {
        let mut proc_path = [0u8; 32];
        let (dirfd, path) = if path.is_empty() && flags & libc::AT_EMPTY_PATH != 0 {
            (libc::AT_FDCWD, fd_path(dirfd, &mut proc_path)?)
        } else {
            (dirfd, path)
        };
        let mut open = libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK;
        if flags & libc::AT_SYMLINK_NOFOLLOW != 0 {
            open |= libc::O_NOFOLLOW;
        }
        let args = [dirfd.into(), path.as_ptr() as c_long, open.into(), 0, 0, 0];
        let fd = raw(libc::SYS_openat, args);
        (fd >= 0).then_some(File(fd))
    }

    /// Fills `buffer` from `offset`, or fails.
    fn read_at(&self, buffer: &mut [u8], offset: u64) -> Option<()> {
        let offset = c_long::try_from(offset).ok()?;
        let (at, len) = (buffer.as_mut_ptr() as c_long, buffer.len() as c_long);
        let read = raw(libc::SYS_pread64, [self.0, at, len, offset, 0, 0]);
        (read == len).then_some(())
    }

    /// Whether executing this file could raise privileges (see
    /// [`raises`]); yes when its mode cannot be read.
    fn raises(&self) -> bool {
        // SAFETY: statx is plain data, all zeroes a valid value.
        let mut stat: libc::statx = unsafe { core::mem::zeroed() };
        let empty = c"".as_ptr() as c_long;
        let at = libc::AT_EMPTY_PATH.into();
        let mask = libc::STATX_MODE.into();
        if raw(
            libc::SYS_statx,
            [self.0, empty, at, mask, (&raw mut stat) as c_long, 0],
        ) != 0
        {
            return true;
        }
        let mode = u32::from(stat.stx_mode);
        let setgid = mode & libc::S_ISGID != 0 && mode & libc::S_IXGRP != 0;
        let capabilities = c"security.capability".as_ptr() as c_long;
        let capable = raw(libc::SYS_fgetxattr, [self.0, capabilities, 0, 0, 0, 0]) >= 0;
        mode & libc::S_ISUID != 0 || setgid || capable
    }

    /// Reads what there is from `offset`, at most `buffer.len()` bytes.
    fn read_some(&self, buffer: &mut [u8], offset: u64) -> usize {
        let (at, len) = (buffer.as_mut_ptr() as c_long, buffer.len() as c_long);
        let read = raw(libc::SYS_pread64, [self.0, at, len, offset as c_long, 0, 0]);
        usize::try_from(read).unwrap_or(0)
    }
}

/// `/proc/self/fd/N`, NUL-terminated, in `room`.
fn fd_path(fd: c_int, room: &mut [u8; 32]) -> Option<&CStr> {
    let prefix = b"/proc/self/fd/";
    room.get_mut(..prefix.len())?.copy_from_slice(prefix);
    let mut digits = [0u8; 10];
    let (mut n, mut count) = (u32::try_from(fd).ok()?, 0);
    loop {
        *digits.get_mut(count)? = b'0' + (n % 10) as u8;
        count += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for (at, &digit) in digits.iter().take(count).rev().enumerate() {
        *room.get_mut(prefix.len() + at)? = digit;
    }
    *room.get_mut(prefix.len() + count)? = 0;
    CStr::from_bytes_until_nul(room).ok()
}

/// Whether the kernel would execute the file at `path` for this process
/// (its effective ids): a regular file with an execute bit it may use, on
/// a mount that allows it; `Err` with the errno `execve` fails with when
/// not (`EACCES` for a folder or any other kind of file). errno is kept.
pub fn executable(path: &CStr) -> Result<(), c_int> {
    let saved = errno::get();
    let answer = match access(path, libc::X_OK) {
        0 => match kind(path) {
            Some(libc::S_IFREG) => Ok(()),
            Some(_) => Err(libc::EACCES),
            None => Err(errno::get()),
        },
        _ => Err(errno::get()),
    };
    errno::set(saved);
    answer
}

/// `faccessat2(AT_FDCWD, path, mode, AT_EACCESS)`, by the effective ids
/// as `execve` checks; `faccessat`, by the real ones, on a kernel without
/// it.
fn access(path: &CStr, mode: c_int) -> c_long {
    let ask = |number: c_long, flags: c_long| {
        let at = libc::AT_FDCWD.into();
        raw(
            number,
            [at, path.as_ptr() as c_long, mode.into(), flags, 0, 0],
        )
    };
    match ask(libc::SYS_faccessat2, libc::AT_EACCESS.into()) {
        -1 if errno::get() == libc::ENOSYS => ask(libc::SYS_faccessat, 0),
        answer => answer,
    }
}

/// The kind of file at `path` (`S_IFMT` of its mode), links followed.
fn kind(path: &CStr) -> Option<u32> {
    status(libc::AT_FDCWD.into(), path, 0).map(|(kind, _)| kind)
}

/// What the program at `path` (relative to `dirfd`, looked up with
/// `execveat`'s `flags`) is; a script's interpreter in its place.
pub fn of(dirfd: c_int, path: &CStr, flags: c_int) -> Option<Image> {
    walk(dirfd, path, flags, |_| {}, elf)
}

/// Whether executing the program at `path` (as [`of`] finds it) could
/// raise the process's privileges: a set-user-ID bit, a set-group-ID bit
/// with group execute, or file capabilities, on the program or on any
/// `#!` interpreter it names (the kernel takes the final interpreter's;
/// binfmt_misc's `C` flag, the program's). `None` when it is not an ELF
/// file, or cannot be read.
pub fn raises(dirfd: c_int, path: &CStr, flags: c_int) -> Option<bool> {
    let mut raises = false;
    walk(
        dirfd,
        path,
        flags,
        |file| raises |= file.raises(),
        |_, head| header(head).map(|_| ()),
    )?;
    Some(raises)
}

/// The files the kernel reads to run the program at `path`: `each` is
/// given the program and each `#!` interpreter in turn, and `last` the
/// one that is not a script, with its first bytes.
fn walk<T>(
    dirfd: c_int,
    path: &CStr,
    flags: c_int,
    mut each: impl FnMut(&File),
    last: impl FnOnce(&File, &[u8]) -> Option<T>,
) -> Option<T> {
    let mut file = File::open(dirfd, path, flags)?;
    for _ in 0..=MAX_SCRIPT_DEPTH {
        each(&file);
        let mut head = [0u8; SCRIPT_HEAD];
        let read = file.read_some(&mut head, 0);
        let head = head.get(..read)?;
        let mut name = [0u8; SCRIPT_HEAD + 1];
        match interpreter(head, &mut name) {
            Some(interpreter) => file = File::open(libc::AT_FDCWD, interpreter, 0)?,
            None => return last(&file, head),
        }
    }
    None
}

/// The interpreter a `#!` line names (its first word), NUL-terminated in
/// `room`, if `head` starts with one.
pub fn interpreter<'a>(head: &[u8], room: &'a mut [u8; SCRIPT_HEAD + 1]) -> Option<&'a CStr> {
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let word = line
        .split(|&b| b == b' ' || b == b'\t')
        .find(|word| !word.is_empty())?;
    room.get_mut(..word.len())?.copy_from_slice(word);
    *room.get_mut(word.len())? = 0;
    CStr::from_bytes_until_nul(room).ok()
}

/// The fields of an ELF header the rule needs, in either class and order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Header {
    pub bits64: bool,
    pub little: bool,
    pub machine: u16,
    pub phoff: u64,
    pub phentsize: usize,
    pub phnum: usize,
}

impl Header {
    /// An unsigned integer of `size` bytes at `at` of `bytes`.
    fn uint(&self, bytes: &[u8], at: usize, size: usize) -> Option<u64> {
        let slice = bytes.get(at..at.checked_add(size)?)?;
        let fold = |acc: u64, &b: &u8| (acc << 8) | u64::from(b);
        Some(match self.little {
            true => slice.iter().rev().fold(0, fold),
            false => slice.iter().fold(0, fold),
        })
    }

    /// An address or offset: 8 bytes in ELF64, 4 in ELF32.
    fn word(&self, bytes: &[u8], at: usize) -> Option<u64> {
        self.uint(bytes, at, if self.bits64 { 8 } else { 4 })
    }
}

/// The ELF header at the start of `bytes`, if it is one.
pub fn header(bytes: &[u8]) -> Option<Header> {
    if bytes.get(..4)? != b"\x7fELF" {
        return None;
    }
    let bits64 = match bytes.get(4)? {
        1 => false,
        2 => true,
        _ => return None,
    };
    let little = match bytes.get(5)? {
        1 => true,
        2 => false,
        _ => return None,
    };
    let mut found = Header {
        bits64,
        little,
        machine: 0,
        phoff: 0,
        phentsize: 0,
        phnum: 0,
    };
    let (phoff, sizes) = if bits64 { (0x20, 0x36) } else { (0x1c, 0x2a) };
    found.machine = u16::try_from(found.uint(bytes, 18, 2)?).ok()?;
    found.phoff = found.word(bytes, phoff)?;
    found.phentsize = usize::try_from(found.uint(bytes, sizes, 2)?).ok()?;
    found.phnum = usize::try_from(found.uint(bytes, sizes + 2, 2)?).ok()?;
    Some(found)
}

/// What the program headers say.
#[derive(Debug, Default, PartialEq)]
pub struct Segments {
    /// `PT_INTERP`: offset and size in the file.
    pub interpreter: Option<(u64, u64)>,
    /// `PT_DYNAMIC`: offset and size in the file.
    pub dynamic: Option<(u64, u64)>,
    /// `PT_LOAD`: address, offset, size in the file.
    pub loads: [(u64, u64, u64); MAX_LOADS],
    pub load_count: usize,
}

impl Segments {
    /// The file offset of the loaded address `address`.
    fn offset_of(&self, address: u64) -> Option<u64> {
        let loads = self.loads.get(..self.load_count)?;
        loads.iter().find_map(|&(vaddr, offset, size)| {
            let into = address.checked_sub(vaddr)?;
            (into < size).then(|| offset.checked_add(into))?
        })
    }
}

/// The program headers' `table`, read by `header`.
pub fn segments(header: &Header, table: &[u8]) -> Option<Segments> {
    let mut found = Segments::default();
    let (offset_at, vaddr_at, size_at) = match header.bits64 {
        true => (8, 0x10, 0x20),
        false => (4, 8, 0x10),
    };
    for entry in table.chunks_exact(header.phentsize.max(1)) {
        let kind = header.uint(entry, 0, 4)?;
        let place = (header.word(entry, offset_at)?, header.word(entry, size_at)?);
        match kind {
            PT_INTERP => found.interpreter = Some(place),
            PT_DYNAMIC => found.dynamic = Some(place),
            PT_LOAD => {
                if let Some(slot) = found.loads.get_mut(found.load_count) {
                    *slot = (header.word(entry, vaddr_at)?, place.0, place.1);
                    found.load_count += 1;
                }
            }
            _ => {}
        }
    }
    Some(found)
}

/// What the ELF file `file` is; `head` its first bytes.
fn elf(file: &File, head: &[u8]) -> Option<Image> {
    let header = header(head)?;
    let size = header.phnum.checked_mul(header.phentsize)?;
    let mut table = [0u8; MAX_HEADERS * 64];
    let table = table.get_mut(..size)?;
    file.read_at(table, header.phoff)?;
    let segments = segments(&header, table)?;
    let loader = match segments.interpreter {
        None => None,
        Some((offset, size)) => {
            let mut name = [0u8; SCRIPT_HEAD];
            let size = usize::try_from(size).ok()?.min(name.len());
            let name = name.get_mut(..size)?;
            file.read_at(name, offset)?;
            let name = name.split(|&b| b == 0).next().unwrap_or_default();
            Some(Loader::named(name))
        }
    };
    let mut image = Image {
        bits64: header.bits64,
        native: machine::native(header.machine),
        loader,
        sanitizer: false,
    };
    // Only a program that could take the library is asked for its needs.
    if image.bits64 && image.native && matches!(loader, Some(Loader::Glibc | Loader::Musl)) {
        image.sanitizer = links_sanitizer(file, &header, &segments);
    }
    Some(image)
}

/// Whether one of the program's `DT_NEEDED` names is a sanitizer runtime;
/// `false` when its dynamic section cannot be read.
fn links_sanitizer(file: &File, header: &Header, segments: &Segments) -> bool {
    let mut needed = [0u64; MAX_NEEDED];
    let Some((count, strtab)) = needs(file, header, segments, &mut needed) else {
        return false;
    };
    let Some(strings) = segments.offset_of(strtab) else {
        return false;
    };
    needed.iter().take(count).any(|&name| {
        let mut bytes = [0u8; NAME];
        let read = strings
            .checked_add(name)
            .map_or(0, |at| file.read_some(&mut bytes, at));
        let bytes = bytes.get(..read).unwrap_or_default();
        is_sanitizer(bytes.split(|&b| b == 0).next().unwrap_or_default())
    })
}

/// The `DT_NEEDED` string offsets (into `needed`, their count) and the
/// `DT_STRTAB` address.
fn needs(
    file: &File,
    header: &Header,
    segments: &Segments,
    needed: &mut [u64; MAX_NEEDED],
) -> Option<(usize, u64)> {
    let (offset, size) = segments.dynamic?;
    let entry = if header.bits64 { 16 } else { 8 };
    let entries = usize::try_from(size).ok()?.min(MAX_DYNAMIC * entry) / entry;
    let (mut count, mut strtab) = (0, None);
    let mut chunk = [0u8; CHUNK * 16];
    for first in (0..entries).step_by(CHUNK) {
        let take = (entries - first).min(CHUNK) * entry;
        let at = offset.checked_add(u64::try_from(first * entry).ok()?)?;
        let bytes = chunk.get_mut(..take)?;
        file.read_at(bytes, at)?;
        for pair in bytes.chunks_exact(entry) {
            let (tag, value) = (header.word(pair, 0)?, header.word(pair, entry / 2)?);
            match tag {
                DT_NULL => return Some((count, strtab?)),
                DT_NEEDED => {
                    if let Some(slot) = needed.get_mut(count) {
                        *slot = value;
                        count += 1;
                    }
                }
                DT_STRTAB => strtab = Some(value),
                _ => {}
            }
        }
    }
    Some((count, strtab?))
}

#[cfg(test)]
#[path = "image/tests.rs"]
mod tests;
