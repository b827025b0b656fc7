//! The carried library written out to a shared temporary place: the last
//! resort of a caller that is not root and has no placed copy it can use
//! (`cargo install` as a user, a copy of the command in an image). Root,
//! and the runtime, never come here (`mod.rs`).
//!
//! The places, in order: `$TMPDIR`, `/tmp`, `/var/tmp`, `/dev/shm`. One
//! suits when the rule of `trust.rs` holds for it and every folder above
//! it, a sticky folder such as `/tmp` allowed (each belongs to root or to
//! us, and no one else may rename what is in it); when every user can
//! traverse them all (a server that drops to another user must load the
//! library too); and when it is not mounted `noexec` (the loader cannot
//! map from there).
//!
//! In it, a folder `eatmydata-<uid>` of our own, mode 0755, holds
//! `libeatmydata-<hash>.so`, mode 0644. Anyone may make that name first
//! in a sticky folder: if it is not a real folder of ours that only we
//! can write, we use a private folder `eatmydata-<uid>.<random>` instead
//! (an earlier one of ours, or made now with a name no one can guess), so
//! a squatted name costs a line in `-v`, never the command. A file
//! already there is used only if it is a regular file, ours, writable by
//! us alone, and holds the carried bytes exactly; anything else is
//! replaced (`carried::write`).

use std::ffi::OsStr;
use std::fs::Permissions;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::{env, fs};

use super::at::{mkdir_at, noexec, open_at, random};
use super::carried;
use super::trust::{self, Folder, Shared, Trust};

/// The places to try after `$TMPDIR`, in order.
const PLACES: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];
/// How many private folders of ours an earlier run made to look at before
/// making one (a folder we cannot use, made mode 0755 again, is rare).
const PRIVATE_LOOKS: usize = 32;

/// The library written out, or found written.
#[derive(Debug, PartialEq)]
pub struct Written {
    pub path: PathBuf,
    /// By this run.
    pub written: bool,
    /// In a private folder, since `eatmydata-<uid>` was taken.
    pub private: bool,
}

/// The library as a file, or why each place was passed over.
pub fn write_out(trust: &Trust) -> Result<Written, Vec<(PathBuf, String)>> {
    let tmpdir = env::var_os("TMPDIR").filter(|dir| Path::new(dir).is_absolute());
    let places = tmpdir.map(PathBuf::from).into_iter();
    let places = places.chain(PLACES.iter().map(PathBuf::from));
    let mut refused = Vec::new();
    for place in places {
        if refused.iter().any(|(seen, _)| *seen == place) {
            continue;
        }
        match write_at(&place, trust) {
            Ok(found) => return Ok(found),
            Err(why) => refused.push((place, why)),
        }
    }
    Err(refused)
}

/// The library in `place`'s folder for the caller, checked or written now.
fn write_at(place: &Path, trust: &Trust) -> Result<Written, String> {
    let place = place.canonicalize().map_err(|e| plain(&e))?;
    let place = trust::open(&place, trust, Shared::Sticky, |folder| {
        if folder.meta.mode() & 0o001 == 0 {
            return Err(format!(
                "{} cannot be entered by other users",
                folder.path.display()
            ));
        }
        Ok(())
    })?;
    if noexec(&place.fd).map_err(|e| plain(&e))? {
        return Err("mounted noexec, which the dynamic loader cannot map from".into());
    }
    let usual = format!("eatmydata-{}", trust.uid);
    let (dir, private) = match own_folder(&place, OsStr::new(&usual), trust, true) {
        Ok(dir) => (dir, false),
        Err(_) => (private_folder(&place, &usual, trust)?, true),
    };
    let name = carried::file_name();
    let path = dir.path.join(&name);
    if carried::holds(&dir.fd, &name, trust) {
        return Ok(Written {
            path,
            written: false,
            private,
        });
    }
    carried::write(&dir.fd, &name).map_err(|e| plain(&e))?;
    Ok(Written {
        path,
        written: true,
        private,
    })
}

/// `name` in `place` as a folder of the caller's that only it can write,
/// made when `make` and missing, set to mode 0755 if a tight umask or a
/// hand made it otherwise (others must get in to load; no one else may
/// write).
fn own_folder(place: &Folder, name: &OsStr, trust: &Trust, make: bool) -> Result<Folder, String> {
    let mut dir = trust::open_child(place, name, make)?;
    if dir.meta.uid() != trust.uid {
        return Err(format!(
            "{} belongs to user {}, not to us",
            dir.path.display(),
            dir.meta.uid()
        ));
    }
    if dir.meta.mode() & 0o7777 != 0o755 {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
        let opened = open_at(&dir.fd, ".", flags, 0).map_err(|e| plain(&e))?;
        opened
            .set_permissions(Permissions::from_mode(0o755))
            .map_err(|e| plain(&e))?;
        dir.meta = opened.metadata().map_err(|e| plain(&e))?;
    }
    trust::check(&dir, trust, Shared::Refused)?;
    Ok(dir)
}

/// A private folder `usual.<random>` in `place`: one of ours an earlier
/// run made, else a new one, its name from `getrandom(2)`.
fn private_folder(place: &Folder, usual: &str, trust: &Trust) -> Result<Folder, String> {
    let prefix = format!("{usual}.");
    // `place` is trusted: what we list is what is there, and a name that is
    // ours cannot be taken from us (sticky, or writable by us alone).
    let earlier = fs::read_dir(&place.path).map_err(|e| plain(&e))?;
    // Only folders of ours count (lstat: others cannot make one that
    // is ours), so names planted by others cannot crowd ours out.
    let earlier = earlier
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .and_then(|n| n.strip_prefix(&prefix))
                .is_some_and(is_a_suffix)
        })
        .filter(|entry| {
            entry
                .metadata()
                .is_ok_and(|meta| meta.is_dir() && meta.uid() == trust.uid)
        })
        .map(|entry| entry.file_name())
        .take(PRIVATE_LOOKS);
    for name in earlier {
        if let Ok(dir) = own_folder(place, &name, trust, false) {
            return Ok(dir);
        }
    }
    for _ in 0..16 {
        let name = format!("{prefix}{}", suffix().map_err(|e| plain(&e))?);
        match mkdir_at(&place.fd, &name, 0o755) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(plain(&e)),
            Ok(()) => return own_folder(place, OsStr::new(&name), trust, false),
        }
    }
    Err("every private name tried was taken".into())
}

