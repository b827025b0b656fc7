//! One `syncfs(2)` per file system a step wrote to. Each target (a path
//! the engine put in the spec, resolved at `create`) is reached `O_PATH`
//! following no link (a link there now is the container's), and only a
//! folder or a regular file is opened for reading (through its
//! descriptor, never by its name again): a device node is never opened.
//! An overlay (a rootfs) is flushed through its upper folder, where its
//! writes are, so that a bind on the same file system as that folder costs
//! no second flush: file systems are counted by device, each flushed once.

use std::ffi::CString;
use std::fs::{self, File};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::mounts;
use crate::runtime::input::rootfs::find_without_links;

/// What a barrier did.
#[derive(Debug, Default, PartialEq)]
pub struct Flushed {
    /// File systems flushed: one `syncfs` each.
    pub flushed: u64,
    /// Targets that could not be opened or flushed, with why.
    pub failed: Vec<String>,
    pub took: Duration,
}

impl Flushed {
    /// The log's words for it.
    pub fn describe(&self, builder: &str) -> String {
        let mut text = format!(
            "build step ({builder}) ended: barrier, syncfs of {} file system{} in {} ms",
            self.flushed,
            if self.flushed == 1 { "" } else { "s" },
            self.took.as_millis()
        );
        if !self.failed.is_empty() {
            text += &format!("; not flushed: {}", self.failed.join(", "));
        }
        text
    }
}

fn open(path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The upper folder of the overlay at `path`, from the mounts we see.
fn upper(path: &File, host: &[mounts::Mount]) -> Option<PathBuf> {
    let dev = path.metadata().ok()?.dev();
    let device = (libc::major(dev), libc::minor(dev));
    let mount = host
        .iter()
        .find(|m| m.device == device && m.fstype == "overlay")?;
    let upper = mount
        .options
        .split(',')
        .find_map(|option| option.strip_prefix("upperdir="))?;
    Some(PathBuf::from(upper))
}

fn is_overlay(file: &File) -> bool {
    // SAFETY: an all-zero statfs is a valid value to be overwritten.
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a descriptor of ours and a statfs to fill.
    let done = unsafe { libc::fstatfs(file.as_raw_fd(), &mut stat) };
    // As u64: f_type is a signed long on glibc, an unsigned one on musl
    // (the released single file).
    done == 0 && stat.f_type as u64 == libc::OVERLAYFS_SUPER_MAGIC as u64
}

/// A descriptor for reading `path`, a folder or a regular file, reached
/// without following a link and opened without a second lookup of its
/// name.
fn readable(path: &Path) -> io::Result<File> {
    let at = find_without_links(path)?;
    let meta = at.metadata()?;
    if !meta.is_dir() && !meta.is_file() {
        return Err(io::Error::other("not a folder or a regular file"));
    }
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY;
    let reopened = open(
        Path::new(&format!("/proc/self/fd/{}", at.as_raw_fd())),
        flags,
    )?;
    Ok(File::from(reopened))
}

/// Flushes each file system of `targets` once.
pub fn flush(targets: &[PathBuf]) -> Flushed {
    let start = Instant::now();
    let host = mounts::parse(&fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());
    let mut done = Flushed::default();
    let mut seen = vec![];
    for target in targets {
        let file = readable(target).and_then(|file| match is_overlay(&file) {
            true => upper(&file, &host).map_or(Ok(file), |upper| readable(&upper)),
            false => Ok(file),
        });
        let synced = file.and_then(|file| {
            let dev = file.metadata()?.dev();
            if seen.contains(&dev) {
                return Ok(false);
            }
            seen.push(dev);
            // SAFETY: a descriptor of ours; syncfs touches no memory.
            match unsafe { libc::syncfs(file.as_raw_fd()) } {
                0 => Ok(true),
                _ => Err(io::Error::last_os_error()),
            }
        });
        match synced {
            Ok(true) => done.flushed += 1,
            Ok(false) => {}
            Err(e) => done.failed.push(format!(
                "{} ({})",
                target.display(),
                crate::error::plain(&e)
            )),
        }
    }
    done.took = start.elapsed();
    done
}
