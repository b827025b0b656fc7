//! The engine's file on disk: read whole but bounded, shown as a listing
//! of what changes, and replaced in one rename, its mode and owner kept
//! and the old one copied beside it first; or removed, its backup kept.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use similar::TextDiff;

use super::Error;

/// What the backup's name adds to the file's.
const BACKUP_SUFFIX: &str = ".bak-eatmydata";

/// The most any file `configure` reads may hold: an engine's config is a
/// few kilobytes.
pub const MOST: u64 = 1 << 20;

/// The file's text, or `None` when there is no file. Opened without
/// blocking (a FIFO answers at once) and read only when it is a regular
/// file of at most [`MOST`] bytes; `Error::NotAFile` otherwise.
pub fn read(path: &Path) -> Result<Option<String>, Error> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    let bytes = match file.and_then(|file| bounded(file, MOST)) {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(what)) => {
            return Err(Error::NotAFile {
                path: path.into(),
                what,
            });
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(Error::Io {
                doing: "read",
                path: path.into(),
                error,
            });
        }
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| Error::Unparsable {
            file: path.into(),
            why: "it is not UTF-8 text".into(),
        })
}

/// The bytes of `file` when it is a regular file of at most `most`
/// bytes; else what it is instead (`Ok(Err)`).
pub fn bounded(file: File, most: u64) -> io::Result<Result<Vec<u8>, String>> {
    let meta = file.metadata()?;
    let kind = meta.file_type();
    let what = if kind.is_file() {
        None
    } else if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_dir() {
        Some("a folder")
    } else if kind.is_char_device() || kind.is_block_device() {
        Some("a device")
    } else if kind.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    };
    if let Some(what) = what {
        return Ok(Err(format!("it is {what}, not a regular file")));
    }
    let mut bytes = Vec::new();
    file.take(most + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > most {
        return Ok(Err(format!("it holds more than {most} bytes")));
    }
    Ok(Ok(bytes))
}

/// A unified diff of `old` to `new`, named by `path`, the new side's
/// name followed by `(label)`.
pub fn listing(path: &Path, old: &str, new: &str, label: &str) -> String {
    let name = path.display().to_string();
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .header(&name, &format!("{name} ({label})"))
        .to_string()
}

/// Puts `contents` in place of the file at `path` (through a link, the
/// file it names), with one rename in its folder; an existing file, whose
/// bytes are `old`, is copied to its backup first, whose path is
/// returned. A missing file is made, and its folder.
pub fn replace(path: &Path, old: Option<&[u8]>, contents: &[u8]) -> Result<Option<PathBuf>, Error> {
    let existed = old.is_some();
    let io = |doing, path: &Path| {
        let path = path.to_path_buf();
        move |error| Error::Io { doing, path, error }
    };
    let target = if existed {
        fs::canonicalize(path).map_err(io("find", path))?
    } else {
        path.to_path_buf()
    };
    let Some(folder) = target.parent().filter(|f| !f.as_os_str().is_empty()) else {
        return Err(Error::Usage(format!(
            "configure: {} names no file in a folder",
            path.display()
        )));
    };
    fs::create_dir_all(folder).map_err(io("make the folder", folder))?;
    let owner = match fs::metadata(&target) {
        Ok(meta) => Some(meta),
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(error) => return Err(io("read", &target)(error)),
    };
    let backup = match (&owner, old) {
        (Some(meta), Some(old)) => {
            let backup = backup_of(&target);
            write_renamed(&backup, old, Some(meta), 0o644).map_err(io("write", &backup))?;
            Some(backup)
        }
        _ => None,
    };
    write_renamed(&target, contents, owner.as_ref(), 0o644).map_err(io("write", &target))?;
    Ok(backup)
}

/// Removes the file at `path` (through a link, the file it names) whose
/// bytes are `old`, copying them to its backup first, whose path is
/// returned.
pub fn remove(path: &Path, old: &[u8]) -> Result<PathBuf, Error> {
    let io = |doing, path: &Path| {
        let path = path.to_path_buf();
        move |error| Error::Io { doing, path, error }
    };
    let target = fs::canonicalize(path).map_err(io("find", path))?;
    let meta = fs::metadata(&target).map_err(io("read", &target))?;
    let backup = backup_of(&target);
    write_renamed(&backup, old, Some(&meta), 0o644).map_err(io("write", &backup))?;
    fs::remove_file(&target).map_err(io("remove", &target))?;
    if let Some(folder) = target.parent() {
        File::open(folder)
            .and_then(|folder| folder.sync_all())
            .map_err(io("write", folder))?;
    }
    Ok(backup)
}

fn backup_of(target: &Path) -> PathBuf {
    let mut name = target.as_os_str().to_owned();
    name.push(BACKUP_SUFFIX);
    PathBuf::from(name)
}

/// Writes `contents` to a new file beside `path` with `like`'s mode and
/// owner (`mode` and ours for a new file), flushes it, and renames it over
/// `path`; the temporary file goes on failure. The one atomic writer of
/// `configure` and the node installer (engine files, the command copied).
pub fn write_renamed(
    path: &Path,
    contents: &[u8],
    like: Option<&fs::Metadata>,
    mode: u32,
) -> io::Result<()> {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".eatmydata-{}.tmp", std::process::id()));
    let temp = PathBuf::from(name);
    let written = (|| {
        // One of ours left by a run that was killed.
        let _ = fs::remove_file(&temp);
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&temp)?;
        file.write_all(contents)?;
        match like {
            Some(meta) => {
                std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()))?;
                file.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))?;
            }
            None => file.set_permissions(fs::Permissions::from_mode(mode))?,
        }
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
        return written;
    }
    // The rename lasts once the folder is on the disk too.
    if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
        File::open(folder)?.sync_all()?;
    }
    Ok(())
}
