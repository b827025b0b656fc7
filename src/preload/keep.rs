//! Keep by mount (`EATMYDATA_KEEP`, `EATMYDATA_ONLY`; `eatmydata --keep`,
//! `--only`): which of this process's syncs are eaten, by the mount of the
//! file, under the rule both products share (`durability::mount`).
//!
//! The paths of the two variables are resolved once, on the first sync
//! the process makes, each to the mount that holds it (`statx(2)`: its
//! unique id, else its id, else the device; `statx.rs`), into a
//! fixed table: no allocation, no lock. The thread that learns it first
//! keeps it for all; one that asks while another is still learning learns
//! its own copy on its stack, once. The kept paths are kept too (4 KiB at
//! most), so that `sync()` can become a `syncfs` of each kept mount.
//!
//! Per call, a file is placed by its descriptor (`statx` of it,
//! `AT_EMPTY_PATH`), a mapping by the device `/proc/self/maps` names (no
//! mount id there: every mount of that file system counts as the kept
//! one), an open by its path before it is made (the path itself, or, for
//! a file `O_CREAT` is about to make, its folder). Where the place cannot
//! be told, the sync is kept. Off (no variable), one bit test.

use core::cell::UnsafeCell;
use core::ffi::{CStr, c_char, c_int, c_long};
use core::sync::atomic::{AtomicU8, Ordering};

use crate::durability::mount::{Mount, Scope, WholeSync};
use crate::errno;
use crate::kernel::{close_own, open_own, raw};
use crate::maps::{self, Mapping};
use crate::protocol::{self, BadEntry, List, Unread, Unreadable, mount_path_ok, read_paths};
use crate::{policy, statx};

/// The most bytes of kept paths kept for `sync()`, NULs included.
const PATHS_MAX: usize = 4096;

/// What was learned: the scope, the kept paths, NUL after each, and the
/// entry of a list that could not be read, if any (for the report).
struct Learned {
    scope: Scope,
    paths: [u8; PATHS_MAX],
    /// Whether every kept path fit in `paths`.
    paths_whole: bool,
    /// The list that could not be read and why, its entry in `entry`.
    unread: Option<(List, Unread)>,
    entry: [u8; protocol::UNREAD_MAX],
    entry_len: usize,
}

const NOTHING: Learned = Learned {
    scope: Scope::ALL,
    paths: [0; PATHS_MAX],
    paths_whole: true,
    unread: None,
    entry: [0; protocol::UNREAD_MAX],
    entry_len: 0,
};

/// The table, written once by the thread that moved [`STATE`] from
/// `UNKNOWN` to `LEARNING`, read by all only after it is `READY`.
struct Table(UnsafeCell<Learned>);

// SAFETY: written by one thread before READY is stored (Release), read
// only after READY is loaded (Acquire), never written again.
unsafe impl Sync for Table {}

static TABLE: Table = Table(UnsafeCell::new(NOTHING));

const UNKNOWN: u8 = 0;
const LEARNING: u8 = 1;
const READY: u8 = 2;
static STATE: AtomicU8 = AtomicU8::new(UNKNOWN);

/// `path` (with room for its NUL) as a C string in `buffer`.
fn c_path<'a>(path: &[u8], buffer: &'a mut [u8; PATHS_MAX]) -> Option<&'a CStr> {
    let end = buffer.get_mut(..path.len())?;
    end.copy_from_slice(path);
    *buffer.get_mut(path.len())? = 0;
    CStr::from_bytes_with_nul(buffer.get(..=path.len())?).ok()
}

/// The mount of `path` under `dirfd`, with statx's `flags`; `None` where
/// it cannot be told. errno is left as it was.
fn statx_mount(dirfd: c_int, path: *const c_char, flags: c_int) -> Option<Mount> {
    statx::of(dirfd, path, flags).ok().map(|found| found.mount)
}

/// The mount that holds `entry`, a path of one of the variables.
fn mount_of_entry(entry: &[u8], buffer: &mut [u8; PATHS_MAX]) -> Option<Mount> {
    if !mount_path_ok(entry) {
        return None;
    }
    let path = c_path(entry, buffer)?;
    statx_mount(libc::AT_FDCWD, path.as_ptr(), 0)
}

