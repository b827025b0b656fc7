//! One `statx(2)` of a file: what it is and which mount holds it, for keep
//! by mount (`keep.rs`) and for a sync under it (`sync.rs`); and, per
//! mount, whether its file system keeps its data on a disk.
//!
//! A sync under kept mounts asks two things of its descriptor: which mount
//! holds it, and whether a sync of it would only flush a disk (a file or
//! folder of a disk's file system, or a block device; not an `O_PATH`
//! descriptor). The mount and the kind of file come from one `statx`. The
//! file system is the mount's, so it is asked once per mount (`fstatfs`)
//! and remembered by the mount's unique id (`STATX_MNT_ID_UNIQUE`, Linux
//! 6.8), which the kernel never gives to another mount: the memo cannot
//! go stale. Where the kernel has no unique ids, nothing is remembered.
//! `O_PATH` is the one thing `statx` does not show (it succeeds on such a
//! descriptor): `fcntl(F_GETFL)` tells it ([`open_flags`]).

use core::ffi::{c_char, c_int, c_long};
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::durability::mount::Mount;
use crate::durability::{self, Kind};
use crate::errno;
use crate::kernel::raw;

/// `STATX_MNT_ID` (Linux 5.8): `stx_mnt_id` is the mount's id.
const STATX_MNT_ID: u32 = 0x1000;
/// `STATX_MNT_ID_UNIQUE` (Linux 6.8): `stx_mnt_id` is the mount's unique
/// id, never reused; the kernel gives it instead of the other when asked.
const STATX_MNT_ID_UNIQUE: u32 = 0x4000;
/// What is asked: the file's type and its mount's id, the unique one
/// where the kernel has it. Every statx of this library asks the same, so
/// that the ids it compares are of one kind.
const MASK: u32 = libc::STATX_TYPE | STATX_MNT_ID | STATX_MNT_ID_UNIQUE;

/// What one `statx` told of a file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    pub kind: Kind,
    pub mount: Mount,
    /// Whether `mount.id` is the unique id (it is then always there).
    pub unique: bool,
}

/// `statx` of `path` under `dirfd` with `flags` (`AT_*`): the errno it
/// failed with otherwise. errno is left as it was. Attributes are taken
/// as the kernel holds them (`AT_STATX_DONT_SYNC`): a network or FUSE
/// file system is not asked.
pub fn of(dirfd: c_int, path: *const c_char, flags: c_int) -> Result<Stat, c_int> {
    let saved = errno::get();
    let mut stat = MaybeUninit::<libc::statx>::uninit();
    let flags = flags | libc::AT_STATX_DONT_SYNC;
    let args = [
        dirfd.into(),
        path as c_long,
        flags.into(),
        MASK.into(),
        stat.as_mut_ptr() as c_long,
        0,
    ];
    if raw(libc::SYS_statx, args) != 0 {
        let failed = errno::get();
        errno::set(saved);
        return Err(failed);
    }
    // SAFETY: statx succeeded, and the kernel copies out the whole struct
    // (what it does not fill, zeroed).
    let stat = unsafe { stat.assume_init() };
    let has_id = stat.stx_mask & (STATX_MNT_ID | STATX_MNT_ID_UNIQUE) != 0;
    Ok(Stat {
        kind: kind_of(u32::from(stat.stx_mode)),
        mount: Mount {
            id: has_id.then_some(stat.stx_mnt_id),
            dev: (stat.stx_dev_major, stat.stx_dev_minor),
        },
        unique: stat.stx_mask & STATX_MNT_ID_UNIQUE != 0,
    })
}

/// [`of`] the descriptor `fd` itself.
#[inline(always)]
pub fn of_fd(fd: c_int) -> Result<Stat, c_int> {
    of(fd, c"".as_ptr(), libc::AT_EMPTY_PATH)
}

/// What a file of `mode` (`st_mode`) is to a sync.
pub const fn kind_of(mode: u32) -> Kind {
    match mode & libc::S_IFMT {
        libc::S_IFREG => Kind::Regular,
        libc::S_IFDIR => Kind::Directory,
        libc::S_IFBLK => Kind::BlockDevice,
        _ => Kind::Other,
    }
}

/// The mounts whose file system was asked, as `id << 1 | disk` (0: free),
/// filled in order and never emptied. Past the table, the file system is
/// asked again at each call.
const MEMO_MAX: usize = 32;
static MEMO: [AtomicU64; MEMO_MAX] = [const { AtomicU64::new(0) }; MEMO_MAX];

