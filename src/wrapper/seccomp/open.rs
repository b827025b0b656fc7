//! Opens made on the caller's behalf, without `O_SYNC`/`O_DSYNC` (and
//! `O_DIRECT`, unless kept): the flags cannot be cleared after the open
//! (`F_SETFL` ignores them), and a filter cannot change a register, so the
//! supervisor opens the file itself and installs the descriptor in the
//! caller (`open`, `openat`, `openat2`).
//!
//! What the kernel would have used is taken from the caller: the directory
//! descriptor (a copy of it) or its working directory (`/proc/TID/cwd`),
//! its umask, and its file-system user, group and supplementary groups
//! (switched to for the open when they differ from ours, which needs root;
//! without it the call runs as made, flags and all). A caller with another
//! root directory (chroot), or with capabilities other than ours (unless it
//! has none and is not root), is left to the kernel too: the supervisor
//! never opens what the caller could not.
//!
//! The usual gap of such supervisors remains: the path is read from the
//! caller's memory and resolved a moment later, so another thread of the
//! caller can change either in between; what is opened is then what the
//! caller could have opened itself. Only regular files, block devices and
//! directories are opened here (looked at first, and opened non-blocking so
//! that a FIFO swapped in between cannot stall the supervisor); anything
//! else is left to the kernel with its flags.

use std::ffi::CStr;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;

use super::caller::{Caller, theirs};
use super::notify::{Answer, Call};
use super::rules::open_flags;

/// `struct open_how`, version 0.
#[derive(Clone, Copy, Default)]
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// What the caller asked for.
struct Request {
    dirfd: i32,
    path: u64,
    how: OpenHow,
    openat2: bool,
}

fn error(errno: i32) -> io::Error {
    io::Error::from_raw_os_error(errno)
}

fn request(call: &Call) -> io::Result<Request> {
    let a = call.args;
    #[cfg(target_arch = "x86_64")]
    if call.nr == libc::SYS_open {
        let how = OpenHow {
            flags: a[1] & 0xffff_ffff,
            mode: a[2] & 0o7777,
            resolve: 0,
        };
        return Ok(Request {
            dirfd: libc::AT_FDCWD,
            path: a[0],
            how,
            openat2: false,
        });
    }
    if call.nr == libc::SYS_openat2 {
        let size = a[3];
        if size < size_of::<OpenHow>() as u64 {
            return Err(error(libc::EINVAL));
        }
        let how: OpenHow = call.caller.read_value(a[2])?;
        return Ok(Request {
            dirfd: a[0] as i32,
            path: a[1],
            how,
            openat2: true,
        });
    }
    let how = OpenHow {
        flags: a[2] & 0xffff_ffff,
        mode: a[3] & 0o7777,
        resolve: 0,
    };
    Ok(Request {
        dirfd: a[0] as i32,
        path: a[1],
        how,
        openat2: false,
    })
}

/// open(2), openat(2), openat2(2) that carry a flag to drop.
pub fn answer(call: &Call, keep_direct: bool, still_waiting: &dyn Fn() -> bool) -> Answer {
    let dropped = u64::from(open_flags(keep_direct));
    let request = match theirs(request(call), &[libc::EFAULT, libc::EINVAL]) {
        Ok(Some(request)) => request,
        Ok(None) => return Answer::Continue,
        Err(e) => return Answer::Error(e.raw_os_error().unwrap_or(libc::EFAULT)),
    };
    if request.how.flags & dropped == 0 {
        return Answer::Continue;
    }
    match open(call.caller, &request, dropped, still_waiting) {
        Ok(Some(file)) => Answer::Descriptor {
            file,
            cloexec: request.how.flags & libc::O_CLOEXEC as u64 != 0,
        },
        Ok(None) => Answer::Continue,
        Err(e) => Answer::Error(e.raw_os_error().unwrap_or(libc::EIO)),
    }
}

