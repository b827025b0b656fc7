//! The filter checked by running it: a small classic-BPF interpreter over
//! `(arch, nr)`, and the numbers checked against the kernel's own headers.

use super::*;
use crate::durability::plain::*;
use crate::seccomp::bpf::{ARCH_OFFSET, JEQ_K, JSET_K, LD_W_ABS, NR_OFFSET, RET_K};

const ERRNO_0: u32 = 0x0005_0000;
const ALLOW: u32 = 0x7fff_0000;

/// What the program answers for one call; panics on anything the filter
/// should not contain, or on running off its end.
fn run(program: &[sock_filter], arch: u32, nr: u32) -> u32 {
    run_with(program, arch, nr, [0; 6])
}

/// `run` for a call with arguments `args`.
pub(in crate::seccomp) fn run_with(
    program: &[sock_filter],
    arch: u32,
    nr: u32,
    args: [u64; 6],
) -> u32 {
    let (mut pc, mut acc) = (0usize, 0u32);
    loop {
        let insn = &program[pc];
        pc += 1;
        match insn.code {
            LD_W_ABS => {
                acc = match insn.k {
                    NR_OFFSET => nr,
                    ARCH_OFFSET => arch,
                    offset @ 16..=63 if offset % 4 == 0 => {
                        let arg = args[(offset as usize - 16) / 8];
                        if offset % 8 == 0 {
                            arg as u32
                        } else {
                            (arg >> 32) as u32
                        }
                    }
                    other => panic!("load from offset {other}"),
                }
            }
            JEQ_K => {
                pc += usize::from(if acc == insn.k { insn.jt } else { insn.jf });
            }
            JSET_K => {
                pc += usize::from(if acc & insn.k != 0 { insn.jt } else { insn.jf });
            }
            RET_K => return insn.k,
            code => panic!("unexpected opcode {code:#x}"),
        }
    }
}

fn audit_arch(name: &str) -> u32 {
    ABIS.iter().find(|abi| abi.name == name).unwrap().arch
}

#[test]
fn every_listed_call_returns_zero_without_running() {
    let program = program();
    for abi in ABIS {
        for &(name, nr) in abi.calls {
            assert_eq!(
                run(program, abi.arch, nr as u32),
                ERRNO_0,
                "{} {name}",
                abi.name
            );
        }
    }
}

/// A negative descriptor runs, to fail `EBADF` in the kernel, whatever
/// the upper half of the register holds; `sync` and `msync` take none.
#[test]
fn a_negative_descriptor_runs_and_any_other_is_answered() {
    let program = program();
    for abi in ABIS {
        for &(name, nr) in abi.calls {
            for fd in [u64::MAX, 0xffff_ffff, 0x8000_0000, (-100i64) as u64] {
                let answer = run_with(program, abi.arch, nr as u32, [fd, 0, 0, 0, 0, 0]);
                let expected = if takes_descriptor(name) {
                    ALLOW
                } else {
                    ERRNO_0
                };
                assert_eq!(answer, expected, "{} {name}({fd:#x})", abi.name);
            }
            for fd in [0, 3, 0x7fff_ffff, 0x1_0000_0003] {
                let answer = run_with(program, abi.arch, nr as u32, [fd, 0, 0, 0, 0, 0]);
                assert_eq!(answer, ERRNO_0, "{} {name}({fd:#x})", abi.name);
            }
        }
    }
}

