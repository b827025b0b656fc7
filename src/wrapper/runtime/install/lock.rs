//! One installer at a time on a machine: an exclusive flock(2) on
//! `/var/lib/eatmydata/install.lock` of the host, a folder of ours (not
//! /var/lock, a link to /run/lock on most hosts, which the installer's
//! container would resolve in its own view). A second installer waits,
//! said, and then finds the first one's work done.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use super::Error;
use super::host::Host;
use super::state::FOLDER;

/// Held until dropped.
pub struct Lock(#[allow(dead_code)] File);

pub fn take(host: &Host) -> Result<Lock, Error> {
    let path = host.own_folder(FOLDER)?.join("install.lock");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(&path)
        .map_err(Error::io("open the lock", &path))?;
    let flock = |how| {
        // SAFETY: flock on a descriptor we own.
        unsafe { libc::flock(file.as_raw_fd(), how) }
    };
    if flock(libc::LOCK_EX | libc::LOCK_NB) != 0 {
        say!(
            "Another installer holds {}: waiting for it.",
            path.display()
        );
        if flock(libc::LOCK_EX) != 0 {
            return Err(Error::io("lock", &path)(std::io::Error::last_os_error()));
        }
    }
    Ok(Lock(file))
}
