//! `msync(2)`: `MS_SYNC` waits for the disk, `MS_ASYNC` does not (on Linux it
//! only checks its arguments). Turning one into the other keeps every error
//! the kernel gives -- ENOMEM for an unmapped range, EINVAL for a bad
//! address or both flags at once -- without the flush.

use core::ffi::{c_int, c_void};

use crate::report::{self, Skip};
use crate::{keep, policy};

/// `flags` with `MS_SYNC` turned into `MS_ASYNC`; a request with both, which
/// the kernel refuses, is left for the kernel to refuse.
pub const fn without_sync(flags: c_int) -> c_int {
    if flags & libc::MS_SYNC != 0 && flags & libc::MS_ASYNC == 0 {
        (flags & !libc::MS_SYNC) | libc::MS_ASYNC
    } else {
        flags
    }
}

/// The flags `msync(address, length, flags)` goes on with, under this
/// process's policy; a skipped flush records the mapping's file system.
/// With kept mounts, the mapped file's file system decides (`keep.rs`):
/// a range that is not all in one mapping is kept.
pub fn msync_flags(address: usize, length: usize, flags: c_int) -> c_int {
    if !policy::eating() {
        return flags;
    }
    let given = without_sync(flags);
    if given == flags {
        return flags;
    }
    if !keep::eats_mapping(address, length) {
        report::kept_on_mapping(Skip::Msync, address, length);
        return flags;
    }
    report::skipped_on_mapping(Skip::Msync, address, length);
    given
}

/// `eatmydata_msync_flags`: [`msync_flags`] for the shim.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_msync_flags(
    address: *const c_void,
    length: usize,
    flags: c_int,
) -> c_int {
    msync_flags(address as usize, length, flags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use libc::{MS_ASYNC, MS_INVALIDATE, MS_SYNC};

    #[test]
    fn sync_becomes_async() {
        assert_eq!(without_sync(MS_SYNC), MS_ASYNC);
        assert_eq!(
            without_sync(MS_SYNC | MS_INVALIDATE),
            MS_ASYNC | MS_INVALIDATE
        );
    }

    #[test]
    fn the_rest_is_left_alone() {
        assert_eq!(without_sync(MS_ASYNC), MS_ASYNC);
        assert_eq!(without_sync(0), 0);
        assert_eq!(without_sync(MS_SYNC | MS_ASYNC), MS_SYNC | MS_ASYNC);
    }
}
