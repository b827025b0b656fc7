//! Seccomp mode: a filter, installed just before the command is executed,
//! under which the kernel answers fsync and its relatives with success
//! without running them. It reaches what `LD_PRELOAD` cannot — statically
//! linked programs and Go programs, which make their system calls
//! themselves — and, inherited across fork and exec, the whole process tree.
//!
//! The rules are a table: for each ABI a process can enter the kernel
//! through, the architecture the kernel reports for it and its numbers for
//! the calls. seccompiler compiles the numbers of each architecture into a
//! BPF body. It would also check the architecture, but it answers any other
//! one by killing the process, and a program may enter through another ABI
//! legitimately (a 32-bit program, or `int $0x80` from 64-bit code). So the
//! bodies sit behind a dispatch on the architecture of our own, in which an
//! architecture not in the table is allowed unchanged.

use std::collections::BTreeMap;
use std::io;

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch, sock_filter};

/// `seccomp_data.arch` values, from `<linux/audit.h>`.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH_I386: u32 = 0x4000_0003;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;

/// x32 calls come in under `AUDIT_ARCH_X86_64` with this bit in the number.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

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

/// seccompiler's name for our architecture; only its architecture check,
/// which we take off, depends on it.
#[cfg(target_arch = "x86_64")]
const TARGET: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const TARGET: TargetArch = TargetArch::aarch64;

// Classic BPF opcodes, from <linux/bpf_common.h>: BPF_LD (0) | BPF_W (0) |
// BPF_ABS, BPF_JMP | BPF_JEQ | BPF_K (0), BPF_JMP | BPF_JA, BPF_RET | BPF_K.
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x05 | 0x10;
const BPF_JA: u16 = 0x05;
const BPF_RET_K: u16 = 0x06;
/// `offsetof(struct seccomp_data, arch)`.
const ARCH_OFFSET: u32 = 4;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;

fn insn(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// The architecture check seccompiler puts in front of a body.
fn seccompiler_arch_check() -> [sock_filter; 3] {
    [
        insn(BPF_LD_W_ABS, 0, 0, ARCH_OFFSET),
        insn(BPF_JEQ_K, 1, 0, TARGET_AUDIT_ARCH),
        insn(BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
    ]
}
#[cfg(target_arch = "x86_64")]
const TARGET_AUDIT_ARCH: u32 = AUDIT_ARCH_X86_64;
#[cfg(target_arch = "aarch64")]
const TARGET_AUDIT_ARCH: u32 = AUDIT_ARCH_AARCH64;

/// The body for one architecture: its numbers answered with
/// `SECCOMP_RET_ERRNO` and data 0, which the caller sees as a return of 0;
/// any other number allowed.
fn body(numbers: &[i64]) -> Result<BpfProgram, String> {
    let rules: BTreeMap<i64, _> = numbers.iter().map(|&nr| (nr, Vec::new())).collect();
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(0), TARGET)
        .map_err(|error| error.to_string())?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|error: seccompiler::BackendError| error.to_string())?;
    match program.strip_prefix(&seccompiler_arch_check()[..]) {
        Some(body) => Ok(body.to_vec()),
        // Not the layout this module was written against: better no filter
        // than one that kills other architectures.
        None => {
            Err("seccompiler's program does not open with the expected architecture check".into())
        }
    }
}

/// The whole filter: load the architecture; jump to its body; allow any
/// architecture not in `ABIS`.
pub fn program() -> Result<BpfProgram, String> {
    let mut by_arch: BTreeMap<u32, Vec<i64>> = BTreeMap::new();
    for abi in ABIS {
        let numbers = by_arch.entry(abi.arch).or_default();
        numbers.extend(abi.calls.iter().map(|&(_, nr)| nr));
    }
    let bodies = by_arch
        .into_iter()
        .map(|(arch, numbers)| Ok((arch, body(&numbers)?)))
        .collect::<Result<Vec<_>, String>>()?;

    // Two instructions per architecture, then the load and the final allow.
    let dispatch_len = 2 + 2 * bodies.len();
    let mut program = vec![insn(BPF_LD_W_ABS, 0, 0, ARCH_OFFSET)];
    let mut start = dispatch_len;
    for (arch, body) in &bodies {
        // Equal: fall through to the jump; not: skip it.
        program.push(insn(BPF_JEQ_K, 0, 1, *arch));
        // A jump goes to the instruction after it plus k.
        let k = start - (program.len() + 1);
        program.push(insn(BPF_JA, 0, 0, k as u32));
        start += body.len();
    }
    program.push(insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW));
    for (_, body) in bodies {
        program.extend(body);
    }
    Ok(program)
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

/// `struct sock_fprog` from `<linux/filter.h>`.
#[repr(C)]
struct SockFprog {
    len: libc::c_ushort,
    filter: *const sock_filter,
}

/// `seccomp(SECCOMP_SET_MODE_FILTER, flags, program)`.
fn set_mode_filter(program: &[sock_filter], flags: libc::c_ulong) -> io::Result<()> {
    let len = libc::c_ushort::try_from(program.len())
        .map_err(|_| io::Error::from_raw_os_error(libc::E2BIG))?;
    let fprog = SockFprog {
        len,
        filter: program.as_ptr(),
    };
    // SAFETY: `fprog` points at `len` instructions that outlive the call;
    // the kernel copies them and keeps no pointer.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags,
            &fprog as *const SockFprog,
        )
    };
    if rc == 0 {
        Ok(())
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
///
/// `SECCOMP_FILTER_FLAG_SPEC_ALLOW`: this filter is no sandbox, so it must
/// not turn on the speculative store bypass mitigation, which some kernels
/// force on every filtered process and which slows all of it down.
pub fn install(program: &[sock_filter]) -> io::Result<NoNewPrivs> {
    let install = || match set_mode_filter(program, libc::SECCOMP_FILTER_FLAG_SPEC_ALLOW) {
        // Kernels before 4.17 know no flags.
        Err(error) if error.raw_os_error() == Some(libc::EINVAL) => set_mode_filter(program, 0),
        other => other,
    };
    match install() {
        Ok(()) => Ok(NoNewPrivs::Untouched),
        Err(error) if error.raw_os_error() == Some(libc::EACCES) => {
            // SAFETY: PR_SET_NO_NEW_PRIVS takes plain integers.
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
            install().map(|()| NoNewPrivs::Set)
        }
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests;
