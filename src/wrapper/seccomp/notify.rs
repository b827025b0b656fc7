//! The supervisor: the command, as the program's parent, answers the calls
//! the filter of `rules.rs` sends it (seccomp_unotify(2)).
//!
//! The filter is installed by the child just before it executes the
//! program, with `SECCOMP_FILTER_FLAG_NEW_LISTENER`; the child hands the
//! listener to the parent over a socket pair and closes its own copy, so
//! the program never holds it. Each notification gets exactly one answer:
//! a value, an error, or "go on" (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`).
//! The supervisor inspects, rewrites what the kernel will read from the
//! program's own memory, answers, or lets the call go on; it never makes
//! a program's file operation itself (no `ADDFD`), and when unsure it
//! lets the kernel answer. If the supervisor dies, the kernel fails every
//! pending and later notified call with `ENOSYS`: nothing hangs.
//! `SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV` keeps a received call from
//! being restarted by a signal after the supervisor has acted on it.
//! `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` (6.6) has the kernel hand each
//! call over on the caller's CPU and wake it there once answered, which
//! takes the round trip near the cost of two context switches.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::call::{Answer, Call};
use super::caller::Caller;
use super::filter::{self, NoNewPrivs};
use super::mountinfo::Mounts;
use super::{compat, openat2, rules, sync, uring};
use crate::durability::mount::Scope;

/// `SECCOMP_FILTER_FLAG_NEW_LISTENER` and `..._WAIT_KILLABLE_RECV`.
const NEW_LISTENER: libc::c_ulong = 1 << 3;
const WAIT_KILLABLE_RECV: libc::c_ulong = 1 << 5;
/// `SECCOMP_IOCTL_NOTIF_SET_FLAGS` (`_IOW('!', 4, __u64)`) and its one
/// flag, `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` (6.6).
const IOCTL_NOTIF_SET_FLAGS: libc::c_ulong = 0x4008_2104;
const FD_SYNC_WAKE_UP: u64 = 1;

/// The listener's descriptor.
pub struct Listener(OwnedFd);

