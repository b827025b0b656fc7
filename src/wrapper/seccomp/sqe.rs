//! One io_uring submission entry, rewritten in place when it asks for
//! durability (see `uring.rs`): the entry's layout is the kernel's
//! `struct io_uring_sqe`, whose first 64 bytes every entry size shares.

use std::os::fd::AsRawFd;

use super::mapping::Map;
use super::notify::Call;
use super::rules::RWF_SYNCS;

pub const OP_NOP: u8 = 0;
pub const OP_WRITEV: u8 = 2;
pub const OP_FSYNC: u8 = 3;
pub const OP_WRITE_FIXED: u8 = 5;
pub const OP_SYNC_FILE_RANGE: u8 = 8;
pub const OP_OPENAT: u8 = 18;
pub const OP_WRITE: u8 = 23;
pub const OP_OPENAT2: u8 = 28;

/// Offsets in an entry: `flags`, `fd`, `off`/`addr2`, the op's flags
/// (`rw_flags`, `open_flags`, ...), `user_data` and `buf_index`.
const FLAGS: usize = 1;
const FD: usize = 4;
const OFF: usize = 8;
const OP_FLAGS: usize = 28;
const USER_DATA: usize = 32;
const BUF_INDEX: usize = 40;

/// One entry rewritten in place, if it asks for durability.
pub fn rewrite(sqes: &Map, at: usize, dropped: u32, call: &Call) {
    let opcode = sqes.u8(at);
    match opcode {
        OP_FSYNC | OP_SYNC_FILE_RANGE if flushes(sqes, at, call) => {
            // Cleared: ioprio; off, addr, len, op flags; buf_index; file
            // index, addr3. Kept: flags, fd, user_data, personality.
            for (offset, len) in [(2, 2), (OFF, USER_DATA - OFF), (BUF_INDEX, 2), (44, 12)] {
                sqes.zero(at + offset, len);
            }
            sqes.set_u8(at, OP_NOP);
        }
        OP_WRITE | OP_WRITEV | OP_WRITE_FIXED => {
            let flags = sqes.u32(at + OP_FLAGS);
            if flags & RWF_SYNCS != 0 {
                sqes.set_u32(at + OP_FLAGS, flags & !RWF_SYNCS);
            }
        }
        OP_OPENAT => {
            let flags = sqes.u32(at + OP_FLAGS);
            if flags & dropped != 0 {
                sqes.set_u32(at + OP_FLAGS, flags & !dropped);
            }
        }
        OP_OPENAT2 => {
            let how = sqes.u64(at + OFF);
            if let Ok(flags) = call.caller.read_value::<u64>(how)
                && flags & u64::from(dropped) != 0
            {
                let _ = call
                    .caller
                    .write(how, &(flags & !u64::from(dropped)).to_ne_bytes());
            }
        }
        _ => {}
    }
}

/// Whether a sync entry would reach a disk: its file is registered with
/// the ring (not looked at), or a descriptor of the caller's that seeks.
/// Any other (no such descriptor, a pipe) is left to the kernel, which
/// answers it with the error it gives without eatmydata, flushing nothing.
fn flushes(sqes: &Map, at: usize, call: &Call) -> bool {
    const FIXED_FILE: u8 = 1;
    if sqes.u8(at + FLAGS) & FIXED_FILE != 0 {
        return true;
    }
    let fd = sqes.u32(at + FD) as i32;
    call.caller.descriptor(fd).is_ok_and(|file| {
        // SAFETY: lseek that moves nothing, on our own copy.
        unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_CUR) >= 0 }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// The opcodes and entry offsets used here, as the kernel's header
    /// (`linux/io_uring.h`, from the system's headers) has them.
    #[test]
    fn opcodes_and_offsets_are_the_kernel_headers() {
        let dir = std::env::temp_dir().join(format!("eatmydata-sqe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("sqe.c");
        std::fs::write(
            &source,
            "#include <stddef.h>\n#include <stdio.h>\n#include <linux/io_uring.h>\n\
             int main(void) { printf(\"%d %d %d %d %d %d %d %d %zu %zu %zu %zu %zu\\n\", \
             IORING_OP_NOP, IORING_OP_WRITEV, IORING_OP_FSYNC, IORING_OP_WRITE_FIXED, \
             IORING_OP_SYNC_FILE_RANGE, IORING_OP_OPENAT, IORING_OP_WRITE, IORING_OP_OPENAT2, \
             offsetof(struct io_uring_sqe, fd), offsetof(struct io_uring_sqe, addr2), \
             offsetof(struct io_uring_sqe, rw_flags), offsetof(struct io_uring_sqe, user_data), \
             offsetof(struct io_uring_sqe, buf_index)); return 0; }\n",
        )
        .unwrap();
        let program = dir.join("sqe");
        let built = Command::new("cc")
            .arg("-o")
            .arg(&program)
            .arg(&source)
            .status();
        assert!(built.unwrap().success(), "cc");
        let output = Command::new(&program).output().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let ours = [
            OP_NOP,
            OP_WRITEV,
            OP_FSYNC,
            OP_WRITE_FIXED,
            OP_SYNC_FILE_RANGE,
            OP_OPENAT,
            OP_WRITE,
            OP_OPENAT2,
        ]
        .map(|op| op.to_string())
        .join(" ");
        let offsets = [FD, OFF, OP_FLAGS, USER_DATA, BUF_INDEX]
            .map(|at| at.to_string())
            .join(" ");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout).trim(),
            format!("{ours} {offsets}")
        );
    }
}