/// The letters a private folder's name ends with.
const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
const SUFFIX_LENGTH: usize = 12;

/// 12 letters of `ALPHABET`, 60 random bits.
fn suffix() -> io::Result<String> {
    let bytes = random(SUFFIX_LENGTH)?;
    Ok(bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect())
}

fn is_a_suffix(text: &str) -> bool {
    text.len() == SUFFIX_LENGTH && text.bytes().all(|b| ALPHABET.contains(&b))
}

fn plain(error: &io::Error) -> String {
    crate::error::plain(error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::carried::BYTES;
    use std::os::unix::fs::{DirBuilderExt, chown};

    /// A place of the test's own under /tmp, mode `mode`, removed on drop.
    struct Place(PathBuf);

    impl Place {
        fn new(label: &str, mode: u32) -> Place {
            let path = PathBuf::from(format!(
                "/tmp/eatmydata-unit-{label}-{}",
                std::process::id()
            ));
            let _ = fs::remove_dir_all(&path);
            fs::create_dir(&path).unwrap();
            fs::set_permissions(&path, Permissions::from_mode(mode)).unwrap();
            Place(path)
        }
    }

    impl Drop for Place {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn trust() -> Trust {
        Trust::caller()
    }

    #[test]
    fn written_once_then_found() {
        let place = Place::new("once", 0o755);
        let written = write_at(&place.0, &trust()).unwrap();
        assert!(written.written && !written.private);
        let path = written.path;
        assert_eq!(
            path.file_name().unwrap().to_str(),
            Some(&carried::file_name()[..])
        );
        assert_eq!(fs::read(&path).unwrap(), BYTES);
        let again = write_at(&place.0, &trust()).unwrap();
        assert_eq!((again.path, again.written), (path, false));
    }

    #[test]
    fn a_folder_closed_to_others_is_opened_for_them() {
        let place = Place::new("closed", 0o755);
        let folder = place.0.join(format!("eatmydata-{}", trust().uid));
        fs::DirBuilder::new().mode(0o700).create(&folder).unwrap();
        fs::set_permissions(&folder, Permissions::from_mode(0o700)).unwrap();
        write_at(&place.0, &trust()).unwrap();
        let mode = fs::metadata(&folder).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o755);
    }

    #[test]
    fn our_folder_that_others_may_write_is_closed_not_left() {
        let place = Place::new("wide", 0o755);
        let folder = place.0.join(format!("eatmydata-{}", trust().uid));
        fs::create_dir(&folder).unwrap();
        fs::set_permissions(&folder, Permissions::from_mode(0o777)).unwrap();
        let written = write_at(&place.0, &trust()).unwrap();
        assert!(!written.private, "{written:?}");
        let mode = fs::metadata(&folder).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o755);
    }

    #[test]
    fn a_place_anyone_may_rename_in_is_passed_over() {
        let open = Place::new("open", 0o777);
        let why = write_at(&open.0, &trust()).unwrap_err();
        assert_eq!(
            why,
            format!("{} is writable by every user", open.0.display())
        );
        assert!(!open.0.join(format!("eatmydata-{}", trust().uid)).exists());
        // The sticky bit, as /tmp has it, makes it safe.
        let sticky = Place::new("sticky", 0o1777);
        assert!(write_at(&sticky.0, &trust()).is_ok());
    }

    #[test]
    fn a_place_others_cannot_enter_is_passed_over() {
        let outer = Place::new("shut", 0o700);
        let inner = outer.0.join("inner");
        fs::create_dir(&inner).unwrap();
        let why = write_at(&inner, &trust()).unwrap_err();
        assert_eq!(
            why,
            format!("{} cannot be entered by other users", outer.0.display())
        );
    }

    #[test]
    fn a_squatted_name_gives_a_private_folder_used_again() {
        let place = Place::new("squatted", 0o1777);
        let usual = place.0.join(format!("eatmydata-{}", trust().uid));
        fs::create_dir(&usual).unwrap();
        chown(&usual, Some(trust().uid + 1), None).unwrap();
        // Private-looking names of someone else's, more than we look at.
        for n in 0..PRIVATE_LOOKS + 8 {
            let (high, low) = (ALPHABET[n / 32], ALPHABET[n % 32]);
            let suffix = format!("aaaaaaaaaa{}{}", char::from(high), char::from(low));
            let planted = format!("{}.{suffix}", usual.display());
            fs::create_dir(&planted).unwrap();
            chown(&planted, Some(trust().uid + 1), None).unwrap();
        }
        let first = write_at(&place.0, &trust()).unwrap();
        assert!(first.written && first.private, "{first:?}");
        let folder = first.path.parent().unwrap();
        let name = folder.file_name().unwrap().to_str().unwrap();
        let suffix = name.strip_prefix(&format!("eatmydata-{}.", trust().uid));
        assert!(suffix.is_some_and(is_a_suffix), "{name}");
        assert_eq!(fs::read(&first.path).unwrap(), BYTES);
        let again = write_at(&place.0, &trust()).unwrap();
        assert_eq!(
            again,
            Written {
                written: false,
                ..first
            }
        );
    }
}
