//! Reading what an engine, a container or another user wrote (a bundle's
//! spec, the real runtime's state, an `exec` process file): through one
//! descriptor opened `O_NONBLOCK` (a FIFO never hangs the open), checked
//! with `fstat` to be a regular file, and read to a bound. The spec and
//! the state are opened `O_NOFOLLOW`: we made neither name. A process file
//! is the caller's own name for its process (`/dev/stdin`, `<(...)`, which
//! are links by nature) and may be a pipe, read as runc reads one: to its
//! end, waiting for a writer as runc's open would. A container's own
//! files (its programs) are reached in `rootfs.rs`, never opened unless
//! regular.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

pub mod rootfs;

/// The most a spec, or a state file holding one, may be.
pub const SPEC_LIMIT: u64 = 16 << 20;
/// The most a process file may be.
pub const PROCESS_LIMIT: u64 = 1 << 20;

/// Why a file was not read.
#[derive(Debug)]
pub enum Problem {
    Open(io::Error),
    /// A symbolic link where we follow none.
    Link,
    /// Not a regular file: what it is ("a FIFO").
    NotRegular(&'static str),
    /// Larger than the bound, in bytes.
    TooLarge(u64),
    Read(io::Error),
}

impl Problem {
    /// Whether the file is simply not there: a bundle without its spec is
    /// the real runtime's to report.
    pub fn is_missing(&self) -> bool {
        matches!(self, Problem::Open(e) if e.kind() == io::ErrorKind::NotFound
            || e.raw_os_error() == Some(libc::ENOTDIR))
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Open(e) | Problem::Read(e) => write!(f, "{}", crate::error::plain(e)),
            Problem::Link => write!(f, "a symbolic link, not followed"),
            Problem::NotRegular(what) => write!(f, "{what}, not a regular file"),
            Problem::TooLarge(limit) => write!(f, "larger than {} MiB", limit >> 20),
        }
    }
}

/// A file as read.
#[derive(Debug)]
pub struct Input {
    pub bytes: Vec<u8>,
    pub metadata: fs::Metadata,
    /// A pipe: what was read is gone from it.
    pub pipe: bool,
}

/// What a file that is not regular is, for a message.
fn kind(metadata: &fs::Metadata) -> &'static str {
    let kind = metadata.file_type();
    if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a file"
    }
}

fn open(path: &Path, follow: bool) -> Result<File, Problem> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    let file = OpenOptions::new().read(true).custom_flags(flags).open(path);
    file.map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) if !follow => Problem::Link,
        _ => Problem::Open(e),
    })
}

/// Reads at most `limit` bytes of `file`; more is an error.
fn bounded(file: &mut File, limit: u64) -> Result<Vec<u8>, Problem> {
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(Problem::Read)?;
    if bytes.len() as u64 > limit {
        return Err(Problem::TooLarge(limit));
    }
    Ok(bytes)
}

/// Reads the regular file at `path`, not following a link, to `limit`.
pub fn regular(path: &Path, limit: u64) -> Result<Input, Problem> {
    let mut file = open(path, false)?;
    let metadata = file.metadata().map_err(Problem::Read)?;
    if !metadata.is_file() {
        return Err(Problem::NotRegular(kind(&metadata)));
    }
    let bytes = bounded(&mut file, limit)?;
    Ok(Input {
        bytes,
        metadata,
        pipe: false,
    })
}

/// Reads a process file, a regular file or a pipe, to `limit`.
pub fn process(path: &Path, limit: u64) -> Result<Input, Problem> {
    let mut file = open(path, true)?;
    let metadata = file.metadata().map_err(Problem::Read)?;
    let pipe = metadata.file_type().is_fifo();
    if !metadata.is_file() && !pipe {
        return Err(Problem::NotRegular(kind(&metadata)));
    }
    if pipe {
        wait_for_writer(&file).map_err(Problem::Read)?;
        blocking(&file).map_err(Problem::Read)?;
    }
    let bytes = bounded(&mut file, limit)?;
    Ok(Input {
        bytes,
        metadata,
        pipe,
    })
}

/// For a named FIFO, waits as runc's blocking open would: until a writer
/// has come (data to read, or a writer come and gone). An anonymous pipe
/// (`<(...)`, a shell's `|`) has had its writer: no wait, as for runc.
fn wait_for_writer(file: &File) -> io::Result<()> {
    const PIPEFS_MAGIC: libc::c_long = 0x5049_5045;
    // SAFETY: an all-zero statfs is a valid value to be overwritten.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open for the call; `fs` is writable.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut fs) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if fs.f_type as libc::c_long == PIPEFS_MAGIC {
        return Ok(());
    }
    let mut poll = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd, for the call.
        match unsafe { libc::poll(&mut poll, 1, -1) } {
            -1 if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
            -1 => return Err(io::Error::last_os_error()),
            _ => return Ok(()),
        }
    }
}

/// Clears `O_NONBLOCK`: a pipe is then read to its writer's end.
fn blocking(file: &File) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL and F_SETFL on a descriptor open for the call.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
