//! Each container's own report file, on the host: a tmpfs of
//! [`SIZE`] mounted by the runtime at `/run/eatmydata/containers/ID`
//! (`EATMYDATA_HOME/containers/ID` when that names root's home: [`base`]),
//! holding `report` (mode 0666: a container's processes write it as
//! whatever user they run as), which the spec binds into the container
//! (`edit/account.rs`), and `container.json`, what the runtime knew at
//! `create` (the container's name and image, its real runtime's state
//! folder, the account it goes to), which the container never sees. The
//! tmpfs's root is root's alone (0700): on the host no other user reaches
//! the report (to forge a record), while the container writes it through
//! its bind, which the real runtime opens as root.
//!
//! What the container writes is its input: a container that fills its
//! file fills its own small tmpfs and nothing else; at `delete` the file is
//! read without following a link, at most [`READ_MAX`] bytes, each line
//! parsed strictly by the library's own parser (`protocol.rs`), and what is
//! not a report line is counted, never used. Folding a folder into the
//! account, unmounting and removing it happen under the account's lock, so
//! that two deletes (or a delete and a sweep) fold it once.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs::{self, File};
use std::io::{self, Read as _, Write as _};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::book::Book;
use super::by_mount::{Noted, by_mount};
use super::record::{self, PLACES_MAX, Place, Record};
use super::time;
use crate::mounts::{self, Device};
use crate::protocol::{self, Counts, SKIPS};

/// Where the containers' folders are: `containers/` in root's home's
/// run-time place (the first of [`crate::library::homes`]),
/// `/run/eatmydata/containers` unless `EATMYDATA_HOME` names another.
pub fn base() -> PathBuf {
    let homes = crate::library::homes();
    homes
        .first()
        .cloned()
        .unwrap_or_default()
        .join("containers")
}
/// The report file's name in a folder.
pub const REPORT: &str = "report";
const META: &str = "container.json";
/// The runtime's own file of a container's build-step barriers: one line
/// of flushes per barrier. Never bound into the container.
const BARRIER: &str = "barrier";
/// The most bytes of it read.
const BARRIER_MAX: u64 = 16 * 1024;
/// The size of each container's tmpfs.
pub const SIZE: &str = "256k";
/// The most bytes of a report file read.
pub const READ_MAX: u64 = 512 * 1024;
/// The most bytes of `container.json` read.
const META_MAX: u64 = 16 * 1024;
/// A folder whose container is gone is swept only once it is this old, so
/// that a container being created is never taken for one gone.
const SWEEP_AGE: i64 = 120;
/// The most folders one sweep folds or removes.
const SWEEP_MAX: usize = 64;

/// What the runtime knows of a container at `create`.
#[derive(Debug, PartialEq)]
pub struct Meta {
    pub id: String,
    pub name: String,
    pub image: String,
    /// The real runtime's state folder, where `ID/` is while it exists.
    pub root: PathBuf,
    /// The account's folder.
    pub account: PathBuf,
    pub created: i64,
    /// Its rootfs and binds, by device (`mounts.rs`).
    pub mounts: Noted,
    /// The paths whose mounts keep their syncs (`edit/keep.rs`), as
    /// named in its `EATMYDATA_KEEP`; none in an older runtime's file.
    pub keeps: Vec<String>,
    /// A list of its that could not be read (so every sync is kept), in a
    /// user's words (`edit/keep.rs`).
    pub unread: Option<String>,
}

impl Meta {
    fn to_json(&self) -> String {
        json!({
            "id": self.id, "name": self.name, "image": self.image,
            "root": self.root.to_string_lossy(), "account": self.account.to_string_lossy(),
            "created": self.created,
            "keeps": self.keeps,
            "unread": self.unread,
            "mounts": self.mounts.iter().map(|(destination, (major, minor))| {
                json!([destination, format!("{major}:{minor}")])
            }).collect::<Vec<_>>(),
        })
        .to_string()
    }

