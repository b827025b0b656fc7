//! Which opens may lose a sync or direct flag: only one the kernel would
//! accept as asked. An open the kernel refuses must be refused for the
//! same reason with eatmydata, so its flags go to the kernel untouched;
//! one it accepts still passes every check without the dropped flags
//! (none of them needs a sync or direct flag), and opens the same file.
//!
//! The checks are those the kernel makes of the flags before it looks at
//! the path (`build_open_how` and `build_open_flags` in `fs/open.c`), in
//! the two ways it is asked:
//!
//! - `open`, `openat` and io_uring's `OPENAT` entry ([`Open::Flags`]):
//!   unknown bits are ignored, and `O_PATH` ignores every flag but
//!   `O_CLOEXEC`, `O_DIRECTORY` and `O_NOFOLLOW` (so `O_PATH|O_SYNC`
//!   opens); what is refused is `O_DIRECTORY|O_CREAT` (since 6.4; an older
//!   kernel's answer is left to it as well), and `O_TMPFILE` without
//!   `O_DIRECTORY` or without write access (`O_TMPFILE|O_CREAT` is
//!   `O_DIRECTORY|O_CREAT`).
//! - `openat2` and io_uring's `OPENAT2` entry ([`Open::How`]): all of the
//!   above, and besides, unknown flags (bits above 32 too), `O_PATH` with
//!   any other flag but those three, unknown resolve bits,
//!   `RESOLVE_BENEATH` with `RESOLVE_IN_ROOT`, a mode without `O_CREAT` or
//!   `O_TMPFILE` or with bits beyond 07777, and `RESOLVE_CACHED` with
//!   `O_TRUNC`, `O_CREAT` or `O_TMPFILE` (EAGAIN). The size of the
//!   structure is checked by its readers ([`how_size_accepted`]).

/// The kernel's open flags that libc does not spell as the kernel does:
/// `__O_SYNC` (`O_SYNC` is it with `O_DSYNC`), `__O_TMPFILE` (`O_TMPFILE`
/// is it with `O_DIRECTORY`), `FASYNC`, and `O_LARGEFILE`, which glibc
/// makes 0 on 64-bit targets but the kernel has a bit for.
const SYNC_BIT: u64 = 0o4000000;
const TMPFILE_BIT: u64 = 0o20000000;
const FASYNC: u64 = 0o20000;
#[cfg(target_arch = "aarch64")]
const LARGEFILE: u64 = 0o400000;
#[cfg(not(target_arch = "aarch64"))]
const LARGEFILE: u64 = 0o100000;

const fn bit(flag: i32) -> u64 {
    flag as u32 as u64
}

/// `VALID_OPEN_FLAGS`: every flag the kernel knows.
const VALID_FLAGS: u64 = bit(libc::O_ACCMODE)
    | bit(libc::O_CREAT)
    | bit(libc::O_EXCL)
    | bit(libc::O_NOCTTY)
    | bit(libc::O_TRUNC)
    | bit(libc::O_APPEND)
    | bit(libc::O_NONBLOCK)
    | bit(libc::O_DSYNC)
    | SYNC_BIT
    | FASYNC
    | bit(libc::O_DIRECT)
    | LARGEFILE
    | bit(libc::O_DIRECTORY)
    | bit(libc::O_NOFOLLOW)
    | bit(libc::O_NOATIME)
    | bit(libc::O_CLOEXEC)
    | bit(libc::O_PATH)
    | TMPFILE_BIT;

/// The flags `O_PATH` keeps (`O_PATH_FLAGS`).
const PATH_FLAGS: u64 =
    bit(libc::O_DIRECTORY) | bit(libc::O_NOFOLLOW) | bit(libc::O_PATH) | bit(libc::O_CLOEXEC);

