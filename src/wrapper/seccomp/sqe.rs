//! One io_uring submission entry in a mapped ring, rewritten in place as
//! `durability::sqe::rewrite` says: the decision is the library's too;
//! this module only reads the entry out of the ring shared with the
//! program and the kernel, answers the question it asks (does this file
//! reach a disk? for a registered slot, as `registered.rs` knows it) and
//! writes the result back.

use super::call::Call;
use super::fdinfo::eatable;
use super::mapping::Map;
use super::mountinfo::Mounts;
use super::openat2::read_how;
use crate::durability::sqe::{self, Rewrite, Target};

/// The entry at `at` of `sqes`, copied out.
pub fn read(sqes: &Map, at: usize) -> [u8; sqe::SIZE] {
    let mut entry = [0u8; sqe::SIZE];
    for (i, byte) in entry.iter_mut().enumerate() {
        *byte = sqes.u8(at + i);
    }
    entry
}

/// What the supervisor knows of the files a sync entry may name.
pub struct Files<'a> {
    pub call: &'a Call,
    pub mounts: &'a mut Mounts,
    /// Whether a registered slot's file is on a disk (false: not known).
    pub fixed: &'a mut dyn FnMut(u32) -> bool,
}

/// `entry`, read from `at` of `sqes`, rewritten there if it asks for
/// durability.
pub fn rewrite(sqes: &Map, at: usize, mut entry: [u8; sqe::SIZE], dropped: u32, files: Files) {
    let Files {
        call,
        mounts,
        fixed,
    } = files;
    let decision = sqe::rewrite(&entry, dropped, |target| match target {
        Target::Fd(fd) => eatable(call.caller, fd, mounts),
        Target::Fixed(slot) => fixed(slot),
    });
    // An OPENAT2's how is read, never written: the entry changes instead.
    // With syncs kept by mount, a write keeps RWF_SYNC on a kept mount.
    let decision = match decision {
        decision if mounts.by_mount() && matches!(decision, Rewrite::OpFlags(_)) => {
            sqe::scoped(&entry, decision, |fd| eatable(call.caller, fd, mounts))
        }
        Rewrite::OpenHow { address, size } => {
            sqe::openat2(read_how(call, address, size.into()), dropped)
        }
        decision => decision,
    };
    match decision {
        Rewrite::Keep | Rewrite::OpenHow { .. } => {}
        Rewrite::Nop | Rewrite::OpFlags(_) | Rewrite::Openat { .. } => {
            let before = entry;
            sqe::apply(&mut entry, decision);
            for (i, (&new, &old)) in entry.iter().zip(&before).enumerate() {
                if new != old {
                    sqes.set_u8(at + i, new);
                }
            }
        }
    }
}
