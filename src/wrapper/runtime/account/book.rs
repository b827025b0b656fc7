//! The machine-wide account: one record per line in
//! `/var/lib/eatmydata/account.jsonl` (under `EATMYDATA_HOME` when that
//! names root's home, or in the folder `EATMYDATA_ACCOUNT` names, for a
//! test's or an engine's own), appended under an exclusive
//! `flock(2)` of `account.lock` beside it, each record in one `write(2)`
//! on an `O_APPEND` descriptor.
//!
//! Nothing a crash or two deletes at once can do makes it unreadable: a
//! writer killed mid-record leaves a line without its end, which the next
//! writer closes with a newline before its own record, and which the
//! reader, parsing each line strictly, skips and counts. Bounded: past
//! [`CAP`] bytes the file becomes `account.1.jsonl` (the one before goes)
//! and a new one starts, so the account holds the last 4 to 8 MiB of
//! records. Every file is opened beside the folder's descriptor without
//! following a link, in a folder that belongs to root (or the caller) and
//! that no one else may write, and used only when it belongs to root (or
//! the caller) and no one else may write it.
//!
//! The lock is root's alone (mode 0600): no other user may open it, so
//! none may hold it. One left by an older runtime that others could open
//! (0644: `flock -x` by any user hung every delete) is replaced by a new
//! file, so that a descriptor opened before counts for nothing. And every
//! wait is bounded ([`WAIT`]): a lock held longer (a runtime stopped under
//! it) costs the record being written, never a delete's progress.

use std::ffi::CString;
use std::fs::{self, File};
use std::io::{self, Read as _, Write as _};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::record::{LINE_MAX, Record};

/// The variable naming another folder.
pub const VARIABLE: &str = "EATMYDATA_ACCOUNT";
const FILE: &str = "account.jsonl";
const OLDER: &str = "account.1.jsonl";
const LOCK: &str = "account.lock";
/// The lock's name while a new one is made, before it replaces the old.
const NEW_LOCK: &str = "account.lock.new";

/// The longest wait for the lock.
pub const WAIT: Duration = Duration::from_secs(1);

/// The size past which the file is rotated.
pub const CAP: u64 = 4 << 20;

/// The account's folder: `EATMYDATA_ACCOUNT`, else root's home's lasting
/// place (the last of [`crate::library::homes`]): `EATMYDATA_HOME` when
/// set, else `/var/lib/eatmydata`.
pub fn folder() -> PathBuf {
    std::env::var_os(VARIABLE)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| crate::library::homes().pop())
        .unwrap_or_default()
}

/// The account in a folder.
pub struct Book {
    dir: OwnedFd,
}

