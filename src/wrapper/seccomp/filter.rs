//! Seccomp mode: a filter, installed just before the command is executed,
//! under which the kernel answers fsync and its relatives with success
//! without running them. It reaches what `LD_PRELOAD` cannot — statically
//! linked programs and Go programs, which make their system calls
//! themselves — and, inherited across fork and exec, the whole process tree.
//!
//! The rules are a table: for each ABI a process can enter the kernel
//! through, the architecture the kernel reports for it and its numbers for
//! the calls. The program is classic BPF, written here rather than by
//! seccompiler, for a reason found when it was tried: seccompiler answers
//! any architecture but its one by killing the process, when a program may
//! enter through another ABI legitimately (a 32-bit program, or `int $0x80`
//! from 64-bit code), so its output needed a dispatch of ours in front
//! anyway. The program, one comparison per call, is assembled by `bpf.rs`
//! and checked by running it in the unit tests.

use std::collections::BTreeMap;
use std::io;

use libc::sock_filter;

use super::bpf::{ARCH_OFFSET, Label, NR_OFFSET, Op, assemble, jeq, load, ret};

/// `seccomp_data.arch` values, from `<linux/audit.h>`.
#[cfg(target_arch = "x86_64")]
pub(super) const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH_I386: u32 = 0x4000_0003;
#[cfg(target_arch = "aarch64")]
pub(super) const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;

/// x32 calls come in under `AUDIT_ARCH_X86_64` with this bit in the number.
#[cfg(target_arch = "x86_64")]
pub(super) const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// One way into the kernel, and its numbers for the calls made free.
pub struct Abi {
    pub name: &'static str,
    pub arch: u32,
    pub calls: &'static [(&'static str, i64)],
}

/// x86_64 numbers; x32 uses the same ones with `X32_SYSCALL_BIT` set.
#[cfg(target_arch = "x86_64")]
const X86_64_CALLS: &[(&str, i64)] = &[
    ("msync", 26),
    ("fsync", 74),
    ("fdatasync", 75),
    ("sync", 162),
    ("sync_file_range", 277),
    ("syncfs", 306),
];
#[cfg(target_arch = "x86_64")]
const X32_CALLS: &[(&str, i64)] = &[
    ("msync", X32_SYSCALL_BIT | 26),
    ("fsync", X32_SYSCALL_BIT | 74),
    ("fdatasync", X32_SYSCALL_BIT | 75),
    ("sync", X32_SYSCALL_BIT | 162),
    ("sync_file_range", X32_SYSCALL_BIT | 277),
    ("syncfs", X32_SYSCALL_BIT | 306),
];
#[cfg(target_arch = "x86_64")]
const I386_CALLS: &[(&str, i64)] = &[
    ("sync", 36),
    ("fsync", 118),
    ("msync", 144),
    ("fdatasync", 148),
    ("sync_file_range", 314),
    ("syncfs", 344),
];
/// The generic table: no `sync_file_range2` here either.
#[cfg(target_arch = "aarch64")]
const AARCH64_CALLS: &[(&str, i64)] = &[
    ("sync", 81),
    ("fsync", 82),
    ("fdatasync", 83),
    ("sync_file_range", 84),
    ("msync", 227),
    ("syncfs", 267),
];

/// Every ABI reachable from the architecture we are built for.
#[cfg(target_arch = "x86_64")]
pub const ABIS: &[Abi] = &[
    Abi {
        name: "x86_64",
        arch: AUDIT_ARCH_X86_64,
        calls: X86_64_CALLS,
    },
    Abi {
        name: "x32",
        arch: AUDIT_ARCH_X86_64,
        calls: X32_CALLS,
    },
    Abi {
        name: "i386",
        arch: AUDIT_ARCH_I386,
        calls: I386_CALLS,
    },
];
/// 32-bit ARM programs (`AUDIT_ARCH_ARM`) are left alone: allowed unchanged.
#[cfg(target_arch = "aarch64")]
pub const ABIS: &[Abi] = &[Abi {
    name: "aarch64",
    arch: AUDIT_ARCH_AARCH64,
    calls: AARCH64_CALLS,
}];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("seccomp mode knows the system call numbers of x86_64 and aarch64 only");

