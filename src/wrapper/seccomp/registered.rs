//! The files a ring has registered (`IORING_REGISTER_FILES`), so that a
//! sync entry on a registered slot (`IOSQE_FIXED_FILE`) can be answered
//! when its file certainly reaches a disk. Only what is certain counts:
//!
//! - a registration is seen before the kernel makes it (the filter sends
//!   `io_uring_register` with a files operation here), each descriptor
//!   judged as a sync would judge it (`fdinfo::eatable`);
//! - anything that could change a slot makes the ring's slots unknown for
//!   good: an update (`FILES_UPDATE`, by `io_uring_register` or by an
//!   entry), an entry that installs or closes a direct descriptor (a
//!   non-zero `file_index`), a registration over one already there; and a
//!   `MSG_RING` entry, or its `io_uring_register` form, which can put a
//!   file into another ring's slot, makes every ring's unknown;
//! - before an answer, the kernel's own count of the ring's registered
//!   files (`UserFiles:` in the ring's `/proc/TID/fdinfo/N`) must be the
//!   one recorded: a registration the kernel refused is not taken.
//!
//! An unknown slot's sync entry is left as it is: it flushes, as asked.
//!
//! The descriptors are read from the program's memory a moment before the
//! kernel reads them: another thread of the program can change them in
//! between, and a slot may then hold another file than the one judged.
//! That window is the program's own (as for `openat2.rs`); what it can
//! get is a 0 for a sync entry on that slot, never a file operation.

use std::collections::HashMap;

use super::call::Call;
use super::fdinfo::eatable;
use super::mountinfo::Mounts;
use super::rules::{REGISTER_FILES, REGISTER_FILES2, REGISTER_SEND_MSG_RING, UNREGISTER_FILES};
use crate::durability::sqe;

/// `IORING_RSRC_REGISTER_SPARSE`: every slot starts empty.
const RSRC_SPARSE: u32 = 1;
/// The most slots read: the kernel's own limit (`IORING_MAX_FIXED_FILES`).
const MOST: u64 = 1 << 20;

const OP_FILES_UPDATE: u8 = 20;
const OP_SPLICE: u8 = 30;
const OP_TEE: u8 = 33;
const OP_MSG_RING: u8 = 40;

/// What an entry does to registered slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    None,
    /// Its own ring's slots.
    Own,
    /// Another ring's (`MSG_RING`).
    Others,
}

/// Whether `entry` may change a ring's registered slots. For every op but
/// splice and tee, the word at `SPLICE_FD_IN` is a direct descriptor's
/// slot (`file_index`), or must be 0.
pub fn change(entry: &[u8; sqe::SIZE]) -> Change {
    let at = sqe::SPLICE_FD_IN;
    let file_index = u32::from_ne_bytes([entry[at], entry[at + 1], entry[at + 2], entry[at + 3]]);
    match entry[sqe::OPCODE] {
        OP_MSG_RING => Change::Others,
        OP_FILES_UPDATE => Change::Own,
        OP_SPLICE | OP_TEE => Change::None,
        _ if file_index != 0 => Change::Own,
        _ => Change::None,
    }
}

/// The `UserFiles:` count of an io_uring's `fdinfo`.
pub fn user_files(fdinfo: &str) -> Option<usize> {
    fdinfo
        .lines()
        .find_map(|line| line.strip_prefix("UserFiles:"))?
        .trim()
        .parse()
        .ok()
}

/// One ring's slots: on a disk or not, by slot; `None`: not known.
type Slots = Option<Vec<bool>>;

/// Registered slots by ring (its device and inode).
#[derive(Default)]
pub struct Registered {
    rings: HashMap<(u64, u64), Slots>,
}

impl Registered {
    /// io_uring_register(2) of files, on the ring `key`: what it will do.
    pub fn register(&mut self, call: &Call, key: (u64, u64), mounts: &mut Mounts) {
        let [_, opcode, arg, nr, ..] = call.args;
        match opcode as u32 {
            REGISTER_FILES | REGISTER_FILES2 => {
                let slots = if self.rings.contains_key(&key) {
                    None
                } else if opcode as u32 == REGISTER_FILES {
                    slots(call, arg, nr, mounts)
                } else {
                    registered2(call, arg, nr, mounts)
                };
                self.rings.insert(key, slots);
            }
            UNREGISTER_FILES => {
                self.rings.remove(&key);
            }
            REGISTER_SEND_MSG_RING => self.forget_all(),
            _ => {
                self.rings.insert(key, None);
            }
        }
    }

