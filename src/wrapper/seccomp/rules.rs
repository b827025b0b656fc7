//! The filter of the supervised seccomp mode: which calls leave the kernel
//! for the supervisor (`notify.rs`) and which the filter still answers or
//! lets through by itself.
//!
//! Ordinary calls must not pay for the supervisor, so only these go to it,
//! in the native ABI: the sync calls that take a descriptor (a filter
//! cannot tell an open one from a closed one, and `EBADF` must be kept)
//! and `msync` (whose checks of the address the kernel makes first);
//! `open`/`openat` and `pwritev2` whose flags register carries a sync bit
//! (tested in the filter); every `openat2` (its flags are in memory);
//! `io_uring_setup`; `io_uring_enter` that submits; and the one `mmap` that
//! maps a ring's submission entries (offset `IORING_OFF_SQES`), where the
//! supervisor learns the ring. `sync` is answered 0 here, as by the plain
//! filter. Registering a ring descriptor with the ring and resizing a
//! ring fail with `EINVAL` (see `REFUSED_REGISTRATIONS`), as on a kernel
//! without them.
//!
//! Other ABIs (i386 and x32 on x86_64) keep the plain filter's answers, and
//! cannot set up a ring (`ENOSYS`): the supervisor reads rings in the
//! native layout only.

use libc::sock_filter;

use super::filter::{
    ABIS, ARCH_OFFSET, JEQ_K, LD_W_ABS, NR_OFFSET, RET_ALLOW, RET_K, RET_ZERO, insn,
};

const JSET_K: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
pub(super) const RET_NOTIFY: u32 = 0x7fc0_0000; // SECCOMP_RET_USER_NOTIF
const RET_ENOSYS: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
const RET_EINVAL: u32 = libc::SECCOMP_RET_ERRNO | libc::EINVAL as u32;

/// The low 32 bits of argument `n` in `struct seccomp_data` (little endian).
pub(super) const fn arg_low(n: u32) -> u32 {
    16 + 8 * n
}

/// The open flags that send an open to the supervisor: `O_DSYNC` (part of
/// `O_SYNC`), the kernel's own `__O_SYNC` bit, and `O_DIRECT` unless kept.
pub fn open_flags(keep_direct: bool) -> u32 {
    crate::durability::dropped_open_flags(keep_direct) as u32
}
pub const RWF_SYNCS: u32 = crate::durability::WRITE_SYNC as u32;
pub const IORING_OFF_SQES: u32 = 0x1000_0000;
/// `io_uring_register` operations refused with `EINVAL`, as by a kernel
/// without them: `IORING_REGISTER_RING_FDS` (after it `io_uring_enter`
/// names no descriptor the supervisor could look at) and
/// `IORING_REGISTER_RESIZE_RINGS` (6.13, which would move the queue the
/// supervisor has learnt).
const REFUSED_REGISTRATIONS: &[u32] = &[20, 33];

/// Native numbers (`libc::SYS_*`), as the kernel's table has them.
#[cfg(target_arch = "x86_64")]
mod nr {
    pub const OPEN: Option<i64> = Some(libc::SYS_open);
}
#[cfg(target_arch = "aarch64")]
mod nr {
    pub const OPEN: Option<i64> = None;
}

/// Native calls always sent to the supervisor.
pub const NOTIFIED: &[i64] = &[
    libc::SYS_msync,
    libc::SYS_fsync,
    libc::SYS_fdatasync,
    libc::SYS_syncfs,
    libc::SYS_sync_file_range,
    libc::SYS_openat2,
    libc::SYS_io_uring_setup,
];
/// Native calls answered 0 by the filter.
const ANSWERED: &[i64] = &[libc::SYS_sync];
const IO_URING_SETUP: i64 = libc::SYS_io_uring_setup;

/// A place in the program, resolved when it is assembled.
#[derive(Clone, Copy, PartialEq)]
enum Label {
    Allow,
    Zero,
    Notify,
    Enosys,
    Einval,
    Native,
    Arch(usize),
    Arg(usize),
}

enum Op {
    Plain(sock_filter),
    /// `code` with `k`, jumping to `then` when true, else to `otherwise`
    /// (`None`: the next instruction).
    Jump(u16, u32, Label, Option<Label>),
    At(Label),
}

fn jeq(k: u32, then: Label) -> Op {
    Op::Jump(JEQ_K, k, then, None)
}

fn load(offset: u32) -> Op {
    Op::Plain(insn(LD_W_ABS, 0, 0, offset))
}

fn ret(k: u32) -> Op {
    Op::Plain(insn(RET_K, 0, 0, k))
}

/// The checks on one argument's low word for one call.
struct ArgRule {
    nr: i64,
    arg: u32,
    /// `Jset(mask)`: notify when a bit of `mask` is set; `Eq(ks, answer)`:
    /// `answer` when the word equals `k`; `NonZero`: notify unless 0.
    test: ArgTest,
}