/// Opens as the caller would, without `dropped`; `None`: leave it to the
/// kernel.
fn open(
    caller: Caller,
    request: &Request,
    dropped: u64,
    still_waiting: &dyn Fn() -> bool,
) -> io::Result<Option<OwnedFd>> {
    let Some(path) = theirs(
        caller.read_path(request.path),
        &[libc::EFAULT, libc::ENAMETOOLONG],
    )?
    else {
        return Ok(None);
    };
    let same_root = fs::metadata(caller.proc_path("root"))
        .and_then(|theirs| fs::metadata("/").map(|ours| (theirs, ours)))
        .is_ok_and(|(t, o)| t.dev() == o.dev() && t.ino() == o.ino());
    if !same_root {
        return Ok(None);
    }
    let base = if path.to_bytes().first() == Some(&b'/') {
        None
    } else if request.dirfd == libc::AT_FDCWD {
        let Ok(cwd) = fs::File::open(caller.proc_path("cwd")) else {
            return Ok(None);
        };
        Some(cwd.into())
    } else {
        let Some(dir) = theirs(caller.descriptor(request.dirfd), &[libc::EBADF])? else {
            return Ok(None);
        };
        Some(dir)
    };
    let base_fd = base.as_ref().map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    let Ok(Some(identity)) = Identity::of(caller) else {
        return Ok(None);
    };
    if !still_waiting() {
        return Err(error(libc::EINTR));
    }
    if !openable(base_fd, &path, request.how.flags) {
        return Ok(None);
    }
    let nonblock = libc::O_NONBLOCK as u64;
    let mut how = request.how;
    how.flags = (how.flags & !dropped) | nonblock | libc::O_NOCTTY as u64 | libc::O_CLOEXEC as u64;
    let opened = identity.assume(|| open_raw(base_fd, &path, &how, request.openat2));
    let file = match opened {
        Err(e) if matches!(e.raw_os_error(), Some(libc::EWOULDBLOCK | libc::ENXIO)) => {
            return Ok(None);
        }
        other => other?,
    };
    if request.how.flags & nonblock == 0 {
        // SAFETY: F_GETFL and F_SETFL on our own descriptor.
        unsafe {
            let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(Some(file))
}

/// Whether the file is one the supervisor opens itself: a regular file, a
/// block device or a directory, or nothing yet (to be created).
fn openable(base: RawFd, path: &CStr, flags: u64) -> bool {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::zeroed();
    let follow = if flags & libc::O_NOFOLLOW as u64 != 0 {
        libc::AT_SYMLINK_NOFOLLOW
    } else {
        0
    };
    // SAFETY: a C string and a stat buffer, both valid for the call.
    if unsafe { libc::fstatat(base, path.as_ptr(), stat.as_mut_ptr(), follow) } != 0 {
        return true;
    }
    // SAFETY: filled by fstatat.
    let kind = unsafe { stat.assume_init() }.st_mode & libc::S_IFMT;
    matches!(kind, libc::S_IFREG | libc::S_IFBLK | libc::S_IFDIR)
}

fn open_raw(base: RawFd, path: &CStr, how: &OpenHow, openat2: bool) -> io::Result<OwnedFd> {
    let fd = if openat2 {
        // SAFETY: a C string and an open_how of the size given.
        unsafe {
            libc::syscall(
                libc::SYS_openat2,
                base,
                path.as_ptr(),
                how as *const OpenHow,
                size_of::<OpenHow>(),
            )
        }
    } else {
        // SAFETY: a C string; flags and mode are integers.
        i64::from(unsafe {
            libc::openat(
                base,
                path.as_ptr(),
                how.flags as i32,
                how.mode as libc::c_uint,
            )
        })
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor of ours.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Who the caller is to the file system, and its umask.
struct Identity {
    fsuid: u32,
    fsgid: u32,
    groups: Vec<u32>,
    umask: u32,
    ours: bool,
}

fn ids(status: &str, name: &str) -> Option<Vec<u32>> {
    let line = status.lines().find_map(|l| l.strip_prefix(name))?;
    line.split_whitespace().map(|n| n.parse().ok()).collect()
}

impl Identity {
    /// The caller's; `None` when it differs from ours and we cannot take it.
    fn of(caller: Caller) -> io::Result<Option<Identity>> {
        /// fsuid, fsgid, groups, umask, effective capabilities.
        type Status = (u32, u32, Vec<u32>, u32, String);
        let read = |path: &str| -> io::Result<Status> {
            let status = fs::read_to_string(path)?;
            let bad = || io::Error::other("unreadable status");
            let uid = ids(&status, "Uid:")
                .and_then(|v| v.get(3).copied())
                .ok_or_else(bad)?;
            let gid = ids(&status, "Gid:")
                .and_then(|v| v.get(3).copied())
                .ok_or_else(bad)?;
            let groups = ids(&status, "Groups:").unwrap_or_default();
            let umask = status
                .lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
                .ok_or_else(bad)?;
            let caps = status
                .lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .unwrap_or_default()
                .trim()
                .to_owned();
            Ok((uid, gid, groups, umask, caps))
        };
        let theirs = read(&caller.proc_path("status"))?;
        // Ours, read once: the supervisor's identity is restored after each open.
        static OURS: std::sync::OnceLock<Option<Status>> = std::sync::OnceLock::new();
        let ours = OURS
            .get_or_init(|| read("/proc/thread-self/status").ok())
            .clone()
            .ok_or_else(|| io::Error::other("unreadable status"))?;
        let same = theirs.0 == ours.0 && theirs.1 == ours.1 && theirs.2 == ours.2;
        // SAFETY: geteuid cannot fail.
        if !same && unsafe { libc::geteuid() } != 0 {
            return Ok(None);
        }
        // Capabilities decide opens too: the caller's must be ours, or none
        // with a user other than root (whose switch drops ours for the open).
        let no_caps = theirs.4.bytes().all(|b| b == b'0') && theirs.0 != 0;
        if theirs.4 != ours.4 && !no_caps {
            return Ok(None);
        }
        let (fsuid, fsgid, groups, umask, _) = theirs;
        Ok(Some(Identity {
            fsuid,
            fsgid,
            groups,
            umask,
            ours: same,
        }))
    }

    /// Runs `open` as this identity, then returns to ours. The raw calls
    /// change this thread only (the supervisor has one).
    fn assume<T>(&self, open: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        // SAFETY: umask takes and returns a mode.
        let old_umask = unsafe { libc::umask(self.umask as libc::mode_t) };
        let result = if self.ours {
            open()
        } else {
            // SAFETY: per-thread credential calls with plain integers and
            // a valid list; each is undone below in the reverse order.
            unsafe {
                let mut saved = vec![0 as libc::gid_t; 65536];
                let n = libc::syscall(libc::SYS_getgroups, saved.len(), saved.as_mut_ptr());
                saved.truncate(n.max(0) as usize);
                libc::syscall(libc::SYS_setgroups, self.groups.len(), self.groups.as_ptr());
                let gid = libc::syscall(libc::SYS_setfsgid, self.fsgid);
                let uid = libc::syscall(libc::SYS_setfsuid, self.fsuid);
                let result = open();
                libc::syscall(libc::SYS_setfsuid, uid);
                libc::syscall(libc::SYS_setfsgid, gid);
                libc::syscall(libc::SYS_setgroups, saved.len(), saved.as_ptr());
                result
            }
        };
        // SAFETY: restores the umask read above.
        unsafe { libc::umask(old_umask) };
        result
    }
}
