//! Fixed files of a ring learnt through `syscall()`: `io_uring_register`
//! of files (and their updates) is followed for slots 0 to 63, each probed
//! as `fsync(2)` probes a descriptor, so that a sync entry on a slot is
//! eaten only when its file reaches a disk. Any entry or registration that
//! may change slots otherwise (a direct open, accept or close,
//! `FILES_UPDATE`, a file sent by `MSG_RING`, a registration by the ring's
//! registered index) makes the slots unknown, and their syncs are kept.

use core::ffi::c_long;
use core::sync::atomic::Ordering;

use super::rings;
use crate::caller::copy_from_caller;
use crate::durability::sqe;
use crate::kernel::raw;
use crate::sync;

/// What an entry does to a ring's fixed files besides using them.
#[derive(Debug, PartialEq, Eq)]
pub enum Slots {
    Same,
    /// Its own ring's slots may change.
    Changed,
    /// Another ring's slots may change (a file sent by `MSG_RING`).
    Sent,
}

/// Whether `entry` may change fixed-file slots when it runs.
pub fn slots_after(entry: &[u8; sqe::SIZE]) -> Slots {
    const ACCEPT: u8 = 13;
    const CLOSE: u8 = 19;
    const FILES_UPDATE: u8 = 20;
    const MSG_RING: u8 = 40;
    const SOCKET: u8 = 45;
    const PIPE: u8 = 62;
    const MSG_SEND_FD: u8 = 1;
    let file_index = entry[sqe::SPLICE_FD_IN..sqe::SPLICE_FD_IN + 4] != [0; 4];
    match entry[sqe::OPCODE] {
        FILES_UPDATE => Slots::Changed,
        ACCEPT | sqe::OP_OPENAT | CLOSE | sqe::OP_OPENAT2 | SOCKET | PIPE if file_index => {
            Slots::Changed
        }
        MSG_RING if entry[sqe::ADDR] == MSG_SEND_FD => Slots::Sent,
        op if op > PIPE => Slots::Changed,
        _ => Slots::Same,
    }
}

const REGISTER_FILES: c_long = 2;
const UNREGISTER_FILES: c_long = 3;
const REGISTER_FILES_UPDATE: c_long = 6;
const REGISTER_FILES2: c_long = 13;
const REGISTER_FILES_UPDATE2: c_long = 14;
const REGISTER_USE_REGISTERED_RING: c_long = 1 << 31;
const FILES_SKIP: i32 = -2;

/// Whether `io_uring_register` of `opcode` registers, updates or drops
/// fixed files, on the ring's descriptor or its registered index.
pub fn moves_files(opcode: c_long) -> bool {
    matches!(
        opcode & !REGISTER_USE_REGISTERED_RING,
        REGISTER_FILES
            | UNREGISTER_FILES
            | REGISTER_FILES_UPDATE
            | REGISTER_FILES2
            | REGISTER_FILES_UPDATE2
    )
}

/// `io_uring_register(fd, opcode, arg, nr)`: made, then the ring's fixed
/// files followed when it registered or updated them.
pub fn register(a: [c_long; 6]) -> c_long {
    let answer = raw(libc::SYS_io_uring_register, a);
    let [fd, opcode, arg, nr, ..] = a;
    if !moves_files(opcode) || answer < 0 {
        return answer;
    }
    let Some(ring) = rings::find(fd as i32).filter(|_| opcode & REGISTER_USE_REGISTERED_RING == 0)
    else {
        rings::forget_all_fixed();
        return answer;
    };
    let fixed = match opcode {
        REGISTER_FILES => disk_slots(0, arg as usize, nr as usize, 0),
        REGISTER_FILES_UPDATE => {
            let mut update = [0u8; 16];
            if copy_from_caller(&mut update, arg as usize) {
                let offset = u32::from_ne_bytes([update[0], update[1], update[2], update[3]]);
                let mut fds = [0u8; 8];
                fds.copy_from_slice(&update[8..]);
                let fds = u64::from_ne_bytes(fds) as usize;
                let before = ring.fixed.load(Ordering::Relaxed);
                disk_slots(offset as usize, fds, answer as usize, before)
            } else {
                0
            }
        }
        _ => 0,
    };
    rings::store_fixed(fd as i32, fixed);
    answer
}

/// `eatmydata_uring_register_raw`: liburing's raw `io_uring_register` of
/// `opcode` on ring `fd`; one that may change files forgets the ring's
/// slots (every ring's, by a registered index), before the call.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_uring_register_raw(fd: i32, opcode: u32) {
    let opcode = c_long::from(opcode);
    if !moves_files(opcode) {
        return;
    }
    if opcode & REGISTER_USE_REGISTERED_RING != 0 {
        rings::forget_all_fixed();
    } else {
        rings::store_fixed(fd, 0);
    }
}

/// The fixed slots known to reach a disk after `count` descriptors (at
/// `fds` in the program's memory) went into slots from `first` on, the
/// others as `before` had them.
pub fn disk_slots(first: usize, fds: usize, count: usize, before: u64) -> u64 {
    let count = count.min(64usize.saturating_sub(first));
    let mut bytes = [0u8; 4 * 64];
    let Some(buffer) = bytes.get_mut(..4 * count) else {
        return 0;
    };
    if !copy_from_caller(buffer, fds) {
        return 0;
    }
    let mut fixed = before;
    for (n, chunk) in buffer.chunks_exact(4).enumerate() {
        let fd = i32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let bit = 1u64 << (first + n);
        if fd == FILES_SKIP {
            continue;
        }
        if fd >= 0 && sync::fsync_eatable(fd) {
            fixed |= bit;
        } else {
            fixed &= !bit;
        }
    }
    fixed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(opcode: u8) -> [u8; sqe::SIZE] {
        let mut entry = [0; sqe::SIZE];
        entry[sqe::OPCODE] = opcode;
        entry
    }

    #[test]
    fn entries_that_move_fixed_files_are_told_apart() {
        assert_eq!(slots_after(&entry(sqe::OP_FSYNC)), Slots::Same);
        assert_eq!(slots_after(&entry(sqe::OP_OPENAT)), Slots::Same);
        let mut direct = entry(sqe::OP_OPENAT);
        direct[sqe::SPLICE_FD_IN] = 3;
        assert_eq!(slots_after(&direct), Slots::Changed);
        assert_eq!(slots_after(&entry(20)), Slots::Changed);
        let mut send = entry(40);
        send[sqe::ADDR] = 1;
        assert_eq!(slots_after(&send), Slots::Sent);
        assert_eq!(slots_after(&entry(40)), Slots::Same);
        assert_eq!(slots_after(&entry(200)), Slots::Changed);
    }

    #[test]
    fn registrations_that_move_fixed_files_are_told_apart() {
        assert!(moves_files(REGISTER_FILES));
        assert!(moves_files(UNREGISTER_FILES));
        assert!(moves_files(
            REGISTER_FILES_UPDATE2 | REGISTER_USE_REGISTERED_RING
        ));
        assert!(!moves_files(0)); // IORING_REGISTER_BUFFERS
        assert!(!moves_files(REGISTER_USE_REGISTERED_RING));
    }
}