impl Listener {
    /// Installs the supervised filter on this process, returning its
    /// listener; `Ok(None)` when the kernel has no user notification (the
    /// caller then installs the plain filter, or none). `answer_sync`:
    /// the filter answers `sync` with 0 (not with syncs kept by mount).
    pub fn install(
        fast_fsync: bool,
        answer_sync: bool,
    ) -> io::Result<Option<(Listener, NoNewPrivs)>> {
        let program = rules::program(fast_fsync, answer_sync).map_err(io::Error::other)?;
        let installed = match filter::install_with(&program, NEW_LISTENER | WAIT_KILLABLE_RECV) {
            // Before 5.19: without the killable wait.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                filter::install_with(&program, NEW_LISTENER)
            }
            other => other,
        };
        match installed {
            // SAFETY: the kernel returned a new descriptor of ours.
            Ok((set, fd)) => Ok(Some((
                Listener(unsafe { OwnedFd::from_raw_fd(fd as RawFd) }),
                set,
            ))),
            // Before 5.0 (no listener) or a kernel that refuses it.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::EOPNOTSUPP)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The listener received from the child, asked to wake callers
    /// synchronously where the kernel can (6.6; before, as usual).
    pub fn from_fd(fd: OwnedFd) -> Listener {
        // SAFETY: SET_FLAGS takes a flags integer; an older kernel refuses
        // the ioctl with EINVAL, which changes nothing.
        unsafe { libc::ioctl(fd.as_raw_fd(), IOCTL_NOTIF_SET_FLAGS as _, FD_SYNC_WAKE_UP) };
        Listener(fd)
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// The next call; `None` when it went away before it could be read.
    pub fn receive(&self) -> io::Result<Option<Call>> {
        let mut notif = MaybeUninit::<libc::seccomp_notif>::zeroed();
        // SAFETY: RECV fills a zeroed seccomp_notif of the kernel's size
        // (checked against SECCOMP_GET_NOTIF_SIZES by the tests).
        let rc = unsafe {
            libc::ioctl(
                self.fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                notif.as_mut_ptr(),
            )
        };
        if rc < 0 {
            let error = io::Error::last_os_error();
            return match error.raw_os_error() {
                Some(libc::EINTR | libc::ENOENT) => Ok(None),
                _ => Err(error),
            };
        }
        // SAFETY: filled by the kernel.
        let notif = unsafe { notif.assume_init() };
        let (data, raw) = (notif.data, i64::from(notif.data.nr));
        let native = compat::native_call(data.arch, data.nr, data.args);
        let (nr, args) = native.unwrap_or((raw, data.args));
        Ok(Some(Call {
            id: notif.id,
            caller: Caller { tid: notif.pid },
            nr,
            native: native.is_some(),
            args,
        }))
    }

    /// Whether `call` still waits: what was read about its caller is then
    /// about the right process.
    pub fn still_waiting(&self, call: &Call) -> bool {
        let id = call.id;
        // SAFETY: ID_VALID reads one u64.
        unsafe { libc::ioctl(self.fd(), libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0 }
    }

    /// Gives `call` its answer. A caller that is gone (killed) is no error.
    pub fn answer(&self, call: &Call, answer: Answer) -> io::Result<()> {
        let (val, error, flags) = match answer {
            Answer::Value(value) => (value, 0, 0),
            Answer::Error(errno) => (0, -errno, 0),
            Answer::Continue => (0, 0, libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32),
        };
        let response = libc::seccomp_notif_resp {
            id: call.id,
            val,
            error,
            flags,
        };
        // SAFETY: SEND reads one seccomp_notif_resp.
        let rc = unsafe { libc::ioctl(self.fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &response) };
        self.sent(rc)
    }

    fn sent(&self, rc: libc::c_int) -> io::Result<()> {
        if rc >= 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            // The caller was killed, or its call interrupted: nobody waits.
            Some(libc::ENOENT) => Ok(()),
            _ => Err(error),
        }
    }
}

/// What the supervisor keeps between calls.
pub struct Supervisor {
    listener: Listener,
    keep_direct: bool,
    rings: uring::Rings,
    mounts: Mounts,
    /// Whether syncs are kept by mount: opens keep their sync flags, whose
    /// file's mount is not asked.
    scoped: bool,
}

impl Supervisor {
    /// A supervisor that keeps the syncs on the mounts `scope` keeps.
    pub fn new(listener: Listener, keep_direct: bool, scope: Scope) -> Supervisor {
        Supervisor {
            listener,
            keep_direct,
            rings: uring::Rings::default(),
            mounts: Mounts::scoped(scope),
            scoped: scope.scoped(),
        }
    }

    pub fn fd(&self) -> RawFd {
        self.listener.fd()
    }

    /// How long until mapped rings or other namespaces' mount tables are
    /// to be let go (-1: none is held).
    pub fn timeout(&self) -> std::ffi::c_int {
        if self.rings.holds_any() {
            uring::KEPT.as_millis() as std::ffi::c_int
        } else if self.mounts.holds_others() {
            super::mountinfo::KEPT.as_millis() as std::ffi::c_int
        } else {
            -1
        }
    }

    /// Nothing came for a while: let go of the rings and tables not in use.
    pub fn idle(&mut self) {
        let now = std::time::Instant::now();
        self.rings.forget_unused(now);
        self.mounts.forget_unused(now);
    }

    /// Reads one call and answers it.
    pub fn serve_one(&mut self) -> io::Result<()> {
        let Some(call) = self.listener.receive()? else {
            return Ok(());
        };
        let answer = self.decide(&call);
        let answered = self.listener.answer(&call, answer);
        if answered.is_err() {
            // Never leave a call waiting: let it run as made.
            let _ = self.listener.answer(&call, Answer::Continue);
        }
        answered
    }

    fn decide(&mut self, call: &Call) -> Answer {
        if !call.native {
            return Answer::Continue;
        }
        let listener = &self.listener;
        let valid = || listener.still_waiting(call);
        let mut dropped = crate::durability::dropped_open_flags(self.keep_direct) as u32;
        if self.scoped {
            dropped &= !(crate::durability::OPEN_SYNC as u32);
        }
        match call.nr {
            libc::SYS_fsync
            | libc::SYS_fdatasync
            | libc::SYS_syncfs
            | libc::SYS_sync_file_range => sync::answer(call, &mut self.mounts),
            libc::SYS_msync => sync::msync(call, &mut self.mounts),
            libc::SYS_openat2 => openat2::answer(call, dropped, &valid),
            libc::SYS_io_uring_setup => self.rings.setup(call, &valid),
            libc::SYS_mmap => self.rings.mapped(call, &valid),
            libc::SYS_io_uring_register => self.rings.register(call, &mut self.mounts, &valid),
            libc::SYS_io_uring_enter => self.rings.enter(call, dropped, &mut self.mounts, &valid),
            _ => Answer::Continue,
        }
    }
}

#[cfg(test)]
mod tests {
    /// The structures read and written through the listener are the size
    /// this kernel says they are (`SECCOMP_GET_NOTIF_SIZES`).
    #[test]
    fn notification_structures_are_the_kernels_size() {
        const SECCOMP_GET_NOTIF_SIZES: libc::c_ulong = 3;
        let mut sizes = libc::seccomp_notif_sizes {
            seccomp_notif: 0,
            seccomp_notif_resp: 0,
            seccomp_data: 0,
        };
        // SAFETY: the kernel fills the three sizes.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                SECCOMP_GET_NOTIF_SIZES,
                0,
                &mut sizes as *mut libc::seccomp_notif_sizes,
            )
        };
        assert_eq!(rc, 0);
        assert_eq!(
            usize::from(sizes.seccomp_notif),
            size_of::<libc::seccomp_notif>()
        );
        assert_eq!(
            usize::from(sizes.seccomp_notif_resp),
            size_of::<libc::seccomp_notif_resp>()
        );
        assert_eq!(
            usize::from(sizes.seccomp_data),
            size_of::<libc::seccomp_data>()
        );
    }
}
