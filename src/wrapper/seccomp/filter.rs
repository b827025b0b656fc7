//! Seccomp mode: a filter, installed just before the command is executed,
//! under which the kernel answers fsync and its relatives with success
//! without running them. It reaches what `LD_PRELOAD` cannot — statically
//! linked programs and Go programs, which make their system calls
//! themselves — and, inherited across fork and exec, the whole process tree.
//!
//! The rules are a table: for each ABI a process can enter the kernel
//! through, the architecture the kernel reports for it and its numbers for
//! the calls (`src/durability/plain.rs`, shared with the library, which
//! installs the same filter before a child that goes without it). The
//! program is classic BPF, written by us rather than by seccompiler, for a
//! reason found when it was tried: seccompiler answers any architecture
//! but its one by killing the process, when a program may enter through
//! another ABI legitimately (a 32-bit program, or `int $0x80` from 64-bit
//! code), so its output needed a dispatch of ours in front anyway. The
//! program, one comparison per call, is built at compile time and checked
//! by running it in the unit tests.

use std::io;

use libc::sock_filter;

#[cfg(target_arch = "x86_64")]
pub(super) use crate::durability::plain::X32_SYSCALL_BIT;
pub use crate::durability::plain::{ABIS, Abi};
pub(super) use crate::durability::plain::{RET_ALLOW, RET_ZERO};

/// The whole filter (`durability/plain.rs`): load the architecture and go
/// to its part, which loads the number and sends each listed one to
/// "return 0"; any other number, and any architecture not in `ABIS`, is
/// allowed. The library installs the same array.
pub fn program() -> &'static [sock_filter] {
    &crate::durability::plain::PROGRAM
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
