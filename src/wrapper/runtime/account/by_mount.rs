//! The account by mount: which of a container's mount destinations its
//! flushes were on, those eaten and those kept. At `create` the runtime
//! notes, for the rootfs (`/`) and each bind (volumes are binds too), the
//! device a file there has (what the library's `statx` sees inside: the
//! overlay's own for the rootfs, the source's file system for a bind); at
//! `delete` each device of the report lines is named by the destinations
//! on it ([`by_mount`]), once for the flushes the library skipped and once
//! for those it let reach the disk because their mount is kept. A tmpfs
//! the container gets is made by the real runtime after `create` is read,
//! and is named by no device here: its flushes stay with the file systems
//! the record names otherwise.
//!
//! What a program without the library keeps is not counted: a static
//! program in a container that keeps a mount gets no seccomp rules (they
//! cannot tell mounts apart) and keeps every sync unseen, so the record
//! names the paths the container kept (`keeps`) and `report` says that
//! its kept counts are those of dynamic programs.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde_json::Value;

use super::record::{PLACES_MAX, bounded};
use crate::protocol::Device;

/// A container's mounts as the runtime noted them: destination, device.
pub type Noted = Vec<(String, Device)>;

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The rootfs and the binds of `spec`, each with the device `device_of`
/// gives its host path (`stat`, in [`of_spec`]), at most [`PLACES_MAX`].
pub fn noted(spec: &Value, device_of: impl Fn(&Path) -> Option<Device>) -> Noted {
    let mut noted = vec![];
    let root = spec
        .get("root")
        .map(|r| text(r, "path"))
        .unwrap_or_default();
    if root.starts_with('/')
        && let Some(device) = device_of(Path::new(root))
    {
        noted.push(("/".to_owned(), device));
    }
    let mounts = spec.get("mounts").and_then(Value::as_array);
    for mount in mounts.into_iter().flatten() {
        let options = mount.get("options").and_then(Value::as_array);
        let mut options = options.into_iter().flatten().filter_map(Value::as_str);
        let bind = text(mount, "type") == "bind" || options.any(|o| o == "bind" || o == "rbind");
        let source = text(mount, "source");
        if !bind || !source.starts_with('/') || noted.len() >= PLACES_MAX {
            continue;
        }
        let destination = super::super::edit::library::clean(text(mount, "destination"));
        let folder = super::super::edit::account::FOLDER;
        if destination == folder || destination.starts_with(&format!("{folder}/")) {
            continue;
        }
        if let Some(device) = device_of(Path::new(source)) {
            noted.push((bounded(&destination), device));
        }
    }
    noted
}

/// [`noted`] with each path's device as `stat(2)` gives it.
pub fn of_spec(spec: &Value) -> Noted {
    noted(spec, |path| {
        let dev = std::fs::metadata(path).ok()?.dev();
        Some((libc::major(dev), libc::minor(dev)))
    })
}

/// The flushes (eaten, or kept) on each device of `flushes` that a noted
/// mount is on, named by its destinations (`/data /vol` when two share one
/// file system), most first.
pub fn by_mount(noted: &[(String, Device)], flushes: &[(Device, u64)]) -> Vec<(String, u64)> {
    let mut by_device: BTreeMap<Device, u64> = BTreeMap::new();
    for &(device, count) in flushes {
        let sum = by_device.entry(device).or_default();
        *sum = sum.saturating_add(count);
    }
    let mut eaten: Vec<(String, u64)> = by_device
        .into_iter()
        .filter_map(|(device, count)| {
            let on: Vec<&str> = noted
                .iter()
                .filter(|(_, noted)| *noted == device)
                .map(|(destination, _)| destination.as_str())
                .collect();
            (!on.is_empty()).then(|| (bounded(&on.join(" ")), count))
        })
        .collect();
    eaten.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    eaten.truncate(PLACES_MAX);
    eaten
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_rootfs_and_binds_are_noted_by_device() {
        let spec = json!({
            "root": {"path": "/var/lib/docker/overlay2/x/merged"},
            "mounts": [
                {"destination": "/proc", "type": "proc", "source": "proc"},
                {"destination": "/data/", "type": "bind", "source": "/srv/a", "options": ["rbind"]},
                {"destination": "/vol", "source": "/var/lib/docker/volumes/v/_data", "options": ["rbind"]},
                {"destination": "/dev/.eatmydata/report", "type": "bind", "source": "/run/e/report"},
                {"destination": "/gone", "type": "bind", "source": "/nonexistent"},
            ],
        });
        let device_of = |path: &Path| match path.to_str()? {
            "/var/lib/docker/overlay2/x/merged" => Some((0, 50)),
            "/srv/a" => Some((7, 3)),
            "/var/lib/docker/volumes/v/_data" => Some((254, 1)),
            "/run/e/report" => Some((0, 30)),
            _ => None,
        };
        let noted = noted(&spec, device_of);
        assert_eq!(
            noted,
            [
                ("/".to_owned(), (0, 50)),
                ("/data".to_owned(), (7, 3)),
                ("/vol".to_owned(), (254, 1)),
            ]
        );
        let flushes = [((7, 3), 100), ((0, 50), 3), ((8, 1), 9), ((7, 3), 20)];
        assert_eq!(
            by_mount(&noted, &flushes),
            [("/data".to_owned(), 120), ("/".to_owned(), 3)]
        );
        let shared = [("/a".to_owned(), (7, 3)), ("/b".to_owned(), (7, 3))];
        assert_eq!(by_mount(&shared, &[((7, 3), 5)]), [("/a /b".to_owned(), 5)]);
    }
}
