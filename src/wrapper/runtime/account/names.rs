//! Which container a record is: its name and its image, from what the
//! engine gives the runtime at `create`, so that a report names each one.
//! Three sources, the first that names it wins:
//!
//! - **Annotations** in the spec: the kubelet's through containerd's CRI
//!   (`io.kubernetes.cri.container-name`, `image-name`, the sandbox's
//!   name) and CRI-O's, then the image spec's own.
//! - **Docker**: dockerd binds its own `hostname` file at `/etc/hostname`,
//!   from `DATA-ROOT/containers/ID/`, where `config.v2.json` holds the
//!   container's `Name` and the image as asked (`Config.Image`), written
//!   at `docker create`, before the runtime runs.
//! - **podman** (containers/storage): the bundle is
//!   `STORAGE/DRIVER-containers/ID/userdata`, and `containers.json` two
//!   folders up lists each container's `names` and, in its `metadata`,
//!   the `image-name` it was made from.
//!
//! The engine's files are input like the spec: found only where the
//! folder is named by the container's own id, opened without following a
//! link, only when they and their folder are root's and no one else may
//! write them, read up to a bound, parsed strictly. A file that fails any
//! of that names nothing; the record then shows no name, as before.

use std::fs::{self, File};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use serde_json::Value;

use super::container;

/// The annotations that name a container, most telling first: the
/// kubelet's through containerd's CRI and CRI-O's, then the image spec's.
const NAMES: [&str; 4] = [
    "io.kubernetes.cri.container-name",
    "io.kubernetes.container.name",
    "org.opencontainers.image.title",
    "org.opencontainers.image.ref.name",
];
/// The annotations that name its image.
const IMAGES: [&str; 4] = [
    "io.kubernetes.cri.image-name",
    "io.kubernetes.cri-o.ImageName",
    "org.opencontainers.image.base.name",
    "org.opencontainers.image.source",
];
/// The annotations that name a pod, put before the container's name.
const PODS: [&str; 2] = ["io.kubernetes.cri.sandbox-name", "io.kubernetes.pod.name"];

/// The most bytes of dockerd's `config.v2.json` read.
const DOCKER_MAX: u64 = 1 << 20;
/// The most bytes of containers/storage's `containers.json` read: some
/// thousands of containers.
const PODMAN_MAX: u64 = 8 << 20;

/// A container's name and image; either may be empty.
#[derive(Debug, Default, PartialEq)]
pub struct Named {
    pub name: String,
    pub image: String,
}

fn annotation<'a>(spec: &'a Value, keys: &[&str]) -> &'a str {
    let annotations = spec.get("annotations");
    keys.iter()
        .find_map(|key| annotations?.get(*key)?.as_str().filter(|v| !v.is_empty()))
        .unwrap_or_default()
}

/// The annotations that say a container is a pod's sandbox (its pause
/// container), which has no name of its own.
const SANDBOXES: [&str; 2] = [
    "io.kubernetes.cri.container-type",
    "io.kubernetes.cri-o.ContainerType",
];

/// What the spec's annotations name: `pod/container`, a pod's sandbox as
/// `pod (sandbox)`.
pub fn from_annotations(spec: &Value) -> Named {
    let (pod, name) = (annotation(spec, &PODS), annotation(spec, &NAMES));
    let sandbox = annotation(spec, &SANDBOXES) == "sandbox";
    let name = match (pod.is_empty(), name.is_empty()) {
        (true, _) => name.to_owned(),
        (false, false) => format!("{pod}/{name}"),
        (false, true) if sandbox => format!("{pod} (sandbox)"),
        (false, true) => pod.to_owned(),
    };
    Named {
        name,
        image: annotation(spec, &IMAGES).to_owned(),
    }
}

/// Container `id`'s name and image, from `spec` and its `bundle`.
pub fn of(spec: &Value, bundle: &Path, id: &str) -> Named {
    let named = from_annotations(spec);
    if !named.name.is_empty() {
        return named;
    }
    let engine = docker(spec, id).or_else(|| podman(bundle, id));
    let Some(engine) = engine else {
        return named;
    };
    Named {
        name: engine.name,
        image: if named.image.is_empty() {
            engine.image
        } else {
            named.image
        },
    }
}

