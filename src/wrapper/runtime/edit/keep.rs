//! Keep by mount in a container: the syncs on the mounts a container keeps
//! reach the disk, every other one is eaten. The library decides each sync
//! by its descriptor's mount (`src/durability/mount.rs`), from the paths in
//! `EATMYDATA_KEEP` (container paths: mount destinations), so the runtime
//! only has to name them in the process's environment:
//!
//! - those the container names itself: `EATMYDATA_KEEP` in its
//!   environment (`-e EATMYDATA_KEEP=/keep`), or the annotation
//!   [`ANNOTATION`] (`--annotation io.eatmydata.keep=/keep`);
//! - with the runtime registered `--keep-binds` (its option
//!   `--eatmydata-keep-binds`): every bind of a host folder outside the
//!   engine's own storage ([`users_folder`]): `-v /srv/data:/data`, a
//!   compose `./pgdata`; never the rootfs, the engine's named volumes
//!   (under its data root), its own files (`/etc/hosts`, under `/run` or
//!   the data root) or a tmpfs.
//!
//! The seccomp rules that answer the sync calls of static programs cannot
//! tell one descriptor's mount from another's: with any mount kept, the
//! spec gets none of them, and a static program keeps every sync (the safe
//! answer; the library still eats those of dynamic programs off the kept
//! mounts). `sync()` in a dynamic program becomes `syncfs` of the kept
//! mounts (the library's rule).

use std::path::Path;

use serde_json::{Value, json};

use crate::protocol;

/// The annotation naming mount destinations to keep, as `EATMYDATA_KEEP`.
pub const ANNOTATION: &str = "io.eatmydata.keep";

/// Folders where engines keep what is theirs, whatever their data root:
/// a bind from under one is the engine's, not the user's.
const ENGINES: [&str; 9] = [
    "/var/lib/docker",
    "/var/lib/containers",
    "/var/lib/containerd",
    "/var/lib/kubelet",
    "/run",
    "/var/run",
    "/dev",
    "/proc",
    "/sys",
];

/// The names of the folders a storage driver keeps its layers in: the
/// folder above one of them in a rootfs's path is the engine's data root.
const DRIVERS: [&str; 10] = [
    "overlay2",
    "overlay",
    "fuse-overlayfs",
    "vfs",
    "btrfs",
    "zfs",
    "aufs",
    "devicemapper",
    "buildkit",
    "io.containerd.runtime.v2.task",
];

