//! io_uring: the submission entries a program is about to hand the kernel
//! are rewritten in its own memory first, by the rule both products share
//! (`durability::sqe`): `FSYNC` and `SYNC_FILE_RANGE` on a file that
//! reaches a disk become `NOP` (keeping `user_data`, links and drain),
//! `RWF_SYNC`/`RWF_DSYNC` leave write entries, and the dropped open flags
//! leave `OPENAT` (in the entry) and `OPENAT2`, which becomes the `OPENAT`
//! entry that opens the same way when its `open_how` has no resolve flags
//! (the program's `open_how` is read, never written).
//!
//! Two doors lead a dynamically linked program's entries to the kernel, and
//! both pass through here before the kernel can read them:
//!
//! - liburing (`liburing.so.2`, [`liburing`]): the tail the kernel reads
//!   up to is published only inside its exported submit functions, whose
//!   hooks rewrite the entries about to be published first; fixed files
//!   are followed through its registration functions.
//! - libc's `syscall()`: rings are learnt at setup and mmap ([`setup`],
//!   [`rings`]) and entries rewritten at `io_uring_enter` ([`enter`]),
//!   fixed files followed at `io_uring_register` ([`fixed`]).
//!
//! What no preload can reach: a program that enters the kernel itself.
//! fio's engine (3.33) sets up and registers through `syscall()` but calls
//! `io_uring_enter` with an inline `syscall` instruction, so its entries
//! reach the kernel unread here (the command sees the instruction in its
//! code and turns seccomp mode on for it); so do a statically linked
//! liburing's. liburing's own `io_uring_setup`,
//! `io_uring_enter` and `io_uring_enter2` wrappers are not hooked: a ring
//! driven only through them goes to the kernel as made.
//!
//! With kept mounts (`keep.rs`), a sync entry is eaten only where its
//! descriptor's mount is not kept (a fixed slot's mount is learnt when it
//! is registered), a write entry loses `RWF_SYNC` likewise (never on a
//! fixed slot, whose mount is not asked), and open entries keep their sync
//! flags: where they will open is not asked.
//!
//! Only what the kernel would accept is rewritten (the rule's own checks),
//! and a sync entry only when its file certainly reaches a disk: a plain
//! descriptor is asked as `fsync(2)`'s is (one ioctl), a fixed-file slot
//! by what was registered there. Everything else is the kernel's to
//! answer, as without eatmydata.

use core::ptr;

use crate::durability::open::OpenHow;
use crate::durability::sqe::{self, Rewrite, Target};
use crate::durability::{self, OPEN_SYNC};
use crate::report::{self, Skip, count, counted};
use crate::{caller, flush, keep, policy, sync};

pub mod enter;
pub mod fixed;
pub mod liburing;
pub mod rings;
pub mod setup;

/// What a batch of entries is rewritten with.
#[derive(Clone, Copy)]
pub struct Batch {
    /// The open flags to drop.
    dropped: u32,
    /// Which fixed-file slots (0 to 63) hold a file that reaches a disk.
    fixed: u64,
    /// Whether to count and note what is eaten (`--report`,
    /// `--sync-at-exit`).
    telling: bool,
    /// Whether kept mounts scope the eating (`keep.rs`).
    scoped: bool,
}

impl Batch {
    /// A batch under this process's switches, or `None` when not eating.
    pub fn new(fixed: u64) -> Option<Batch> {
        let switches = policy::switches();
        let mut dropped = durability::dropped_open_flags(!switches.drop_direct()) as u32;
        if switches.scoped() {
            // Where an entry will open is not asked: its sync flags stay.
            dropped &= !(OPEN_SYNC as u32);
        }
        switches.eating().then(|| Batch {
            dropped,
            fixed,
            telling: switches.reporting() || switches.flushing(),
            scoped: switches.scoped(),
        })
    }
}