/// Where dockerd keeps container `id`'s config, if the spec binds its
/// `hostname` from there: `DIR/ID/config.v2.json`.
pub fn docker_config(spec: &Value, id: &str) -> Option<std::path::PathBuf> {
    let mounts = spec.get("mounts")?.as_array()?;
    let hostname = mounts.iter().find(|m| {
        m.get("destination").and_then(Value::as_str) == Some("/etc/hostname")
            && m.get("type").and_then(Value::as_str) == Some("bind")
    })?;
    let source = Path::new(hostname.get("source")?.as_str()?);
    let folder = source.parent()?;
    let ours = source.file_name()? == "hostname"
        && folder.file_name()? == id
        && source.is_absolute()
        && container::valid_id(id);
    ours.then(|| folder.join("config.v2.json"))
}

/// Reads dockerd's `config.v2.json`: its `Name` without the leading
/// slash, and `Config.Image`.
pub fn parse_docker(text: &[u8]) -> Option<Named> {
    let value: Value = serde_json::from_slice(text).ok()?;
    let name = value.get("Name")?.as_str()?;
    let image = value
        .get("Config")?
        .get("Image")?
        .as_str()
        .unwrap_or_default();
    Some(Named {
        name: name.strip_prefix('/').unwrap_or(name).to_owned(),
        image: image.to_owned(),
    })
}

fn docker(spec: &Value, id: &str) -> Option<Named> {
    let config = docker_config(spec, id)?;
    parse_docker(&read_roots(&config, DOCKER_MAX)?)
}

/// Where containers/storage lists its containers, if `bundle` is one of
/// its folders for `id`: `STORAGE/DRIVER-containers/containers.json`.
pub fn podman_list(bundle: &Path, id: &str) -> Option<std::path::PathBuf> {
    let folder = bundle.parent()?;
    let containers = folder.parent()?;
    let ours = bundle.file_name()? == "userdata"
        && folder.file_name()? == id
        && containers.file_name()?.to_str()?.ends_with("-containers")
        && container::valid_id(id);
    ours.then(|| containers.join("containers.json"))
}

/// Reads containers/storage's `containers.json` for container `id`: its
/// first name, and the `image-name` of its metadata.
pub fn parse_podman(text: &[u8], id: &str) -> Option<Named> {
    let list: Vec<Value> = serde_json::from_slice(text).ok()?;
    let entry = list
        .iter()
        .find(|c| c.get("id").and_then(Value::as_str) == Some(id))?;
    let name = entry.get("names")?.as_array()?.first()?.as_str()?;
    let metadata: Option<Value> = entry
        .get("metadata")
        .and_then(Value::as_str)
        .and_then(|m| serde_json::from_str(m).ok());
    let image = metadata
        .as_ref()
        .and_then(|m| m.get("image-name")?.as_str())
        .unwrap_or_default();
    Some(Named {
        name: name.to_owned(),
        image: image.to_owned(),
    })
}

fn podman(bundle: &Path, id: &str) -> Option<Named> {
    let list = podman_list(bundle, id)?;
    parse_podman(&read_roots(&list, PODMAN_MAX)?, id)
}

/// Whether `meta` is root's and no one else may write it.
fn roots(meta: &fs::Metadata) -> bool {
    meta.uid() == 0 && meta.mode() & 0o022 == 0
}

/// At most `max` bytes of `path`, a regular file of root's that no one
/// else may write, in a folder of root's that no one else may write,
/// opened without following a link; `None` otherwise.
fn read_roots(path: &Path, max: u64) -> Option<Vec<u8>> {
    let folder = path.parent()?;
    let name = path.file_name()?.to_str()?;
    if !fs::symlink_metadata(folder).is_ok_and(|m| m.is_dir() && roots(&m)) {
        return None;
    }
    let file: File = container::open_in(folder, name, libc::O_RDONLY).ok()?;
    if !file.metadata().is_ok_and(|m| roots(&m)) {
        return None;
    }
    container::read_bounded(file, max).ok()
}

#[cfg(test)]
mod tests;
