//! The flags of `open(2)`, `openat(2)`, `openat2(2)` and the file status
//! flags of `fcntl(F_SETFL)`.
//!
//! `O_SYNC` and `O_DSYNC` make every write wait for the disk; they are
//! dropped. `O_DIRECT` is dropped too unless `EATMYDATA_KEEP_DIRECT` is set:
//! a database that writes its log with direct I/O (MariaDB, say) waits for
//! the device on each commit even when it never calls fsync. Every other bit,
//! and the path and mode, pass through unchanged; and an open the kernel
//! would refuse as asked (`openat2` with `O_PATH|O_SYNC`, say) keeps its
//! flags, to be refused as without eatmydata (`durability::open`).

use core::ffi::{c_char, c_int, c_long};

use crate::caller::copy_from_caller;
use crate::durability::open::{Open, OpenHow};
use crate::kernel::raw;
use crate::report::{Skip, counted};
use crate::{durability, flush, keep, policy};

/// `flags` without the bits that ask each write to reach the disk.
pub const fn without_sync(flags: c_int) -> c_int {
    flags & !durability::OPEN_SYNC
}

/// `flags` without `O_DIRECT`.
pub const fn without_direct(flags: c_int) -> c_int {
    flags & !libc::O_DIRECT
}

/// The flags an open (`open`, `openat`, the fortified `__open_2` family)
/// of `path` under `dirfd` goes on with, under this process's policy:
/// [`kept`] of its flags.
#[inline]
pub fn kept_open_flags(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    kept(Open::Flags(flags as u32), dirfd, path) as c_int
}

/// The flags an open of any kind goes on with: the one decision for every
/// way of opening. The dropped flags go only from an open the kernel would
/// accept as asked (`durability::open`); one it refuses keeps them, and
/// is refused as without eatmydata. With kept mounts, an open of a file on
/// one keeps its sync flags (`keep::eats_path`; the `RESOLVE_*` flags of
/// an `openat2` are not applied to that question). The switches are read
/// once: this runs on every open a program makes.
#[inline]
fn kept(open: Open, dirfd: c_int, path: *const c_char) -> u64 {
    let asked = match open {
        Open::Flags(flags) => u64::from(flags),
        Open::How(how) => how.flags,
    };
    let switches = policy::switches();
    let mut dropped = durability::dropped_open_flags(!switches.drop_direct());
    if !switches.eating() || asked & u64::from(dropped as u32) == 0 {
        return asked;
    }
    let sync = u64::from(durability::OPEN_SYNC as u32);
    if switches.scoped() && asked & sync != 0 && !keep::eats_path(dirfd, path, asked as c_int) {
        dropped &= !durability::OPEN_SYNC;
        if asked & u64::from(dropped as u32) == 0 {
            return asked;
        }
    }
    let given = durability::open::kept_flags(open, dropped);
    if given != asked && switches.reporting() {
        // Both fit in 32 bits: an open with flags above them is refused.
        let (asked, given) = (asked as c_int, given as c_int);
        let sync_dropped = dropped & durability::OPEN_SYNC != 0;
        let without = if sync_dropped {
            without_sync(asked)
        } else {
            asked
        };
        counted(Skip::SyncOpen, asked, without);
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

/// `eatmydata_kept_open_flags`: [`kept_open_flags`] for the shim's open
/// hooks, with the path as the open has it (not read unless kept mounts
/// ask).
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_kept_open_flags(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
) -> c_int {
    kept_open_flags(dirfd, path, flags)
}

/// `eatmydata_setfl_flags`: [`setfl_flags`] for the shim's fcntl hooks.
#[unsafe(no_mangle)]
pub extern "C" fn eatmydata_setfl_flags(fd: c_int, flags: c_int) -> c_int {
    setfl_flags(fd, flags)
}

/// The size of `struct open_how` we copy to change its flags; a larger one
/// (from a kernel not yet written) passes through unchanged.
const OPEN_HOW_MAX: usize = 64;

/// The `i`-th u64 of a copied `struct open_how`.
fn word(copy: &[u8; OPEN_HOW_MAX], i: usize) -> u64 {
    let mut bytes = [0u8; 8];
    if let Some(field) = copy.get(i * 8..i * 8 + 8) {
        bytes.copy_from_slice(field);
    }
    u64::from_ne_bytes(bytes)
}

/// `openat2(dirfd, path, how, size)` through `syscall(2)`, with [`kept`]
/// applied to `how->flags` in a copy: the caller's struct is never
/// written. A `how` the library cannot read, or one the kernel refuses
/// (a size it does not take, a tail that is not zero), goes to the kernel
/// as it is, which answers as it would without us.
pub fn openat2(a: [c_long; 6]) -> c_long {
    let [dirfd, path, how, size, fifth, sixth] = a;
    let mut copy = [0u8; OPEN_HOW_MAX];
    let accepted = durability::open::how_size_accepted(size as u64);
    let Some(buffer) = copy.get_mut(..size as usize).filter(|_| accepted) else {
        return raw(libc::SYS_openat2, a);
    };
    if !copy_from_caller(buffer, how as usize) {
        return raw(libc::SYS_openat2, a);
    }
    let tail = copy.get(durability::open::HOW_SIZE_VER0 as usize..);
    if tail.is_some_and(|tail| tail.iter().any(|&byte| byte != 0)) {
        return raw(libc::SYS_openat2, a);
    }
    let asked = OpenHow {
        flags: word(&copy, 0),
        mode: word(&copy, 1),
        resolve: word(&copy, 2),
    };
    let given = kept(Open::How(asked), dirfd as c_int, path as *const c_char);
    if given == asked.flags {
        return raw(libc::SYS_openat2, a);
    }
    if let Some(field) = copy.get_mut(..8) {
        field.copy_from_slice(&given.to_ne_bytes());
    }
    let how = copy.as_ptr() as c_long;
    let fd = raw(libc::SYS_openat2, [dirfd, path, how, size, fifth, sixth]);
    opened(fd, asked.flags as c_int, given as c_int)
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
