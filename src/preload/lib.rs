//! libeatmydata.so: the library loaded with `LD_PRELOAD`.
//!
//! It makes a program's requests for durability free: the sync calls return
//! at once, and the sync flags are dropped from opens and writes. Everything
//! else the program can observe stays as it was.
//!
//! The hooks live in a small C shim (`c/shim.c`), which reads variadic
//! arguments, keeps cancellation points and calls the real functions; the
//! exported names are Rust trampolines that jump there (`hooks.rs`). The
//! Rust here decides what to do and does the checks a skipped call must
//! still make. This code runs inside other people's programs, so it
//! is `no_std` with `panic = "abort"`: it cannot allocate, lock or print.

#![cfg_attr(not(test), no_std)]

// The modules form layers; each uses only those on the floors below it.
// Floor 1: what the process was told, and errno.
#[allow(dead_code)] // what only the supervisor asks (Kind, reaches_disk, disk_fs_type); sqe::ADDR3, for the tests
#[path = "../durability.rs"]
mod durability;
mod errno;
mod policy;
#[allow(dead_code)] // what only the command uses: the parsers, its own variables
#[path = "../protocol.rs"]
mod protocol;
// Floor 2, in steps, each using the ones before it:
// 2a: the objects loaded after ours, and the names they define;
mod objects;
// 2b: the next definitions of the functions the hooks pass calls on to;
mod next;
// 2c: the library's own kernel calls and file I/O, through libc's syscall;
mod kernel;
// 2d: copies from and to the caller's memory; the mappings of its addresses.
mod caller;
mod maps;
// 2e: what a program about to be executed is, read from its file, and
// whether a file carries this library's build ID;
// 2f: the command's plain seccomp filter, installed before such a program;
// 2g: and in a posix_spawn child that must have it (`spawn.rs`).
mod build_id;
mod image;
mod seccomp;
mod spawn;
// Floor 3, in steps: what one statx tells of a file (its kind, its
// mount, the mount's file system); which mounts keep their syncs (keep by mount);
// which file system a skip was on; where syncs were
// skipped, for --sync-at-exit; what was skipped and where, for --report,
// which tells --sync-at-exit's record too.
mod flush;
mod keep;
mod place;
mod report;
mod statx;
// Floor 4: one decision per durability request, by libc area.
mod mman;
mod open;
mod sync;
mod uio;
// Floor 5: asynchronous flushes, answered with sync's checks, and io_uring
// entries rewritten before the kernel reads them.
mod aio;
mod linux_aio;
mod uring;
// Floor 6: syscall(2), a dispatcher onto the decisions above.
mod syscall;
// Floor 7: the exec family: whether the library stays in the environment
// of the program executed.
mod exec;
// Beside: the exported names. Not in unit tests, where the test program
// would interpose its own libc calls.
#[cfg(not(test))]
mod hooks;
// Beside: the library run as a program, which it is not.
#[cfg(not(test))]
mod entry;

/// `eatmydata_warm_up`: called by the shim's constructor, so that the
/// switches are read, and the kept mounts learned, as the process was
/// started, before it can change its environment. What only an exec
/// needs is learned at the first exec (`exec.rs`), and the next
/// definitions on first use (`next.rs` says why that is safe).
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_warm_up() {
    policy::warm_up();
    keep::warm_up();
}

/// A panic cannot unwind out of a hook into a C caller; with no code path
/// that panics by design, this is only the last line of defence.
#[cfg(not(test))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: abort(3) has no preconditions and does not return.
    unsafe { libc::abort() }
}
