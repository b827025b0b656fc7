//! What the kernel takes as a request for durability, and the checks a
//! request answered without it must still make: one definition for the
//! library's hooks and the command's seccomp supervisor, which answer
//! alike. Pure functions of their arguments, included by both products
//! (`#[path]`), so that it links nothing of either into the other.

/// The open flags that make every write wait for the disk (`O_SYNC` is
/// `O_DSYNC` plus a bit of its own; both go).
pub const OPEN_SYNC: i32 = libc::O_SYNC | libc::O_DSYNC;

/// The `pwritev2` flags that make one write wait for the disk.
pub const WRITE_SYNC: i32 = libc::RWF_SYNC | libc::RWF_DSYNC;

/// The open flags that are dropped: the sync ones, and `O_DIRECT` unless
/// it is kept (`--keep-direct`).
pub const fn dropped_open_flags(keep_direct: bool) -> i32 {
    if keep_direct {
        OPEN_SYNC
    } else {
        OPEN_SYNC | libc::O_DIRECT
    }
}

/// The flags `sync_file_range(2)` accepts.
const RANGE_FLAGS: u32 = libc::SYNC_FILE_RANGE_WAIT_BEFORE
    | libc::SYNC_FILE_RANGE_WRITE
    | libc::SYNC_FILE_RANGE_WAIT_AFTER;

/// Whether the kernel would accept these `sync_file_range` arguments,
/// before it looks at the descriptor (else EINVAL).
pub const fn sync_file_range_valid(offset: i64, nbytes: i64, flags: u32) -> bool {
    let end = offset.wrapping_add(nbytes);
    flags & !RANGE_FLAGS == 0 && offset >= 0 && end >= 0 && end >= offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_checks_follow_the_kernel() {
        assert!(sync_file_range_valid(0, 0, 0));
        assert!(sync_file_range_valid(4096, 8192, RANGE_FLAGS));
        assert!(!sync_file_range_valid(-1, 10, 0));
        assert!(!sync_file_range_valid(0, -1, 0));
        assert!(!sync_file_range_valid(i64::MAX, 1, 0));
        assert!(!sync_file_range_valid(0, 0, 8));
    }

    #[test]
    fn direct_is_dropped_unless_kept() {
        assert_eq!(dropped_open_flags(true), OPEN_SYNC);
        assert_eq!(dropped_open_flags(false) & libc::O_DIRECT, libc::O_DIRECT);
        assert_eq!(OPEN_SYNC & libc::O_DSYNC, libc::O_DSYNC);
    }
}
