//! The file system: a root folder holding `disk` (the image, read and
//! written straight to the backing file) and `flushes` (the count of
//! `fsync` calls on `disk` answered so far, one decimal line).

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite,
    Request, WriteFlags,
};

use crate::flusher::Flusher;

const DISK: INodeNo = INodeNo(2);
const FLUSHES: INodeNo = INodeNo(3);
/// Nothing here changes behind the kernel's back but the count, which is
/// read with direct I/O: attributes may be kept for long.
const TTL: Duration = Duration::from_secs(3600);
/// What `stat` says of `flushes`: reads go past it (direct I/O) anyway.
const COUNT_SIZE: u64 = 4096;

pub struct Disk {
    backing: File,
    size: u64,
    flusher: Flusher,
    started: SystemTime,
}

impl Disk {
    /// Serves `backing` (which must exist, at its final size) with every
    /// `fsync` taking `latency`.
    pub fn open(backing: &Path, latency: Duration) -> io::Result<Disk> {
        let backing = OpenOptions::new().read(true).write(true).open(backing)?;
        let size = backing.metadata()?.len();
        Ok(Disk {
            backing,
            size,
            flusher: Flusher::start(latency),
            started: SystemTime::now(),
        })
    }

    fn attr(&self, ino: INodeNo) -> Option<FileAttr> {
        let (kind, perm, size, nlink) = match ino {
            INodeNo::ROOT => (FileType::Directory, 0o755, 0, 2),
            DISK => (FileType::RegularFile, 0o600, self.size, 1),
            FLUSHES => (FileType::RegularFile, 0o444, COUNT_SIZE, 1),
            _ => return None,
        };
        let t = self.started;
        Some(FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: t,
            mtime: t,
            ctime: t,
            crtime: t,
            kind,
            perm,
            nlink,
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }
}

fn errno(error: io::Error) -> Errno {
    Errno::from_i32(error.raw_os_error().unwrap_or(libc::EIO))
}

impl Filesystem for Disk {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let ino = match (parent, name.to_str()) {
            (INodeNo::ROOT, Some("disk")) => DISK,
            (INodeNo::ROOT, Some("flushes")) => FLUSHES,
            _ => return reply.error(Errno::ENOENT),
        };
        match self.attr(ino) {
            Some(attr) => reply.entry(&TTL, &attr, Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match ino {
            DISK => reply.opened(FileHandle(0), FopenFlags::empty()),
            FLUSHES => reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO),
            _ => reply.error(Errno::EISDIR),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        if ino == FLUSHES {
            let text = format!("{}\n", self.flusher.served());
            let start = usize::try_from(offset)
                .unwrap_or(usize::MAX)
                .min(text.len());
            let end = start.saturating_add(size as usize).min(text.len());
            return reply.data(&text.as_bytes()[start..end]);
        }
        let mut buffer = vec![0; size as usize];
        let mut done = 0;
        while done < buffer.len() {
            match self
                .backing
                .read_at(&mut buffer[done..], offset + done as u64)
            {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return reply.error(errno(error)),
            }
        }
        reply.data(&buffer[..done]);
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if ino != DISK {
            return reply.error(Errno::EBADF);
        }
        if offset.saturating_add(data.len() as u64) > self.size {
            return reply.error(Errno::ENOSPC);
        }
        match self.backing.write_all_at(data, offset) {
            Ok(()) => reply.written(data.len() as u32),
            Err(error) => reply.error(errno(error)),
        }
    }

    /// The device's flush: answered after the latency, by the flusher. The
    /// backing file itself is not synced: what a flush costs is what we
    /// were told, not what this machine's disk makes of it.
    fn fsync(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, _ds: bool, reply: ReplyEmpty) {
        if ino == DISK {
            self.flusher.flush(reply);
        } else {
            reply.ok();
        }
    }

    /// Discards and zeroed ranges (the loop driver's REQ_OP_DISCARD and
    /// WRITE_ZEROES) punch the same holes in the backing file.
    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        if ino != DISK {
            return reply.error(Errno::EOPNOTSUPP);
        }
        let (Ok(offset), Ok(length)) = (i64::try_from(offset), i64::try_from(length)) else {
            return reply.error(Errno::EINVAL);
        };
        // SAFETY: a valid descriptor we own and plain integer arguments.
        let done = unsafe { libc::fallocate(self.backing.as_raw_fd(), mode, offset, length) };
        if done == 0 {
            reply.ok();
        } else {
            reply.error(errno(io::Error::last_os_error()));
        }
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lo: LockOwner, r: ReplyEmpty) {
        r.ok();
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (INodeNo::ROOT, FileType::Directory, "."),
            (INodeNo::ROOT, FileType::Directory, ".."),
            (DISK, FileType::RegularFile, "disk"),
            (FLUSHES, FileType::RegularFile, "flushes"),
        ];
        for (index, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, index as u64 + 1, *kind, name) {
                break;
            }
        }
        reply.ok();
    }
}
