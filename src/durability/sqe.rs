//! io_uring submission entries: what one becomes under eatmydata. The
//! layout is the kernel's `struct io_uring_sqe` (`linux/io_uring.h`),
//! whose first 64 bytes every entry size shares; the tests check each
//! opcode and offset against the system's header.

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
    /// An `OPENAT2`: the `flags` (the first u64) of the `struct
    /// open_how` at this address, in the submitter's memory, lose the
    /// dropped open flags ([`open_how_flags`]). The kernel copies it
    /// at submission.
    OpenHow(u64),
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
        OP_OPENAT => changed(op_flags, dropped),
        OP_OPENAT2 => Rewrite::OpenHow(u64_at(entry, OFF)),
        _ => Rewrite::Keep,
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

/// `entry` as [`rewrite`] said, for `Nop` and `OpFlags`; `Keep` and
/// `OpenHow` leave it as it is. A NOP keeps `flags`, `fd` (unused),
/// `user_data` and `personality`, and clears the rest, which a NOP
/// would otherwise read (`nop_flags`, `len`).
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
        Rewrite::Keep | Rewrite::OpenHow(_) => {}
    }
}

/// The `open_how.flags` an `OPENAT2` entry's how gets, if it changes.
pub fn open_how_flags(flags: u64, dropped: u32) -> Option<u64> {
    let dropped = u64::from(dropped);
    (flags & dropped != 0).then_some(flags & !dropped)
}

#[cfg(test)]
mod tests {
    use super::super::{dropped_open_flags, sqe};
    use super::{Rewrite, Target};

    fn entry(opcode: u8) -> [u8; sqe::SIZE] {
        let mut entry = [0; sqe::SIZE];
        entry[sqe::OPCODE] = opcode;
        entry[sqe::FD..sqe::FD + 4].copy_from_slice(&7i32.to_ne_bytes());
        entry[sqe::USER_DATA..sqe::USER_DATA + 8].copy_from_slice(&0xfeed_u64.to_ne_bytes());
        entry
    }

    fn set_u32(entry: &mut [u8; sqe::SIZE], at: usize, value: u32) {
        entry[at..at + 4].copy_from_slice(&value.to_ne_bytes());
    }

    const DROPPED: u32 = dropped_open_flags(false) as u32;

    #[test]
    fn a_sync_entry_on_a_disk_becomes_a_nop_keeping_its_chain() {
        let mut fsync = entry(sqe::OP_FSYNC);
        fsync[sqe::FLAGS] = 1 << 2; // IOSQE_IO_LINK
        set_u32(&mut fsync, sqe::OP_FLAGS, 1); // IORING_FSYNC_DATASYNC
        set_u32(&mut fsync, sqe::LEN, 4096);
        let mut asked = None;
        let rewrite = sqe::rewrite(&fsync, DROPPED, |target| {
            asked = Some(target);
            true
        });
        assert_eq!(asked, Some(Target::Fd(7)));
        assert_eq!(rewrite, Rewrite::Nop);
        let mut nop = fsync;
        sqe::apply(&mut nop, rewrite);
        let mut expected = entry(sqe::OP_NOP);
        expected[sqe::FLAGS] = 1 << 2;
        assert_eq!(nop, expected);
    }

