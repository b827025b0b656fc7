//! io_uring submission entries: what one becomes under eatmydata. The
//! layout is the kernel's `struct io_uring_sqe` (`linux/io_uring.h`),
//! whose first 64 bytes every entry size shares; the tests check each
//! opcode and offset against the system's header.

use super::open::{self, Open, OpenHow};

/// The bytes of an entry read here (a 128-byte entry's second half is
/// never touched).
pub const SIZE: usize = 64;

pub const OP_NOP: u8 = 0;
pub const OP_WRITEV: u8 = 2;
pub const OP_FSYNC: u8 = 3;
pub const OP_WRITE_FIXED: u8 = 5;
pub const OP_SYNC_FILE_RANGE: u8 = 8;
pub const OP_OPENAT: u8 = 18;
pub const OP_WRITE: u8 = 23;
pub const OP_OPENAT2: u8 = 28;
/// Linux 6.15; not in older headers.
pub const OP_WRITEV_FIXED: u8 = 61;

/// Offsets: `opcode`, `flags`, `ioprio`, `fd`, `off`/`addr2`, `addr`,
/// `len`, the op's flags (`rw_flags`, `fsync_flags`, `open_flags`,
/// `sync_range_flags`, `nop_flags`), `user_data`, `buf_index`,
/// `personality`, `splice_fd_in`/`file_index`, `addr3`.
pub const OPCODE: usize = 0;
pub const FLAGS: usize = 1;
pub const IOPRIO: usize = 2;
pub const FD: usize = 4;
pub const OFF: usize = 8;
pub const ADDR: usize = 16;
pub const LEN: usize = 24;
pub const OP_FLAGS: usize = 28;
pub const USER_DATA: usize = 32;
pub const BUF_INDEX: usize = 40;
pub const PERSONALITY: usize = 42;
pub const SPLICE_FD_IN: usize = 44;
pub const ADDR3: usize = 48;

/// `IOSQE_FIXED_FILE`: `fd` is an index into the ring's registered files.
pub const FIXED_FILE: u8 = 1 << 0;
/// The entry flags a NOP keeps as the sync entry had them: fixed file,
/// drain, link, hard link, async, skip success. Buffer select (1 << 5)
/// and unknown bits fail an entry in ways a NOP may not; such an entry
/// is left as it is.
const NOP_KEEPS: u8 = 0b0101_1111;
/// `IORING_FSYNC_DATASYNC`, the one `fsync_flags` bit.
const FSYNC_DATASYNC: u32 = 1;

/// The file a sync entry names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A descriptor of the submitting process.
    Fd(i32),
    /// A slot of the ring's registered files (`IOSQE_FIXED_FILE`).
    Fixed(u32),
}

/// What an entry becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rewrite {
    /// Left as it is.
    Keep,
    /// `IORING_OP_NOP`, which completes with 0, keeping `user_data`,
    /// the entry flags (a chain stays a chain) and `personality`.
    Nop,
    /// The op's flags word (`OP_FLAGS`) becomes this value.
    OpFlags(u32),
    /// An `OPENAT2`, whose `struct open_how` of `size` bytes at
    /// `address` in the submitter's memory the submitter reads and hands
    /// to [`openat2`], which says what the entry becomes. The struct
    /// itself is never written: it is the program's.
    OpenHow { address: u64, size: u32 },
    /// An `OPENAT2` asked again as the `OPENAT` entry that opens the same
    /// way: these flags (the dropped ones gone) and mode, in the entry.
    Openat { flags: u32, mode: u32 },
}

fn u32_at(entry: &[u8; SIZE], at: usize) -> u32 {
    u32::from_ne_bytes([entry[at], entry[at + 1], entry[at + 2], entry[at + 3]])
}

fn u16_at(entry: &[u8; SIZE], at: usize) -> u16 {
    u16::from_ne_bytes([entry[at], entry[at + 1]])
}

fn u64_at(entry: &[u8; SIZE], at: usize) -> u64 {
    let mut bytes = [0; 8];
    bytes.copy_from_slice(&entry[at..at + 8]);
    u64::from_ne_bytes(bytes)
}

