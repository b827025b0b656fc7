//! What a skipped `fsync(2)`, `fdatasync(2)`, `syncfs(2)` or
//! `sync_file_range(2)` still answers.
//!
//! The flush is what costs; the kernel's checks of the arguments are kept:
//! a bad descriptor or an `O_PATH` one still fails with EBADF, a file the
//! kernel cannot sync (a pipe, socket, terminal, `/dev/null`, an eventfd or
//! another anonymous inode, a `/proc` file) with the error the kernel gives
//! it, bad flags or offsets with EINVAL. Errors that only the flush itself
//! can find (EIO, ENOSPC on writeback) cannot be reported: that is the
//! bargain.
//!
//! A regular file or folder on a disk file system costs one system call;
//! anything else a few more, on a path that is rarely taken.

use core::ffi::{c_int, c_long};
use core::mem::MaybeUninit;

use crate::durability::mount::WholeSync;
use crate::durability::{Kind, Verdict};
use crate::errno::{self, fail};
use crate::kernel::raw;
use crate::place::Place;
use crate::report::{self, Skip, count};
use crate::{durability, flush, keep, policy, statx};

/// What a descriptor is to the sync calls.
#[derive(Debug, PartialEq)]
enum Target {
    /// A file, folder or block device whose sync flushes a disk.
    Storage,
    /// Anything else: a pipe, socket, character device or anonymous inode;
    /// a file of a file system that keeps nothing on a disk (`/proc`,
    /// nsfs, mqueue, tmpfs) or whose sync asks someone else (FUSE, NFS).
    /// The kernel answers its sync (EINVAL, ESPIPE, the daemon's EIO, 0).
    Elsewhere,
}

/// One `ioctl(FS_IOC_GETFLAGS)`, which reads an inode's attribute flags and
/// changes nothing, answers for the common case: every disk file system
/// (ext4, xfs, btrfs, tmpfs) has it for its files and folders, and it fails
/// with EBADF, as the sync calls do, for a closed descriptor or an `O_PATH`
/// one. Where it is not supported, `fstat` (and for a regular file,
/// `fstatfs`) tell the rest. errno is left as it was unless the answer is an
/// error, which is then returned with errno set.
#[inline(always)]
fn target(fd: c_int) -> Result<Target, c_int> {
    let saved = errno::get();
    let mut attributes: c_long = 0;
    let getflags = libc::FS_IOC_GETFLAGS as c_long;
    let ask = [fd.into(), getflags, &raw mut attributes as c_long, 0, 0, 0];
    if raw(libc::SYS_ioctl, ask) == 0 {
        return Ok(Target::Storage);
    }
    if errno::get() == libc::EBADF {
        return Err(-1);
    }
    let found = slow_target(fd);
    if found.is_ok() {
        errno::set(saved);
    }
    found
}

/// [`target`] for a descriptor whose file system does not give attribute
/// flags: a character device, a pipe or socket, `/proc`, nsfs, FUSE. A
/// block device is storage wherever its node lives; a file or folder is
/// when its file system keeps it on a disk ([`durability::disk_fs_magic`]).
#[cold]
#[inline(never)]
fn slow_target(fd: c_int) -> Result<Target, c_int> {
    let mut status = MaybeUninit::<libc::stat>::uninit();
    if raw(
        libc::SYS_fstat,
        [fd.into(), status.as_mut_ptr() as c_long, 0, 0, 0, 0],
    ) != 0
    {
        return Err(-1);
    }
    // SAFETY: fstat succeeded, so the kernel filled the whole struct.
    let kind = statx::kind_of(unsafe { status.assume_init() }.st_mode);
    let disk_fs = matches!(kind, Kind::Regular | Kind::Directory) && statx::fs_on_disk(fd);
    Ok(if durability::reaches_disk(kind, disk_fs) {
        Target::Storage
    } else {
        Target::Elsewhere
    })
}

