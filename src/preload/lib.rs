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

mod errno;
mod fcntl;
// Not in unit tests: the test program would interpose its own libc calls.
#[cfg(not(test))]
mod hooks;
mod mman;
mod next;
mod policy;
mod report;
mod sync;
mod syscall;
mod uio;

/// A panic cannot unwind out of a hook into a C caller; with no code path
/// that panics by design, this is only the last line of defence.
#[cfg(not(test))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: abort(3) has no preconditions and does not return.
    unsafe { libc::abort() }
}
