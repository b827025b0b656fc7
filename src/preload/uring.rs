//! io_uring: the submission entries a program is about to hand the kernel
//! are rewritten in its own memory first, by the rule both products share
//! (`durability::sqe`): `FSYNC` and `SYNC_FILE_RANGE` on a file that
//! reaches a disk become `NOP` (keeping `user_data`, links and drain),
//! `RWF_SYNC`/`RWF_DSYNC` leave write entries, and the dropped open flags
//! leave `OPENAT` (in the entry) and `OPENAT2` (in the program's `open_how`).
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
//! Only what the kernel would accept is rewritten (the rule's own checks),
//! and a sync entry only when its file certainly reaches a disk: a plain
//! descriptor is asked as `fsync(2)`'s is (one ioctl), a fixed-file slot
//! by what was registered there. Everything else is the kernel's to
//! answer, as without eatmydata.

use core::ptr;

use crate::durability::sqe::{self, Rewrite, Target};
use crate::durability::{self, OPEN_SYNC};
use crate::report::{Skip, count, counted};
use crate::{caller, flush, maps, policy, sync};

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
}

impl Batch {
    /// A batch under this process's switches, or `None` when not eating.
    pub fn new(fixed: u64) -> Option<Batch> {
        let switches = policy::switches();
        switches.eating().then(|| Batch {
            dropped: durability::dropped_open_flags(!switches.drop_direct()) as u32,
            fixed,
            telling: switches.reporting() || switches.flushing(),
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
        Target::Fd(fd) => sync::fsync_would_succeed(fd),
        Target::Fixed(slot) => slot < 64 && batch.fixed & (1 << slot) != 0,
    });
    let before = entry;
    match rewrite {
        Rewrite::Keep => return,
        Rewrite::OpenHow(how) => {
            let Some((asked, given)) = open_how(how, &entry, batch.dropped) else {
                return;
            };
            if batch.telling {
                opened(asked as u32, given as u32);
            }
            return;
        }
        Rewrite::Nop | Rewrite::OpFlags(_) => {
            sqe::apply(&mut entry, rewrite);
            // SAFETY: 64 writable bytes, as the caller promised.
            unsafe { ptr::copy_nonoverlapping(entry.as_ptr(), at, sqe::SIZE) };
        }
    }
    if batch.telling {
        told(&before, rewrite);
    }
}

/// An `OPENAT2` entry's `struct open_how` (at `how`, in the program's
/// memory) without the dropped flags. It is written as the kernel would
/// read it (`process_vm_writev`), and only in a private mapping: a how the
/// program cannot write or read, or one in a shared mapping (of a file, or
/// shared with another process), is left as it is, and the kernel opens as
/// asked. The program can see the change: its `open_how.flags` lose the
/// sync bits.
/// Returns the flags asked and given, when they were changed.
fn open_how(how: u64, entry: &[u8; sqe::SIZE], dropped: u32) -> Option<(u64, u64)> {
    // The kernel refuses a how smaller than its first version (24 bytes).
    let size = u32::from_ne_bytes(read4(entry, sqe::LEN));
    if size < 24 {
        return None;
    }
    let mut flags = [0u8; 8];
    if !caller::copy_from_caller(&mut flags, how as usize) {
        return None;
    }
    let asked = u64::from_ne_bytes(flags);
    let given = sqe::open_how_flags(asked, dropped)?;
    if !maps::private(how as usize, flags.len()) {
        return None;
    }
    caller::copy_to_caller(how as usize, &given.to_ne_bytes()).then_some((asked, given))
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
            count(match (opcode, rewrite) {
                (sqe::OP_FSYNC, _) => Skip::Fsync,
                (sqe::OP_SYNC_FILE_RANGE, _) => Skip::SyncFileRange,
                _ => Skip::SyncWrite,
            });
            if fixed {
                flush::note_all();
            } else {
                flush::note_fd(fd);
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
