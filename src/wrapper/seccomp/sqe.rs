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

/// One entry rewritten in place, if it asks for durability.
pub fn rewrite(sqes: &Map, at: usize, dropped: u32, call: &Call) {
    let opcode = sqes.u8(at);
    match opcode {
        OP_FSYNC | OP_SYNC_FILE_RANGE if flushes(sqes, at, call) => {
            // ioprio, off, addr, len, op flags; buf_index; file index, addr3.
            for (offset, len) in [(2, 2), (8, 24), (40, 2), (44, 12)] {
                sqes.zero(at + offset, len);
            }
            sqes.set_u8(at, OP_NOP);
        }
        OP_WRITE | OP_WRITEV | OP_WRITE_FIXED => {
            let flags = sqes.u32(at + 28);
            if flags & RWF_SYNCS != 0 {
                sqes.set_u32(at + 28, flags & !RWF_SYNCS);
            }
        }
        OP_OPENAT => {
            let flags = sqes.u32(at + 28);
            if flags & dropped != 0 {
                sqes.set_u32(at + 28, flags & !dropped);
            }
        }
        OP_OPENAT2 => {
            let how = sqes.u64(at + 8);
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
    if sqes.u8(at + 1) & FIXED_FILE != 0 {
        return true;
    }
    let fd = sqes.u32(at + 4) as i32;
    call.caller.descriptor(fd).is_ok_and(|file| {
        // SAFETY: lseek that moves nothing, on our own copy.
        unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_CUR) >= 0 }
    })
}
