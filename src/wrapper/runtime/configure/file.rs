//! The engine's file on disk: read whole, shown as a listing of what
//! changes, and replaced in one rename, its mode and owner kept and the
//! old one copied beside it first.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use similar::TextDiff;

use super::Error;

/// What the backup's name adds to the file's.
const BACKUP_SUFFIX: &str = ".bak-eatmydata";

/// The file's text, or `None` when there is no file.
pub fn read(path: &Path) -> Result<Option<String>, Error> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| Error::Unparsable {
                file: path.into(),
                why: "it is not UTF-8 text".into(),
            }),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(Error::Io {
            doing: "read",
            path: path.into(),
            error,
        }),
    }
}

/// A unified diff of `old` to `new`, named by `path`.
pub fn listing(path: &Path, old: &str, new: &str) -> String {
    let name = path.display().to_string();
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .header(&name, &format!("{name} (with {})", super::REGISTERED))
        .to_string()
}

/// Puts `contents` in place of the file at `path` (through a link, the
/// file it names), with one rename in its folder; an existing file
/// (`existed`) is copied to its backup first, whose path is returned. A
/// missing file is made, and its folder.
pub fn replace(path: &Path, existed: bool, contents: &[u8]) -> Result<Option<PathBuf>, Error> {
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
    let backup = match &owner {
        Some(meta) => {
            let mut name = target.clone().into_os_string();
            name.push(BACKUP_SUFFIX);
            let backup = PathBuf::from(name);
            let old = fs::read(&target).map_err(io("read", &target))?;
            write_renamed(&backup, &old, Some(meta)).map_err(io("write", &backup))?;
            Some(backup)
        }
        None => None,
    };
    write_renamed(&target, contents, owner.as_ref()).map_err(io("write", &target))?;
    Ok(backup)
}

/// Writes `contents` to a new file beside `path` with `like`'s mode and
/// owner (0644 and ours for a new file), flushes it, and renames it over
/// `path`; the temporary file goes on failure.
fn write_renamed(path: &Path, contents: &[u8], like: Option<&fs::Metadata>) -> io::Result<()> {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".eatmydata-{}.tmp", std::process::id()));
    let temp = PathBuf::from(name);
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(contents)?;
        match like {
            Some(meta) => {
                std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()))?;
                file.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))?;
            }
            None => file.set_permissions(fs::Permissions::from_mode(0o644))?,
        }
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
        return written;
    }
    // The rename lasts once the folder is on the disk too.
    if let Some(folder) = path.parent() {
        File::open(folder)?.sync_all()?;
    }
    Ok(())
}
