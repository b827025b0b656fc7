//! Whether a program's own code makes an `io_uring_enter(2)` system call:
//! its number put in the system-call register shortly before the
//! instruction that enters the kernel. Such a call never passes through
//! libc, so a preloaded library cannot see the entries it submits (fio's
//! io_uring engine is one: `mov $0x1aa,%eax` then `syscall`; so is a
//! statically linked liburing's).
//!
//! Only the executable sections are read (the executable `PT_LOAD`
//! segments when a file has no section table), in chunks, up to a bound:
//! a crafted file cannot make us read more than [`MAX_SCANNED`] bytes.
//! The patterns are searched with `memchr`'s vectorised `memmem`; a
//! chance match of the bytes elsewhere only turns on seccomp mode, which
//! serves the program as well.

use memchr::memmem;

use super::{Header, ReadAt, read_exact_at_into};

/// `EM_X86_64` and `EM_AARCH64`, from `e_machine`.
const EM_X86_64: u64 = 62;
const EM_AARCH64: u64 = 183;
/// `__NR_io_uring_enter`, the same number on every architecture.
const NR_IO_URING_ENTER: u32 = 426;
/// `SHF_EXECINSTR`, `SHT_NOBITS`, `PF_X`, `PT_LOAD`.
const SHF_EXECINSTR: u64 = 4;
const SHT_NOBITS: u64 = 8;
const PF_X: u64 = 1;
const PT_LOAD: u64 = 1;
/// The most bytes of code read, whatever the headers say (the largest
/// programs have a few tens of megabytes of code).
const MAX_SCANNED: u64 = 256 << 20;
/// Code is read in chunks of this size, overlapping by [`WINDOW`].
const CHUNK: usize = 1 << 20;
/// How far after the number the instruction that enters the kernel may
/// be: the other arguments' registers are usually set in between.
const WINDOW: usize = 64;

/// Whether the code of the ELF file `source`, whose header is `header`,
/// holds an inline `io_uring_enter` for its machine (x86_64 or aarch64;
/// other machines answer false).
pub(crate) fn enters_uring(source: &(impl ReadAt + ?Sized), header: &Header) -> bool {
    let Some(find): Option<fn(&[u8]) -> bool> = (match header.machine {
        EM_X86_64 if header.is64 && header.little => Some(x86_64),
        EM_AARCH64 if header.is64 && header.little => Some(aarch64),
        _ => None,
    }) else {
        return false;
    };
    let places = code(source, header).unwrap_or_default();
    let mut budget = MAX_SCANNED;
    let mut buffer = vec![0u8; CHUNK + WINDOW];
    for (offset, size) in places {
        let size = size.min(budget);
        budget -= size;
        let mut done = 0;
        while done < size {
            // Each chunk starts at a multiple of CHUNK (4-byte aligned from
            // the section's start, as aarch64's instructions are) and holds
            // WINDOW bytes of the next, so that a pattern across a border
            // is seen whole.
            let len = (size - done).min((CHUNK + WINDOW) as u64) as usize;
            let Some(at) = offset.checked_add(done) else {
                break;
            };
            if read_exact_at_into(source, &mut buffer[..len], at).is_none() {
                break;
            }
            if find(&buffer[..len]) {
                return true;
            }
            done += CHUNK as u64;
        }
    }
    false
}

/// Where the code is: the executable sections with bytes in the file, or
/// the executable `PT_LOAD` segments when there is no section table.
fn code(source: &(impl ReadAt + ?Sized), header: &Header) -> Option<Vec<(u64, u64)>> {
    let field = header.field();
    // A table of `count` entries of `entry` bytes (at least `least`).
    let table = |count: u64, entry: u64, at: u64, least: usize| {
        let entry = usize::try_from(entry).ok().filter(|&n| n >= least)?;
        let mut bytes = vec![0u8; usize::try_from(count).ok()?.checked_mul(entry)?];
        (bytes.len() <= 1 << 20).then_some(())?;
        read_exact_at_into(source, &mut bytes, at)?;
        Some((bytes, entry))
    };
    let mut found = Vec::new();
    if header.shnum > 0
        && let Some((sections, size)) = table(header.shnum, header.shentsize, header.shoff, 64)
    {
        for entry in sections.chunks_exact(size) {
            let (kind, flags) = (field.uint(entry, 4, 4)?, field.uint(entry, 8, 8)?);
            if flags & SHF_EXECINSTR != 0 && kind != SHT_NOBITS {
                found.push((field.uint(entry, 0x18, 8)?, field.uint(entry, 0x20, 8)?));
            }
        }
        return Some(found);
    }
    let (segments, size) = table(header.phnum, header.phentsize, header.phoff, 56)?;
    for entry in segments.chunks_exact(size) {
        let (kind, flags) = (field.uint(entry, 0, 4)?, field.uint(entry, 4, 4)?);
        if kind == PT_LOAD && flags & PF_X != 0 {
            found.push((field.uint(entry, 8, 8)?, field.uint(entry, 0x20, 8)?));
        }
    }
    Some(found)
}

