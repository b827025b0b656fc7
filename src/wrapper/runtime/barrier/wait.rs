//! Running the real runtime as a child and waiting for it, for a step whose
//! end the barrier must see (BuildKit's `run`), where every other verb
//! executes it in our place. What the caller sees stays as close to that
//! as a parent can make it: every signal it may send us (a terminal's
//! resize, an interrupt) goes on to the real runtime, which hands it to the
//! container's process as runc does; the child dies with us
//! (`PR_SET_PDEATHSIG`, as BuildKit asks of us); our exit status is its
//! (128 and the number of a signal that ended it).

use std::ffi::{OsStr, OsString};
use std::io;
use std::mem::MaybeUninit;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::Command;

/// Signals a parent cannot pass on, or that the kernel sends a thread for
/// what it did itself.
const NOT_PASSED: [libc::c_int; 7] = [
    libc::SIGKILL,
    libc::SIGSTOP,
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGTRAP,
];

/// The signals waited for: those passed on, and `SIGCHLD`.
fn waited() -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given.
    unsafe { libc::sigemptyset(set.as_mut_ptr()) };
    // SAFETY: initialised just above.
    let mut set = unsafe { set.assume_init() };
    for signal in 1..libc::SIGRTMIN() {
        if !NOT_PASSED.contains(&signal) {
            // SAFETY: an initialised set and a signal number in range.
            unsafe { libc::sigaddset(&mut set, signal) };
        }
    }
    set
}

/// The exit status a shell gives a child's end.
fn code(status: std::process::ExitStatus) -> i32 {
    status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// Runs `program` (`argv0`, `args`) to its end, passing signals on;
/// returns its exit status.
pub fn run(program: &Path, argv0: &OsStr, args: &[OsString]) -> io::Result<i32> {
    let set = waited();
    // SAFETY: setting SIGCHLD's disposition to the default: an ignored
    // SIGCHLD would never be delivered to sigwaitinfo.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    let mut old = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: a valid set; the old mask is written to `old`.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, old.as_mut_ptr()) };
    let mut command = Command::new(program);
    command.arg0(argv0).args(args);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let mut empty = MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(empty.as_mut_ptr());
            libc::pthread_sigmask(libc::SIG_SETMASK, empty.as_ptr(), std::ptr::null_mut());
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let ended = (|| {
        let mut child = command.spawn()?;
        let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
        // A SIGCHLD taken by another thread (a test's) is never seen
        // here: the child is looked at every tick as well.
        let tick = libc::timespec {
            tv_sec: 0,
            tv_nsec: 100_000_000,
        };
        loop {
            // SAFETY: a valid set and timeout; no siginfo asked for.
            let signal = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &tick) };
            if signal < 0 || signal == libc::SIGCHLD {
                let error = io::Error::last_os_error();
                let known = [libc::EINTR, libc::EAGAIN].map(Some);
                if signal < 0 && !known.contains(&error.raw_os_error()) {
                    return Err(error);
                }
                if let Some(status) = child.try_wait()? {
                    return Ok(code(status));
                }
                continue;
            }
            // SAFETY: a signal to our own child, not yet reaped.
            unsafe { libc::kill(pid, signal) };
        }
    })();
    // SAFETY: `old` was filled by the call above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, old.as_ptr(), std::ptr::null_mut()) };
    ended
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_goes_through() {
        let sh = |script: &str| {
            let args = ["-c".into(), script.into()];
            run(Path::new("/bin/sh"), OsStr::new("sh"), &args).unwrap()
        };
        assert_eq!(sh("exit 0"), 0);
        assert_eq!(sh("exit 7"), 7);
        assert_eq!(sh("kill -TERM $$"), 128 + libc::SIGTERM);
        // Signals passed on are tested through the runtime, a process of
        // one thread (tests/integration/runtime): here other threads would
        // take them.
    }
}
