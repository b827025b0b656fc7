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
//! All three are read by the one reading both products share
//! (`protocol::read_paths`): an entry that cannot be read (relative,
//! empty, a bind whose destination the list cannot hold) keeps every sync
//! of the container. The runtime then names the lists as they were, so
//! that the library reads the same entry the same way, keeps every sync
//! and names it in its report line; an entry that names no mount inside
//! the container only the library can find, and it does the same.
//! `EATMYDATA_ONLY` in the environment is the library's to read; it
//! scopes the container as a kept mount does.
//!
//! The seccomp rules that answer the sync calls of static programs cannot
//! tell one descriptor's mount from another's: with any list given, the
//! spec gets none of them, and a static program keeps every sync (the
//! safe answer; the library still eats those of dynamic programs off the
//! kept mounts). `sync()` in a dynamic program becomes `syncfs` of the
//! kept mounts (the library's rule).

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
/// (`is_folder` says which sources are folders on the host), as given:
/// one the list cannot hold is for [`kept`] to refuse.
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
        {
            kept.push(destination);
        }
    }
    kept
}

/// The value of `name` in `env`, the last entry's (runc keeps the last).
fn variable<'a>(env: &'a [Value], name: &str) -> Option<&'a str> {
    let prefix = format!("{name}=");
    env.iter()
        .filter_map(Value::as_str)
        .filter_map(|e| e.strip_prefix(&prefix))
        .next_back()
}

/// What a container keeps, by the one reading of its lists.
#[derive(Debug, Default, PartialEq)]
pub struct Kept {
    /// The mount destinations kept by name: the environment's
    /// `EATMYDATA_KEEP`, the annotation's, the binds', each once, in that
    /// order.
    pub paths: Vec<String>,
    /// A list that could not be read, in a user's words: every sync is
    /// kept.
    pub unread: Option<String>,
    /// The value `EATMYDATA_KEEP` gets, when the lists could not be read:
    /// them as they were, for the library to read as the runtime did.
    as_given: Option<String>,
    /// `EATMYDATA_ONLY` is set in the environment.
    pub only: bool,
}

impl Kept {
    /// Whether the container's syncs are scoped by mount at all: then no
    /// seccomp rule answers them.
    pub fn scoped(&self) -> bool {
        !self.paths.is_empty() || self.unread.is_some() || self.only
    }

    /// The log's words: what is kept, or why everything is.
    pub fn describe(&self) -> String {
        let what = match (&self.unread, self.paths.is_empty()) {
            (Some(said), _) => said.clone(),
            (None, false) => format!("syncs kept on {}", self.paths.join(" ")),
            (None, true) => "syncs eaten only where EATMYDATA_ONLY says".to_owned(),
        };
        format!(
            "{what} (no seccomp rules: they cannot tell mounts apart, \
             so a static program keeps every sync)"
        )
    }
}

/// What the container keeps: the environment's `EATMYDATA_KEEP`, the
/// annotation's paths, and `binds` (from [`binds`], with `--keep-binds`),
/// each read by the one reading of a list.
pub fn kept(spec: &Value, binds: &[String]) -> Kept {
    let env = super::env_of(spec.get("process"));
    let annotation = spec
        .get("annotations")
        .and_then(|a| a.get(ANNOTATION))
        .and_then(Value::as_str);
    let variable_value = variable(env, protocol::KEEP);
    let lists = [
        (protocol::KEEP, variable_value),
        (&*format!("annotation {ANNOTATION}"), annotation),
    ];
    let mut kept = Kept {
        only: variable(env, protocol::ONLY).is_some_and(|only| !only.is_empty()),
        ..Kept::default()
    };
    let mut given: Vec<&str> = vec![];
    for (source, value) in lists {
        let Some(value) = value.filter(|value| !value.is_empty()) else {
            continue;
        };
        given.push(value);
        match protocol::read_paths(value.as_bytes()) {
            Ok(paths) => {
                let paths = paths.map(|path| String::from_utf8_lossy(path).into_owned());
                kept.paths.extend(paths);
            }
            Err(bad) if kept.unread.is_none() => {
                kept.unread = Some(crate::keep::said(source, bad));
            }
            Err(_) => {}
        }
    }
    for bind in binds {
        given.push(bind);
        if !protocol::mount_path_ok(bind.as_bytes()) && kept.unread.is_none() {
            kept.unread = Some(format!(
                "--keep-binds: the bind at {bind:?} cannot be named in {} (a ':' or NUL in it): \
                 every sync is kept",
                protocol::KEEP
            ));
        }
        kept.paths.push(bind.clone());
    }
    let mut seen = vec![];
    kept.paths.retain(|path| {
        let first = !seen.contains(path);
        seen.push(path.clone());
        first
    });
    if kept.unread.is_some() {
        // As given, a NUL made visible; still unreadable to the library.
        let mut value = given.join(":").replace('\0', "?");
        if protocol::read_paths(value.as_bytes()).is_ok() {
            value.push(':');
        }
        kept.as_given = Some(value);
    }
    kept
}