/// The answer to a listed call: "fails" with errno 0, that is, returns 0.
pub(super) const RET_ZERO: u32 = libc::SECCOMP_RET_ERRNO;
pub(super) const RET_ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

/// The whole filter: load the architecture and go to its part, which
/// loads the number and sends each listed one to "return 0"; any other
/// number, and any architecture not in `ABIS`, is allowed.
pub fn program() -> Result<Vec<sock_filter>, String> {
    let mut by_arch: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for abi in ABIS {
        let numbers = by_arch.entry(abi.arch).or_default();
        numbers.extend(abi.calls.iter().map(|&(_, nr)| nr as u32));
    }
    let zero = Label(0);
    let part = |i: usize| Label(1 + i as u32);
    let mut ops = vec![load(ARCH_OFFSET)];
    ops.extend(
        by_arch
            .keys()
            .enumerate()
            .map(|(i, &arch)| jeq(arch, part(i))),
    );
    ops.push(ret(RET_ALLOW));
    for (i, numbers) in by_arch.values().enumerate() {
        ops.push(Op::At(part(i)));
        ops.push(load(NR_OFFSET));
        ops.extend(numbers.iter().map(|&nr| jeq(nr, zero)));
        ops.push(ret(RET_ALLOW));
    }
    ops.push(Op::At(zero));
    ops.push(ret(RET_ZERO));
    assemble(&ops)
}

/// What installing the filter did about `no_new_privs`.
#[derive(Debug, PartialEq)]
pub enum NoNewPrivs {
    /// Not needed: we may install filters (CAP_SYS_ADMIN), or it was set
    /// before we ran.
    Untouched,
    /// Set by us, because the kernel would not take the filter without it.
    Set,
}

/// `seccomp(SECCOMP_SET_MODE_FILTER, flags, program)`.
pub(super) fn set_mode_filter(
    program: &[sock_filter],
    flags: libc::c_ulong,
) -> io::Result<libc::c_long> {
    let len = libc::c_ushort::try_from(program.len())
        .map_err(|_| io::Error::from_raw_os_error(libc::E2BIG))?;
    let fprog = libc::sock_fprog {
        len,
        // The kernel only reads through it.
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: `fprog` points at `len` instructions that outlive the call;
    // the kernel copies them and keeps no pointer.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags,
            &fprog as *const libc::sock_fprog,
        )
    };
    if rc >= 0 {
        Ok(rc)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The names of the ABIs the filter covers, for `--verbose`.
pub fn abi_names() -> String {
    let names: Vec<&str> = ABIS.iter().map(|abi| abi.name).collect();
    names.join(", ")
}

/// Installs the filter on this process, to be inherited by what it
/// executes. Without CAP_SYS_ADMIN the kernel asks for `no_new_privs`
/// first; it is set then, and only then.
pub fn install(program: &[sock_filter]) -> io::Result<NoNewPrivs> {
    install_with(program, 0).map(|(set, _)| set)
}

/// `install` with `flags` of the kernel's as well (a listener, for one),
/// returning what the kernel returned: 0, or the listener's descriptor.
///
/// `SECCOMP_FILTER_FLAG_SPEC_ALLOW`: this filter is no sandbox, so it must
/// not turn on the speculative store bypass mitigation, which some kernels
/// force on every filtered process and which slows all of it down.
pub(super) fn install_with(
    program: &[sock_filter],
    flags: libc::c_ulong,
) -> io::Result<(NoNewPrivs, libc::c_long)> {
    let install = || match set_mode_filter(program, flags | libc::SECCOMP_FILTER_FLAG_SPEC_ALLOW) {
        // Kernels before 4.17 know no flags.
        Err(error) if error.raw_os_error() == Some(libc::EINVAL) && flags == 0 => {
            set_mode_filter(program, 0)
        }
        other => other,
    };
    match install() {
        Ok(rc) => Ok((NoNewPrivs::Untouched, rc)),
        Err(error) if error.raw_os_error() == Some(libc::EACCES) => {
            // SAFETY: PR_SET_NO_NEW_PRIVS takes plain integers.
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
            install().map(|rc| (NoNewPrivs::Set, rc))
        }
        Err(error) => Err(error),
    }
}

#[cfg(test)]
pub(super) mod tests;