/// What `call` on `fd` answers, by [`durability::sync_verdict`]: 0 without
/// the flush, counted as a skip of `kind`, when it would only flush a disk;
/// the kernel's own check's errno; or the call itself, made as asked
/// (`number` with `args`), whose answer is the kernel's (EINVAL on a pipe
/// or `/proc` file, ESPIPE, or 0 with nothing to flush).
#[inline(always)]
fn answer(
    call: durability::Sync,
    kind: Skip,
    fd: c_int,
    number: c_long,
    args: [c_long; 6],
) -> c_int {
    let (disk, eaten) = match target_and_eaten(fd) {
        Err(failed) => return failed,
        Ok((target, eaten)) => (target == Target::Storage, eaten),
    };
    // On a kept mount, the call goes to the kernel as made.
    if disk && !eaten {
        return kept(kind, fd, number, args);
    }
    match durability::sync_verdict(call, disk) {
        Verdict::Skip => skipped(kind, fd),
        Verdict::Fail(code) => fail(code),
        Verdict::Kernel => kernel(number, args),
    }
}

/// What `fd` is to a sync, and whether its sync is eaten: by its mount
/// when mounts are kept ([`scoped_target`]), else always.
#[inline(always)]
fn target_and_eaten(fd: c_int) -> Result<(Target, bool), c_int> {
    if keep::scoped() {
        scoped_target(fd)
    } else {
        target(fd).map(|target| (target, true))
    }
}

/// [`target`] with kept mounts, and whether a sync of `fd` is eaten there
/// (`keep.rs`). One `statx` tells the descriptor's mount and what it is;
/// a file or folder of a disk's file system (`statx::disk_fs`, asked once
/// per mount) or a block device that is eaten costs one `fcntl` more,
/// which tells an `O_PATH` descriptor (EBADF, as the sync calls give it).
/// Anything else is told as without kept mounts ([`target`]): a file
/// system not known to keep its data on a disk, a kernel without unique
/// mount ids, a `statx` refused. A kept one goes to the kernel, which
/// answers for itself. errno is left as it was unless the answer is an
/// error.
#[inline(never)]
fn scoped_target(fd: c_int) -> Result<(Target, bool), c_int> {
    let found = match statx::of_fd(fd) {
        Ok(found) => found,
        Err(libc::EBADF) => return Err(fail(libc::EBADF)),
        // Refused (a sandbox's filter, an old kernel): unsure, so kept.
        Err(_) => return Ok((target(fd)?, keep::eats_at(None))),
    };
    let eaten = keep::eats_at(Some(found.mount));
    let storage = match (found.kind, found.mount.id) {
        (Kind::Other, _) => false,
        (Kind::BlockDevice, _) => true,
        (_, Some(id)) if found.unique => statx::disk_fs(id, fd),
        _ => false,
    };
    if !storage {
        let other = found.kind == Kind::Other;
        return Ok((
            if other {
                Target::Elsewhere
            } else {
                target(fd)?
            },
            eaten,
        ));
    }
    if eaten {
        let flags = statx::open_flags(fd);
        if flags < 0 || flags & c_long::from(libc::O_PATH) != 0 {
            // Closed since, by another thread, or O_PATH.
            return Err(fail(libc::EBADF));
        }
    }
    Ok((Target::Storage, eaten))
}

/// The call made as asked, for a descriptor that reaches no disk: a path
/// rarely taken, with the kernel's answer.
#[cold]
#[inline(never)]
fn kernel(number: c_long, args: [c_long; 6]) -> c_int {
    raw(number, args) as c_int
}

/// The call made as asked on a kept mount, counted as kept (`--report`,
/// the account by mount).
#[cold]
#[inline(never)]
fn kept(kind: Skip, fd: c_int, number: c_long, args: [c_long; 6]) -> c_int {
    report::kept_on_fd(kind, fd);
    kernel(number, args)
}