/// Learns the scope from the variables into `into`, by the one reading
/// both products share (`Scope::learn`).
fn learn(into: &mut Learned) {
    let mut buffer = [0u8; PATHS_MAX];
    let value = |name| policy::variable(name).map(CStr::to_bytes);
    let keep = value(protocol::KEEP).unwrap_or_default();
    let only = value(protocol::ONLY).unwrap_or_default();
    let (scope, unread) = Scope::learn(keep, only, |entry| mount_of_entry(entry, &mut buffer));
    into.scope = scope;
    if let Some(Unreadable { list, bad }) = unread {
        into.unread = Some((list, bad.why));
        let len = bad.entry.len().min(into.entry.len());
        if let (Some(to), Some(from)) = (into.entry.get_mut(..len), bad.entry.get(..len)) {
            to.copy_from_slice(from);
            into.entry_len = len;
        }
        return;
    }
    let mut used = 0;
    for entry in read_paths(keep).into_iter().flatten() {
        match into.paths.get_mut(used..used + entry.len() + 1) {
            Some(slot) => {
                if let Some(room) = slot.get_mut(..entry.len()) {
                    room.copy_from_slice(entry);
                }
                used += entry.len() + 1;
            }
            None => into.paths_whole = false,
        }
    }
}

/// Calls `each` with the list this process could not read, if any (it
/// keeps every sync), for its report line.
pub fn unread(each: impl FnOnce(Option<Unreadable>)) {
    if !policy::switches().scoped() {
        return each(None);
    }
    with_learned(|learned| {
        let entry = learned.entry.get(..learned.entry_len).unwrap_or_default();
        each(learned.unread.map(|(list, why)| Unreadable {
            list,
            bad: BadEntry { entry, why },
        }))
    })
}

/// Calls `f` with what this process learned, learning it first if need be.
fn with_learned<R>(f: impl FnOnce(&Learned) -> R) -> R {
    if STATE.load(Ordering::Acquire) == READY {
        // SAFETY: READY: written once, before, and never again.
        return f(unsafe { &*TABLE.0.get() });
    }
    match STATE.compare_exchange(UNKNOWN, LEARNING, Ordering::Acquire, Ordering::Acquire) {
        Ok(_) => {
            // SAFETY: this thread alone moved UNKNOWN to LEARNING, and
            // nobody reads the table before READY.
            learn(unsafe { &mut *TABLE.0.get() });
            STATE.store(READY, Ordering::Release);
        }
        Err(READY) => {}
        Err(_) => {
            // Another thread is learning: learn a copy of our own.
            let mut own = NOTHING;
            learn(&mut own);
            return f(&own);
        }
    }
    // SAFETY: READY: written once, before, and never again.
    f(unsafe { &*TABLE.0.get() })
}

/// Learns the scope now, for the constructor: the paths are resolved as
/// the process starts, before it can change its environment or folder.
pub fn warm_up() {
    if policy::switches().scoped() {
        with_learned(|_| ());
    }
}

/// Whether a variable scopes the eating: then a sync asks where its file
/// is.
#[inline(always)]
pub fn scoped() -> bool {
    policy::switches().scoped()
}

/// Whether a sync on `fd`'s file is eaten: always when no variable scopes
/// the eating, else by the rule.
#[inline(always)]
pub fn eats_fd(fd: c_int) -> bool {
    !policy::switches().scoped() || scoped_eats_fd(fd)
}

#[cold]
#[inline(never)]
fn scoped_eats_fd(fd: c_int) -> bool {
    eats_at(statx_mount(fd, c"".as_ptr(), libc::AT_EMPTY_PATH))
}

/// Whether a sync on a file at `at` (`None`: not known) is eaten, by the
/// scope learned; for a caller that knows the scope is set and asked the
/// mount itself (`statx::of`).
#[inline(always)]
pub fn eats_at(at: Option<Mount>) -> bool {
    with_learned(|learned| learned.scope.eats(at))
}

/// Whether an `MS_SYNC` of `length` bytes at `address` is eaten: by the
/// device of the mapped file. Memory of no file has nothing to flush.
pub fn eats_mapping(address: usize, length: usize) -> bool {
    if !policy::switches().scoped() {
        return true;
    }
    let saved = errno::get();
    let at = match maps::of(address) {
        Some((Mapping::File(major, minor), end))
            if (address as u64).saturating_add(length as u64) <= end =>
        {
            Some(Mount {
                id: None,
                dev: (major, minor),
            })
        }
        Some((Mapping::Anonymous, _)) => return true,
        _ => None,
    };
    errno::set(saved);
    with_learned(|learned| learned.scope.eats(at))
}

/// Whether an open of `path` under `dirfd` with `flags` loses its sync
/// flags: by the mount of the file it opens, told before the open. The
/// path is asked as the open will follow it (not its last link with
/// `O_NOFOLLOW`); when it is not there and `O_CREAT` will make it, its
/// folder is asked. The file that a link left dangling makes is placed
/// by the link's folder; a path that changes between the two calls is
/// placed as it was.
pub fn eats_path(dirfd: c_int, path: *const c_char, flags: c_int) -> bool {
    if !policy::switches().scoped() {
        return true;
    }
    let at = open_mount(dirfd, path, flags);
    with_learned(|learned| learned.scope.eats(at))
}