/// Rewrites the entry at `at` as the rule says, and tells what was eaten.
///
/// # Safety
/// `at` points to the first 64 bytes of a submission entry in this
/// process's memory, readable and writable, which the kernel has not been
/// given yet.
pub unsafe fn eat(at: *mut u8, batch: &Batch) {
    let mut entry = [0u8; sqe::SIZE];
    // SAFETY: 64 readable bytes, as the caller promised.
    unsafe { ptr::copy_nonoverlapping(at, entry.as_mut_ptr(), sqe::SIZE) };
    let rewrite = sqe::rewrite(&entry, batch.dropped, |target| match target {
        Target::Fd(fd) => sync::fsync_eatable(fd),
        Target::Fixed(slot) => slot < 64 && batch.fixed & (1 << slot) != 0,
    });
    let before = entry;
    // An OPENAT2's how is read, never written: the entry changes instead.
    let mut how = None;
    let rewrite = match rewrite {
        Rewrite::OpenHow { address, size } => {
            how = open_how(address, size);
            sqe::openat2(how, batch.dropped)
        }
        rewrite if batch.scoped => sqe::scoped(&entry, rewrite, keep::eats_fd),
        rewrite => rewrite,
    };
    match rewrite {
        Rewrite::Keep | Rewrite::OpenHow { .. } => return,
        Rewrite::Nop | Rewrite::OpFlags(_) | Rewrite::Openat { .. } => {
            sqe::apply(&mut entry, rewrite);
            // SAFETY: 64 writable bytes, as the caller promised.
            unsafe { ptr::copy_nonoverlapping(entry.as_ptr(), at, sqe::SIZE) };
        }
    }
    if batch.telling {
        match (how, rewrite) {
            (Some(how), Rewrite::Openat { flags, .. }) => opened(how.flags as u32, flags),
            _ => told(&before, rewrite),
        }
    }
}

/// An `OPENAT2` entry's `struct open_how` of `size` bytes at `address`,
/// as the kernel would read it: `None` when it would refuse it or cannot
/// read it (a size above the 64 bytes copied here is left to it too).
fn open_how(address: u64, size: u32) -> Option<OpenHow> {
    let mut bytes = [0u8; 64];
    let copied = bytes.get_mut(..size as usize)?;
    if !caller::copy_from_caller(copied, address as usize) {
        return None;
    }
    sqe::how_of(&bytes, size.into())
}

fn read4(entry: &[u8; sqe::SIZE], at: usize) -> [u8; 4] {
    let mut bytes = [0; 4];
    if let Some(field) = entry.get(at..at + 4) {
        bytes.copy_from_slice(field);
    }
    bytes
}

/// Counts what was eaten for `--report` and notes its file system for
/// `--sync-at-exit`: a descriptor's, or all of them for a fixed slot or an
/// open (whose descriptor is not known yet).
#[cold]
#[inline(never)]
fn told(entry: &[u8; sqe::SIZE], rewrite: Rewrite) {
    let opcode = entry[sqe::OPCODE];
    let fd = i32::from_ne_bytes(read4(entry, sqe::FD));
    let fixed = entry[sqe::FLAGS] & sqe::FIXED_FILE != 0;
    match (opcode, rewrite) {
        (sqe::OP_OPENAT, Rewrite::OpFlags(after)) => {
            opened(u32::from_ne_bytes(read4(entry, sqe::OP_FLAGS)), after);
        }
        (_, Rewrite::Nop | Rewrite::OpFlags(_)) => {
            let kind = match (opcode, rewrite) {
                (sqe::OP_FSYNC, _) => Skip::Fsync,
                (sqe::OP_SYNC_FILE_RANGE, _) => Skip::SyncFileRange,
                _ => Skip::SyncWrite,
            };
            if fixed {
                count(kind);
                flush::note_all();
            } else {
                report::skipped_on_fd(kind, fd);
            }
        }
        _ => {}
    }
}

/// An `OPENAT` entry's flags changed from `before` to `after`, counted as
/// `open.rs` counts an open.
fn opened(before: u32, after: u32) {
    let without_sync = before & !(OPEN_SYNC as u32);
    counted(Skip::SyncOpen, before as i32, without_sync as i32);
    counted(Skip::Direct, without_sync as i32, after as i32);
    flush::note_all();
}

/// `IORING_SETUP_SQE128`: 128-byte entries.
pub const SETUP_SQE128: u32 = 1 << 10;
/// `IORING_SETUP_SQE_MIXED` (6.18): entries of either size; such a ring is
/// not rewritten.
pub const SETUP_SQE_MIXED: u32 = 1 << 19;
