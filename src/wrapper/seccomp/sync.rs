//! The sync calls and `pwritev2`, answered by the supervisor as the library
//! answers them: `fsync`, `fdatasync`, `syncfs` and `sync_file_range`
//! return 0 without running where they would flush a disk, and keep the
//! kernel's errors (`EBADF` on a descriptor the caller does not have); `pwritev2` with `RWF_SYNC`/`RWF_DSYNC` is made by
//! the supervisor on a copy of the caller's descriptor (the same open file,
//! so the same offset), with those flags dropped and the others kept.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, RawFd};

use super::caller::theirs;
use super::notify::{Answer, Call};
use super::rules::RWF_SYNCS;

/// fsync(2), fdatasync(2), syncfs(2), sync_file_range(2): what the kernel
/// answers, without a flush. Bad range arguments get `EINVAL` and a
/// descriptor the caller does not have (or an `O_PATH` one) `EBADF`, as
/// from the kernel. A file on a disk's file system, or a block device,
/// gets 0 without the call. Anything else cannot reach a disk (a pipe, a
/// socket, a character device, a file of /proc, /sys or tmpfs): the real
/// call is made on a copy of the descriptor, and its answer given, errors
/// included (`EINVAL` for fsync of /dev/null), as the library's are.
pub fn answer(call: &Call) -> Answer {
    let [fd, offset, nbytes, flags, ..] = call.args;
    if call.nr == libc::SYS_sync_file_range
        && !crate::durability::sync_file_range_valid(offset as i64, nbytes as i64, flags as u32)
    {
        return Answer::Error(libc::EINVAL);
    }
    let file = match theirs(call.caller.descriptor(fd as i32), &[libc::EBADF]) {
        Ok(Some(file)) => file,
        // Out of reach: answered as the plain filter answers.
        Ok(None) => return Answer::Value(0),
        Err(e) => return Answer::Error(e.raw_os_error().unwrap_or(libc::EBADF)),
    };
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL on our own descriptor.
    if unsafe { libc::fcntl(fd, libc::F_GETFL) } & libc::O_PATH != 0 {
        return Answer::Error(libc::EBADF);
    }
    if on_a_disk(fd) {
        return Answer::Value(0);
    }
    // SAFETY: the caller's call, with its integer arguments, on our copy of
    // a descriptor that reaches no disk.
    let rc = unsafe { libc::syscall(call.nr, fd, offset, nbytes, flags) };
    Answer::from_io(if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    })
}

/// File systems that keep no data on a disk: a sync there flushes nothing.
const NO_DISK: &[libc::c_long] = &[
    libc::PROC_SUPER_MAGIC,
    libc::SYSFS_MAGIC,
    libc::TMPFS_MAGIC, // tmpfs, devtmpfs, /dev/shm
    0x8584_58f6,       // ramfs
    libc::CGROUP_SUPER_MAGIC,
    libc::CGROUP2_SUPER_MAGIC,
    libc::DEBUGFS_MAGIC,
    libc::TRACEFS_MAGIC,
    libc::SECURITYFS_MAGIC,
    libc::BPF_FS_MAGIC,
    0x0904_1934, // anon_inode_fs
];