/// `VALID_RESOLVE_FLAGS`: `RESOLVE_NO_XDEV` to `RESOLVE_CACHED`.
const VALID_RESOLVE: u64 = 0x3f;
const RESOLVE_BENEATH: u64 = 0x08;
const RESOLVE_IN_ROOT: u64 = 0x10;
const RESOLVE_CACHED: u64 = 0x20;

/// `S_IALLUGO`: the mode bits an open that creates may give.
const MODE_BITS: u64 = 0o7777;

/// `struct open_how`, as `openat2` reads it (its first version, 24 bytes;
/// a larger one's tail must be zero, which its reader checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenHow {
    pub flags: u64,
    pub mode: u64,
    pub resolve: u64,
}

/// `OPEN_HOW_SIZE_VER0`.
pub const HOW_SIZE_VER0: u64 = 24;

/// How an open was asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Open {
    /// `open`, `openat` or an io_uring `OPENAT` entry: the flags, whose
    /// unknown bits the kernel ignores (the mode it masks, never refuses).
    Flags(u32),
    /// `openat2` or an io_uring `OPENAT2` entry: its `open_how`, every
    /// field of which the kernel checks.
    How(OpenHow),
}

/// Whether `openat2` accepts a `size` for its structure before reading
/// it (below its first version: EINVAL; above a page: E2BIG).
pub const fn how_size_accepted(size: u64) -> bool {
    size >= HOW_SIZE_VER0 && size <= 4096
}

/// Whether the kernel's checks of the flags before it opens accept
/// `open` as asked.
pub const fn open_accepted(open: Open) -> bool {
    let mut flags = match open {
        Open::Flags(flags) => {
            // build_open_how: unknown bits cleared, O_PATH keeps its few.
            let flags = flags as u64 & VALID_FLAGS;
            if flags & bit(libc::O_PATH) != 0 {
                flags & PATH_FLAGS
            } else {
                flags
            }
        }
        Open::How(how) => {
            if !how_accepted(how) {
                return false;
            }
            how.flags
        }
    };
    flags &= !bit(libc::O_CLOEXEC);
    let directory = bit(libc::O_DIRECTORY);
    if flags & (directory | bit(libc::O_CREAT)) == directory | bit(libc::O_CREAT) {
        return false;
    }
    // O_TMPFILE needs O_DIRECTORY, and write access (O_WRONLY, O_RDWR, or
    // both bits, which the kernel reads as read and write).
    !(flags & TMPFILE_BIT != 0
        && (flags & directory == 0 || flags & bit(libc::O_ACCMODE) == bit(libc::O_RDONLY)))
}

/// The checks only `openat2` makes.
const fn how_accepted(how: OpenHow) -> bool {
    let flags = how.flags & !bit(libc::O_CLOEXEC);
    let creates = flags & (bit(libc::O_CREAT) | TMPFILE_BIT) != 0;
    let mode_ok = if creates {
        how.mode & !MODE_BITS == 0
    } else {
        how.mode == 0
    };
    let scoped = RESOLVE_BENEATH | RESOLVE_IN_ROOT;
    let uncached = bit(libc::O_TRUNC) | bit(libc::O_CREAT) | TMPFILE_BIT;
    flags & !VALID_FLAGS == 0
        && how.resolve & !VALID_RESOLVE == 0
        && how.resolve & scoped != scoped
        && mode_ok
        && (flags & bit(libc::O_PATH) == 0 || flags & !PATH_FLAGS == 0)
        && (how.resolve & RESOLVE_CACHED == 0 || flags & uncached == 0)
}

/// The flags `open` goes on with when `dropped` are to go: without them
/// when the kernel would accept it as asked, else as asked.
pub const fn kept_flags(open: Open, dropped: i32) -> u64 {
    let flags = match open {
        Open::Flags(flags) => flags as u64,
        Open::How(how) => how.flags,
    };
    if open_accepted(open) {
        flags & !bit(dropped)
    } else {
        flags
    }
}

#[cfg(test)]
#[path = "open/tests.rs"]
mod tests;
