//! The thread behind a notification, as the supervisor reaches it: its
//! memory (`process_vm_readv`/`process_vm_writev`, which honour the
//! caller's page protections), its descriptors (`pidfd_getfd`) and what
//! `/proc` says about it (directories, umask, credentials).
//!
//! A thread id can be reused once the thread is gone: whatever was read
//! through it counts only after `Listener::still_waiting` says the
//! notification is still pending, as seccomp_unotify(2) asks.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The longest path the kernel takes, with its terminating NUL.
const PATH_MAX: usize = libc::PATH_MAX as usize;

#[derive(Clone, Copy, Debug)]
pub struct Caller {
    pub tid: u32,
}

/// What a look at the caller gave, for a call the supervisor makes on its
/// behalf: the value; or an error the kernel would give the caller itself
/// (one of `theirs`: a bad pointer, a bad descriptor), to be answered;
/// or `Ok(None)` for any other failure, the supervisor's own (the caller
/// gone, or out of its reach), where the call is left to the kernel as
/// made rather than failed.
pub fn theirs<T>(result: io::Result<T>, theirs: &[i32]) -> io::Result<Option<T>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(e)
            if e.raw_os_error()
                .is_some_and(|errno| theirs.contains(&errno)) =>
        {
            Err(e)
        }
        Err(_) => Ok(None),
    }
}

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

    /// A plain value of `T` at `address`.
    pub fn read_value<T: Copy + Default>(&self, address: u64) -> io::Result<T> {
        let mut value = T::default();
        // SAFETY: T is plain data (Copy, with a default): any bytes the
        // kernel wrote for the caller are a value of it, as they were there.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut((&mut value as *mut T).cast::<u8>(), size_of::<T>())
        };
        self.read(address, bytes)?;
        Ok(value)
    }

    /// The NUL-terminated string at `address`: `EFAULT` as the kernel
    /// gives it, `ENAMETOOLONG` past `PATH_MAX`. Read page by page, so
    /// that a string ending just before an unmapped page is still read.
    pub fn read_path(&self, address: u64) -> io::Result<CString> {
        let mut bytes = Vec::new();
        let mut at = address;
        while bytes.len() < PATH_MAX {
            let to_page_end = 4096 - (at % 4096) as usize;
            let mut chunk = vec![0u8; to_page_end.min(PATH_MAX - bytes.len())];
            self.read(at, &mut chunk)?;
            if let Some(end) = chunk.iter().position(|&b| b == 0) {
                bytes.extend_from_slice(&chunk[..end]);
                return CString::new(bytes).map_err(|_| io::Error::other("NUL in a path"));
            }
            at += chunk.len() as u64;
            bytes.extend_from_slice(&chunk);
        }
        Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG))
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
