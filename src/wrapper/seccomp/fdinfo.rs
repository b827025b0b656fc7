//! Whether a caller's descriptor reaches a disk, decided without touching
//! the file's own file system before it is known to be a local disk's:
//! `/proc/TID/fdinfo/N` (proc_pid_fdinfo(5)) gives the open flags and the
//! mount id, and the caller's `mountinfo` (`mountinfo.rs`) names that
//! mount's file system. Pipes, sockets, anonymous inodes and namespace
//! files live on mounts no `mountinfo` lists, and a FUSE, NFS or tmpfs
//! mount is not a disk's: their syncs go to the kernel as made.
//!
//! Only on a local disk's file system (ext4, xfs, ...) is the file itself
//! looked at, with `stat` through `/proc/TID/fd/N`: a FIFO or a device
//! node kept on such a disk (a chroot's `/dev`) answers a sync otherwise
//! (`EINVAL`) than a file. That `stat` is answered by the in-kernel file
//! system from the inode in memory; it never waits on a daemon or a
//! network. A descriptor the supervisor may not look at (a process that
//! is not dumpable, another user's) is not known to reach a disk.

use std::ffi::CString;
use std::fs::File;
use std::io::Read;
use std::mem::MaybeUninit;

use super::caller::Caller;
use super::mountinfo::{By, Mounts};
use crate::durability::{Kind, reaches_disk};

/// What `fdinfo` says of a descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdInfo {
    /// The open flags, as `F_GETFL` would give them (with `O_PATH`).
    pub flags: u32,
    pub mnt_id: u32,
}

/// The `flags:` (octal) and `mnt_id:` lines of an `fdinfo` text.
pub fn parse(text: &str) -> Option<FdInfo> {
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name))
            .map(str::trim)
    };
    Some(FdInfo {
        flags: u32::from_str_radix(field("flags:")?, 8).ok()?,
        mnt_id: field("mnt_id:")?.parse().ok()?,
    })
}

/// `fdinfo` of the caller's descriptor `fd`; `None` when it has none, or
/// the supervisor may not read it.
pub fn read(caller: Caller, fd: i32) -> Option<FdInfo> {
    if fd < 0 {
        return None;
    }
    let mut file = File::open(caller.proc_path(&format!("fdinfo/{fd}"))).ok()?;
    // The lines wanted come first; locks and the like may follow.
    let mut buffer = [0u8; 256];
    let n = file.read(&mut buffer).ok()?;
    parse(std::str::from_utf8(buffer.get(..n)?).ok()?)
}

/// What a file is, from its mode.
fn kind(mode: libc::mode_t) -> Kind {
    match mode & libc::S_IFMT {
        libc::S_IFREG => Kind::Regular,
        libc::S_IFDIR => Kind::Directory,
        libc::S_IFBLK => Kind::BlockDevice,
        _ => Kind::Other,
    }
}

/// The kind of the caller's open file `fd`, through `/proc/TID/fd/N`.
fn kind_of(caller: Caller, fd: i32) -> Kind {
    let Ok(path) = CString::new(caller.proc_path(&format!("fd/{fd}"))) else {
        return Kind::Other;
    };
    let mut stat = MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: a NUL-terminated path and a buffer of stat's size.
    if unsafe { libc::stat(path.as_ptr(), stat.as_mut_ptr()) } != 0 {
        return Kind::Other;
    }
    // SAFETY: filled by stat.
    kind(unsafe { stat.assume_init() }.st_mode)
}

/// Whether a sync of the caller's descriptor `fd` certainly flushes a
/// disk, and may be eaten: an open (not `O_PATH`) regular file, folder or
/// block device on a mount of a local disk's file system that no
/// `--keep`/`--only` keeps (`Mounts::eatable`). Anything not known is
/// false.
pub fn eatable(caller: Caller, fd: i32, mounts: &mut Mounts) -> bool {
    let Some(info) = read(caller, fd) else {
        return false;
    };
    if info.flags & libc::O_PATH as u32 != 0 {
        return false;
    }
    if mounts.eatable(caller, By::Id(info.mnt_id)) != Some(true) {
        // Block devices on devtmpfs end here too: the kernel syncs them.
        return false;
    }
    reaches_disk(kind_of(caller, fd), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_octal_and_the_mount_decimal() {
        let text = "pos:\t0\nflags:\t02100002\nmnt_id:\t29\nino:\t1234\n";
        let info = parse(text).unwrap();
        assert_eq!(info.mnt_id, 29);
        assert_eq!(info.flags, 0o2100002);
        assert_eq!(
            info.flags as i32 & (libc::O_RDWR | libc::O_CLOEXEC),
            libc::O_RDWR | libc::O_CLOEXEC
        );
        assert_eq!(parse("pos:\t0\nflags:\t02\n"), None);
        assert_eq!(parse(""), None);
    }

    #[test]
    fn kinds_follow_the_mode() {
        assert_eq!(kind(libc::S_IFREG | 0o644), Kind::Regular);
        assert_eq!(kind(libc::S_IFDIR), Kind::Directory);
        assert_eq!(kind(libc::S_IFBLK), Kind::BlockDevice);
        assert_eq!(kind(libc::S_IFCHR), Kind::Other);
        assert_eq!(kind(libc::S_IFIFO), Kind::Other);
    }

    #[test]
    fn our_own_descriptors_are_read() {
        let me = Caller {
            tid: std::process::id(),
        };
        let (reader, writer) = std::io::pipe().unwrap();
        use std::os::fd::AsRawFd;
        let mut mounts = Mounts::default();
        assert!(read(me, reader.as_raw_fd()).is_some());
        assert!(!eatable(me, writer.as_raw_fd(), &mut mounts), "a pipe");
        assert!(read(me, 1 << 20).is_none());
        assert!(!eatable(me, -1, &mut mounts));
    }
}