/// What `fsync(fd)` (`number` `SYS_fsync`) or `fdatasync(fd)` would answer,
/// without the flush.
#[inline(always)]
pub fn fsync_status(fd: c_int, number: c_long) -> c_int {
    let args = [fd.into(), 0, 0, 0, 0, 0];
    answer(durability::Sync::File, Skip::Fsync, fd, number, args)
}

/// Whether a flush of `fd` may be answered without the kernel: `fsync(fd)`
/// would succeed, short of the flush itself, and `fd`'s mount is not kept
/// (`keep.rs`). errno is left as it was. Nothing is counted.
pub fn fsync_eatable(fd: c_int) -> bool {
    let saved = errno::get();
    let answer = target_and_eaten(fd);
    errno::set(saved);
    answer == Ok((Target::Storage, true))
}

/// Success, counted as a skip of `kind`, with `fd`'s file system recorded.
fn skipped(kind: Skip, fd: c_int) -> c_int {
    let switches = policy::switches();
    if switches.reporting() || switches.flushing() {
        told(kind, fd);
    }
    0
}

/// A skip counted for `--report` and its file system recorded for
/// `--sync-at-exit`, whichever is on: off the path of a plain skip.
#[cold]
#[inline(never)]
fn told(kind: Skip, fd: c_int) {
    report::skipped_on_fd(kind, fd);
}

/// What `syncfs(fd)` would answer, without the flush.
pub fn syncfs_status(fd: c_int) -> c_int {
    let args = [fd.into(), 0, 0, 0, 0, 0];
    answer(
        durability::Sync::FileSystem,
        Skip::Sync,
        fd,
        libc::SYS_syncfs,
        args,
    )
}

/// What `sync_file_range(fd, offset, nbytes, flags)` would answer, without
/// the writeback, with the kernel's order of checks (the descriptor first).
pub fn sync_file_range_status(fd: c_int, offset: i64, nbytes: i64, flags: u32) -> c_int {
    let call = durability::Sync::Range {
        offset,
        nbytes,
        flags,
    };
    let args = [fd.into(), offset, nbytes, flags.into(), 0, 0];
    answer(
        call,
        Skip::SyncFileRange,
        fd,
        libc::SYS_sync_file_range,
        args,
    )
}

/// What `sync(2)` does under the library: nothing, counted; with kept
/// mounts, a `syncfs` of each, or the real `sync` where not every mount
/// that keeps its syncs is known by name (`durability::mount`). It always
/// succeeds, as the real one does.
pub fn sync_status() -> c_int {
    let whole = keep::whole_sync();
    if whole == WholeSync::Real {
        raw(libc::SYS_sync, [0; 6]);
        report::kept_at(Skip::Sync, Place::Unknown);
    } else {
        if whole == WholeSync::KeptOnly && policy::reporting() {
            keep::each_kept_device(|device| report::kept_at(Skip::Sync, Place::Device(device)));
        }
        // The mounts not kept were not flushed, whichever it was.
        count(Skip::Sync);
        flush::note_all();
    }
    0
}

/// `eatmydata_sync`: [`sync_status`] for the shim's `sync`, which returns
/// nothing.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_sync() {
    sync_status();
}

/// `eatmydata_fsync_status`: [`fsync_status`] for the shim's fsync.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_fsync_status(fd: c_int) -> c_int {
    fsync_status(fd, libc::SYS_fsync)
}

/// `eatmydata_fdatasync_status`: [`fsync_status`] for the shim's fdatasync.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_fdatasync_status(fd: c_int) -> c_int {
    fsync_status(fd, libc::SYS_fdatasync)
}

/// `eatmydata_syncfs_status`: [`syncfs_status`] for the shim.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_syncfs_status(fd: c_int) -> c_int {
    syncfs_status(fd)
}

/// `eatmydata_sync_file_range_status`: [`sync_file_range_status`] for the shim.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_sync_file_range_status(
    fd: c_int,
    offset: i64,
    nbytes: i64,
    flags: u32,
) -> c_int {
    sync_file_range_status(fd, offset, nbytes, flags)
}
