//! The trampoline itself: the library's entry point, where the loader
//! jumps when it runs the library as a program (`ld.so libeatmydata.so
//! ...`), as the hook in `spawn.rs` has `posix_spawn` do. It installs the
//! plain filter, takes the environment from behind `HIDDEN` and executes
//! the program; anything it was not given by the hook ends it with 127.

use core::ffi::{CStr, c_char, c_long};

use super::{BEFORE, parse, unhidden};
use crate::kernel::raw;
use crate::seccomp;

/// The library's entry point: the stack holds `argc`, the arguments and
/// the environment, as the kernel laid them.
///
/// # Safety
/// Only the loader jumps here, once, at the start of a process.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_spawned() -> ! {
    core::arch::naked_asm!(
        "endbr64",
        "xor ebp, ebp",
        "mov rdi, rsp",
        "and rsp, -16",
        "call {run}",
        "ud2",
        run = sym run,
    )
}

/// As above, for aarch64.
///
/// # Safety
/// Only the loader jumps here, once, at the start of a process.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn eatmydata_spawned() -> ! {
    core::arch::naked_asm!(
        "bti jc",
        "mov x29, xzr",
        "mov x30, xzr",
        "mov x0, sp",
        "bl {run}",
        "brk #0",
        run = sym run,
    )
}

/// What the library says when run as a program without the hook's
/// arguments and environment.
const NOT_A_PROGRAM: &[u8] =
    b"eatmydata: libeatmydata.so is a library for LD_PRELOAD, not a program\n";

/// Installs the plain filter on this process and executes the program,
/// or exits with 127.
///
/// # Safety
/// `stack` is the process's initial stack: `argc`, then `argc` argument
/// pointers, a null, the environment's pointers, a null.
unsafe extern "C" fn run(stack: *mut usize) -> ! {
    // SAFETY: the initial stack's layout, as documented; this process's
    // own, written by nobody else.
    let (args, env) = unsafe {
        let argc = *stack;
        let args = stack.add(1).cast::<*const c_char>();
        let env = args.add(argc + 1).cast_mut();
        let mut envc = 0;
        while !(*env.add(envc)).is_null() {
            envc += 1;
        }
        (
            core::slice::from_raw_parts(args, argc),
            core::slice::from_raw_parts_mut(env, envc),
        )
    };
    // SAFETY: the kernel's strings, NUL-terminated.
    let text = |entry: *const c_char| unsafe { CStr::from_ptr(entry) }.to_bytes();
    let arg = |n: usize| Some(text(*args.get(n)?));
    let Some(parsed) = parse(args.len(), arg) else {
        refuse()
    };
    // ENV, the environment the decision made, out from behind HIDDEN,
    // where it ends at the null the kernel put after it.
    for entry in env.iter_mut() {
        if unhidden(text(*entry)).is_none() {
            refuse()
        }
        *entry = entry.wrapping_add(1);
    }
    let Some(&program) = args.get(BEFORE - 1) else {
        exit(127)
    };
    // SAFETY: `parse` saw the program's entry, a C string as above.
    let program = unsafe { CStr::from_ptr(program) };
    let filter = seccomp::plain(|| crate::image::raises(libc::AT_FDCWD, program, 0));
    if parsed.tell {
        seccomp::tell(program, parsed.why, filter.words());
    }
    let call = [
        program.as_ptr() as c_long,
        args.as_ptr().wrapping_add(BEFORE) as c_long,
        env.as_ptr() as c_long,
        0,
        0,
        0,
    ];
    raw(libc::SYS_execve, call);
    say(&[
        b"eatmydata: ",
        program.to_bytes(),
        b": cannot be executed in posix_spawn's child after all\n",
    ]);
    exit(127)
}

/// Says the library is not a program, and ends with 127.
fn refuse() -> ! {
    say(&[NOT_A_PROGRAM]);
    exit(127)
}

/// Writes `pieces` to stderr in one `writev(2)`.
fn say(pieces: &[&[u8]]) {
    let mut vector = [libc::iovec {
        iov_base: core::ptr::null_mut(),
        iov_len: 0,
    }; 4];
    for (slot, piece) in vector.iter_mut().zip(pieces) {
        slot.iov_base = piece.as_ptr().cast_mut().cast();
        slot.iov_len = piece.len();
    }
    let count = pieces.len().min(vector.len()) as c_long;
    raw(
        libc::SYS_writev,
        [2, vector.as_ptr() as c_long, count, 0, 0, 0],
    );
}

/// Ends the process with `status`.
fn exit(status: core::ffi::c_int) -> ! {
    loop {
        raw(libc::SYS_exit_group, [status.into(), 0, 0, 0, 0, 0]);
    }
}
