//! The filter of the supervised seccomp mode: which calls leave the kernel
//! for the supervisor (`notify.rs`) and which the filter still answers or
//! lets through by itself.
//!
//! Ordinary calls must not pay for the supervisor, and nothing is sent
//! that it would only let go on, so only these go to it, in the native
//! ABI: the sync calls that take a descriptor (a filter cannot tell an
//! open one from a closed one, and `EBADF` must be kept); `msync` with
//! `MS_SYNC` (without it, it flushes nothing); every `openat2` (its flags
//! are in memory, which the supervisor may rewrite); `io_uring_setup`;
//! `io_uring_enter` that submits; and the one `mmap` that maps a ring's
//! submission entries (offset `IORING_OFF_SQES`), where the supervisor
//! learns the ring. `sync` is answered 0 here, as by the plain filter,
//! unless syncs are kept by mount (then it runs as made).
//! `open`/`openat` with `O_SYNC` and `pwritev2` with `RWF_SYNC` carry the
//! flag in a register, which nothing but the kernel can change: they run
//! as asked. Registering a ring descriptor with the ring and resizing a
//! ring fail with `EINVAL` (see `REFUSED_REGISTRATIONS`), as on a kernel
//! without them.
//!
//! Other ABIs get the kernel's answers too. i386 (`int $0x80`, a 32-bit
//! program): the sync calls that take a descriptor, and `msync` with
//! `MS_SYNC`, go to the supervisor, which reads them as the native calls
//! they stand for (`compat.rs`) and answers them by the same rules; `sync`
//! is answered 0; everything else runs in the kernel as made, io_uring
//! included. So an i386 ring is set up and run by the kernel alone: its
//! flushes reach the disk, and the supervisor, which reads rings in the
//! native layout only, never looks at it. x32 numbers come in under the
//! native architecture, but the kernel decides only after the filter
//! whether x32 exists at all (`ENOSYS` where it is not built): they all
//! run in the kernel, their syncs with their flushes.

use libc::sock_filter;

use super::bpf::{
    ARCH_OFFSET, JEQ_K, JSET_K, Label, NR_OFFSET, Op, arg_low, assemble, jeq, load, ret,
};
use super::filter::{ABIS, Abi, RET_ALLOW, RET_ZERO};
use crate::durability::plain::FD_SIGN;

pub(super) const RET_NOTIFY: u32 = 0x7fc0_0000; // SECCOMP_RET_USER_NOTIF
const RET_EINVAL: u32 = libc::SECCOMP_RET_ERRNO | libc::EINVAL as u32;

/// `mmap`'s offset for a ring's submission entries.
pub const IORING_OFF_SQES: u32 = 0x1000_0000;
/// `io_uring_register` operations refused with `EINVAL`, as by a kernel
/// without them: `IORING_REGISTER_RING_FDS` (after it `io_uring_enter`
/// names no descriptor the supervisor could look at) and
/// `IORING_REGISTER_RESIZE_RINGS` (6.13, which would move the queue the
/// supervisor has learnt).
const REFUSED_REGISTRATIONS: &[u32] = &[20, 33];