/// The exclusive lock, held while a record is written (and while a
/// container's folder is folded in, so that it is folded once).
pub struct Lock(#[allow(dead_code)] File);

/// What the account holds: its records, oldest first, and how many lines
/// were not records.
#[derive(Debug, Default)]
pub struct Read {
    pub records: Vec<Record>,
    pub unreadable: u64,
}

fn c_name(name: &str) -> CString {
    CString::new(name).unwrap_or_default()
}

/// Opens `path` as a folder without following a link at its end, and
/// checks that it belongs to root or to us and that no one else may write.
fn open_folder(path: &Path) -> io::Result<OwnedFd> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(c_path.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let meta = File::from(fd.try_clone()?).metadata()?;
    if !ours(meta.uid()) || meta.mode() & 0o022 != 0 {
        return Err(io::Error::other(format!(
            "{} belongs to another user or others may write it",
            path.display()
        )));
    }
    Ok(fd)
}

impl Book {
    /// The account in `path`, made (0755) if missing.
    pub fn open_or_make(path: &Path) -> io::Result<Book> {
        match fs::DirBuilder::new().mode(0o755).create(path) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        Ok(Book {
            dir: open_folder(path)?,
        })
    }

    /// The account in `path`, which must exist.
    pub fn open(path: &Path) -> io::Result<Book> {
        Ok(Book {
            dir: open_folder(path)?,
        })
    }

    /// Opens `name` in the folder without following a link.
    fn open_at(&self, name: &str, flags: libc::c_int, mode: libc::mode_t) -> io::Result<File> {
        let name = c_name(name);
        let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
        // SAFETY: a folder descriptor we own and a NUL-terminated name.
        let fd = unsafe { libc::openat(self.dir.as_raw_fd(), name.as_ptr(), flags, mode) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor just opened, owned by nothing else.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        if !ours(meta.uid()) || meta.mode() & 0o022 != 0 {
            return Err(io::Error::other(format!(
                "{} belongs to another user or others may write it",
                name.to_string_lossy()
            )));
        }
        Ok(file)
    }

    /// Takes the exclusive lock, waiting at most [`WAIT`].
    pub fn lock(&self) -> io::Result<Lock> {
        let mut file = self.open_at(LOCK, libc::O_RDWR | libc::O_CREAT, 0o600)?;
        if file.metadata()?.mode() & 0o077 != 0 {
            file = self.replace_lock()?;
        }
        flock(&file, libc::LOCK_EX)?;
        Ok(Lock(file))
    }

    /// A new lock of mode 0600 in place of one others could open: made
    /// beside it, then renamed over it.
    fn replace_lock(&self) -> io::Result<File> {
        let dir = self.dir.as_raw_fd();
        let new = c_name(NEW_LOCK);
        // SAFETY: a folder we hold and a NUL-terminated name; a leftover
        // of a run killed here may be there, or not.
        unsafe { libc::unlinkat(dir, new.as_ptr(), 0) };
        let flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
        let file = self.open_at(NEW_LOCK, flags, 0o600)?;
        // Not the umask's, whatever it is: 0600 exactly.
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
        let old = c_name(LOCK);
        // SAFETY: names in a folder we hold; renameat replaces the old lock.
        if unsafe { libc::renameat(dir, new.as_ptr(), dir, old.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(file)
    }

    /// `file`, readable by its owner alone: what each container ran, its
    /// image, its mounts are not every local user's to read (an account
    /// made before was 0644).
    fn private(&self, file: File) -> io::Result<File> {
        if file.metadata()?.mode() & 0o077 != 0 {
            file.set_permissions(fs::Permissions::from_mode(0o600))?;
        }
        Ok(file)
    }

    /// Appends `record`, under the lock: rotates a full file first, and
    /// ends a line a crash left open.
    pub fn append(&self, _lock: &Lock, record: &Record) -> io::Result<()> {
        let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT;
        let mut file = self.private(self.open_at(FILE, flags, 0o600)?)?;
        let mut size = file.metadata()?.len();
        if size >= CAP {
            let (from, to) = (c_name(FILE), c_name(OLDER));
            let dir = self.dir.as_raw_fd();
            // SAFETY: names in a folder we hold; renameat replaces OLDER.
            if unsafe { libc::renameat(dir, from.as_ptr(), dir, to.as_ptr()) } != 0 {
                return Err(io::Error::last_os_error());
            }
            file = self.private(self.open_at(FILE, flags, 0o600)?)?;
            size = file.metadata()?.len();
        }
        let mut bytes = Vec::with_capacity(LINE_MAX);
        let mut last = [b'\n'];
        if size > 0 {
            let reading = self.open_at(FILE, libc::O_RDONLY, 0)?;
            reading.read_exact_at(&mut last, size - 1)?;
        }
        if last != [b'\n'] {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(record.to_line().as_bytes());
        file.write_all(&bytes)
    }

    /// Reads the records (the rotated file's first), each file at most
    /// [`CAP`] and two records' bytes, each line parsed strictly; a line
    /// without its newline at the end is one a writer is writing, or
    /// never finished.
    pub fn read(&self) -> io::Result<Read> {
        // Shared, when it can be had within [`WAIT`] (a user may not open
        // it): else read as it is, where a rotation at that moment may
        // count a record twice, or not at all.
        let _shared = self
            .open_at(LOCK, libc::O_RDONLY, 0)
            .and_then(|lock| flock(&lock, libc::LOCK_SH).map(|()| lock));
        let mut read = Read::default();
        for name in [OLDER, FILE] {
            let file = match self.open_at(name, libc::O_RDONLY, 0) {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            let mut bytes = Vec::new();
            let bound = CAP + 2 * LINE_MAX as u64;
            file.take(bound).read_to_end(&mut bytes)?;
            read_lines(&bytes, &mut read);
        }
        Ok(read)
    }
}

/// Adds the records of `bytes` to `read`; every other line is unreadable.
fn read_lines(bytes: &[u8], read: &mut Read) {
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    // What follows the last newline: empty, or a line not (yet) ended.
    let open = lines.pop().unwrap_or_default();
    read.unreadable += u64::from(!open.is_empty());
    for line in lines.into_iter().filter(|line| !line.is_empty()) {
        match std::str::from_utf8(line).ok().and_then(Record::parse) {
            Some(record) => read.records.push(record),
            None => read.unreadable += 1,
        }
    }
}

/// Whether a file of `uid` may be trusted: root's, or ours.
fn ours(uid: u32) -> bool {
    // SAFETY: geteuid cannot fail and touches no memory.
    uid == 0 || uid == unsafe { libc::geteuid() }
}

/// Takes `how` of `file`'s lock, trying every few milliseconds for at
/// most [`WAIT`].
fn flock(file: &File, how: libc::c_int) -> io::Result<()> {
    let deadline = Instant::now() + WAIT;
    loop {
        // SAFETY: a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), how | libc::LOCK_NB) } == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Some(libc::EWOULDBLOCK) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("the account's lock is held past {} s", WAIT.as_secs()),
                ));
            }
            _ => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::tests::example;
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn folder(label: &str) -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("eatmydata-book-{label}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        path
    }

    #[test]
    fn records_append_and_read_back_and_a_torn_line_is_skipped() {
        let path = folder("torn");
        let book = Book::open_or_make(&path).unwrap();
        let lock = book.lock().unwrap();
        book.append(&lock, &example("a", 1)).unwrap();
        // A writer killed in the middle of its record.
        let torn = example("b", 2).to_line();
        let mut file = fs::OpenOptions::new()
            .append(true)
            .open(path.join(FILE))
            .unwrap();
        file.write_all(&torn.as_bytes()[..torn.len() / 2]).unwrap();
        drop(lock);
        let read = book.read().unwrap();
        assert_eq!(read.records, [example("a", 1)]);
        assert_eq!(read.unreadable, 1);
        let lock = book.lock().unwrap();
        book.append(&lock, &example("c", 3)).unwrap();
        drop(lock);
        let read = book.read().unwrap();
        assert_eq!(read.records, [example("a", 1), example("c", 3)]);
        assert_eq!(read.unreadable, 1, "the torn line, closed by the next");
        fs::remove_dir_all(&path).unwrap();
    }

    /// The account is its owner's to read alone (security review 3, issue
    /// 45: account.jsonl was world-readable): made 0600, and one an
    /// older runtime made 0644 made 0600 at the next record.
    #[test]
    fn the_account_is_readable_by_its_owner_alone() {
        let path = folder("private");
        let book = Book::open_or_make(&path).unwrap();
        let lock = book.lock().unwrap();
        book.append(&lock, &example("a", 1)).unwrap();
        let mode = |path: &Path| fs::metadata(path).unwrap().mode() & 0o777;
        assert_eq!(mode(&path.join(FILE)), 0o600);
        fs::set_permissions(path.join(FILE), fs::Permissions::from_mode(0o644)).unwrap();
        book.append(&lock, &example("b", 2)).unwrap();
        assert_eq!(mode(&path.join(FILE)), 0o600);
        drop(lock);
        fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn a_full_file_is_rotated_and_both_are_read() {
        let path = folder("rotate");
        let book = Book::open_or_make(&path).unwrap();
        let lock = book.lock().unwrap();
        book.append(&lock, &example("a", 1)).unwrap();
        let file = fs::OpenOptions::new()
            .append(true)
            .open(path.join(FILE))
            .unwrap();
        file.set_len(CAP).unwrap();
        book.append(&lock, &example("b", 2)).unwrap();
        drop(lock);
        assert_eq!(fs::metadata(path.join(OLDER)).unwrap().len(), CAP);
        let read = book.read().unwrap();
        assert_eq!(read.records, [example("a", 1), example("b", 2)]);
        // The NULs that padded the old file: one unended line.
        assert_eq!(read.unreadable, 1);
        fs::remove_dir_all(&path).unwrap();
    }

    /// The lock is root's alone; one others could open (an older
    /// runtime's 0644) is replaced, so a descriptor opened before (a user's
    /// `flock -x`) holds nothing; a lock held past [`WAIT`] is an error.
    #[test]
    fn the_lock_is_root_s_alone_and_every_wait_is_bounded() {
        let path = folder("lock");
        let book = Book::open_or_make(&path).unwrap();
        fs::write(path.join(LOCK), "").unwrap();
        fs::set_permissions(path.join(LOCK), fs::Permissions::from_mode(0o644)).unwrap();
        let theirs = File::open(path.join(LOCK)).unwrap();
        flock(&theirs, libc::LOCK_EX).unwrap();
        let start = Instant::now();
        let lock = book.lock().unwrap();
        assert!(start.elapsed() < WAIT, "waited on the replaced lock");
        let meta = fs::metadata(path.join(LOCK)).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert!(!path.join(NEW_LOCK).exists());
        // Held (another open of it, as another process's): bounded.
        let start = Instant::now();
        let error = book.lock().err().unwrap();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut, "{error}");
        assert!(start.elapsed() >= WAIT && start.elapsed() < 2 * WAIT);
        // A reader does not wait past it either, and reads.
        book.append(&lock, &example("a", 1)).unwrap();
        let start = Instant::now();
        assert_eq!(book.read().unwrap().records, [example("a", 1)]);
        assert!(start.elapsed() < 2 * WAIT);
        drop(lock);
        // A file of the account another user owns, or may write: refused.
        std::os::unix::fs::chown(path.join(FILE), Some(65534), None).unwrap();
        assert!(book.read().is_err());
        let lock = book.lock().unwrap();
        assert!(book.append(&lock, &example("b", 2)).is_err());
        std::os::unix::fs::chown(path.join(FILE), Some(0), None).unwrap();
        fs::set_permissions(path.join(FILE), fs::Permissions::from_mode(0o666)).unwrap();
        assert!(book.append(&lock, &example("b", 2)).is_err());
        fs::remove_dir_all(&path).unwrap();
    }

    #[test]
    fn a_folder_others_may_write_or_a_link_is_refused() {
        let path = folder("open");
        fs::create_dir(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(Book::open(&path).is_err());
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        let book = Book::open(&path).unwrap();
        let elsewhere = folder("elsewhere");
        fs::write(&elsewhere, "").unwrap();
        std::os::unix::fs::symlink(&elsewhere, path.join(FILE)).unwrap();
        let lock = book.lock().unwrap();
        assert!(book.append(&lock, &example("a", 1)).is_err());
        assert_eq!(fs::read(&elsewhere).unwrap(), b"");
        let link = path.with_extension("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(Book::open(&link).is_err());
        for gone in [&path, &elsewhere, &link] {
            let _ = fs::remove_dir_all(gone);
            let _ = fs::remove_file(gone);
        }
    }
}