    #[test]
    fn a_sync_entry_the_kernel_would_refuse_or_not_on_a_disk_is_kept() {
        let on_disk = |_| true;
        let fsync = entry(sqe::OP_FSYNC);
        assert_eq!(sqe::rewrite(&fsync, DROPPED, |_| false), Rewrite::Keep);
        let mut unknown_flags = fsync;
        set_u32(&mut unknown_flags, sqe::OP_FLAGS, 2);
        assert_eq!(
            sqe::rewrite(&unknown_flags, DROPPED, on_disk),
            Rewrite::Keep
        );
        let mut addr = fsync;
        addr[sqe::ADDR] = 1;
        assert_eq!(sqe::rewrite(&addr, DROPPED, on_disk), Rewrite::Keep);
        let mut buffer_select = fsync;
        buffer_select[sqe::FLAGS] = 1 << 5;
        assert_eq!(
            sqe::rewrite(&buffer_select, DROPPED, on_disk),
            Rewrite::Keep
        );
        let mut ioprio = fsync;
        ioprio[sqe::IOPRIO] = 1;
        assert_eq!(sqe::rewrite(&ioprio, DROPPED, on_disk), Rewrite::Keep);
        let mut range = entry(sqe::OP_SYNC_FILE_RANGE);
        set_u32(&mut range, sqe::OP_FLAGS, 8);
        assert_eq!(sqe::rewrite(&range, DROPPED, on_disk), Rewrite::Keep);
        set_u32(&mut range, sqe::OP_FLAGS, libc::SYNC_FILE_RANGE_WRITE);
        assert_eq!(sqe::rewrite(&range, DROPPED, on_disk), Rewrite::Nop);
        range[sqe::OFF + 7] = 0x80; // a negative offset
        assert_eq!(sqe::rewrite(&range, DROPPED, on_disk), Rewrite::Keep);
    }

    #[test]
    fn a_fixed_file_is_asked_by_its_slot() {
        let mut fsync = entry(sqe::OP_FSYNC);
        fsync[sqe::FLAGS] = sqe::FIXED_FILE;
        let mut asked = None;
        sqe::rewrite(&fsync, DROPPED, |target| {
            asked = Some(target);
            false
        });
        assert_eq!(asked, Some(Target::Fixed(7)));
    }

    #[test]
    fn writes_and_opens_lose_their_sync_flags_only() {
        let mut write = entry(sqe::OP_WRITE);
        let rwf = (libc::RWF_DSYNC | libc::RWF_NOWAIT) as u32;
        set_u32(&mut write, sqe::OP_FLAGS, rwf);
        let rewrite = sqe::rewrite(&write, DROPPED, |_| unreachable!());
        assert_eq!(rewrite, Rewrite::OpFlags(libc::RWF_NOWAIT as u32));
        sqe::apply(&mut write, rewrite);
        assert_eq!(
            write[sqe::OP_FLAGS..sqe::OP_FLAGS + 4],
            (libc::RWF_NOWAIT as u32).to_ne_bytes()
        );
        let plain = entry(sqe::OP_WRITEV);
        assert_eq!(sqe::rewrite(&plain, DROPPED, |_| false), Rewrite::Keep);
        let mut open = entry(sqe::OP_OPENAT);
        set_u32(
            &mut open,
            sqe::OP_FLAGS,
            (libc::O_CREAT | libc::O_SYNC) as u32,
        );
        assert_eq!(
            sqe::rewrite(&open, DROPPED, |_| false),
            Rewrite::OpFlags(libc::O_CREAT as u32)
        );
        let mut open2 = entry(sqe::OP_OPENAT2);
        open2[sqe::OFF..sqe::OFF + 8].copy_from_slice(&0x1000_u64.to_ne_bytes());
        assert_eq!(
            sqe::rewrite(&open2, DROPPED, |_| false),
            Rewrite::OpenHow(0x1000)
        );
        let how = (libc::O_RDWR | libc::O_DSYNC) as u64;
        assert_eq!(sqe::open_how_flags(how, DROPPED), Some(libc::O_RDWR as u64));
        assert_eq!(sqe::open_how_flags(libc::O_RDWR as u64, DROPPED), None);
        assert_eq!(
            sqe::rewrite(&entry(sqe::OP_NOP), DROPPED, |_| true),
            Rewrite::Keep
        );
        // Every opcode rewrite may change is one may_rewrite names.
        for opcode in 0..=u8::MAX {
            let mut any = entry(opcode);
            set_u32(&mut any, sqe::OP_FLAGS, u32::MAX);
            if sqe::rewrite(&any, DROPPED, |_| true) != Rewrite::Keep {
                assert!(sqe::may_rewrite(opcode), "{opcode}");
            }
        }
        assert!(!sqe::may_rewrite(sqe::OP_NOP));
    }

