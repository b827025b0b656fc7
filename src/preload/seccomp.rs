//! The command's plain seccomp filter (`durability/plain.rs`), installed
//! in this process just before it executes a program that goes without
//! the library (`exec.rs`), so that the program's syncs are answered as
//! under `eatmydata --seccomp=plain`. Only where the process has no
//! filter at all: one already there (a container's rules, a sandbox's,
//! the command's own, one installed here before) is left to decide.
//!
//! The kernel takes a filter from a process with `CAP_SYS_ADMIN` in its
//! user namespace, or one with `no_new_privs`; it is asked first, which is
//! that check made exactly. Otherwise `no_new_privs` is set, which stops
//! the program, and all it starts, from gaining privileges by a set-id
//! bit or file capabilities: so it is set only when the program's own
//! files have none (`raises`), and such a program runs unfiltered.

use core::ffi::{CStr, c_long};

use crate::durability::exec::Why;
use crate::durability::plain::PROGRAM;
use crate::errno;
use crate::kernel::raw;

/// What was done before the exec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Installed {
    /// The plain filter is on this process now.
    Now,
    /// A filter was there already: the plain one given before an earlier
    /// exec of this process, or another's, which decides.
    There,
    /// None: the program is set-id or has file capabilities, which the
    /// `no_new_privs` the filter needs would take away.
    SetId,
    /// None: the kernel refused it (no seccomp, or a refusal of its own).
    Refused,
}

impl Installed {
    /// The log's words: what the child runs under.
    pub const fn words(self) -> &'static str {
        match self {
            Installed::Now => "the plain seccomp filter answers its syncs instead",
            Installed::There => {
                "the seccomp filter this process had already (the plain one, or another's) decides its syncs"
            }
            Installed::SetId => {
                "it is set-user-ID, set-group-ID or has file capabilities, which the no_new_privs the plain seccomp filter needs would take away: unfiltered, its syncs reach the disk"
            }
            Installed::Refused => {
                "the kernel refused the plain seccomp filter: unfiltered, its syncs reach the disk"
            }
        }
    }
}

/// Installs the plain filter on this thread, to be inherited by the
/// program it executes next; `raises` tells whether that program could
/// gain privileges (asked only when `no_new_privs` is needed; `None`,
/// unknown, counts as yes).
pub fn plain(raises: impl FnOnce() -> Option<bool>) -> Installed {
    if let Some(already) = inherited() {
        return already;
    }
    if set_mode_filter() == 0 {
        return Installed::Now;
    }
    if errno::get() != libc::EACCES {
        return Installed::Refused;
    }
    if raises().unwrap_or(true) {
        return Installed::SetId;
    }
    if prctl(libc::PR_SET_NO_NEW_PRIVS, 1) != 0 || set_mode_filter() != 0 {
        return Installed::Refused;
    }
    Installed::Now
}

/// What a child of this thread starts with: `None`, no filter;
/// [`Installed::There`], the one this thread has (mode 2, a filter; mode
/// 1, strict, could not make this call); [`Installed::Refused`], a kernel
/// without seccomp.
pub fn inherited() -> Option<Installed> {
    match prctl(libc::PR_GET_SECCOMP, 0) {
        0 => None,
        mode if mode > 0 => Some(Installed::There),
        _ => Some(Installed::Refused),
    }
}

/// `eatmydata: PROGRAM runs without the library (WHY); OUTCOME` on
/// stderr, in one `writev(2)` of fixed pieces: what `eatmydata -v` says
/// of a program that goes without the library.
pub fn tell(program: &CStr, why: Why, outcome: &str) {
    let name = match program.to_bytes() {
        b"" => b"a program run by its descriptor" as &[u8],
        name => name,
    };
    let pieces: [&[u8]; 7] = [
        b"eatmydata: ",
        name,
        b" runs without the library (",
        why.words().as_bytes(),
        b"); ",
        outcome.as_bytes(),
        b"\n",
    ];
    let vector = pieces.map(|piece| libc::iovec {
        iov_base: piece.as_ptr().cast_mut().cast(),
        iov_len: piece.len(),
    });
    let args = [
        2,
        vector.as_ptr() as c_long,
        vector.len() as c_long,
        0,
        0,
        0,
    ];
    raw(libc::SYS_writev, args);
}

fn prctl(option: libc::c_int, arg: c_long) -> c_long {
    raw(libc::SYS_prctl, [option.into(), arg, 0, 0, 0, 0])
}

/// `seccomp(SECCOMP_SET_MODE_FILTER)` with [`PROGRAM`]: 0, or -1 and errno.
/// `SECCOMP_FILTER_FLAG_SPEC_ALLOW`, as the command asks: this filter is no
/// sandbox, and must not turn on the speculative store bypass mitigation;
/// kernels before 4.17 know no flags, and are asked again without.
fn set_mode_filter() -> c_long {
    let program = libc::sock_fprog {
        len: PROGRAM.len() as libc::c_ushort,
        // The kernel only reads through it.
        filter: PROGRAM.as_ptr().cast_mut(),
    };
    let call = |flags: libc::c_ulong| {
        let args = [
            libc::SECCOMP_SET_MODE_FILTER as c_long,
            flags as c_long,
            (&raw const program) as c_long,
            0,
            0,
            0,
        ];
        raw(libc::SYS_seccomp, args)
    };
    match call(libc::SECCOMP_FILTER_FLAG_SPEC_ALLOW) {
        -1 if errno::get() == libc::EINVAL => call(0),
        done => done,
    }
}