/// Whether a sync of `fd` would reach a disk: a block device, or a file or
/// folder of a file system not in `NO_DISK`.
fn on_a_disk(fd: RawFd) -> bool {
    let mut stat = MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: fstat of our own descriptor into a buffer of its size.
    if unsafe { libc::fstat(fd, stat.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: filled by fstat.
    let kind = unsafe { stat.assume_init() }.st_mode & libc::S_IFMT;
    if kind == libc::S_IFBLK {
        return true;
    }
    if kind != libc::S_IFREG && kind != libc::S_IFDIR {
        return false;
    }
    let mut fs = MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: fstatfs of our own descriptor into a buffer of its size.
    if unsafe { libc::fstatfs(fd, fs.as_mut_ptr()) } != 0 {
        return true;
    }
    // SAFETY: filled by fstatfs.
    let magic = unsafe { fs.assume_init() }.f_type;
    !NO_DISK.contains(&magic)
}

/// msync(2): the kernel's checks, without the flush: `EINVAL` for unknown
/// or contradictory flags or an address inside a page, `ENOMEM` when part
/// of the range is not mapped (from `/proc/TID/maps`), else 0.
pub fn msync(call: &Call) -> Answer {
    let [start, len, flags, ..] = call.args;
    let known = (libc::MS_ASYNC | libc::MS_INVALIDATE | libc::MS_SYNC) as u64;
    let both = (libc::MS_ASYNC | libc::MS_SYNC) as u64;
    if flags & !known != 0 || flags & both == both || start % 4096 != 0 {
        return Answer::Error(libc::EINVAL);
    }
    let Some(end) = len
        .checked_add(4095)
        .map(|l| l & !4095)
        .and_then(|l| start.checked_add(l))
    else {
        return Answer::Error(libc::ENOMEM);
    };
    let Ok(maps) = std::fs::read_to_string(call.caller.proc_path("maps")) else {
        return Answer::Value(0);
    };
    // The mappings are in order: walk them from `start`, looking for a gap.
    let mut covered = start;
    for range in maps
        .lines()
        .filter_map(|line| line.split_whitespace().next())
    {
        let Some((from, to)) = range.split_once('-') else {
            continue;
        };
        let (Ok(from), Ok(to)) = (u64::from_str_radix(from, 16), u64::from_str_radix(to, 16))
        else {
            continue;
        };
        if covered >= end {
            break;
        }
        if to <= covered {
            continue;
        }
        if from > covered {
            return Answer::Error(libc::ENOMEM);
        }
        covered = to;
    }
    if covered < end {
        Answer::Error(libc::ENOMEM)
    } else {
        Answer::Value(0)
    }
}

/// The most a single emulated `pwritev2` copies; a longer one returns a
/// short count, as a write may.
const MOST: usize = 16 << 20;

/// pwritev2(2) with the sync flags dropped, to a file on a disk. Anything
/// else (a pipe, a socket, tmpfs) is left to the kernel as made: the flags
/// flush no disk there, and a write the supervisor made to a full pipe
/// could stall it, and so every other call it answers.
pub fn pwritev2(call: &Call, still_waiting: &dyn Fn() -> bool) -> Answer {
    match write(call, still_waiting) {
        Ok(Some(written)) => Answer::Value(written),
        Ok(None) => Answer::Continue,
        Err(e) => Answer::Error(e.raw_os_error().unwrap_or(libc::EIO)),
    }
}

fn write(call: &Call, still_waiting: &dyn Fn() -> bool) -> io::Result<Option<i64>> {
    let [fd, iov, iovcnt, pos, _pos_high, flags] = call.args;
    let caller = call.caller;
    let count =
        usize::try_from(iovcnt as i32).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    if count > libc::UIO_MAXIOV as usize {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let Some(file) = theirs(caller.descriptor(fd as i32), &[libc::EBADF])? else {
        return Ok(None);
    };
    if !on_a_disk(file.as_raw_fd()) {
        return Ok(None);
    }
    let mut data = Vec::new();
    for i in 0..count as u64 {
        let Some([base, len]) =
            theirs(caller.read_value::<[u64; 2]>(iov + 16 * i), &[libc::EFAULT])?
        else {
            return Ok(None);
        };
        let len = usize::try_from(len)
            .unwrap_or(usize::MAX)
            .min(MOST - data.len());
        let start = data.len();
        data.resize(start + len, 0);
        if theirs(caller.read(base, &mut data[start..]), &[libc::EFAULT])?.is_none() {
            return Ok(None);
        }
        if data.len() == MOST {
            break;
        }
    }
    if !still_waiting() {
        return Err(io::Error::from_raw_os_error(libc::EINTR));
    }
    let local = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: data.len(),
    };
    let flags = (flags as u32 & !RWF_SYNCS) as libc::c_int;
    // SAFETY: one iovec over `data`, which outlives the call.
    let n = unsafe { libc::pwritev2(file.as_raw_fd(), &local, 1, pos as i64, flags) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Some(n as i64))
}