/// Whether the file system of the mount whose unique id is `id`, which
/// holds `fd`, keeps its data on a disk ([`durability::disk_fs_magic`]):
/// remembered, or asked of `fd` (`fstatfs`) and remembered. errno is left
/// as it was.
pub fn disk_fs(id: u64, fd: c_int) -> bool {
    if id >> 63 != 0 {
        return fs_on_disk(fd);
    }
    for slot in &MEMO {
        match slot.load(Ordering::Acquire) {
            0 => break,
            seen if seen >> 1 == id => return seen & 1 != 0,
            _ => {}
        }
    }
    let disk = fs_on_disk(fd);
    let entry = id << 1 | u64::from(disk);
    for slot in &MEMO {
        match slot.compare_exchange(0, entry, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => break,
            Err(seen) if seen >> 1 == id => break,
            Err(_) => {}
        }
    }
    disk
}

/// Whether `fd`'s file system keeps its data on a disk, by the magic
/// number `fstatfs` gives ([`durability::disk_fs_magic`]): false where it
/// cannot be asked. errno is left as it was.
#[cold]
#[inline(never)]
pub fn fs_on_disk(fd: c_int) -> bool {
    let saved = errno::get();
    let mut fs = MaybeUninit::<libc::statfs>::uninit();
    let asked = [fd.into(), fs.as_mut_ptr() as c_long, 0, 0, 0, 0];
    let disk = raw(libc::SYS_fstatfs, asked) == 0 && {
        // SAFETY: fstatfs succeeded, so the kernel filled the whole struct.
        let magic = unsafe { fs.assume_init() }.f_type;
        #[allow(clippy::unnecessary_cast)] // f_type's width is the architecture's
        durability::disk_fs_magic(magic as i64)
    };
    errno::set(saved);
    disk
}

/// `fcntl(fd, F_GETFL)`: the descriptor's open flags (`O_PATH` among
/// them), or -1 with errno set (EBADF for a closed descriptor).
#[inline(always)]
pub fn open_flags(fd: c_int) -> c_long {
    raw(
        libc::SYS_fcntl,
        [fd.into(), libc::F_GETFL.into(), 0, 0, 0, 0],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_statx_tells_the_kind_and_the_mount() {
        let root = of(libc::AT_FDCWD, c"/".as_ptr(), 0).expect("statx /");
        assert_eq!(root.kind, Kind::Directory);
        assert!(root.mount.id.is_some());
        let proc_self = of(libc::AT_FDCWD, c"/proc/self/status".as_ptr(), 0);
        let proc_self = proc_self.expect("statx /proc/self/status");
        assert_eq!(proc_self.kind, Kind::Regular);
        assert_ne!(proc_self.mount, root.mount);
        let null = of(libc::AT_FDCWD, c"/dev/null".as_ptr(), 0).expect("statx /dev/null");
        assert_eq!(null.kind, Kind::Other);
        assert_eq!(of_fd(-1), Err(libc::EBADF));
        let missing = of(libc::AT_FDCWD, c"/no/such/file".as_ptr(), 0);
        assert_eq!(missing, Err(libc::ENOENT));
    }

    #[test]
    fn a_mount_file_system_is_asked_once_and_remembered() {
        for path in [c".", c"/proc/self"] {
            // SAFETY: a path of our own, opened and closed here.
            let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY) };
            assert!(fd >= 0);
            let stat = of_fd(fd).expect("statx of a descriptor");
            if let (true, Some(id)) = (stat.unique, stat.mount.id) {
                let disk = fs_on_disk(fd);
                assert_eq!(disk_fs(id, fd), disk);
                let entry = id << 1 | u64::from(disk);
                assert!(
                    MEMO.iter()
                        .any(|slot| slot.load(Ordering::Relaxed) == entry)
                );
                // Remembered: not asked again (a closed descriptor says no).
                assert_eq!(disk_fs(id, -1), disk);
            }
            // SAFETY: ours, opened above.
            unsafe { libc::close(fd) };
        }
        assert!(!fs_on_disk(-1));
        // SAFETY: as above.
        let path = unsafe { libc::open(c"/proc/self/status".as_ptr(), libc::O_PATH) };
        let flags = open_flags(path);
        assert!(flags >= 0 && flags & libc::c_long::from(libc::O_PATH) != 0);
        // SAFETY: ours, opened above.
        unsafe { libc::close(path) };
    }
}
