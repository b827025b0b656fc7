//! What the kernel takes as a request for durability, and what a request
//! answered without it must still answer: one definition for the library's
//! hooks and the command's seccomp supervisor, which answer alike. Pure
//! functions of their arguments, included by both products (`#[path]`), so
//! that it links nothing of either into the other.
//!
//! Each product learns the facts its own way (the library asks the
//! descriptor; the supervisor reads `/proc` and never touches the file's
//! file system) and hands them here. The rule both follow: a request is
//! answered without the kernel only when the answer is certain; anything
//! else goes to the kernel as made, which answers it as it would without
//! eatmydata and at worst costs one flush.

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

/// Whether the kernel would accept these `sync_file_range` arguments
/// from an open descriptor (else EINVAL).
pub const fn sync_file_range_valid(offset: i64, nbytes: i64, flags: u32) -> bool {
    let end = offset.wrapping_add(nbytes);
    flags & !RANGE_FLAGS == 0 && offset >= 0 && end >= 0 && end >= offset
}

/// A sync call, with what the kernel checks besides the descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sync {
    /// `fsync(2)` or `fdatasync(2)`.
    File,
    /// `syncfs(2)`.
    FileSystem,
    /// `sync_file_range(2)`.
    Range {
        offset: i64,
        nbytes: i64,
        flags: u32,
    },
}

/// What a sync call gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// 0, without the call: it would only have flushed a disk.
    Skip,
    /// This errno, without the call: the kernel's own check fails.
    Fail(i32),
    /// The call, made as asked: the kernel answers (`EBADF`, `EINVAL`,
    /// `ESPIPE`, or 0 with no disk to flush), as the program's own.
    Kernel,
}

/// What `call` gets on a descriptor that reaches a disk (`disk`: an open
/// regular file, folder or block device of a file system that keeps its
/// data on a disk) or not. The kernel looks up the descriptor before it
/// checks the arguments, so only an open descriptor's arguments are judged
/// here; anything not known to reach a disk is the kernel's to answer.
pub const fn sync_verdict(call: Sync, disk: bool) -> Verdict {
    if !disk {
        return Verdict::Kernel;
    }
    match call {
        Sync::Range {
            offset,
            nbytes,
            flags,
        } if !sync_file_range_valid(offset, nbytes, flags) => Verdict::Fail(libc::EINVAL),
        _ => Verdict::Skip,
    }
}

/// What an open file is, to a sync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Regular,
    Directory,
    BlockDevice,
    /// A pipe, socket, character device, anonymous inode, `O_PATH`
    /// descriptor, or anything not known.
    Other,
}

/// Whether a sync of an open file of `kind`, on a file system that keeps
/// its data on a disk (`disk_fs`) or not, flushes a disk. A block device's
/// sync flushes its disk wherever its node lives.
pub const fn reaches_disk(kind: Kind, disk_fs: bool) -> bool {
    match kind {
        Kind::BlockDevice => true,
        Kind::Regular | Kind::Directory => disk_fs,
        Kind::Other => false,
    }
}

/// File systems whose sync writes to a local disk and answers 0 unless
/// the disk fails: the type name `/proc/PID/mountinfo` gives, and the
/// magic number `statfs(2)` gives (ext2, ext3 and ext4 share one, as vfat
/// and msdos do). `overlay` is here for containers: its sync goes to its
/// upper layer, and answers as that does. Network and FUSE file systems
/// are not: their sync asks a server, whose answer is not known; nor are
/// those that keep nothing on a disk (tmpfs, proc, nsfs, mqueue).
const DISK_FILE_SYSTEMS: &[(&[u8], i64)] = &[
    (b"ext2", 0xef53),
    (b"ext3", 0xef53),
    (b"ext4", 0xef53),
    (b"xfs", 0x5846_5342),
    (b"btrfs", 0x9123_683e),
    (b"f2fs", 0xf2f5_2010),
    (b"jfs", 0x3153_464a),
    (b"reiserfs", 0x5265_4973),
    (b"vfat", 0x4d44),
    (b"msdos", 0x4d44),
    (b"exfat", 0x2011_bab0),
    (b"ntfs3", 0x7366_746e),
    (b"hfsplus", 0x482b),
    (b"nilfs2", 0x3434),
    (b"bcachefs", 0xca45_1a4e),
    (b"zfs", 0x2fc1_2fc1),
    (b"udf", 0x1501_3346),
    (b"overlay", 0x794c_7630),
];

