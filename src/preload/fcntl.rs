//! The flags of `open(2)`, `openat(2)`, `openat2(2)` and `fcntl(F_SETFL)`.
//!
//! `O_SYNC` and `O_DSYNC` make every write wait for the disk; they are
//! dropped. `O_DIRECT` is dropped too unless `EATMYDATA_KEEP_DIRECT` is set:
//! a database that writes its log with direct I/O (MariaDB, say) waits for
//! the device on each commit even when it never calls fsync. Every other bit,
//! and the path and mode, pass through unchanged.

use core::ffi::c_int;

use crate::policy;
use crate::report::{Skip, counted};

/// `flags` without the bits that ask each write to reach the disk.
pub const fn without_sync(flags: c_int) -> c_int {
    // O_SYNC is O_DSYNC plus a bit of its own; both go.
    flags & !(libc::O_SYNC | libc::O_DSYNC)
}

/// `flags` without `O_DIRECT`.
pub const fn without_direct(flags: c_int) -> c_int {
    flags & !libc::O_DIRECT
}

/// The open flags to pass on, under this process's policy.
pub fn open_flags(flags: c_int) -> c_int {
    if !policy::eating() {
        return flags;
    }
    setfl_flags(counted(Skip::SyncOpen, flags, without_sync(flags)))
}

/// The `F_SETFL` argument to pass on, under this process's policy.
pub fn setfl_flags(flags: c_int) -> c_int {
    if !policy::drop_direct() {
        return flags;
    }
    counted(Skip::Direct, flags, without_direct(flags))
}

/// `eatmydata_open_flags`: [`open_flags`] for the shim's open hooks.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_open_flags(flags: c_int) -> c_int {
    open_flags(flags)
}

/// `eatmydata_setfl_flags`: [`setfl_flags`] for the shim's fcntl hooks.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_setfl_flags(flags: c_int) -> c_int {
    setfl_flags(flags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use libc::{
        O_APPEND, O_CLOEXEC, O_CREAT, O_DIRECT, O_DSYNC, O_RDWR, O_SYNC, O_TMPFILE, O_WRONLY,
    };

    #[test]
    fn sync_bits_go_and_the_rest_stays() {
        assert_eq!(
            without_sync(O_WRONLY | O_CREAT | O_SYNC),
            O_WRONLY | O_CREAT
        );
        assert_eq!(without_sync(O_RDWR | O_DSYNC | O_APPEND), O_RDWR | O_APPEND);
        assert_eq!(without_sync(O_SYNC | O_DSYNC | O_CLOEXEC), O_CLOEXEC);
        assert_eq!(
            without_sync(O_RDWR | O_CREAT | O_CLOEXEC),
            O_RDWR | O_CREAT | O_CLOEXEC
        );
    }

    #[test]
    fn tmpfile_survives_whole() {
        assert_eq!(
            without_sync(O_TMPFILE | O_RDWR | O_SYNC),
            O_TMPFILE | O_RDWR
        );
        assert_eq!(without_direct(O_TMPFILE | O_DIRECT), O_TMPFILE);
    }

    #[test]
    fn direct_goes_alone() {
        assert_eq!(
            without_direct(O_RDWR | O_DIRECT | O_DSYNC),
            O_RDWR | O_DSYNC
        );
        assert_eq!(without_direct(-1) | O_DIRECT, -1);
    }
}