#[cold]
#[inline(never)]
fn open_mount(dirfd: c_int, path: *const c_char, flags: c_int) -> Option<Mount> {
    if path.is_null() {
        return None;
    }
    let follow = if flags & libc::O_NOFOLLOW != 0 {
        libc::AT_SYMLINK_NOFOLLOW
    } else {
        0
    };
    let saved = errno::get();
    let found = raw(
        libc::SYS_statx,
        [dirfd.into(), path as c_long, follow.into(), 0, 0, 0],
    );
    let missing = found != 0 && errno::get() == libc::ENOENT;
    errno::set(saved);
    if !missing || flags & libc::O_CREAT == 0 {
        return statx_mount(dirfd, path, follow);
    }
    // The kernel read the whole path (ENOENT, not EFAULT): it is a C
    // string in readable memory.
    // SAFETY: as said; it is not kept past this call.
    let path = unsafe { CStr::from_ptr(path) }.to_bytes();
    match path.iter().rposition(|&byte| byte == b'/') {
        None => statx_mount(dirfd, c"".as_ptr(), libc::AT_EMPTY_PATH),
        Some(0) => statx_mount(dirfd, c"/".as_ptr(), 0),
        Some(at) => {
            let mut buffer = [0u8; PATHS_MAX];
            let folder = c_path(path.get(..at)?, &mut buffer)?;
            statx_mount(dirfd, folder.as_ptr(), 0)
        }
    }
}

/// `sync(2)` under the scope: what it becomes, done here unless it is the
/// real one or nothing (returned for the caller to do).
pub fn whole_sync() -> WholeSync {
    if !policy::switches().scoped() {
        return WholeSync::Eat;
    }
    with_learned(|learned| match learned.scope.whole_sync() {
        WholeSync::KeptOnly if learned.paths_whole && sync_kept(&learned.paths) => {
            WholeSync::KeptOnly
        }
        WholeSync::KeptOnly => WholeSync::Real,
        other => other,
    })
}

/// Calls `each` with the device of every mount kept by name, once each
/// (for the report, after `sync()` became their `syncfs`).
pub fn each_kept_device(mut each: impl FnMut((u32, u32))) {
    with_learned(|learned| {
        let kept = learned.scope.kept();
        for (at, mount) in kept.iter().enumerate() {
            let before = kept.get(..at).unwrap_or_default();
            if !before.iter().any(|seen| seen.dev == mount.dev) {
                each(mount.dev);
            }
        }
    });
}

/// `syncfs` of the file system of each kept path; false when one could
/// not be opened (it is gone), for the caller to make the real `sync`.
fn sync_kept(paths: &[u8; PATHS_MAX]) -> bool {
    let saved = errno::get();
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY;
    let mut all = true;
    for path in paths.split(|&byte| byte == 0).filter(|p| !p.is_empty()) {
        let mut buffer = [0u8; PATHS_MAX];
        match c_path(path, &mut buffer).and_then(|path| open_own(path, flags)) {
            Some(fd) => {
                raw(libc::SYS_syncfs, [fd, 0, 0, 0, 0, 0]);
                close_own(fd);
            }
            None => all = false,
        }
    }
    errno::set(saved);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mount(path: &CStr) -> Option<Mount> {
        statx_mount(libc::AT_FDCWD, path.as_ptr(), 0)
    }

    #[test]
    fn an_open_is_placed_by_its_path_or_the_folder_it_creates_in() {
        let (root, proc_mount) = (mount(c"/"), mount(c"/proc/self"));
        assert!(root.is_some() && proc_mount.is_some() && root != proc_mount);
        assert_eq!(
            open_mount(libc::AT_FDCWD, c"/proc/self".as_ptr(), 0),
            proc_mount
        );
        let creat = libc::O_CREAT | libc::O_WRONLY;
        let missing = c"/proc/no-such-file".as_ptr();
        assert_eq!(open_mount(libc::AT_FDCWD, missing, creat), proc_mount);
        assert_eq!(open_mount(libc::AT_FDCWD, missing, libc::O_WRONLY), None);
        let top = c"/no-such-file".as_ptr();
        assert_eq!(open_mount(libc::AT_FDCWD, top, creat), root);
        assert_eq!(open_mount(libc::AT_FDCWD, core::ptr::null(), creat), None);
    }

    #[test]
    fn entries_resolve_only_when_absolute() {
        let mut buffer = [0u8; PATHS_MAX];
        assert_eq!(mount_of_entry(b"/proc", &mut buffer), mount(c"/proc"));
        assert_eq!(mount_of_entry(b"proc", &mut buffer), None);
        assert_eq!(mount_of_entry(b"/no/such/place", &mut buffer), None);
        assert!(c_path(&[b'/'; PATHS_MAX], &mut buffer).is_none());
    }
}
