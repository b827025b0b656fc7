//! Running the command as a child, for `--report` and `--sync-at-exit`,
//! which have something to do after the command ends, and for the seccomp
//! supervisor, which answers the command's calls while it runs; without
//! them the command replaces `eatmydata`.
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
//! Nor is it by a reader of its output that has gone (`2>&1 | head`): once
//! the command has ended, SIGPIPE is caught and dropped, and what the
//! parent says goes through [`say`], which loses what cannot be written.
//!
//! A [`Duty`] (the supervisor) is served in the same waits: the parent
//! polls the duty's descriptor and the command's pidfd together. If the
//! command ends while the duty still has work (processes it started still
//! run under the filter, and nobody waits for them), a copy of the parent
//! goes on with it in the background, its standard streams on /dev/null so
//! that no pipe waits for it, and ends when the duty's descriptor hangs up
//! (the last of those processes ended): the command itself ends as the
//! child did, and the supervisor outlives no process it serves.

use std::ffi::c_int;
use std::io::{self, Write as _};
use std::mem::MaybeUninit;
use std::os::fd::RawFd;
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
#[derive(Clone, Copy, Debug, PartialEq)]
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

extern "C" fn pipe_closed(_: c_int) {}

/// Writes what the parent says once the command has ended (the report, the
/// flush's outcome) on stderr; what a reader that has gone cannot take is
/// lost, and the parent goes on to flush and to end as the command did.
pub fn say(text: &str) {
    let _ = io::stderr().write_all(text.as_bytes());
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

/// Work the parent does while the command runs, besides waiting for it.
pub trait Duty {
    /// In the parent, after the fork: the descriptor to watch, if any.
    fn start(&mut self) -> Option<RawFd>;
    /// The descriptor is readable.
    fn ready(&mut self);
    /// How long it may wait before `idle` is due, in ms (-1: never).
    fn timeout(&self) -> c_int {
        -1
    }
    /// Nothing came for `timeout` ms.
    fn idle(&mut self) {}
}

/// A duty being served: its descriptor, until it hangs up.
struct Served<'a> {
    duty: &'a mut dyn Duty,
    fd: RawFd,
    open: bool,
}

/// Runs `exec` in a child process and waits for it (and, with
/// [`Wait::Tree`], for all it started), serving `duty` meanwhile; `exec`
/// replaces the child's image and returns only on failure, which the child
/// reports. The command's wait status.
pub fn run(
    exec: impl FnOnce() -> Error,
    wait: Wait,
    duty: Option<&mut dyn Duty>,
) -> Result<c_int, Error> {
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
    // SAFETY: prctl with integer arguments reads and writes no memory of ours.
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
    let mut served = duty.and_then(|duty| {
        let fd = duty.start()?;
        Some(Served {
            duty,
            fd,
            open: true,
        })
    });
    if let Some(served) = &mut served {
        serve_until_exit(served, pid);
    }
    let status = wait_for(pid)?;
    CHILD.store(0, Ordering::Relaxed);
    // The child no longer shares this disposition (nor would it after its
    // exec): a closed pipe now fails a write, which `say` drops.
    set_handler(
        libc::SIGPIPE,
        pipe_closed as *const () as libc::sighandler_t,
    );
    if wait == Wait::Tree {
        for signal in IGNORED.iter().chain(&FORWARDED) {
            set_handler(*signal, stop_waiting as *const () as libc::sighandler_t);
        }
        wait_for_the_rest(served.as_mut());
    }
    if let Some(served) = served.filter(|served| served.open) {
        continue_in_background(served);
    }
    Ok(status)
}

/// Serves the duty until the child `pid` has ended (it is then waited for
/// as without a duty), or until the duty hangs up.
fn serve_until_exit(served: &mut Served, pid: c_int) {
    // SAFETY: plain integers.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
    let mut ended = false;
    while served.open && !ended {
        // Without a pidfd (before 5.3), look for the end every 100 ms.
        ended = serve_once(served, pidfd, if pidfd < 0 { 100 } else { -1 });
        if pidfd < 0 {
            let flags = libc::WNOHANG | libc::WNOWAIT | libc::WEXITED;
            let mut info = MaybeUninit::<libc::siginfo_t>::zeroed();
            // SAFETY: a non-blocking peek at our own child, nothing reaped;
            // waitid fills `info` or leaves it zeroed (si_pid 0).
            ended = unsafe {
                libc::waitid(libc::P_PID, pid as u32, info.as_mut_ptr(), flags) == 0
                    && info.assume_init().si_pid() == pid
            };
        }
    }
    if pidfd >= 0 {
        // SAFETY: our own descriptor, closed once.
        unsafe { libc::close(pidfd) };
    }
}

/// One wait of at most `timeout` ms for the duty's descriptor and `also`
/// (ignored when negative); serves the duty if it is readable. Whether
/// `also` became readable.
fn serve_once(served: &mut Served, also: RawFd, timeout: c_int) -> bool {
    let mut polls = [
        libc::pollfd {
            fd: if served.open { served.fd } else { -1 },
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: also,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let timeout = match (timeout, served.duty.timeout()) {
        (-1, wanted) => wanted,
        (given, -1) => given,
        (given, wanted) => given.min(wanted),
    };
    // SAFETY: two valid entries; negative descriptors are skipped.
    match unsafe { libc::poll(polls.as_mut_ptr(), 2, timeout) } {
        0 => {
            served.duty.idle();
            return false;
        }
        ..0 => return false, // EINTR from a forwarded signal
        _ => {}
    }
    if polls[0].revents & libc::POLLIN != 0 {
        served.duty.ready();
    } else if polls[0].revents != 0 {
        served.open = false;
    }
    polls[1].revents != 0
}

/// Forks a copy that serves the duty until its descriptor hangs up.
fn continue_in_background(mut served: Served) {
    // SAFETY: this program has one thread.
    if unsafe { libc::fork() } != 0 {
        return;
    }
    // SAFETY: open and dup2 on valid arguments, in the new process.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for stream in 0..3 {
            libc::dup2(null, stream);
        }
    }
    while served.open {
        serve_once(&mut served, -1, -1);
    }
    // SAFETY: ends the copy without running exit handlers.
    unsafe { libc::_exit(0) };
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
fn wait_for_the_rest(mut served: Option<&mut Served>) {
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
        match served.as_deref_mut().filter(|served| served.open) {
            // Orphans have no pidfd here: look every 100 ms.
            Some(served) => {
                serve_once(served, -1, 100);
            }
            // A blocking waitpid could miss a signal that came just before
            // it (STOP set, the wait then endless): look every 100 ms.
            // SAFETY: poll on no descriptor is a sleep a signal cuts short.
            None => unsafe {
                libc::poll(std::ptr::null_mut(), 0, 100);
            },
        }
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