/// `fsync` and `fdatasync`: sent to the supervisor, or answered 0 by the
/// filter itself (`fast_fsync`).
pub const FSYNCS: &[i64] = &[libc::SYS_fsync, libc::SYS_fdatasync];
/// `io_uring_register` operations that concern registered files, sent to the
/// supervisor (`registered.rs` follows them).
pub const REGISTER_FILES: u32 = 2;
pub const UNREGISTER_FILES: u32 = 3;
pub const REGISTER_FILES_UPDATE: u32 = 6;
pub const REGISTER_FILES2: u32 = 13;
pub const REGISTER_FILES_UPDATE2: u32 = 14;
pub const REGISTER_SEND_MSG_RING: u32 = 31;
pub const REGISTRATIONS_NOTIFIED: &[u32] = &[
    REGISTER_FILES,
    UNREGISTER_FILES,
    REGISTER_FILES_UPDATE,
    REGISTER_FILES2,
    REGISTER_FILES_UPDATE2,
    REGISTER_SEND_MSG_RING,
];
/// Native calls always sent to the supervisor.
pub const NOTIFIED: &[i64] = &[
    libc::SYS_syncfs,
    libc::SYS_sync_file_range,
    libc::SYS_openat2,
    libc::SYS_io_uring_setup,
];
/// Native calls answered 0 by the filter.
const ANSWERED: &[i64] = &[libc::SYS_sync];
/// Calls of another architecture's ABI (i386) sent to the supervisor, by
/// name in `filter::ABIS`: those that take a descriptor, which the
/// supervisor reads as their native twins (`compat.rs`).
pub const FOREIGN_NOTIFIED: &[&str] = &["fsync", "fdatasync", "syncfs", "sync_file_range"];
/// Another ABI's `msync`, sent when its flags hold `MS_SYNC` (the same bit
/// in every ABI), as the native one is.
pub const FOREIGN_MSYNC: &str = "msync";
/// Calls of another architecture's ABI answered 0 by the filter: `sync`
/// takes nothing and always succeeds.
const FOREIGN_ANSWERED: &[&str] = &["sync"];

/// The places of the program.
const ALLOW: Label = Label(0);
const ZERO: Label = Label(1);
const NOTIFY: Label = Label(2);
const EINVAL: Label = Label(3);
const NATIVE: Label = Label(4);
/// `fsync` and `fdatasync` answered by the filter (`fast_fsync`): 0 for a
/// descriptor whose bit 31 is clear; a negative one runs, to fail `EBADF`.
const FD_GUARD: Label = Label(5);
const fn arch(i: usize) -> Label {
    Label(10 + i as u32)
}
const fn arg(i: usize) -> Label {
    Label(100 + i as u32)
}
const fn foreign_msync(i: usize) -> Label {
    Label(200 + i as u32)
}

/// The checks on one argument's low word for one call.
struct ArgRule {
    nr: i64,
    arg: u32,
    test: ArgTest,
}

enum ArgTest {
    /// Notify when a bit of the mask is set.
    Jset(u32),
    /// Go to the label paired with the word, if any.
    Eq(Vec<(u32, Label)>),
    /// Notify unless 0.
    NonZero,
}

/// Calls sent to the supervisor by one argument: `msync` with `MS_SYNC`
/// (without it, it flushes nothing), `io_uring_enter` that submits, the
/// `mmap` of a ring's entries, the registrations of files; and the
/// registrations refused here.
fn arg_rules() -> [ArgRule; 4] {
    let refused = REFUSED_REGISTRATIONS.iter().map(|&op| (op, EINVAL));
    let registrations = refused.chain(REGISTRATIONS_NOTIFIED.iter().map(|&op| (op, NOTIFY)));
    [
        ArgRule {
            nr: libc::SYS_msync,
            arg: 2,
            test: ArgTest::Jset(libc::MS_SYNC as u32),
        },
        ArgRule {
            nr: libc::SYS_io_uring_enter,
            arg: 1,
            test: ArgTest::NonZero,
        },
        ArgRule {
            nr: libc::SYS_mmap,
            arg: 5,
            test: ArgTest::Eq(vec![(IORING_OFF_SQES, NOTIFY)]),
        },
        ArgRule {
            nr: libc::SYS_io_uring_register,
            arg: 1,
            test: ArgTest::Eq(registrations.collect()),
        },
    ]
}

