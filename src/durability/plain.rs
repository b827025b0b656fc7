//! The plain seccomp filter: for each ABI a process can enter the kernel
//! through, the architecture the kernel reports for it and its numbers for
//! the sync calls, which the filter answers 0 without running them; any
//! other call, and any architecture not listed, is allowed. A call that
//! takes a descriptor is answered only for one whose bit 31 is clear (the
//! kernel reads the low 32 bits): a negative one runs, and fails `EBADF`
//! as the kernel fails it (the rule `eatmydata profile` and the runtime
//! give containers, `src/wrapper/profile/rules.rs`).
//!
//! One definition for both products: the command installs it for a
//! static command (`--seccomp=plain`, or seccomp mode without `/proc`),
//! and the library installs it before executing a child that goes without
//! the library (`src/preload/seccomp.rs`), where nothing may allocate.
//! So the program is built here at compile time, by `const fn`s, into
//! [`PROGRAM`], a static array of classic BPF. The command's unit tests run
//! it in a small interpreter and check the numbers against the kernel's
//! headers (`src/wrapper/seccomp/filter/tests.rs`).
//!
//! The program, one comparison per call: load the architecture and jump
//! to its part (the architectures in ascending order), else allow; each
//! part loads the number and jumps to "return 0" for each listed one
//! (`sync`, `msync`) or to the descriptor's guard (the others), else
//! allows; the guard loads the first argument's low word and allows a
//! negative one, else goes on to "return 0", the last instruction.

use libc::sock_filter;

/// `seccomp_data.arch` values, from `<linux/audit.h>`.
#[cfg(target_arch = "x86_64")]
pub const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
#[cfg(target_arch = "x86_64")]
pub const AUDIT_ARCH_I386: u32 = 0x4000_0003;
#[cfg(target_arch = "aarch64")]
pub const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;

/// x32 calls come in under `AUDIT_ARCH_X86_64` with this bit in the number.
#[cfg(target_arch = "x86_64")]
pub const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// One way into the kernel, and its numbers for the calls made free.
pub struct Abi {
    pub name: &'static str,
    pub arch: u32,
    pub calls: &'static [(&'static str, i64)],
}

/// x86_64 numbers; x32 uses the same ones with `X32_SYSCALL_BIT` set.
#[cfg(target_arch = "x86_64")]
pub const X86_64_CALLS: &[(&str, i64)] = &[
    ("msync", 26),
    ("fsync", 74),
    ("fdatasync", 75),
    ("sync", 162),
    ("sync_file_range", 277),
    ("syncfs", 306),
];
#[cfg(target_arch = "x86_64")]
pub const X32_CALLS: &[(&str, i64)] = &[
    ("msync", X32_SYSCALL_BIT | 26),
    ("fsync", X32_SYSCALL_BIT | 74),
    ("fdatasync", X32_SYSCALL_BIT | 75),
    ("sync", X32_SYSCALL_BIT | 162),
    ("sync_file_range", X32_SYSCALL_BIT | 277),
    ("syncfs", X32_SYSCALL_BIT | 306),
];
#[cfg(target_arch = "x86_64")]
pub const I386_CALLS: &[(&str, i64)] = &[
    ("sync", 36),
    ("fsync", 118),
    ("msync", 144),
    ("fdatasync", 148),
    ("sync_file_range", 314),
    ("syncfs", 344),
];
/// The generic table: no `sync_file_range2` here either.
#[cfg(target_arch = "aarch64")]
pub const AARCH64_CALLS: &[(&str, i64)] = &[
    ("sync", 81),
    ("fsync", 82),
    ("fdatasync", 83),
    ("sync_file_range", 84),
    ("msync", 227),
    ("syncfs", 267),
];

/// Every ABI reachable from the architecture we are built for, the native
/// one first.
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
pub const RET_ZERO: u32 = libc::SECCOMP_RET_ERRNO;
pub const RET_ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

// Classic BPF opcodes, from <linux/bpf_common.h> (the command's assembler
// of the supervised filter, `bpf.rs`, uses them too).
pub const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
pub const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
pub const JSET_K: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
pub const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