/// Sets `EATMYDATA_KEEP` in `env` for `kept`, in place of any there: its
/// paths, or the lists as given when they could not be read.
pub fn name(env: &mut Vec<Value>, kept: &Kept) {
    let value = match &kept.as_given {
        Some(given) => given.clone(),
        None => {
            let paths: Vec<&[u8]> = kept.paths.iter().map(|p| p.as_bytes()).collect();
            let mut value = vec![0u8; protocol::paths_len(&paths)];
            // Read by the one reading: every path can be written again.
            let len = protocol::write_paths(&mut value, &paths).unwrap_or_default();
            value.truncate(len);
            String::from_utf8_lossy(&value).into_owned()
        }
    };
    if value.is_empty() {
        return;
    }
    let prefix = format!("{}=", protocol::KEEP);
    env.retain(|e| !e.as_str().is_some_and(|e| e.starts_with(&prefix)));
    env.push(json!(format!("{prefix}{value}")));
}

/// For an `exec`'d process of a container that keeps mounts: the
/// container's `EATMYDATA_KEEP` (`spec`'s process, as the runtime named
/// it), unless the process names its own.
pub fn pass_on(env: &mut Vec<Value>, spec: &Value) {
    let theirs = variable(super::env_of(spec.get("process")), protocol::KEEP);
    let theirs = theirs.filter(|value| !value.is_empty());
    let own = variable(env, protocol::KEEP).is_some_and(|value| !value.is_empty());
    if let (Some(theirs), false) = (theirs, own) {
        let prefix = format!("{}=", protocol::KEEP);
        env.retain(|e| !e.as_str().is_some_and(|e| e.starts_with(&prefix)));
        env.push(json!(format!("{prefix}{theirs}")));
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
        assert_eq!(kept.paths, ["/keep", "/a", "/data"]);
        assert_eq!((kept.unread.as_ref(), kept.scoped()), (None, true));
        let mut env = vec![json!("PATH=/bin"), json!("EATMYDATA_KEEP=/keep")];
        name(&mut env, &kept);
        assert_eq!(
            env,
            [json!("PATH=/bin"), json!("EATMYDATA_KEEP=/keep:/a:/data")]
        );
        let none = super::kept(&docker_spec(&[], json!({})), &[]);
        assert_eq!(none, Kept::default());
        assert!(!none.scoped());
        // An exec'd process gets the container's, unless it names its own.
        let container = json!({"process": {"env": ["EATMYDATA_KEEP=/keep:/a"]}});
        let mut exec = vec![json!("PATH=/bin")];
        pass_on(&mut exec, &container);
        assert_eq!(exec[1], json!("EATMYDATA_KEEP=/keep:/a"));
        let mut own = vec![json!("EATMYDATA_KEEP=/mine")];
        pass_on(&mut own, &container);
        assert_eq!(own, [json!("EATMYDATA_KEEP=/mine")]);
        // What could not be read is passed on as it was.
        let unread = json!({"process": {"env": ["EATMYDATA_KEEP=data"]}});
        let mut exec = vec![json!("EATMYDATA_KEEP=")];
        pass_on(&mut exec, &unread);
        assert_eq!(exec, [json!("EATMYDATA_KEEP=data")]);
    }

    #[test]
    fn a_bind_the_list_cannot_hold_keeps_every_sync() {
        let spec = docker_spec(&["EATMYDATA_KEEP=/keep"], json!({}));
        let kept = kept(&spec, &["/a:b".to_owned(), "/data".to_owned()]);
        let said = kept.unread.as_deref().unwrap();
        assert!(
            said.contains(r#"the bind at "/a:b" cannot be named"#),
            "{said}"
        );
        let mut env = vec![];
        name(&mut env, &kept);
        assert_eq!(env, [json!("EATMYDATA_KEEP=/keep:/a:b:/data")]);
        // A NUL cannot reach the environment; the value still keeps all.
        let kept = super::kept(&spec, &["/a\0b".to_owned()]);
        let mut env = vec![];
        name(&mut env, &kept);
        assert_eq!(env, [json!("EATMYDATA_KEEP=/keep:/a?b:")]);
    }
}
