//! The flags of `open(2)`, `openat(2)`, `openat2(2)` and the file status
//! flags of `fcntl(F_SETFL)`.
//!
//! `O_SYNC` and `O_DSYNC` make every write wait for the disk; they are
//! dropped. `O_DIRECT` is dropped too unless `EATMYDATA_KEEP_DIRECT` is set:
//! a database that writes its log with direct I/O (MariaDB, say) waits for
//! the device on each commit even when it never calls fsync. Every other bit,
//! and the path and mode, pass through unchanged.

use core::ffi::{c_int, c_long};
use core::mem;

use crate::caller::copy_from_caller;
use crate::kernel::raw;
use crate::report::{Skip, counted};
use crate::{durability, flush, policy};

/// `flags` without the bits that ask each write to reach the disk.
pub const fn without_sync(flags: c_int) -> c_int {
    flags & !durability::OPEN_SYNC
}

/// `flags` without `O_DIRECT`.
pub const fn without_direct(flags: c_int) -> c_int {
    flags & !libc::O_DIRECT
}

/// The flags an open (`open`, `openat`, `openat2`, the fortified
/// `__open_2` family) goes on with, under this process's policy: the one
/// decision for every way of opening. The switches are read once: this runs
/// on every open a program makes.
#[inline]
pub fn kept_open_flags(flags: c_int) -> c_int {
    let switches = policy::switches();
    if !switches.eating() {
        return flags;
    }
    let without = without_sync(flags);
    let given = flags & !durability::dropped_open_flags(!switches.drop_direct());
    if given != flags && switches.reporting() {
        counted(Skip::SyncOpen, flags, without);
        counted(Skip::Direct, without, given);
    }
    given
}

/// The file status flags `fcntl(F_SETFL)` goes on with. `F_SETFL` cannot
/// set `O_SYNC` or `O_DSYNC` (Linux ignores them there), so only
/// `O_DIRECT` is at stake.
#[inline]
pub fn status_flags(flags: c_int) -> c_int {
    if !policy::drop_direct() {
        return flags;
    }
    counted(Skip::Direct, flags, without_direct(flags))
}

/// `fcntl(fd, F_SETFL, flags)`'s flags: [`status_flags`], and when
/// `O_DIRECT` goes, `fd`'s writes too wait for the flush at exit.
pub fn setfl_flags(fd: c_int, flags: c_int) -> c_int {
    let given = status_flags(flags);
    if given != flags {
        flush::note_fd(fd);
    }
    given
}

/// What an open returned, `fd`, when its flags were changed from `asked` to
/// `given`: the new descriptor's writes wait for the flush at exit too.
pub fn opened(fd: c_long, asked: c_int, given: c_int) -> c_long {
    if fd >= 0 && asked != given {
        flush::note_fd(fd as c_int);
    }
    fd
}

/// `eatmydata_opened`: the shim's word that `fd` was opened with its sync
/// or direct flags dropped (it compares them itself, to call only then).
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_opened(fd: c_int) {
    flush::note_fd(fd);
}

/// `eatmydata_kept_open_flags`: [`kept_open_flags`] for the shim's open hooks.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_kept_open_flags(flags: c_int) -> c_int {
    kept_open_flags(flags)
}

/// `eatmydata_setfl_flags`: [`setfl_flags`] for the shim's fcntl hooks.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_setfl_flags(fd: c_int, flags: c_int) -> c_int {
    setfl_flags(fd, flags)
}

/// The size of `struct open_how` we copy to change its flags; a larger one
/// (from a kernel not yet written) passes through unchanged.
const OPEN_HOW_MAX: usize = 64;
const OPEN_HOW_MIN: usize = mem::size_of::<u64>() * 3;

/// `openat2(dirfd, path, how, size)` through `syscall(2)`, with
/// [`kept_open_flags`] applied to `how->flags` in a copy: the caller's struct is
/// never written. A `how` the library cannot read goes to the kernel as it
/// is, which answers EFAULT as it would without us.
pub fn openat2(a: [c_long; 6]) -> c_long {
    let [dirfd, path, how, size, fifth, sixth] = a;
    let size = size as usize;
    let mut copy = [0u8; OPEN_HOW_MAX];
    let Some(buffer) = copy.get_mut(..size).filter(|_| size >= OPEN_HOW_MIN) else {
        return raw(libc::SYS_openat2, a);
    };
    if !copy_from_caller(buffer, how as usize) {
        return raw(libc::SYS_openat2, a);
    }
    let mut flags = [0u8; 8];
    flags.copy_from_slice(copy.get(..8).unwrap_or(&[0; 8]));
    let old = u64::from_ne_bytes(flags);
    // The kernel refuses flags above 32 bits itself: leave them for it.
    let new = u64::from(kept_open_flags(old as c_int) as u32) | (old & !0xffff_ffff);
    if new == old {
        return raw(libc::SYS_openat2, a);
    }
    if let Some(field) = copy.get_mut(..8) {
        field.copy_from_slice(&new.to_ne_bytes());
    }
    let how = copy.as_ptr() as c_long;
    let fd = raw(
        libc::SYS_openat2,
        [dirfd, path, how, size as c_long, fifth, sixth],
    );
    opened(fd, old as c_int, new as c_int)
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