/// `offsetof(struct seccomp_data, nr)` and `arch`.
pub const NR_OFFSET: u32 = 0;
pub const ARCH_OFFSET: u32 = 4;
/// The offset of the first argument's low word (`args[0]`, little-endian).
#[cfg(target_endian = "little")]
pub const ARG0_LOW_OFFSET: u32 = 16;
/// A descriptor's sign bit, in its low word.
pub const FD_SIGN: u32 = 0x8000_0000;

/// Whether the call `name` takes a descriptor first: all but `sync` and
/// `msync`.
pub const fn takes_descriptor(name: &str) -> bool {
    !same(name, "sync") && !same(name, "msync")
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The architectures of [`ABIS`], each once, in ascending order, and how
/// many there are.
const fn architectures() -> ([u32; ABIS.len()], usize) {
    let mut found = [0u32; ABIS.len()];
    let mut count = 0;
    let mut i = 0;
    while i < ABIS.len() {
        let arch = ABIS[i].arch;
        // Insert in order, unless it is there already.
        let mut at = 0;
        while at < count && found[at] < arch {
            at += 1;
        }
        if at == count || found[at] != arch {
            let mut moved = count;
            while moved > at {
                found[moved] = found[moved - 1];
                moved -= 1;
            }
            found[at] = arch;
            count += 1;
        }
        i += 1;
    }
    (found, count)
}

/// How many calls [`ABIS`] lists for `arch`.
const fn calls_of(arch: u32) -> usize {
    let (mut count, mut i) = (0, 0);
    while i < ABIS.len() {
        if ABIS[i].arch == arch {
            count += ABIS[i].calls.len();
        }
        i += 1;
    }
    count
}

/// The program's length: the architecture's load, a jump per
/// architecture and the allow after them; per architecture the number's
/// load, a jump per call and the allow after them; the guard's load, test
/// and allow; the final return 0.
pub const LEN: usize = {
    let (arches, count) = architectures();
    let (mut len, mut i) = (2 + count + 1 + 3, 0);
    while i < count {
        len += calls_of(arches[i]) + 2;
        i += 1;
    }
    len
};

const fn insn(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// A forward jump from the instruction at `from` to the one at `to`, as
/// the offset classic BPF reads (from the next instruction); a program
/// that would need more than 255 fails to compile.
const fn offset(from: usize, to: usize) -> u8 {
    let distance = to - from - 1;
    assert!(distance <= 255, "a jump too far for classic BPF");
    distance as u8
}

/// The plain filter, built when compiled (a static: one array, whose
/// address the kernel is given).
pub static PROGRAM: [sock_filter; LEN] = {
    let (arches, count) = architectures();
    let zero = LEN - 1;
    let guard = LEN - 4;
    let mut program = [insn(RET_K, 0, 0, RET_ALLOW); LEN];
    program[0] = insn(LD_W_ABS, 0, 0, ARCH_OFFSET);
    // Where each architecture's part starts: after the dispatch.
    let mut part = 1 + count + 1;
    let mut i = 0;
    while i < count {
        program[1 + i] = insn(JEQ_K, offset(1 + i, part), 0, arches[i]);
        program[part] = insn(LD_W_ABS, 0, 0, NR_OFFSET);
        let mut at = part + 1;
        let mut abi = 0;
        while abi < ABIS.len() {
            if ABIS[abi].arch == arches[i] {
                let mut call = 0;
                while call < ABIS[abi].calls.len() {
                    let (name, nr) = ABIS[abi].calls[call];
                    let to = if takes_descriptor(name) { guard } else { zero };
                    program[at] = insn(JEQ_K, offset(at, to), 0, nr as u32);
                    at += 1;
                    call += 1;
                }
            }
            abi += 1;
        }
        // `at` is the part's allow, already in place.
        part = at + 1;
        i += 1;
    }
    // A negative descriptor runs (the allow after the test), any other
    // is answered 0.
    program[guard] = insn(LD_W_ABS, 0, 0, ARG0_LOW_OFFSET);
    program[guard + 1] = insn(JSET_K, 0, 1, FD_SIGN);
    program[zero] = insn(RET_K, 0, 0, RET_ZERO);
    program
};
