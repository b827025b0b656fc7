//! What a run left on disk, as the comparison sees it, and the clean-up
//! of what it left mounted.

use std::collections::BTreeMap;
use std::fs;
use std::hash::{DefaultHasher, Hasher};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One file, as the comparison sees it.
#[derive(Debug, PartialEq)]
pub enum Entry {
    Dir {
        mode: u32,
        uid: u32,
        gid: u32,
    },
    File {
        mode: u32,
        uid: u32,
        gid: u32,
        size: u64,
        hash: u64,
    },
    Link {
        target: PathBuf,
    },
    Other {
        mode: u32,
    },
}

/// Everything under `root`, not following links.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut found = BTreeMap::new();
    let mut todo = vec![root.to_owned()];
    while let Some(dir) = todo.pop() {
        for entry in fs::read_dir(&dir).expect("read a folder of the run") {
            let path = entry.expect("a folder entry").path();
            let meta = fs::symlink_metadata(&path).expect("stat a file of the run");
            let (mode, uid, gid) = (meta.mode() & 0o7777, meta.uid(), meta.gid());
            let what = if meta.is_dir() {
                todo.push(path.clone());
                Entry::Dir { mode, uid, gid }
            } else if meta.is_file() {
                let mut hasher = DefaultHasher::new();
                hasher.write(&fs::read(&path).expect("read a file of the run"));
                let (size, hash) = (meta.size(), hasher.finish());
                Entry::File {
                    mode,
                    uid,
                    gid,
                    size,
                    hash,
                }
            } else if meta.is_symlink() {
                let target = fs::read_link(&path).expect("read a link");
                Entry::Link { target }
            } else {
                Entry::Other { mode: meta.mode() }
            };
            let relative = path.strip_prefix(root).expect("under the root").to_owned();
            found.insert(relative, what);
        }
    }
    found
}

/// Unmounts, when dropped, whatever a run left mounted under its area (a
/// FUSE file system whose daemon was killed at the deadline), so that the
/// next run and the scratch folder's removal find plain folders.
pub struct Unmount<'a>(pub &'a Path);

impl Drop for Unmount<'_> {
    fn drop(&mut self) {
        let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mut points: Vec<&str> = mounts
            .lines()
            .filter_map(|line| line.split(' ').nth(4))
            .filter(|point| Path::new(point).starts_with(self.0))
            .collect();
        // Innermost first.
        points.sort_by_key(|point| std::cmp::Reverse(point.len()));
        for point in points {
            let Ok(point) = std::ffi::CString::new(point) else {
                continue;
            };
            // SAFETY: a C string; MNT_DETACH unmounts even a busy mount.
            unsafe { libc::umount2(point.as_ptr(), libc::MNT_DETACH) };
        }
    }
}
