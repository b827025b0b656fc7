//! Finding the command: as `execvp(3)` does, in `PATH`, except that this
//! program itself is skipped, so that a link `dpkg -> eatmydata` placed early
//! in `PATH` runs the real `dpkg` found after it.

use std::env;
use std::ffi::{CString, OsStr};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// `PATH` when it is unset: glibc's `_CS_PATH`, as execvp uses.
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// A file's identity, to recognise ourselves behind any link.
fn identity(path: &Path) -> Option<(u64, u64)> {
    fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Whether `path` is a file the effective user may execute.
fn executable(path: &Path) -> bool {
    let Ok(path) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid C string; faccessat only reads it.
    unsafe { libc::faccessat(libc::AT_FDCWD, path.as_ptr(), libc::X_OK, libc::AT_EACCESS) == 0 }
}

/// The path to execute for `command`.
pub fn resolve(command: &OsStr) -> Result<PathBuf, Error> {
    if command.is_empty() {
        return Err(Error::NotFound(command.to_owned()));
    }
    if command.as_bytes().contains(&b'/') {
        // A path is taken as it is; execve reports what is wrong with it.
        return Ok(PathBuf::from(command));
    }
    // Found without /proc too (a chroot): a link that finds itself first
    // would execute itself forever.
    let us = crate::library::this_program().as_deref().and_then(identity);
    let path = env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    let mut denied = false;
    for dir in path.as_bytes().split(|&b| b == b':') {
        // An empty entry means the current folder.
        let dir = if dir.is_empty() {
            Path::new(".")
        } else {
            Path::new(OsStr::from_bytes(dir))
        };
        let candidate = dir.join(command);
        let Ok(metadata) = fs::metadata(&candidate) else {
            continue;
        };
        if us.is_some() && us == Some((metadata.dev(), metadata.ino())) {
            continue;
        }
        if metadata.is_file() && executable(&candidate) {
            return Ok(candidate);
        }
        denied = true;
    }
    if denied {
        Err(Error::CannotRun(
            command.to_owned(),
            io::Error::from_raw_os_error(libc::EACCES),
        ))
    } else {
        Err(Error::NotFound(command.to_owned()))
    }
}