/// Whether the file system of this mountinfo type name keeps its files on
/// a disk ([`DISK_FILE_SYSTEMS`]).
pub fn disk_fs_type(name: &[u8]) -> bool {
    DISK_FILE_SYSTEMS.iter().any(|&(known, _)| known == name)
}

/// Whether the file system of this `statfs` magic number keeps its files
/// on a disk ([`DISK_FILE_SYSTEMS`]).
pub fn disk_fs_magic(magic: i64) -> bool {
    DISK_FILE_SYSTEMS.iter().any(|&(_, known)| known == magic)
}

/// Keep by mount: which syncs are eaten, by the mount of their file.
#[path = "durability/mount.rs"]
pub mod mount;

/// Which opens may lose a sync or direct flag: those the kernel would
/// accept as asked.
#[path = "durability/open.rs"]
pub mod open;

/// Whether a program about to be executed keeps the library, and where.
#[path = "durability/exec.rs"]
pub mod exec;

/// The inits whose program is judged in their place, and where in their
/// arguments it is.
#[path = "durability/init.rs"]
pub mod init;

/// Whose loader a `PT_INTERP` path names.
#[path = "durability/loader.rs"]
pub mod loader;

/// This machine's ELF `e_machine`.
#[path = "durability/machine.rs"]
pub mod machine;

/// The sanitizer runtimes that must come first in the library list.
#[path = "durability/sanitizer.rs"]
pub mod sanitizer;

/// The plain seccomp filter, built at compile time for both products.
#[path = "durability/plain.rs"]
pub mod plain;

/// io_uring submission entries: what one becomes under eatmydata.
#[path = "durability/sqe.rs"]
pub mod sqe;

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

    #[test]
    fn only_a_sync_that_reaches_a_disk_is_skipped() {
        let bad_range = Sync::Range {
            offset: -1,
            nbytes: 0,
            flags: 0,
        };
        assert_eq!(sync_verdict(Sync::File, true), Verdict::Skip);
        assert_eq!(sync_verdict(Sync::FileSystem, true), Verdict::Skip);
        assert_eq!(sync_verdict(bad_range, true), Verdict::Fail(libc::EINVAL));
        // The kernel's EBADF comes before its EINVAL: not ours to say.
        assert_eq!(sync_verdict(bad_range, false), Verdict::Kernel);
        assert_eq!(sync_verdict(Sync::File, false), Verdict::Kernel);
    }

    #[test]
    fn what_reaches_a_disk() {
        assert!(reaches_disk(Kind::Regular, true));
        assert!(reaches_disk(Kind::Directory, true));
        assert!(reaches_disk(Kind::BlockDevice, false));
        assert!(!reaches_disk(Kind::Regular, false));
        assert!(!reaches_disk(Kind::Other, true));
        assert!(disk_fs_type(b"ext4"));
        assert!(disk_fs_type(b"overlay"));
        assert!(!disk_fs_type(b"ext"));
        assert!(!disk_fs_type(b"tmpfs"));
        assert!(!disk_fs_type(b"fuse.sshfs"));
        assert!(!disk_fs_type(b"nfs4"));
        assert!(!disk_fs_type(b"nsfs"));
        assert!(disk_fs_magic(0xef53));
        assert!(disk_fs_magic(libc::XFS_SUPER_MAGIC));
        assert!(disk_fs_magic(libc::BTRFS_SUPER_MAGIC));
        assert!(disk_fs_magic(libc::OVERLAYFS_SUPER_MAGIC));
        assert!(!disk_fs_magic(libc::TMPFS_MAGIC));
        assert!(!disk_fs_magic(libc::PROC_SUPER_MAGIC));
        assert!(!disk_fs_magic(libc::NSFS_MAGIC));
        assert!(!disk_fs_magic(libc::FUSE_SUPER_MAGIC));
        assert!(!disk_fs_magic(0x1980_0202)); // mqueue
    }
}