/// Whether an entry of `opcode` can be rewritten at all: a caller that
/// walks many entries may pass over the others on their first byte.
pub const fn may_rewrite(opcode: u8) -> bool {
    matches!(
        opcode,
        OP_FSYNC
            | OP_SYNC_FILE_RANGE
            | OP_WRITE
            | OP_WRITEV
            | OP_WRITE_FIXED
            | OP_WRITEV_FIXED
            | OP_OPENAT
            | OP_OPENAT2
    )
}

/// What `entry` becomes, with `dropped` the open flags to drop and
/// `reaches_disk` the submitter's answer for a sync entry's file: true
/// only when it is certainly an open file on a disk (a fixed slot the
/// submitter does not know is not). Only an entry the kernel would
/// accept is rewritten, so that a bad one fails as it would without
/// eatmydata: a sync with unknown `fsync_flags`, a non-zero `addr`,
/// `buf_index`, `splice_fd_in` or `ioprio`, buffer select, or a bad
/// `sync_file_range` range keeps its entry.
pub fn rewrite(
    entry: &[u8; SIZE],
    dropped: u32,
    reaches_disk: impl FnOnce(Target) -> bool,
) -> Rewrite {
    let op_flags = u32_at(entry, OP_FLAGS);
    match entry[OPCODE] {
        OP_FSYNC | OP_SYNC_FILE_RANGE => {
            if !sync_accepted(entry) {
                return Rewrite::Keep;
            }
            let fd = u32_at(entry, FD);
            let target = if entry[FLAGS] & FIXED_FILE != 0 {
                Target::Fixed(fd)
            } else {
                Target::Fd(fd as i32)
            };
            if reaches_disk(target) {
                Rewrite::Nop
            } else {
                Rewrite::Keep
            }
        }
        OP_WRITE | OP_WRITEV | OP_WRITE_FIXED | OP_WRITEV_FIXED => {
            changed(op_flags, super::WRITE_SYNC as u32)
        }
        OP_OPENAT => {
            let kept = open::kept_flags(Open::Flags(op_flags), dropped as i32);
            changed(op_flags, op_flags & !kept as u32)
        }
        OP_OPENAT2 => Rewrite::OpenHow {
            address: u64_at(entry, OFF),
            size: u32_at(entry, LEN),
        },
        _ => Rewrite::Keep,
    }
}

/// With syncs kept by mount (`super::mount`): what a `rewrite` of
/// `entry` becomes. A write loses `RWF_SYNC` only where `eaten` says its
/// descriptor's mount is eaten; on a fixed slot, whose mount is not asked,
/// it keeps it. Every other rewrite stands (sync entries asked their
/// mount already, through `reaches_disk`; open entries are given no sync
/// flag to drop).
pub fn scoped(entry: &[u8; SIZE], rewrite: Rewrite, eaten: impl FnOnce(i32) -> bool) -> Rewrite {
    let write = matches!(
        entry[OPCODE],
        OP_WRITE | OP_WRITEV | OP_WRITE_FIXED | OP_WRITEV_FIXED
    );
    match rewrite {
        Rewrite::OpFlags(_) if write => {
            let fixed = entry[FLAGS] & FIXED_FILE != 0;
            if !fixed && eaten(u32_at(entry, FD) as i32) {
                rewrite
            } else {
                Rewrite::Keep
            }
        }
        rewrite => rewrite,
    }
}

/// Whether the kernel would accept a sync entry's own fields.
fn sync_accepted(entry: &[u8; SIZE]) -> bool {
    let common = entry[FLAGS] & !NOP_KEEPS == 0
        && u16_at(entry, IOPRIO) == 0
        && u64_at(entry, ADDR) == 0
        && u16_at(entry, BUF_INDEX) == 0
        && u32_at(entry, SPLICE_FD_IN) == 0;
    let op_flags = u32_at(entry, OP_FLAGS);
    common
        && if entry[OPCODE] == OP_FSYNC {
            op_flags & !FSYNC_DATASYNC == 0
        } else {
            // The range's length is the entry's u32 `len`.
            let offset = u64_at(entry, OFF) as i64;
            super::sync_file_range_valid(offset, i64::from(u32_at(entry, LEN)), op_flags)
        }
}

