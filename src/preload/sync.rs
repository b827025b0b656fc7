//! What a skipped `fsync(2)`, `fdatasync(2)`, `syncfs(2)` or
//! `sync_file_range(2)` still answers.
//!
//! The flush is what costs; the kernel's checks of the arguments cost one
//! system call, so they are kept: a bad descriptor still fails with EBADF,
//! a pipe or socket with the error the kernel gives it, bad flags or offsets
//! with EINVAL. Errors that only the flush itself can find (EIO, ENOSPC on
//! writeback) cannot be reported: that is the bargain.

use core::ffi::c_int;

use crate::errno::{self, fail};
use crate::next::raw;
use crate::report::{Skip, count};

/// What a descriptor is to the sync calls.
#[derive(Debug, PartialEq)]
enum Target {
    /// A file, folder or device: what the sync calls are for.
    Storage,
    /// A pipe, socket or terminal: no fsync (EINVAL), no sync_file_range
    /// (ESPIPE), but syncfs accepts it.
    Stream,
}

/// Asks with one `lseek(fd, 0, SEEK_CUR)`, which moves nothing. It fails as
/// every sync call does for an invalid descriptor or one opened with
/// `O_PATH` (EBADF, returned as the error here, errno set), and with ESPIPE
/// for a stream. errno is left as it was otherwise.
fn target(fd: c_int) -> Result<Target, c_int> {
    let saved = errno::get();
    let seek = [fd.into(), 0, libc::SEEK_CUR.into(), 0, 0, 0];
    if raw(libc::SYS_lseek, seek) >= 0 {
        return Ok(Target::Storage);
    }
    if errno::get() == libc::ESPIPE {
        errno::set(saved);
        return Ok(Target::Stream);
    }
    Err(-1)
}

/// What `fsync(fd)` or `fdatasync(fd)` would answer, without the flush.
pub fn fsync_status(fd: c_int) -> c_int {
    match target(fd) {
        Err(failed) => failed,
        Ok(Target::Stream) => fail(libc::EINVAL),
        Ok(Target::Storage) => skipped(Skip::Fsync),
    }
}

/// Success, counted as a skip of `kind`.
fn skipped(kind: Skip) -> c_int {
    count(kind);
    0
}

/// What `syncfs(fd)` would answer, without the flush.
pub fn syncfs_status(fd: c_int) -> c_int {
    match target(fd) {
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
    match target(fd) {
        Err(failed) => failed,
        Ok(Target::Storage) => skipped(Skip::SyncFileRange),
        Ok(Target::Stream) => fail(libc::ESPIPE),
    }
}

/// What `sync(2)` does under the library: nothing, counted. It always
/// succeeds, as the real one does.
pub fn sync_status() -> c_int {
    skipped(Skip::Sync)
}

/// `eatmydata_sync`: [`sync_status`] for the shim's `sync`, which returns
/// nothing.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_sync() {
    sync_status();
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
