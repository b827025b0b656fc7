//! The library's entry point, where a loader jumps when it is asked to
//! run the library as a program (`ld.so libeatmydata.so`): it says the
//! library is not one, and ends with 127, where a library without an
//! entry point would crash.

use core::ffi::c_long;

use crate::kernel::raw;

/// The library's entry point: the stack holds `argc`, the arguments and
/// the environment, as the kernel laid them; none are read.
///
/// # Safety
/// Only the loader jumps here, once, at the start of a process.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_entry() -> ! {
    core::arch::naked_asm!(
        "endbr64",
        "xor ebp, ebp",
        "and rsp, -16",
        "call {refuse}",
        "ud2",
        refuse = sym refuse,
    )
}

/// As above, for aarch64.
///
/// # Safety
/// Only the loader jumps here, once, at the start of a process.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_entry() -> ! {
    core::arch::naked_asm!(
        "bti jc",
        "mov x29, xzr",
        "mov x30, xzr",
        "bl {refuse}",
        "brk #0",
        refuse = sym refuse,
    )
}

/// What the library says when run as a program.
const NOT_A_PROGRAM: &[u8] =
    b"eatmydata: libeatmydata.so is a library for LD_PRELOAD, not a program\n";

/// Says the library is not a program, on stderr, and ends with 127.
extern "C" fn refuse() -> ! {
    let call = [
        2,
        NOT_A_PROGRAM.as_ptr() as c_long,
        NOT_A_PROGRAM.len() as c_long,
        0,
        0,
        0,
    ];
    raw(libc::SYS_write, call);
    loop {
        raw(libc::SYS_exit_group, [127, 0, 0, 0, 0, 0]);
    }
}
