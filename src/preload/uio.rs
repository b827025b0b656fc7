//! `pwritev2(2)`: `RWF_SYNC` and `RWF_DSYNC` make one write wait for the
//! disk. They are dropped; the write itself, and every other flag, stay.

use core::ffi::c_int;

use crate::report::{self, Skip};
use crate::{durability, keep, policy};

/// `flags` without the per-write sync bits.
pub const fn without_sync(flags: c_int) -> c_int {
    flags & !durability::WRITE_SYNC
}

/// The flags `pwritev2` goes on with, under this process's policy.
pub fn rwf_flags(fd: c_int, flags: c_int) -> c_int {
    if !policy::eating() {
        return flags;
    }
    let given = without_sync(flags);
    if given == flags {
        return flags;
    }
    if !keep::eats_fd(fd) {
        report::kept_on_fd(Skip::SyncWrite, fd);
        return flags;
    }
    report::skipped_on_fd(Skip::SyncWrite, fd);
    given
}

/// `eatmydata_rwf_flags`: [`rwf_flags`] for the shim.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_rwf_flags(fd: c_int, flags: c_int) -> c_int {
    rwf_flags(fd, flags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use libc::{RWF_APPEND, RWF_DSYNC, RWF_HIPRI, RWF_NOWAIT, RWF_SYNC};

    #[test]
    fn only_sync_bits_go() {
        assert_eq!(without_sync(RWF_SYNC | RWF_DSYNC), 0);
        assert_eq!(without_sync(RWF_DSYNC | RWF_HIPRI), RWF_HIPRI);
        assert_eq!(
            without_sync(RWF_NOWAIT | RWF_APPEND),
            RWF_NOWAIT | RWF_APPEND
        );
    }
}
