//! What a skipped `fsync(2)`, `fdatasync(2)`, `syncfs(2)` or
//! `sync_file_range(2)` still answers.
//!
//! The flush is what costs; the kernel's checks of the arguments are a system
//! call or two, so they are kept: a bad descriptor still fails with EBADF, a
//! pipe or socket with the error the kernel gives it, bad flags or offsets
//! with EINVAL. Errors that only the flush itself can find (EIO, ENOSPC on
//! writeback) cannot be reported: that is the bargain.

use core::ffi::c_int;
use core::mem::MaybeUninit;

use crate::errno::fail;
use crate::report::{Skip, count};
use crate::syscall::raw;

/// The file type bits of `fd`, or the errno of a descriptor that no sync call
/// accepts: an invalid one, or one opened with `O_PATH`.
fn file_type(fd: c_int) -> Result<libc::mode_t, c_int> {
    let flags = raw(
        libc::SYS_fcntl,
        [fd.into(), libc::F_GETFL.into(), 0, 0, 0, 0],
    );
    if flags < 0 {
        return Err(-1);
    }
    if flags & libc::c_long::from(libc::O_PATH) != 0 {
        return Err(fail(libc::EBADF));
    }
    let mut stat = MaybeUninit::<libc::stat>::zeroed();
    if raw(
        libc::SYS_fstat,
        [fd.into(), stat.as_mut_ptr() as libc::c_long, 0, 0, 0, 0],
    ) < 0
    {
        return Err(-1);
    }
    // SAFETY: zeroed is a valid `stat`, and fstat filled it on success.
    Ok(unsafe { stat.assume_init() }.st_mode & libc::S_IFMT)
}

/// What `fsync(fd)` or `fdatasync(fd)` would answer, without the flush.
pub fn fsync_status(fd: c_int) -> c_int {
    match file_type(fd) {
        Err(failed) => failed,
        // Pipes and sockets have no fsync operation.
        Ok(libc::S_IFIFO | libc::S_IFSOCK) => fail(libc::EINVAL),
        Ok(_) => skipped(Skip::Fsync),
    }
}

/// Success, counted as a skip of `kind`.
fn skipped(kind: Skip) -> c_int {
    count(kind);
    0
}

/// What `syncfs(fd)` would answer, without the flush.
pub fn syncfs_status(fd: c_int) -> c_int {
    match file_type(fd) {
        Err(failed) => failed,
        Ok(_) => skipped(Skip::Sync),
    }
}

/// The flags `sync_file_range(2)` accepts.
const RANGE_FLAGS: u32 = libc::SYNC_FILE_RANGE_WAIT_BEFORE
    | libc::SYNC_FILE_RANGE_WRITE
    | libc::SYNC_FILE_RANGE_WAIT_AFTER;

/// Whether the kernel would accept these range arguments, before it looks at
/// the descriptor.
pub const fn range_valid(offset: i64, nbytes: i64, flags: u32) -> bool {
    let end = offset.wrapping_add(nbytes);
    flags & !RANGE_FLAGS == 0 && offset >= 0 && end >= 0 && end >= offset
}

/// What `sync_file_range(fd, offset, nbytes, flags)` would answer, without
/// the writeback, with the kernel's order of checks.
pub fn sync_file_range_status(fd: c_int, offset: i64, nbytes: i64, flags: u32) -> c_int {
    if !range_valid(offset, nbytes, flags) {
        return fail(libc::EINVAL);
    }
    match file_type(fd) {
        Err(failed) => failed,
        Ok(libc::S_IFREG | libc::S_IFBLK | libc::S_IFDIR | libc::S_IFLNK) => {
            skipped(Skip::SyncFileRange)
        }
        Ok(_) => fail(libc::ESPIPE),
    }
}

/// `eatmydata_sync`: what `sync(2)` does under the library: nothing.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_sync() {
    count(Skip::Sync);
}

/// `eatmydata_fsync_status`: [`fsync_status`] for the shim.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_fsync_status(fd: c_int) -> c_int {
    fsync_status(fd)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_checks_follow_the_kernel() {
        assert!(range_valid(0, 0, 0));
        assert!(range_valid(4096, 8192, RANGE_FLAGS));
        assert!(!range_valid(-1, 10, 0));
        assert!(!range_valid(0, -1, 0));
        assert!(!range_valid(i64::MAX, 1, 0));
        assert!(!range_valid(0, 0, 8));
    }
}