enum ArgTest {
    Jset(u32),
    Eq(&'static [u32], Label),
    NonZero,
}

fn arg_rules(keep_direct: bool) -> Vec<ArgRule> {
    let mut rules = Vec::new();
    if let Some(open) = nr::OPEN {
        rules.push(ArgRule {
            nr: open,
            arg: 1,
            test: ArgTest::Jset(open_flags(keep_direct)),
        });
    }
    rules.extend([
        ArgRule {
            nr: libc::SYS_openat,
            arg: 2,
            test: ArgTest::Jset(open_flags(keep_direct)),
        },
        ArgRule {
            nr: libc::SYS_pwritev2,
            arg: 5,
            test: ArgTest::Jset(RWF_SYNCS),
        },
        ArgRule {
            nr: libc::SYS_io_uring_enter,
            arg: 1,
            test: ArgTest::NonZero,
        },
        ArgRule {
            nr: libc::SYS_mmap,
            arg: 5,
            test: ArgTest::Eq(&[IORING_OFF_SQES], Label::Notify),
        },
        ArgRule {
            nr: libc::SYS_io_uring_register,
            arg: 1,
            test: ArgTest::Eq(REFUSED_REGISTRATIONS, Label::Einval),
        },
    ]);
    rules
}

/// The ops of the native ABI's part.
fn native_part(keep_direct: bool) -> Vec<Op> {
    let rules = arg_rules(keep_direct);
    let mut ops = vec![Op::At(Label::Native), load(NR_OFFSET)];
    ops.extend(ANSWERED.iter().map(|&n| jeq(n as u32, Label::Zero)));
    ops.extend(NOTIFIED.iter().map(|&n| jeq(n as u32, Label::Notify)));
    ops.extend(
        rules
            .iter()
            .enumerate()
            .map(|(i, rule)| jeq(rule.nr as u32, Label::Arg(i))),
    );
    // x32 numbers come in under the same architecture.
    for abi in ABIS.iter().skip(1).filter(|abi| abi.arch == ABIS[0].arch) {
        ops.extend(abi.calls.iter().map(|&(_, n)| jeq(n as u32, Label::Zero)));
        ops.push(jeq(foreign_setup(abi), Label::Enosys));
    }
    ops.push(ret(RET_ALLOW));
    for (i, rule) in rules.iter().enumerate() {
        ops.push(Op::At(Label::Arg(i)));
        ops.push(load(arg_low(rule.arg)));
        match rule.test {
            ArgTest::Jset(mask) => {
                ops.push(Op::Jump(JSET_K, mask, Label::Notify, Some(Label::Allow)));
            }
            ArgTest::Eq(ks, answer) => {
                ops.extend(ks.iter().map(|&k| jeq(k, answer)));
                ops.push(ret(RET_ALLOW));
            }
            ArgTest::NonZero => ops.push(Op::Jump(JEQ_K, 0, Label::Allow, Some(Label::Notify))),
        }
    }
    ops
}

/// `io_uring_setup`'s number in another ABI of this architecture.
fn foreign_setup(abi: &super::filter::Abi) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if abi.name == "x32" {
        return (super::filter::X32_SYSCALL_BIT | IO_URING_SETUP) as u32;
    }
    let _ = abi;
    // i386's table has it at the same number (425), as every table since 5.1.
    IO_URING_SETUP as u32
}

/// The whole program for the supervised mode.
pub fn program(keep_direct: bool) -> Result<Vec<sock_filter>, String> {
    let native = ABIS[0].arch;
    let others: Vec<&super::filter::Abi> = ABIS.iter().filter(|a| a.arch != native).collect();
    let mut ops = vec![load(ARCH_OFFSET), jeq(native, Label::Native)];
    ops.extend(
        others
            .iter()
            .enumerate()
            .map(|(i, abi)| jeq(abi.arch, Label::Arch(i))),
    );
    ops.push(ret(RET_ALLOW));
    ops.extend(native_part(keep_direct));
    for (i, abi) in others.iter().enumerate() {
        ops.push(Op::At(Label::Arch(i)));
        ops.push(load(NR_OFFSET));
        ops.extend(abi.calls.iter().map(|&(_, n)| jeq(n as u32, Label::Zero)));
        ops.push(jeq(foreign_setup(abi), Label::Enosys));
        ops.push(ret(RET_ALLOW));
    }
    for (label, k) in [
        (Label::Allow, RET_ALLOW),
        (Label::Zero, RET_ZERO),
        (Label::Notify, RET_NOTIFY),
        (Label::Enosys, RET_ENOSYS),
        (Label::Einval, RET_EINVAL),
    ] {
        ops.push(Op::At(label));
        ops.push(ret(k));
    }
    assemble(&ops)
}

/// Resolves the labels into relative jumps.
fn assemble(ops: &[Op]) -> Result<Vec<sock_filter>, String> {
    let mut at = Vec::new();
    let mut pc = 0usize;
    for op in ops {
        match op {
            Op::At(label) => at.push((*label, pc)),
            _ => pc += 1,
        }
    }
    let find = |label: Label| {
        at.iter()
            .find(|(l, _)| *l == label)
            .map(|&(_, pc)| pc)
            .ok_or_else(|| "a jump to a missing label".to_string())
    };
    let mut program = Vec::new();
    for op in ops {
        let here = program.len();
        let offset = |label: Label| -> Result<u8, String> {
            let to = find(label)?;
            u8::try_from(to.checked_sub(here + 1).ok_or("a jump backwards")?)
                .map_err(|_| "a jump too far".to_string())
        };
        match op {
            Op::At(_) => {}
            Op::Plain(insn) => program.push(*insn),
            Op::Jump(code, k, then, otherwise) => {
                let jf = otherwise.map_or(Ok(0), offset)?;
                program.push(insn(*code, offset(*then)?, jf, *k));
            }
        }
    }
    Ok(program)
}

#[cfg(test)]
mod tests;
