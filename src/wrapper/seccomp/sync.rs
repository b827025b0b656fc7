//! The sync calls, answered by the supervisor as the library answers
//! them, by one rule (`durability::sync_verdict`): `fsync`, `fdatasync`,
//! `syncfs` and `sync_file_range` on a descriptor that certainly reaches a
//! disk (`fdinfo.rs`) return 0 without running, or `sync_file_range`'s
//! `EINVAL` for a bad range; anything else (no such descriptor, a pipe, a
//! file of tmpfs or FUSE, a descriptor the supervisor may not look at)
//! runs in the kernel as made, which answers as it would without
//! eatmydata. `msync` with `MS_SYNC` gets the kernel's checks without the
//! flush where every shared file mapping in its range is on a disk.

use super::call::{Answer, Call};
use super::fdinfo::eatable;
use super::maps;
use super::mountinfo::{By, Mounts};
use crate::durability::{Sync, Verdict, sync_verdict};

/// fsync(2), fdatasync(2), syncfs(2), sync_file_range(2).
pub fn answer(call: &Call, mounts: &mut Mounts) -> Answer {
    let [fd, offset, nbytes, flags, ..] = call.args;
    let sync = match call.nr {
        libc::SYS_syncfs => Sync::FileSystem,
        libc::SYS_sync_file_range => Sync::Range {
            offset: offset as i64,
            nbytes: nbytes as i64,
            flags: flags as u32,
        },
        _ => Sync::File,
    };
    // An `int` in the kernel: the high half of the register is not read.
    let disk = eatable(call.caller, fd as i32, mounts);
    match sync_verdict(sync, disk) {
        Verdict::Skip => Answer::Value(0),
        Verdict::Fail(errno) => Answer::Error(errno),
        Verdict::Kernel => Answer::Continue,
    }
}

/// The system's page size (4K, 16K or 64K on aarch64).
fn page_size() -> u64 {
    // SAFETY: sysconf reads a constant.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).unwrap_or(4096)
}

/// What the kernel answers to msync(2) with `MS_SYNC` of `[start, end)`,
/// given `maps`, when it flushes only disks: `ENOMEM` for a gap (the
/// kernel flushes the mapped parts, then says so), 0 otherwise; `None`
/// when a shared file mapping in the range is not known to be on a disk.
fn msync_over(
    maps: &str,
    start: u64,
    end: u64,
    disk: &mut dyn FnMut((u32, u32)) -> Option<bool>,
) -> Option<Answer> {
    let mut covered = start;
    let mut gap = false;
    for mapping in maps.lines().filter_map(maps::parse) {
        let (from, to) = (mapping.from, mapping.to);
        if covered >= end {
            break;
        }
        if to <= covered {
            continue;
        }
        gap |= from > covered;
        if from >= end {
            break;
        }
        if mapping.shared && mapping.inode != 0 && disk(mapping.dev) != Some(true) {
            return None;
        }
        covered = to;
    }
    Some(if gap || covered < end {
        Answer::Error(libc::ENOMEM)
    } else {
        Answer::Value(0)
    })
}

/// msync(2) with `MS_SYNC` (the filter sends no other): `EINVAL` for
/// unknown or contradictory flags or an address inside a page, as the
/// kernel checks first; `MS_INVALIDATE` (whose `EBUSY` for locked pages
/// `maps` does not show) runs as made; else as `msync_over` says.
pub fn msync(call: &Call, mounts: &mut Mounts) -> Answer {
    // `int flags`: the kernel reads the low half of the register only.
    let [start, len, flags, ..] = call.args;
    let flags = u64::from(flags as u32);
    let page = page_size();
    let known = (libc::MS_ASYNC | libc::MS_INVALIDATE | libc::MS_SYNC) as u64;
    let both = (libc::MS_ASYNC | libc::MS_SYNC) as u64;
    if flags & !known != 0 || flags & both == both || start % page != 0 {
        return Answer::Error(libc::EINVAL);
    }
    if flags & libc::MS_INVALIDATE as u64 != 0 {
        return Answer::Continue;
    }
    // As the kernel computes it: a length that wraps to 0 is 0.
    let end = start.wrapping_add(len.wrapping_add(page - 1) & !(page - 1));
    if end < start {
        return Answer::Error(libc::ENOMEM);
    }
    if end == start {
        return Answer::Value(0);
    }
    let Ok(maps) = std::fs::read_to_string(call.caller.proc_path("maps")) else {
        return Answer::Continue;
    };
    let caller = call.caller;
    let mut disk = |(major, minor)| mounts.eatable(caller, By::Dev(major, minor));
    msync_over(&maps, start, end, &mut disk).unwrap_or(Answer::Continue)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
1000-3000 rw-s 00000000 08:01 12 /data/file
3000-4000 rw-p 00000000 00:00 0
6000-7000 rw-s 00000000 00:16 99 /dev/shm/x
";

    fn over(start: u64, end: u64) -> Option<Answer> {
        msync_over(MAPS, start, end, &mut |dev| Some(dev == (8, 1)))
    }

    #[test]
    fn msync_answers_like_the_kernel_or_not_at_all() {
        assert_eq!(over(0x1000, 0x4000), Some(Answer::Value(0)));
        assert_eq!(over(0x2000, 0x3000), Some(Answer::Value(0)));
        assert_eq!(over(0x1000, 0x5000), Some(Answer::Error(libc::ENOMEM)));
        assert_eq!(over(0x0, 0x2000), Some(Answer::Error(libc::ENOMEM)));
        // A shared mapping of tmpfs: not a disk, the kernel answers.
        assert_eq!(over(0x6000, 0x7000), None);
        assert_eq!(over(0x4000, 0x7000), None);
    }

    #[test]
    fn the_page_size_is_the_systems() {
        assert!(page_size() >= 4096);
        assert!(page_size().is_power_of_two());
    }
}