fn under(path: &str, folder: &str) -> bool {
    let folder = folder.trim_end_matches('/');
    path == folder
        || path
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The engine's data root, read from the rootfs's path: what comes before
/// a storage driver's folder (`/var/lib/docker` of
/// `/var/lib/docker/overlay2/ID/merged`).
fn data_root(rootfs: &str) -> Option<&str> {
    let mut at = 0;
    for part in rootfs.split('/') {
        if DRIVERS.contains(&part) && at > 1 {
            return Some(&rootfs[..at - 1]);
        }
        at += part.len() + 1;
    }
    None
}

/// Whether the bind source `source` (absolute, clean) is the user's: not
/// under an engine's folder or the data root of the rootfs `rootfs`.
pub fn users_folder(source: &str, rootfs: &str) -> bool {
    let root = data_root(rootfs);
    source.starts_with('/')
        && source != "/"
        && !ENGINES.iter().any(|engine| under(source, engine))
        && !root.is_some_and(|root| under(source, root))
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The destinations of `spec`'s binds of host folders of the user's
/// (`is_folder` says which sources are folders on the host).
pub fn binds(spec: &Value, is_folder: impl Fn(&Path) -> bool) -> Vec<String> {
    let rootfs = spec
        .get("root")
        .map(|r| text(r, "path"))
        .unwrap_or_default();
    let mounts = spec.get("mounts").and_then(Value::as_array);
    let mut kept = vec![];
    for mount in mounts.into_iter().flatten() {
        let options = mount.get("options").and_then(Value::as_array);
        let options: Vec<&str> = options
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let bind = text(mount, "type") == "bind"
            || options.contains(&"rbind")
            || options.contains(&"bind");
        let source = super::library::clean(text(mount, "source"));
        let destination = super::library::clean(text(mount, "destination"));
        if bind
            && text(mount, "source").starts_with('/')
            && users_folder(&source, rootfs)
            && is_folder(Path::new(&source))
            && protocol::mount_path_ok(destination.as_bytes())
        {
            kept.push(destination);
        }
    }
    kept
}

/// The paths of `EATMYDATA_KEEP` in `env`, the last entry's.
fn variable(env: &[Value]) -> Vec<String> {
    let prefix = format!("{}=", protocol::KEEP);
    let value = env
        .iter()
        .filter_map(Value::as_str)
        .filter_map(|e| e.strip_prefix(&prefix))
        .next_back()
        .unwrap_or_default();
    let paths = protocol::parse_paths(value.as_bytes());
    paths
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

/// What the container keeps: the environment's `EATMYDATA_KEEP`, the
/// annotation's paths, and `binds` (from [`binds`], with `--keep-binds`),
/// each once, in that order.
pub fn kept(spec: &Value, binds: &[String]) -> Vec<String> {
    let env = super::env_of(spec.get("process"));
    let annotation = spec
        .get("annotations")
        .map(|a| text(a, ANNOTATION))
        .unwrap_or_default();
    let mut kept = variable(env);
    let named = protocol::parse_paths(annotation.as_bytes());
    let named = named.map(|p| String::from_utf8_lossy(p).into_owned());
    for path in named.chain(binds.iter().cloned()) {
        if !kept.contains(&path) {
            kept.push(path);
        }
    }
    kept
}

/// Sets `EATMYDATA_KEEP` in `env` to `kept`, in place of any there: the
/// paths that cannot be named (a colon in them) are left out, and the
/// library keeps every sync when the list names a path on no mount.
pub fn name(env: &mut Vec<Value>, kept: &[String]) {
    let prefix = format!("{}=", protocol::KEEP);
    let paths: Vec<&[u8]> = kept
        .iter()
        .map(|p| p.as_bytes())
        .filter(|p| protocol::mount_path_ok(p))
        .collect();
    let mut value = vec![0u8; protocol::paths_len(&paths)];
    let Some(len) = protocol::write_paths(&mut value, &paths) else {
        return;
    };
    value.truncate(len);
    env.retain(|e| !e.as_str().is_some_and(|e| e.starts_with(&prefix)));
    env.push(json!(format!(
        "{prefix}{}",
        String::from_utf8_lossy(&value)
    )));
}

/// For an `exec`'d process of a container that keeps mounts: the
/// container's `EATMYDATA_KEEP` (`spec`'s process), unless the process
/// names its own.
pub fn pass_on(env: &mut Vec<Value>, spec: &Value) {
    let theirs = variable(super::env_of(spec.get("process")));
    if !theirs.is_empty() && variable(env).is_empty() {
        name(env, &theirs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docker_spec(env: &[&str], annotations: Value) -> Value {
        json!({
            "root": {"path": "/var/lib/docker/overlay2/abc/merged"},
            "process": {"env": env},
            "annotations": annotations,
            "mounts": [
                {"destination": "/proc", "type": "proc", "source": "proc"},
                {"destination": "/dev", "type": "tmpfs", "source": "tmpfs"},
                {"destination": "/data", "type": "bind", "source": "/srv/data", "options": ["rbind"]},
                {"destination": "/vol", "type": "bind", "source": "/var/lib/docker/volumes/v/_data", "options": ["rbind"]},
                {"destination": "/etc/hosts", "type": "bind", "source": "/var/lib/docker/containers/abc/hosts", "options": ["rbind"]},
                {"destination": "/etc/resolv.conf", "type": "bind", "source": "/srv/resolv.conf", "options": ["rbind"]},
                {"destination": "/cache", "source": "/home/u/cache", "options": ["rbind", "rw"]},
                {"destination": "/t", "type": "tmpfs", "source": "tmpfs"},
            ],
        })
    }

    #[test]
    fn the_users_folders_are_told_from_the_engines() {
        let spec = docker_spec(&[], json!({}));
        let folders = |path: &Path| !path.to_string_lossy().ends_with(".conf");
        assert_eq!(binds(&spec, folders), ["/data", "/cache"]);
        // A data root elsewhere is the engine's too.
        let rootfs = "/srv/docker-root/overlay2/abc/merged";
        assert!(!users_folder("/srv/docker-root/volumes/v/_data", rootfs));
        assert!(users_folder("/srv/docker-rootless", rootfs));
        let podman = "/home/u/.local/share/containers/storage/overlay/abc/merged";
        assert!(!users_folder(
            "/home/u/.local/share/containers/storage/volumes/v/_data",
            podman
        ));
        assert!(users_folder("/home/u/src", podman));
        for engine in [
            "/run/secrets",
            "/var/lib/kubelet/pods/p/volumes/x",
            "/dev/shm",
            "/",
        ] {
            assert!(!users_folder(engine, "rootfs"), "{engine}");
        }
        assert_eq!(data_root("rootfs"), None);
        assert_eq!(
            data_root("/var/lib/docker/overlay2/x/merged"),
            Some("/var/lib/docker")
        );
    }

    #[test]
    fn the_kept_come_from_the_variable_the_annotation_and_the_binds() {
        let spec = docker_spec(&["EATMYDATA_KEEP=/keep"], json!({ANNOTATION: "/a:/keep"}));
        let kept = kept(&spec, &["/data".to_owned()]);
        assert_eq!(kept, ["/keep", "/a", "/data"]);
        let mut env = vec![json!("PATH=/bin"), json!("EATMYDATA_KEEP=/keep")];
        name(&mut env, &kept);
        assert_eq!(
            env,
            [json!("PATH=/bin"), json!("EATMYDATA_KEEP=/keep:/a:/data")]
        );
        assert!(super::kept(&docker_spec(&[], json!({})), &[]).is_empty());
        // An exec'd process gets the container's, unless it names its own.
        let container = json!({"process": {"env": ["EATMYDATA_KEEP=/keep:/a"]}});
        let mut exec = vec![json!("PATH=/bin")];
        pass_on(&mut exec, &container);
        assert_eq!(exec[1], json!("EATMYDATA_KEEP=/keep:/a"));
        let mut own = vec![json!("EATMYDATA_KEEP=/mine")];
        pass_on(&mut own, &container);
        assert_eq!(own, [json!("EATMYDATA_KEEP=/mine")]);
    }
}