/// x86_64: `mov $426,%eax` (`b8 aa 01 00 00`) or `mov $426,%rax` (`48 c7
/// c0 aa 01 00 00`), then `syscall` (`0f 05`) within [`WINDOW`] bytes.
/// libc's `syscall(426, ...)` puts the number in `%edi`: not this.
fn x86_64(code: &[u8]) -> bool {
    let number = NR_IO_URING_ENTER.to_le_bytes();
    memmem::find_iter(code, &number).any(|at| {
        let eax = at >= 1 && code[at - 1] == 0xb8;
        let rax = at >= 3 && code[at - 3..at] == [0x48, 0xc7, 0xc0];
        let after = &code[at + 4..code.len().min(at + 4 + WINDOW)];
        (eax || rax) && memmem::find(after, &[0x0f, 0x05]).is_some()
    })
}

/// aarch64: `mov x8, #426` or `mov w8, #426` (`movz`), then `svc #0`
/// within [`WINDOW`] bytes, each an aligned instruction.
fn aarch64(code: &[u8]) -> bool {
    let movz = |sf: u32| (sf | 0x5280_0000 | (NR_IO_URING_ENTER << 5) | 8).to_le_bytes();
    let svc = 0xd400_0001u32.to_le_bytes();
    [movz(0), movz(1 << 31)].iter().any(|mov| {
        memmem::find_iter(code, mov).any(|at| {
            let after = code.get(at + 4..code.len().min(at + 4 + WINDOW));
            at % 4 == 0 && after.is_some_and(|after| after.chunks_exact(4).any(|word| word == svc))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_x86_64_pattern_is_the_number_in_eax_or_rax_then_syscall() {
        let fio = b"\x41\x8b\x7d\x00\xb8\xaa\x01\x00\x00\x89\xea\x0f\x05\x89\xc6";
        assert!(x86_64(fio));
        assert!(x86_64(b"\x48\xc7\xc0\xaa\x01\x00\x00\x0f\x05"));
        // libc's syscall(426, ...): the number in %edi, then a call.
        assert!(!x86_64(b"\xbf\xaa\x01\x00\x00\x31\xc0\xe8\x00\x00\x00\x00"));
        // Another number, and the number with no syscall near it.
        assert!(!x86_64(b"\xb8\xab\x01\x00\x00\x0f\x05"));
        let mut far = b"\xb8\xaa\x01\x00\x00".to_vec();
        far.extend([0x90; WINDOW]);
        far.extend([0x0f, 0x05]);
        assert!(!x86_64(&far));
        // At the very end of a chunk: no panic.
        assert!(!x86_64(b"\xb8\xaa\x01\x00\x00"));
        assert!(!x86_64(b"\xaa\x01\x00\x00"));
    }

    #[test]
    fn the_aarch64_pattern_is_movz_x8_then_svc_0_aligned() {
        let mov_x8 = 0xd280_3548u32.to_le_bytes();
        let mov_w8 = 0x5280_3548u32.to_le_bytes();
        let svc = 0xd400_0001u32.to_le_bytes();
        let nop = 0xd503_201fu32.to_le_bytes();
        for mov in [mov_x8, mov_w8] {
            assert!(aarch64(&[mov, nop, svc].concat()));
            // Not on an instruction boundary.
            assert!(!aarch64(&[&[0u8; 2][..], &mov, &nop, &svc].concat()));
        }
        assert!(!aarch64(&[mov_x8, nop].concat()));
        assert!(!aarch64(&[nop, svc].concat()));
    }
}