    fn parse(text: &str) -> Option<Meta> {
        let value: Value = serde_json::from_str(text).ok()?;
        let text = |key: &str| Some(value.get(key)?.as_str()?.to_owned());
        Some(Meta {
            id: text("id")?,
            name: text("name")?,
            image: text("image")?,
            root: text("root")?.into(),
            account: text("account")?.into(),
            created: value.get("created")?.as_i64()?,
            keeps: value
                .get("keeps")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|path| Some(record::bounded(path.as_str()?)))
                .take(PLACES_MAX)
                .collect(),
            unread: value
                .get("unread")
                .and_then(Value::as_str)
                .map(record::bounded),
            // An older runtime's file has none.
            mounts: value
                .get("mounts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|pair| {
                    let destination = pair.get(0)?.as_str()?.to_owned();
                    let (major, minor) = pair.get(1)?.as_str()?.split_once(':')?;
                    Some((destination, (major.parse().ok()?, minor.parse().ok()?)))
                })
                .collect(),
        })
    }
}

/// Whether `id` may name a folder: runc's own rule for ids (letters,
/// digits, `_+-.`), not starting with a dot, at most 128 bytes.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_+-.".contains(&b))
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// Makes `path` a folder of `mode` if missing; then checks, without
/// following a link, that it is a folder of root's that no one else may
/// write.
fn root_folder(path: &Path, mode: u32) -> io::Result<()> {
    match fs::DirBuilder::new().mode(mode).create(path) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    let meta = fs::symlink_metadata(path)?;
    if !meta.is_dir() || meta.uid() != 0 || meta.mode() & 0o022 != 0 {
        return Err(io::Error::other(format!(
            "{} is not a folder of root's that only root may write",
            path.display()
        )));
    }
    Ok(())
}

/// Opens `name` under the folder `dir` without following a link.
pub(super) fn open_in(dir: &Path, name: &str, flags: libc::c_int) -> io::Result<File> {
    let path = c_path(&dir.join(name))?;
    let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
    // SAFETY: a NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(path.as_ptr(), flags, 0o600) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

/// Reads at most `max` bytes of a regular file.
pub(super) fn read_bounded(file: File, max: u64) -> io::Result<Vec<u8>> {
    if !file.metadata()?.is_file() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Makes the folder of container `meta.id` under `base`: its tmpfs, its
/// `container.json` and an empty `report`. Returns the report's host path.
/// A folder left by an earlier container of the same id is folded first.
pub fn make(base: &Path, meta: &Meta) -> io::Result<PathBuf> {
    if !valid_id(&meta.id) {
        return Err(io::Error::other("an id that cannot name a folder"));
    }
    if let Some(parent) = base.parent() {
        root_folder(parent, 0o755)?;
    }
    root_folder(base, 0o711)?;
    let folder = base.join(&meta.id);
    if fs::symlink_metadata(&folder).is_ok() {
        fold(base, &meta.id)?;
    }
    fs::DirBuilder::new().mode(0o700).create(&folder)?;
    let options = CString::new(format!("size={SIZE},nr_inodes=16,mode=0700")).unwrap_or_default();
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    let target = c_path(&folder)?;
    // SAFETY: NUL-terminated strings; a tmpfs on a folder we just made.
    let mounted = unsafe {
        libc::mount(
            c"eatmydata".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            flags,
            options.as_ptr().cast(),
        )
    };
    if mounted != 0 {
        let error = io::Error::last_os_error();
        let _ = fs::remove_dir(&folder);
        return Err(error);
    }
    let filled = (|| {
        let mut file = open_in(&folder, META, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL)?;
        file.write_all(meta.to_json().as_bytes())?;
        let report = open_in(
            &folder,
            REPORT,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
        )?;
        // Not the umask's: every user of the container may append.
        report.set_permissions(fs::Permissions::from_mode(0o666))
    })();
    if let Err(error) = filled {
        remove(&folder);
        return Err(error);
    }
    Ok(folder.join(REPORT))
}

/// Adds a barrier's `flushes` to container `id`'s folder under `base`, if
/// it has one (a container of ours, not folded yet).
pub fn add_barrier(base: &Path, id: &str, flushes: u64) -> io::Result<()> {
    if !valid_id(id) {
        return Ok(());
    }
    let folder = base.join(id);
    if fs::symlink_metadata(folder.join(META)).is_err() {
        return Ok(());
    }
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND;
    let mut file = open_in(&folder, BARRIER, flags)?;
    file.write_all(format!("{flushes}\n").as_bytes())
}

/// The flushes of the barrier file's whole lines.
fn barriers(bytes: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(bytes);
    let whole = text.rsplit_once('\n').map_or("", |(whole, _)| whole);
    whole
        .lines()
        .filter_map(|line| line.parse::<u64>().ok())
        .fold(0, u64::saturating_add)
}

/// Unmounts a container's tmpfs and removes its folder.
fn remove(folder: &Path) {
    if let Ok(target) = c_path(folder) {
        // SAFETY: a NUL-terminated path; a detach touches no memory of ours.
        unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH | libc::UMOUNT_NOFOLLOW) };
    }
    let _ = fs::remove_dir(folder);
}

