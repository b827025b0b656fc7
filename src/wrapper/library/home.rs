//! Root's home (step 4 of the rule in `mod.rs`): a folder of root's that
//! every Linux host has, `/run/eatmydata` then `/var/lib/eatmydata`, or
//! `EATMYDATA_HOME` instead; made mode 0755 when missing, checked from `/`
//! down, never on a file system mounted `noexec`, holding
//! `libeatmydata-<sha256[..16]>.so` as the placed copy does. Root and the
//! runtime come here when no installed or placed copy can be used, so the
//! single file runs as root from `/tmp`, a user's `~/.cargo/bin` or a
//! runner's work folder.

use std::path::{Path, PathBuf};

use super::at::noexec;
use super::carried;
use super::place::made;
use super::trust::{self, Shared, Trust};

/// The copy in `home`, checked, or written now if missing or other bytes:
/// its path and whether this call wrote it.
pub fn get(home: &Path, trust: &Trust) -> Result<(PathBuf, bool), String> {
    let (Some(parent), Some(name)) = (home.parent(), home.file_name()) else {
        return Err(format!("{} names no folder", home.display()));
    };
    let above = trust::open(parent, trust, Shared::Refused, |_| Ok(()))?;
    let dir = made(&above, name, trust, true)?;
    if noexec(&dir.fd).map_err(|e| crate::error::plain(&e))? {
        return Err(format!(
            "{} is on a file system mounted noexec, which the dynamic loader cannot map from",
            dir.path.display()
        ));
    }
    let file = carried::file_name();
    let path = dir.path.join(&file);
    if carried::holds(&dir.fd, &file, trust) {
        return Ok((path, false));
    }
    carried::write(&dir.fd, &file)
        .map_err(|e| format!("{}: {}", path.display(), crate::error::plain(&e)))?;
    Ok((path, true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::carried::BYTES;
    use crate::library::trust::tests::Scratch;
    use std::fs;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn scratch(label: &str) -> Scratch {
        Scratch::new(&format!("home-{label}"))
    }

    #[test]
    fn made_then_written_once() {
        let above = scratch("once");
        let home = above.0.join("home");
        let trust = Trust::caller();
        let (path, written) = get(&home, &trust).unwrap();
        assert!(written);
        assert_eq!(path, home.join(carried::file_name()));
        assert_eq!(fs::read(&path).unwrap(), BYTES);
        let folder = fs::metadata(&home).unwrap();
        assert_eq!(folder.mode() & 0o7777, 0o755);
        assert_eq!(get(&home, &trust).unwrap(), (path, false));
    }

    #[test]
    fn a_home_others_may_write_is_refused() {
        let above = scratch("open");
        let home = above.0.join("home");
        fs::create_dir(&home).unwrap();
        fs::set_permissions(&home, fs::Permissions::from_mode(0o777)).unwrap();
        let why = get(&home, &Trust::caller()).unwrap_err();
        drop(above);
        assert_eq!(why, format!("{} is writable by every user", home.display()));
    }
}
