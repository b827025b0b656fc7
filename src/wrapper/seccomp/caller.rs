//! The thread behind a notification, as the supervisor reaches it: its
//! memory (`process_vm_readv`/`process_vm_writev`, which honour the
//! caller's page protections), a copy of a descriptor (`pidfd_getfd`, used
//! for io_uring rings only, never for a file a program reads or writes)
//! and the text of its files in `/proc`.
//!
//! A thread id can be reused once the thread is gone: anything the
//! supervisor does with what it read (a write into the caller's memory, a
//! ring rewritten) waits until `Listener::still_waiting` says the
//! notification is still pending, as seccomp_unotify(2) asks. An answer
//! alone needs no such check: the kernel refuses it for a call that is
//! gone.

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

#[derive(Clone, Copy, Debug)]
pub struct Caller {
    pub tid: u32,
}

/// Plain data: a type for which any bytes of its size are a value, so
/// that it can be filled from another process's memory. Written here
/// rather than taken from `bytemuck` (whose `Pod` is the same promise):
/// four integer types and the arrays of them are all the supervisor reads,
/// and the command needs no dependency for that.
///
/// # Safety
/// Implement only for types with no padding, no invalid bit patterns and
/// no pointers or references: integers, arrays of them, and `repr(C)`
/// structures of those with no padding.
pub unsafe trait Plain: Copy {}
// SAFETY: integers: every bit pattern is a value.
unsafe impl Plain for u16 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}
// SAFETY: arrays of plain data have no padding of their own.
unsafe impl<T: Plain, const N: usize> Plain for [T; N] {}

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

impl Caller {
    /// Fills `buffer` from the caller's address `address`; `EFAULT` when
    /// any of it is not mapped there, as the kernel would answer.
    pub fn read(&self, address: u64, buffer: &mut [u8]) -> io::Result<()> {
        self.transfer(address, buffer.as_mut_ptr(), buffer.len(), false)
    }

    /// Writes `bytes` at the caller's `address`.
    pub fn write(&self, address: u64, bytes: &[u8]) -> io::Result<()> {
        self.transfer(address, bytes.as_ptr().cast_mut(), bytes.len(), true)
    }

    /// `len` bytes between `local` and the caller's `address`, all or
    /// `EFAULT`; `local` is only read when `write`.
    fn transfer(&self, address: u64, local: *mut u8, len: usize, write: bool) -> io::Result<()> {
        let local = libc::iovec {
            iov_base: local.cast(),
            iov_len: len,
        };
        let remote = libc::iovec {
            iov_base: address as *mut libc::c_void,
            iov_len: len,
        };
        let pid = self.tid as libc::pid_t;
        // SAFETY: `local` covers a live buffer of `len` bytes of our caller's
        // (written only when reading); the remote side is another process's.
        let n = unsafe {
            if write {
                libc::process_vm_writev(pid, &local, 1, &remote, 1, 0)
            } else {
                libc::process_vm_readv(pid, &local, 1, &remote, 1, 0)
            }
        };
        match n {
            n if n < 0 => Err(last_error()),
            n if n as usize == len => Ok(()),
            _ => Err(io::Error::from_raw_os_error(libc::EFAULT)),
        }
    }

    /// A value of `T` at `address`.
    pub fn read_value<T: Plain>(&self, address: u64) -> io::Result<T> {
        let mut value = std::mem::MaybeUninit::<T>::zeroed();
        // SAFETY: `T: Plain`: zeroed bytes, and any bytes read over them,
        // are a value of it.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(value.as_mut_ptr().cast::<u8>(), size_of::<T>())
        };
        self.read(address, bytes)?;
        // SAFETY: as above: every byte is initialised, and any bytes do.
        Ok(unsafe { value.assume_init() })
    }

    /// A path in `/proc` about this thread.
    pub fn proc_path(&self, what: &str) -> String {
        format!("/proc/{}/{what}", self.tid)
    }

    /// A copy of the caller's descriptor `fd` (the same open file
    /// description: offset and status flags shared). `EBADF` when the
    /// caller has no such descriptor.
    pub fn descriptor(&self, fd: RawFd) -> io::Result<OwnedFd> {
        let pidfd = self.pidfd()?;
        // SAFETY: plain integers; the kernel checks both descriptors.
        let copy = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
        if copy < 0 {
            return Err(last_error());
        }
        // SAFETY: pidfd_getfd returned a new descriptor of ours.
        Ok(unsafe { OwnedFd::from_raw_fd(copy as RawFd) })
    }

    /// A pidfd for the caller: for the thread itself where the kernel
    /// allows it (6.9, `PIDFD_THREAD`), else for its process.
    fn pidfd(&self) -> io::Result<OwnedFd> {
        const PIDFD_THREAD: libc::c_int = libc::O_EXCL;
        // SAFETY: plain integers.
        let mut fd = unsafe { libc::syscall(libc::SYS_pidfd_open, self.tid, PIDFD_THREAD) };
        if fd < 0 {
            let tgid = self.status_field("Tgid:")?;
            let tgid: i32 = tgid.parse().map_err(io::Error::other)?;
            // SAFETY: plain integers.
            fd = unsafe { libc::syscall(libc::SYS_pidfd_open, tgid, 0) };
        }
        if fd < 0 {
            return Err(last_error());
        }
        // SAFETY: a new descriptor of ours.
        Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
    }

    /// The text after `name` on its line of `/proc/TID/status`.
    pub fn status_field(&self, name: &str) -> io::Result<String> {
        let status = fs::read_to_string(self.proc_path("status"))?;
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .map(|rest| rest.trim().to_owned())
            .ok_or_else(|| io::Error::other(format!("no {name} in status")))
    }
}