/// Folds container `id`'s folder under `base` into its account and
/// removes it: the record written, or `None` when there was no folder (not
/// a container of ours, or folded already).
pub fn fold(base: &Path, id: &str) -> io::Result<Option<Record>> {
    if !valid_id(id) {
        return Ok(None);
    }
    let folder = base.join(id);
    let meta = match open_in(&folder, META, libc::O_RDONLY) {
        Ok(file) => read_bounded(file, META_MAX)?,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
            // Gone, or a folder never filled: nothing to count.
            if fs::symlink_metadata(&folder).is_ok_and(|m| m.is_dir()) {
                remove(&folder);
            }
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let meta = std::str::from_utf8(&meta)
        .ok()
        .and_then(Meta::parse)
        .ok_or_else(|| io::Error::other(format!("{} is not ours", folder.join(META).display())))?;
    // An account that cannot be written costs the record, never the
    // folder: a tmpfs per container must not pile up.
    let opened = Book::open_or_make(&meta.account).and_then(|book| {
        let lock = book.lock()?;
        Ok((book, lock))
    });
    let (book, lock) = match opened {
        Ok(opened) => opened,
        Err(error) => {
            remove(&folder);
            return Err(error);
        }
    };
    // Another delete or sweep may have folded it while we waited.
    if fs::symlink_metadata(folder.join(META)).is_err() {
        return Ok(None);
    }
    let report = match open_in(&folder, REPORT, libc::O_RDONLY) {
        Ok(file) => read_bounded(file, READ_MAX).unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    let host = mounts::parse(&fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());
    let mut record = record_of(&meta, &report, time::now(), &host);
    record.barrier = match open_in(&folder, BARRIER, libc::O_RDONLY) {
        Ok(file) => barriers(&read_bounded(file, BARRIER_MAX).unwrap_or_default()),
        Err(_) => 0,
    };
    let appended = book.append(&lock, &record);
    remove(&folder);
    appended.map(|()| Some(record))
}

/// The record of a container from what it wrote (`report`, bounded), as
/// the host's mounts (`host`) name its file systems.
pub fn record_of(meta: &Meta, report: &[u8], ended: i64, host: &[mounts::Mount]) -> Record {
    let mut skips: Counts = [0; SKIPS.len()];
    let (mut processes, mut unreadable, mut unnamed) = (0u64, 0u64, 0u64);
    let mut on: BTreeMap<Device, u64> = BTreeMap::new();
    // As the container saw them, for the account by mount.
    let mut seen: Vec<(Device, u64)> = vec![];
    let (mut kept, mut kept_unnamed): (Vec<(Device, u64)>, u64) = (vec![], 0);
    // The runtime's reading of the lists, else the first the library's
    // lines name (an entry that names no mount, found inside).
    let mut unread = meta.unread.clone();
    let mut lines: Vec<&[u8]> = report.split(|&b| b == b'\n').collect();
    // After the last newline: nothing, or a line cut short.
    let open = lines.pop().unwrap_or_default();
    unreadable += u64::from(!open.is_empty());
    for line in lines {
        let parsed = std::str::from_utf8(line)
            .ok()
            .and_then(protocol::parse_report);
        let Some(line) = parsed else {
            unreadable = unreadable.saturating_add(1);
            continue;
        };
        processes = processes.saturating_add(1);
        for (sum, count) in skips.iter_mut().zip(line.counts) {
            *sum = sum.saturating_add(count);
        }
        for &(device, count) in line.flushes.on() {
            seen.push((device, count));
            let device = beneath(host, device);
            let sum = on.entry(device).or_default();
            *sum = sum.saturating_add(count);
        }
        unnamed = unnamed.saturating_add(line.flushes.unnamed);
        kept.extend_from_slice(line.kept.on());
        kept_unnamed = kept_unnamed.saturating_add(line.kept.unnamed);
        if unread.is_none() {
            unread = line.unread.map(crate::keep::said_of);
        }
    }
    let mut flushes: Vec<Place> = on
        .into_iter()
        .map(|(device, count)| Place {
            device,
            count,
            on: crate::estimate::name(host, device).unwrap_or_default(),
        })
        .collect();
    flushes.sort_by_key(|place| std::cmp::Reverse(place.count));
    for extra in flushes.split_off(flushes.len().min(PLACES_MAX)) {
        unnamed = unnamed.saturating_add(extra.count);
    }
    // Kept on a file system no noted mount is on: kept, where unnamed.
    let kept_by_mount = by_mount(&meta.mounts, &kept);
    let named = kept_by_mount.iter().map(|(_, count)| *count);
    let elsewhere = kept
        .iter()
        .map(|(_, count)| *count)
        .fold(0, u64::saturating_add)
        .saturating_sub(named.fold(0, u64::saturating_add));
    kept_unnamed = kept_unnamed.saturating_add(elsewhere);
    Record {
        id: record::bounded(&meta.id),
        name: record::bounded(&meta.name),
        image: record::bounded(&meta.image),
        ended,
        processes,
        skips,
        flushes,
        flushes_unnamed: unnamed,
        unreadable,
        barrier: 0,
        eaten_by_mount: by_mount(&meta.mounts, &seen),
        kept_by_mount: Some(kept_by_mount),
        kept_unnamed,
        keeps: meta.keeps.clone(),
        unread: unread.as_deref().map(record::bounded),
    }
}

/// The file system a flush on `device` reaches: an overlay's upper
/// folder's (where a container's own files are written), else `device`.
fn beneath(host: &[mounts::Mount], device: Device) -> Device {
    let Some(mount) = mounts::find(host, device).filter(|m| m.fstype == "overlay") else {
        return device;
    };
    let upper = mount
        .options
        .split(',')
        .find_map(|option| option.strip_prefix("upperdir="));
    upper
        .and_then(|upper| fs::metadata(upper).ok())
        .map_or(device, |meta| {
            (libc::major(meta.dev()), libc::minor(meta.dev()))
        })
}

/// Folds the folders under `base` whose containers are gone without a
/// `delete` (their real runtime's state folder is gone, and they are older
/// than a create takes), and removes those a runtime killed during its
/// `create` left without a whole `container.json` once they are as old:
/// every folder looked at, at most [`SWEEP_MAX`] folded or removed at a
/// time (the next sweep goes on), none once the account's lock is not
/// had in time.
pub fn sweep(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    let now = time::now();
    let mut swept = 0;
    for entry in entries.flatten() {
        if swept == SWEEP_MAX {
            return;
        }
        let name = entry.file_name();
        let Some(id) = name.to_str().filter(|id| valid_id(id)) else {
            continue;
        };
        let folder = base.join(id);
        let meta = open_in(&folder, META, libc::O_RDONLY)
            .and_then(|file| read_bounded(file, META_MAX))
            .ok()
            .and_then(|bytes| Meta::parse(std::str::from_utf8(&bytes).ok()?));
        match meta {
            Some(meta) if now - meta.created > SWEEP_AGE => {
                if fs::symlink_metadata(meta.root.join(id)).is_ok() {
                    continue;
                }
                if fold(base, id).is_err() {
                    return;
                }
            }
            Some(_) => continue,
            None => {
                let changed = fs::symlink_metadata(&folder).map_or(now, |m| m.mtime());
                if now - changed <= SWEEP_AGE {
                    continue;
                }
                remove(&folder);
            }
        }
        swept += 1;
    }
}

/// Whether the descriptor-less path `path` is a mount point (its device
/// differs from its parent's).
#[cfg(test)]
fn is_mount(path: &Path) -> bool {
    let (Ok(it), Some(Ok(parent))) = (fs::metadata(path), path.parent().map(fs::metadata)) else {
        return false;
    };
    it.dev() != parent.dev()
}

#[cfg(test)]
mod tests;
