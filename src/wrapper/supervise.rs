//! Running the command as a child, for `--report` and `--sync-at-exit`,
//! which have something to do after the command ends; without them the
//! command replaces `eatmydata`.
//!
//! The parent behaves as `time(1)` does: it ignores the terminal's SIGINT
//! and SIGQUIT (they reach the command too, which decides), passes SIGTERM
//! and SIGHUP on to the command, and ends as the command ended: with its
//! exit status, or by the same signal.
//!
//! With [`Wait::Tree`] the parent also waits for every process the command
//! started: it makes itself their subreaper (`PR_SET_CHILD_SUBREAPER`), so
//! that an orphan, a daemon that forked away included, becomes its child.
//! Once the command itself has ended, SIGINT, SIGQUIT, SIGTERM or SIGHUP
//! stop that waiting; the signal handling stays in place after [`run`]
//! returns, so that what the parent does then (the flush) is not cut short.

use std::ffi::c_int;
use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use crate::error::Error;

/// The child's pid, for the forwarding handler; 0 before the fork and once
/// the child has been waited for (its pid may then be someone else's).
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Set by a signal once the command has ended: stop waiting for the rest.
static STOP: AtomicBool = AtomicBool::new(false);

const IGNORED: [c_int; 2] = [libc::SIGINT, libc::SIGQUIT];
const FORWARDED: [c_int; 2] = [libc::SIGTERM, libc::SIGHUP];

/// Which processes the parent waits for.
#[derive(Clone, Copy, PartialEq)]
pub enum Wait {
    /// The command alone.
    Command,
    /// The command and every process it started.
    Tree,
}

extern "C" fn forward(signal: c_int) {
    let child = CHILD.load(Ordering::Relaxed);
    if child > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe { libc::kill(child, signal) };
    }
}

extern "C" fn stop_waiting(_: c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Sets `signal`'s handler, returning the one it had. Without SA_RESTART:
/// a signal ends a wait with EINTR, for the caller to look at [`STOP`].
fn set_handler(signal: c_int, handler: libc::sighandler_t) -> libc::sigaction {
    let mut old = MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: a zeroed sigaction is valid: no flags, an empty mask.
    let mut new: libc::sigaction = unsafe { MaybeUninit::zeroed().assume_init() };
    new.sa_sigaction = handler;
    // SAFETY: both pointers are valid for the call.
    unsafe { libc::sigaction(signal, &new, old.as_mut_ptr()) };
    // SAFETY: sigaction filled `old` (or left it zeroed, a valid value).
    unsafe { old.assume_init() }
}

/// Runs `exec` in a child process and waits for it (and, with
/// [`Wait::Tree`], for all it started); `exec` replaces the child's image
/// and returns only on failure, which the child reports. The command's
/// wait status.
pub fn run(exec: impl FnOnce() -> Error, wait: Wait) -> Result<c_int, Error> {
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
    // SAFETY: prctl with an int argument; it cannot fail for PR_SET_CHILD_SUBREAPER.
    if wait == Wait::Tree && unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) } < 0 {
        return Err(Error::Child(io::Error::last_os_error()));
    }
    // SAFETY: this program has one thread, so the child may do anything.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(Error::Child(io::Error::last_os_error()));
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
    let status = wait_for(pid)?;
    CHILD.store(0, Ordering::Relaxed);
    if wait == Wait::Tree {
        for signal in IGNORED.iter().chain(&FORWARDED) {
            set_handler(*signal, stop_waiting as *const () as libc::sighandler_t);
        }
        wait_for_the_rest();
    }
    Ok(status)
}

/// Waits for `pid`, reaping any orphan that ends meanwhile; its status.
fn wait_for(pid: c_int) -> Result<c_int, Error> {
    let mut status = 0;
    loop {
        // SAFETY: waits for any child of ours, into a valid int.
        match unsafe { libc::waitpid(-1, &mut status, 0) } {
            ended if ended == pid => return Ok(status),
            ended if ended > 0 => {}
            _ if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
            _ => return Err(Error::Child(io::Error::last_os_error())),
        }
    }
}

/// Reaps the processes the command left, until none is left or a signal
/// says to stop; says once what it waits for, since it may be a while.
fn wait_for_the_rest() {
    let mut told = false;
    loop {
        let mut status = 0;
        // SAFETY: waits for any child, into a valid int.
        let ended = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if ended > 0 {
            continue;
        }
        if ended < 0 || STOP.load(Ordering::Relaxed) {
            return; // ECHILD: none left
        }
        if !told {
            told = true;
            let left = left_running();
            eprintln!(
                "eatmydata: the command has ended; waiting for the {} process{} it left running ({}) before the flush: stop {} or press Ctrl-C to flush now",
                left.len(),
                if left.len() == 1 { "" } else { "es" },
                left.join(", "),
                if left.len() == 1 { "it" } else { "them" },
            );
        }
        // SAFETY: as above; a signal ends the wait with EINTR.
        unsafe { libc::waitpid(-1, &mut status, 0) };
    }
}

/// The children of this process, as `PID (NAME)`.
fn left_running() -> Vec<String> {
    let me = std::process::id();
    let children =
        std::fs::read_to_string(format!("/proc/{me}/task/{me}/children")).unwrap_or_default();
    children
        .split_whitespace()
        .map(|pid| {
            let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            format!("{pid} {}", name.trim())
        })
        .collect()
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