fn changed(flags: u32, dropped: u32) -> Rewrite {
    if flags & dropped == 0 {
        Rewrite::Keep
    } else {
        Rewrite::OpFlags(flags & !dropped)
    }
}

/// `entry` as [`rewrite`] or [`openat2`] said; `Keep` and `OpenHow`
/// leave it as it is. A NOP keeps `flags`, `fd` (unused), `user_data`
/// and `personality`, and clears the rest, which a NOP would otherwise
/// read (`nop_flags`, `len`). An `OPENAT` made of an `OPENAT2` keeps
/// everything but the opcode, its flags, its mode (in `len`) and the
/// how's address (`off`, which `OPENAT` does not read), cleared.
pub fn apply(entry: &mut [u8; SIZE], rewrite: Rewrite) {
    match rewrite {
        Rewrite::Nop => {
            let kept = *entry;
            *entry = [0; SIZE];
            entry[OPCODE] = OP_NOP;
            entry[FLAGS] = kept[FLAGS];
            entry[FD..FD + 4].copy_from_slice(&kept[FD..FD + 4]);
            entry[USER_DATA..USER_DATA + 8].copy_from_slice(&kept[USER_DATA..USER_DATA + 8]);
            entry[PERSONALITY..PERSONALITY + 2]
                .copy_from_slice(&kept[PERSONALITY..PERSONALITY + 2]);
        }
        Rewrite::OpFlags(flags) => {
            entry[OP_FLAGS..OP_FLAGS + 4].copy_from_slice(&flags.to_ne_bytes());
        }
        Rewrite::Openat { flags, mode } => {
            entry[OPCODE] = OP_OPENAT;
            entry[OFF..OFF + 8].copy_from_slice(&[0; 8]);
            entry[LEN..LEN + 4].copy_from_slice(&mode.to_ne_bytes());
            entry[OP_FLAGS..OP_FLAGS + 4].copy_from_slice(&flags.to_ne_bytes());
        }
        Rewrite::Keep | Rewrite::OpenHow { .. } => {}
    }
}

/// What an `OPENAT2` entry becomes, given its `open_how` as the kernel
/// would read it (`None`: it cannot, or refuses its size or a tail that
/// is not zero; see [`how_of`]). Only an open the kernel would accept
/// as asked loses its flags ([`open::kept_flags`]), and only as an
/// `OPENAT` entry, when one opens the same way: no resolve flags (which
/// only `OPENAT2` carries). The program's struct is never changed; an
/// entry with resolve flags keeps its sync flags (the worst is a flush).
pub fn openat2(how: Option<OpenHow>, dropped: u32) -> Rewrite {
    let Some(how) = how.filter(|how| how.resolve == 0) else {
        return Rewrite::Keep;
    };
    let kept = open::kept_flags(Open::How(how), dropped as i32);
    if kept == how.flags {
        return Rewrite::Keep;
    }
    // Accepted: the flags fit in 32 bits, and the mode in 12.
    Rewrite::Openat {
        flags: kept as u32,
        mode: how.mode as u32,
    }
}

/// The `open_how` in `bytes` (what the submitter read of the `size` it
/// was given, at most a page) as the kernel reads it: `None` when the
/// kernel would refuse the size, or the tail past its first version is
/// not zero (E2BIG), or fewer bytes could be read.
pub fn how_of(bytes: &[u8], size: u64) -> Option<OpenHow> {
    let size = usize::try_from(size).ok()?;
    let bytes = bytes.get(..size)?;
    let word = |i: usize| {
        let mut word = [0u8; 8];
        word.copy_from_slice(bytes.get(i * 8..i * 8 + 8)?);
        Some(u64::from_ne_bytes(word))
    };
    let tail = bytes.get(open::HOW_SIZE_VER0 as usize..)?;
    (open::how_size_accepted(size as u64) && tail.iter().all(|&byte| byte == 0)).then_some(())?;
    Some(OpenHow {
        flags: word(0)?,
        mode: word(1)?,
        resolve: word(2)?,
    })
}

#[cfg(test)]
#[path = "sqe/tests.rs"]
mod tests;