    /// The opcodes and entry offsets used here, as the kernel's header
    /// (`linux/io_uring.h`, from the system's headers) has them.
    #[test]
    fn opcodes_and_offsets_are_the_kernel_headers() {
        use std::process::Command;
        let dir = std::env::temp_dir().join(format!(
            "eatmydata-sqe-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("sqe.c");
        let fields = [
            ("opcode", sqe::OPCODE),
            ("flags", sqe::FLAGS),
            ("ioprio", sqe::IOPRIO),
            ("fd", sqe::FD),
            ("addr2", sqe::OFF),
            ("addr", sqe::ADDR),
            ("len", sqe::LEN),
            ("rw_flags", sqe::OP_FLAGS),
            ("fsync_flags", sqe::OP_FLAGS),
            ("open_flags", sqe::OP_FLAGS),
            ("sync_range_flags", sqe::OP_FLAGS),
            ("user_data", sqe::USER_DATA),
            ("buf_index", sqe::BUF_INDEX),
            ("personality", sqe::PERSONALITY),
            ("splice_fd_in", sqe::SPLICE_FD_IN),
            ("addr3", sqe::ADDR3),
        ];
        let ops = [
            ("IORING_OP_NOP", sqe::OP_NOP),
            ("IORING_OP_WRITEV", sqe::OP_WRITEV),
            ("IORING_OP_FSYNC", sqe::OP_FSYNC),
            ("IORING_OP_WRITE_FIXED", sqe::OP_WRITE_FIXED),
            ("IORING_OP_SYNC_FILE_RANGE", sqe::OP_SYNC_FILE_RANGE),
            ("IORING_OP_OPENAT", sqe::OP_OPENAT),
            ("IORING_OP_WRITE", sqe::OP_WRITE),
            ("IORING_OP_OPENAT2", sqe::OP_OPENAT2),
        ];
        let mut program = String::from(
            "#include <stddef.h>\n#include <stdio.h>\n#include <linux/io_uring.h>\n\
             int main(void) {\n",
        );
        for (field, _) in fields {
            program += &format!("printf(\"%zu \", offsetof(struct io_uring_sqe, {field}));\n");
        }
        for (op, _) in ops {
            program += &format!("printf(\"%d \", {op});\n");
        }
        program += "printf(\"%d %d\", IOSQE_FIXED_FILE, IORING_FSYNC_DATASYNC);\n";
        program +=
            "#ifdef IORING_OP_WRITEV_FIXED\nprintf(\" %d\", IORING_OP_WRITEV_FIXED);\n#endif\n";
        program += "return 0; }\n";
        std::fs::write(&source, program).unwrap();
        let binary = dir.join("sqe");
        let built = Command::new("cc")
            .arg("-o")
            .arg(&binary)
            .arg(&source)
            .status();
        assert!(built.unwrap().success(), "cc");
        let output = Command::new(&binary).output().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let mut ours: Vec<String> = fields.iter().map(|(_, at)| at.to_string()).collect();
        ours.extend(ops.iter().map(|(_, op)| op.to_string()));
        ours.push(format!("{} 1", sqe::FIXED_FILE));
        let headers = String::from_utf8_lossy(&output.stdout).to_string();
        let ours = ours.join(" ");
        // A header new enough to name WRITEV_FIXED must agree on it too.
        let expected = match headers.strip_prefix(&ours) {
            Some("") => ours.clone(),
            Some(_) => format!("{ours} {}", sqe::OP_WRITEV_FIXED),
            None => ours.clone(),
        };
        assert_eq!(headers.trim(), expected);
    }
}