/// The ops of the native ABI's part.
fn native_part(fast_fsync: bool, answer_sync: bool) -> Vec<Op> {
    let rules = arg_rules();
    let mut ops = vec![Op::At(NATIVE), load(NR_OFFSET)];
    let answered = if answer_sync { ZERO } else { ALLOW };
    ops.extend(ANSWERED.iter().map(|&n| jeq(n as u32, answered)));
    let fsyncs = if fast_fsync { FD_GUARD } else { NOTIFY };
    ops.extend(FSYNCS.iter().map(|&n| jeq(n as u32, fsyncs)));
    ops.extend(NOTIFIED.iter().map(|&n| jeq(n as u32, NOTIFY)));
    ops.extend(
        rules
            .iter()
            .enumerate()
            .map(|(i, rule)| jeq(rule.nr as u32, arg(i))),
    );
    // x32 numbers, which come in under the same architecture, match none:
    // they run in the kernel, which knows whether x32 exists.
    ops.push(ret(RET_ALLOW));
    if fast_fsync {
        ops.push(Op::At(FD_GUARD));
        ops.push(load(arg_low(0)));
        ops.push(Op::Jump(JSET_K, FD_SIGN, ALLOW, Some(ZERO)));
    }
    for (i, rule) in rules.iter().enumerate() {
        ops.push(Op::At(arg(i)));
        ops.push(load(arg_low(rule.arg)));
        match rule.test {
            ArgTest::Jset(mask) => ops.push(Op::Jump(JSET_K, mask, NOTIFY, Some(ALLOW))),
            ArgTest::Eq(ref pairs) => {
                ops.extend(pairs.iter().map(|&(k, answer)| jeq(k, answer)));
                ops.push(ret(RET_ALLOW));
            }
            ArgTest::NonZero => ops.push(Op::Jump(JEQ_K, 0, ALLOW, Some(NOTIFY))),
        }
    }
    ops
}

/// The ops of another architecture's part (i386 on x86_64), whose `msync`
/// goes to `msync` to have its flags looked at.
fn foreign_part(abi: &Abi, msync: Label, answer_sync: bool) -> Vec<Op> {
    let named = |names: &'static [&str], to: Label| {
        let calls = abi
            .calls
            .iter()
            .filter(move |(name, _)| names.contains(name));
        calls.map(move |&(_, nr)| jeq(nr as u32, to))
    };
    let mut ops = vec![load(NR_OFFSET)];
    ops.extend(named(
        FOREIGN_ANSWERED,
        if answer_sync { ZERO } else { ALLOW },
    ));
    ops.extend(named(FOREIGN_NOTIFIED, NOTIFY));
    ops.extend(named(&[FOREIGN_MSYNC], msync));
    ops.push(ret(RET_ALLOW));
    ops.push(Op::At(msync));
    ops.push(load(arg_low(2)));
    let ms_sync = libc::MS_SYNC as u32;
    ops.push(Op::Jump(JSET_K, ms_sync, NOTIFY, Some(ALLOW)));
    ops
}

/// The whole program for the supervised mode. Without `answer_sync`
/// (syncs kept by mount), `sync` runs in the kernel as made: the filter
/// cannot tell which file systems to spare.
pub fn program(fast_fsync: bool, answer_sync: bool) -> Result<Vec<sock_filter>, String> {
    let native = ABIS[0].arch;
    let others: Vec<&Abi> = ABIS.iter().filter(|a| a.arch != native).collect();
    let mut ops = vec![load(ARCH_OFFSET), jeq(native, NATIVE)];
    ops.extend(
        others
            .iter()
            .enumerate()
            .map(|(i, abi)| jeq(abi.arch, arch(i))),
    );
    ops.push(ret(RET_ALLOW));
    ops.extend(native_part(fast_fsync, answer_sync));
    for (i, abi) in others.iter().enumerate() {
        ops.push(Op::At(arch(i)));
        ops.extend(foreign_part(abi, foreign_msync(i), answer_sync));
    }
    for (label, k) in [
        (ALLOW, RET_ALLOW),
        (ZERO, RET_ZERO),
        (NOTIFY, RET_NOTIFY),
        (EINVAL, RET_EINVAL),
    ] {
        ops.push(Op::At(label));
        ops.push(ret(k));
    }
    assemble(&ops)
}

#[cfg(test)]
mod tests;