    /// An entry changed slots: of this ring, or of any.
    pub fn changed(&mut self, key: (u64, u64), change: Change) {
        match change {
            Change::None => {}
            Change::Own => {
                if let Some(slots) = self.rings.get_mut(&key) {
                    *slots = None;
                }
            }
            Change::Others => self.forget_all(),
        }
    }

    fn forget_all(&mut self) {
        for slots in self.rings.values_mut() {
            *slots = None;
        }
    }

    /// The slots of ring `key` if known, and if the kernel's count
    /// (`user_files`, read only when asked) agrees.
    pub fn slots(
        &self,
        key: (u64, u64),
        user_files: impl FnOnce() -> Option<usize>,
    ) -> Option<&[bool]> {
        let slots = self.rings.get(&key)?.as_deref()?;
        (user_files()? == slots.len()).then_some(slots)
    }

    /// Lets go of a ring no longer known.
    pub fn forget(&mut self, key: (u64, u64)) {
        self.rings.remove(&key);
    }
}

/// `nr` descriptors at `address`, each judged; -1 is an empty slot.
fn slots(call: &Call, address: u64, nr: u64, mounts: &mut Mounts) -> Slots {
    if nr > MOST {
        return None;
    }
    let mut bytes = vec![0u8; 4 * nr as usize];
    call.caller.read(address, &mut bytes).ok()?;
    let fds = bytes.chunks_exact(4);
    let fds = fds.map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    Some(
        fds.map(|fd| fd != -1 && eatable(call.caller, fd, mounts))
            .collect(),
    )
}

/// `IORING_REGISTER_FILES2`: a `struct io_uring_rsrc_register` at
/// `address` (`nr`, `flags`, a reserved word, `data`, `tags`), of `size`.
fn registered2(call: &Call, address: u64, size: u64, mounts: &mut Mounts) -> Slots {
    if size != 32 {
        return None;
    }
    let [head, _, data, _] = call.caller.read_value::<[u64; 4]>(address).ok()?;
    let (nr, flags) = (head & 0xffff_ffff, (head >> 32) as u32);
    if flags & RSRC_SPARSE != 0 {
        return (nr <= MOST).then(|| vec![false; nr as usize]);
    }
    slots(call, data, nr, mounts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(opcode: u8, file_index: u32) -> [u8; sqe::SIZE] {
        let mut entry = [0; sqe::SIZE];
        entry[sqe::OPCODE] = opcode;
        entry[sqe::SPLICE_FD_IN..sqe::SPLICE_FD_IN + 4].copy_from_slice(&file_index.to_ne_bytes());
        entry
    }

    #[test]
    fn entries_that_may_change_slots_are_seen() {
        assert_eq!(change(&entry(sqe::OP_FSYNC, 0)), Change::None);
        assert_eq!(change(&entry(sqe::OP_OPENAT, 3)), Change::Own);
        assert_eq!(change(&entry(19, 1)), Change::Own, "a direct close");
        assert_eq!(change(&entry(OP_FILES_UPDATE, 0)), Change::Own);
        assert_eq!(change(&entry(OP_MSG_RING, 0)), Change::Others);
        assert_eq!(change(&entry(OP_SPLICE, 5)), Change::None);
    }

    #[test]
    fn slots_count_only_while_the_kernel_agrees() {
        let mut registered = Registered::default();
        let key = (1, 2);
        registered.rings.insert(key, Some(vec![true, false]));
        assert_eq!(registered.slots(key, || Some(2)), Some(&[true, false][..]));
        assert_eq!(registered.slots(key, || Some(0)), None);
        registered.changed(key, Change::Own);
        assert_eq!(registered.slots(key, || Some(2)), None);
        assert_eq!(registered.slots((3, 4), || Some(2)), None);
        let fdinfo = "SqMask:\t0x3\nUserFiles:\t2\n    0: /data/x\nUserBufs:\t0\n";
        assert_eq!(user_files(fdinfo), Some(2));
        assert_eq!(user_files("SqMask:\t0x3\n"), None);
    }
}
