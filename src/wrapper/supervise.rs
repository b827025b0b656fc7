//! Running the command as a child, for `--report`, which has something to
//! say after the command ends; without it the command replaces `eatmydata`.
//!
//! The parent behaves as `time(1)` does: it ignores the terminal's SIGINT
//! and SIGQUIT (they reach the command too, which decides), passes SIGTERM
//! and SIGHUP on to the command, and ends as the command ended: with its
//! exit status, or by the same signal.

use std::ffi::c_int;
use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::error::Error;

/// The child's pid, for the forwarding handler; 0 before the fork.
static CHILD: AtomicI32 = AtomicI32::new(0);

const IGNORED: [c_int; 2] = [libc::SIGINT, libc::SIGQUIT];
const FORWARDED: [c_int; 2] = [libc::SIGTERM, libc::SIGHUP];

extern "C" fn forward(signal: c_int) {
    let child = CHILD.load(Ordering::Relaxed);
    if child > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe { libc::kill(child, signal) };
    }
}

/// Sets `signal`'s handler, returning the one it had.
fn set_handler(signal: c_int, handler: libc::sighandler_t) -> libc::sigaction {
    let mut old = MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: a zeroed sigaction is valid: no flags, an empty mask.
    let mut new: libc::sigaction = unsafe { MaybeUninit::zeroed().assume_init() };
    new.sa_sigaction = handler;
    new.sa_flags = libc::SA_RESTART;
    // SAFETY: both pointers are valid for the call.
    unsafe { libc::sigaction(signal, &new, old.as_mut_ptr()) };
    // SAFETY: sigaction filled `old` (or left it zeroed, a valid value).
    unsafe { old.assume_init() }
}

/// Runs `exec` in a child process and waits for it; `exec` replaces the
/// child's image and returns only on failure, which the child reports.
pub fn run(exec: impl FnOnce() -> Error) -> Result<c_int, Error> {
    let saved: Vec<(c_int, libc::sigaction)> = IGNORED
        .iter()
        .map(|&s| (s, set_handler(s, libc::SIG_IGN)))
        .chain(FORWARDED.iter().map(|&s| {
            (
                s,
                set_handler(s, forward as *const () as libc::sighandler_t),
            )
        }))
        .collect();
    // SAFETY: this program has one thread, so the child may do anything.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(Error::Report(io::Error::last_os_error()));
    }
    if pid == 0 {
        for (signal, action) in &saved {
            // SAFETY: restores the action saved above.
            unsafe { libc::sigaction(*signal, action, std::ptr::null_mut()) };
        }
        let error = exec();
        eprintln!("eatmydata: {error}");
        // SAFETY: ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(c_int::from(error.exit_code())) };
    }
    CHILD.store(pid, Ordering::Relaxed);
    let mut status = 0;
    // SAFETY: waits for our own child, into a valid int.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        if io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(Error::Report(io::Error::last_os_error()));
        }
    }
    for (signal, action) in &saved {
        // SAFETY: restores the action saved above.
        unsafe { libc::sigaction(*signal, action, std::ptr::null_mut()) };
    }
    Ok(status)
}

/// Ends this process as the child ended: the same exit status, or death by
/// the same signal (with the default action restored first).
pub fn exit_like(status: c_int) -> c_int {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        set_handler(signal, libc::SIG_DFL);
        // SAFETY: an empty set, then unblocking this one signal and raising it.
        unsafe {
            let mut set = MaybeUninit::<libc::sigset_t>::zeroed();
            libc::sigemptyset(set.as_mut_ptr());
            libc::sigaddset(set.as_mut_ptr(), signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, set.as_ptr(), std::ptr::null_mut());
            libc::raise(signal);
        }
        return 128 + signal;
    }
    libc::WEXITSTATUS(status)
}
