//! The private files through which the library's processes tell the command
//! something (`--report`'s counts, `--sync-at-exit`'s file systems): made
//! empty before the command starts, read after it ends, then removed.
//!
//! The library only appends to a file that exists, so a stray variable never
//! makes it create one; making it is this side's job.

use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// An empty file, made with mode 0600 (only this user reads or writes it,
/// until a caller widens it: the flush list lets any user append), removed
/// when dropped.
pub struct PrivateFile(PathBuf);

impl PrivateFile {
    /// A new file `eatmydata-LABEL-PID-NANOS` in the temporary folder.
    pub fn create(label: &str) -> io::Result<PrivateFile> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!("eatmydata-{label}-{}-{nanos}", std::process::id());
        let path = std::env::temp_dir().join(name);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        Ok(PrivateFile(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// What the processes appended; nothing if the file went away.
    pub fn read(&self) -> String {
        fs::read_to_string(&self.0).unwrap_or_default()
    }
}

impl Drop for PrivateFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}