#[test]
fn other_calls_and_other_architectures_are_allowed() {
    let program = program();
    let native = ABIS[0].arch;
    for nr in [0, 1, 39, 59, 60, 231, 999, 0x4000_0001] {
        let listed = ABIS
            .iter()
            .any(|abi| abi.arch == native && abi.calls.iter().any(|&(_, n)| n as u32 == nr));
        if !listed {
            assert_eq!(run(program, native, nr), ALLOW, "nr {nr}");
        }
    }
    // An architecture we do not know: even its number 74 runs unchanged.
    for arch in [0, 0x4000_0028 /* ARM */, 0xc000_00f3 /* RISC-V */] {
        for &(_, nr) in ABIS[0].calls {
            assert_eq!(run(program, arch, nr as u32), ALLOW);
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_number_is_never_read_in_another_abi() {
    let program = program();
    let (x86_64, i386) = (audit_arch("x86_64"), audit_arch("i386"));
    // i386 fsync (118) is getresuid on x86_64; x86_64 fsync (74) is
    // i386 fsync only by name, not by number.
    assert_eq!(run(program, x86_64, 118), ALLOW);
    assert_eq!(run(program, i386, 74), ALLOW);
    // The x32 bit means nothing to i386.
    assert_eq!(run(program, i386, 0x4000_0000 | 74), ALLOW);
    assert_eq!(run(program, x86_64, 0x4000_0000 | 74), ERRNO_0);
}

/// The native ABI's numbers, checked against the libc crate's.
#[test]
fn native_numbers_are_the_libc_crates() {
    #[cfg(target_arch = "x86_64")]
    let calls = X86_64_CALLS;
    #[cfg(target_arch = "aarch64")]
    let calls = AARCH64_CALLS;
    let named = |name| calls.iter().find(|(n, _)| *n == name).unwrap().1;
    assert_eq!(named("fsync"), libc::SYS_fsync);
    assert_eq!(named("fdatasync"), libc::SYS_fdatasync);
    assert_eq!(named("sync"), libc::SYS_sync);
    assert_eq!(named("syncfs"), libc::SYS_syncfs);
    assert_eq!(named("sync_file_range"), libc::SYS_sync_file_range);
    assert_eq!(named("msync"), libc::SYS_msync);
}

/// `#define __NR_name N` lines of a kernel header, as (name, N); x32's
/// header writes `(__X32_SYSCALL_BIT + N)`.
#[cfg(target_arch = "x86_64")]
fn header_numbers(path: &str) -> Vec<(String, i64)> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e} (install linux-libc-dev)"));
    text.lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("#define __NR_")?;
            let (name, value) = rest.split_once(' ')?;
            let value = value.trim();
            let number = match value.strip_prefix("(__X32_SYSCALL_BIT + ") {
                Some(n) => X32_SYSCALL_BIT | n.trim_end_matches(')').parse::<i64>().ok()?,
                None => value.parse().ok()?,
            };
            Some((name.to_owned(), number))
        })
        .collect()
}

#[cfg(target_arch = "x86_64")]
#[test]
fn i386_and_x32_numbers_are_the_kernel_headers() {
    for (header, calls) in [
        ("/usr/include/x86_64-linux-gnu/asm/unistd_32.h", I386_CALLS),
        ("/usr/include/x86_64-linux-gnu/asm/unistd_x32.h", X32_CALLS),
        (
            "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
            X86_64_CALLS,
        ),
    ] {
        let numbers = header_numbers(header);
        for &(name, nr) in calls {
            assert!(
                numbers.contains(&(name.to_owned(), nr)),
                "{header}: {name} is not {nr:#x}"
            );
        }
        // Whatever the header calls a sync, the table has.
        for (name, _) in &numbers {
            if name.contains("sync") && !name.starts_with("rt_") && name != "membarrier" {
                assert!(
                    calls.iter().any(|(n, _)| n == name),
                    "{header} has {name}, the table does not"
                );
            }
        }
    }
}

#[test]
fn every_jump_lands_inside_and_the_program_ends_in_returns() {
    let program = program();
    // Every jump lands inside the program, and the program ends in returns.
    for (at, insn) in program.iter().enumerate() {
        let targets: Vec<usize> = match insn.code {
            JEQ_K | JSET_K => vec![at + 1 + usize::from(insn.jt), at + 1 + usize::from(insn.jf)],
            _ => vec![],
        };
        assert!(targets.iter().all(|&t| t < program.len()), "jump at {at}");
    }
    assert_eq!(program.last().unwrap().code, RET_K);
    let returns: Vec<u32> = program
        .iter()
        .filter(|i| i.code == RET_K)
        .map(|i| i.k)
        .collect();
    assert!(
        returns.iter().all(|&k| k == ALLOW || k == ERRNO_0),
        "{returns:x?}"
    );
}
