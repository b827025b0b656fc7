//! Reading a spec file (bounded, a regular file, no link followed:
//! `input.rs`) and writing it back atomically: a temporary file in the
//! same folder, with the original's mode and owner, renamed over it.
//! A reader (the real runtime) sees the old spec or the new one, never a
//! half. Not flushed: a bundle lives as long as its container, in a
//! runtime folder that a crash empties anyway.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::input::{self, Input};

/// A spec file as read: its bytes, parsed, and what to keep of the file.
pub struct SpecFile {
    pub path: PathBuf,
    pub value: Value,
    pretty: bool,
    metadata: fs::Metadata,
}

/// Why a spec file could not be used.
#[derive(Debug)]
pub enum Problem {
    Read(input::Problem),
    Parse(serde_json::Error),
    /// Parsed, but not a shape the edit knows: why.
    Edit(String),
    Write(io::Error),
}

/// Reads and parses `path`; `None` when there is no file there.
pub fn read(path: &Path) -> Result<Option<SpecFile>, Problem> {
    let Input {
        bytes, metadata, ..
    } = match input::regular(path, input::SPEC_LIMIT) {
        Ok(input) => input,
        Err(problem) if problem.is_missing() => return Ok(None),
        Err(problem) => return Err(Problem::Read(problem)),
    };
    let value = serde_json::from_slice(&bytes).map_err(Problem::Parse)?;
    Ok(Some(SpecFile {
        path: path.to_owned(),
        value,
        // Written back in the layout it came in: indented or on one line.
        pretty: bytes.contains(&b'\n'),
        metadata,
    }))
}

impl SpecFile {
    /// Replaces the file with `self.value`.
    pub fn write(&self) -> Result<(), Problem> {
        let bytes = if self.pretty {
            serde_json::to_vec_pretty(&self.value)
        } else {
            serde_json::to_vec(&self.value)
        };
        let bytes = bytes.map_err(|e| Problem::Write(e.into()))?;
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        let temp = self
            .path
            .with_file_name(format!(".{name}.eatmydata-{}", std::process::id()));
        let written = self.write_temp(&temp, &bytes);
        let renamed = written.and_then(|()| fs::rename(&temp, &self.path));
        if renamed.is_err() {
            let _ = fs::remove_file(&temp);
        }
        renamed.map_err(Problem::Write)
    }

    fn write_temp(&self, temp: &Path, bytes: &[u8]) -> io::Result<()> {
        let mode = self.metadata.permissions().mode() & 0o7777;
        let mut file: File = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(temp)?;
        let (uid, gid) = (self.metadata.uid(), self.metadata.gid());
        // SAFETY: geteuid and getegid cannot fail and touch no memory.
        if (uid, gid) != unsafe { (libc::geteuid(), libc::getegid()) } {
            std::os::unix::fs::fchown(&file, Some(uid), Some(gid))?;
        }
        file.set_permissions(fs::Permissions::from_mode(mode))?;
        file.write_all(bytes)
    }
}
