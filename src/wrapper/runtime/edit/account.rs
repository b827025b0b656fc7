//! The per-container report file in the spec: the host file the runtime
//! made (`account/container.rs`) bound read-write at [`INSIDE`], beside
//! the library inside the `/dev` tmpfs the spec gives the container (so no
//! layer, volume or commit holds it), and `EATMYDATA_REPORT` naming it in
//! the process's environment, so that each process under the library
//! appends its report line there at exit.
//!
//! Only where the library can go too: the spec mounts a tmpfs at `/dev`
//! (not a bind of the host's), and nothing of the spec's own is mounted at
//! or under `/dev/.eatmydata`.

use std::path::Path;

use serde_json::{Value, json};

use super::library::is_ours;
use crate::protocol;

/// The folder of ours inside the container's `/dev`.
pub const FOLDER: &str = "/dev/.eatmydata";
/// Where the report file is inside the container.
pub const INSIDE: &str = "/dev/.eatmydata/report";
/// Where the library is put in the same folder.
const LIBRARY: &str = super::library::MOUNTED;

/// A read-write bind of one file, with nothing to run or open as a device.
const OPTIONS: [&str; 5] = ["rbind", "rw", "nosuid", "nodev", "noexec"];

fn mounts(spec: &Value) -> &[Value] {
    let mounts = spec.get("mounts").and_then(Value::as_array);
    mounts.map(Vec::as_slice).unwrap_or_default()
}

fn destination(mount: &Value) -> &str {
    let destination = mount.get("destination").and_then(Value::as_str);
    destination.unwrap_or_default().trim_end_matches('/')
}

/// Why the report file cannot go into this spec, if it cannot.
pub fn no_place(spec: &Value) -> Option<&'static str> {
    let dev = mounts(spec).iter().rfind(|m| destination(m) == "/dev");
    let tmpfs = dev.is_some_and(|m| m.get("type").and_then(Value::as_str) == Some("tmpfs"));
    if !tmpfs {
        return Some("the spec mounts no tmpfs at /dev");
    }
    let taken = mounts(spec).iter().any(|m| {
        let d = destination(m);
        (d == FOLDER || d.strip_prefix(FOLDER).is_some_and(|r| r.starts_with('/')))
            && !ours(m)
            && !is_ours(m, LIBRARY, &super::library::OPTIONS)
    });
    taken.then_some("the spec mounts something of its own under /dev/.eatmydata")
}

/// Binds `report`, the host file, at [`INSIDE`] and names it in the
/// process's `EATMYDATA_REPORT`, unless the environment names a report of
/// its own. A second edit changes nothing.
pub fn add(spec: &mut Value, report: &Path) -> Result<(), String> {
    if let Some(why) = no_place(spec) {
        return Err(why.to_owned());
    }
    let source = report
        .to_str()
        .ok_or_else(|| format!("the report's path {} is not UTF-8", report.display()))?;
    let spec = spec
        .as_object_mut()
        .ok_or("the spec is not a JSON object")?;
    if let Some(process) = spec.get_mut("process") {
        let process = process.as_object_mut().ok_or("process is not an object")?;
        let env = process.entry("env").or_insert_with(|| json!([]));
        name_report(env.as_array_mut().ok_or("process.env is not a list")?);
    }
    let mounts = spec.entry("mounts").or_insert_with(|| json!([]));
    let mounts = mounts.as_array_mut().ok_or("mounts is not a list")?;
    if !mounts.iter().any(ours) {
        mounts.push(json!({
            "destination": INSIDE, "type": "bind", "source": source, "options": OPTIONS
        }));
    }
    Ok(())
}

/// Adds `EATMYDATA_REPORT=`[`INSIDE`] to `env` unless it names a report
/// already: an `exec`'d process of a container that has the file, too.
pub fn name_report(env: &mut Vec<Value>) {
    let prefix = format!("{}=", protocol::REPORT);
    let named = env
        .iter()
        .any(|e| e.as_str().is_some_and(|e| e.starts_with(&prefix)));
    if !named {
        env.push(json!(format!("{prefix}{INSIDE}")));
    }
}

/// Whether `mount` is the report file's bind as [`add`] makes it; a
/// user's own at [`INSIDE`] is the user's.
fn ours(mount: &Value) -> bool {
    is_ours(mount, INSIDE, &OPTIONS)
}

/// Whether a container's spec has the report file bound.
pub fn has_report(spec: &Value) -> bool {
    mounts(spec).iter().any(ours)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(mounts: Value, env: &[&str]) -> Value {
        json!({"process": {"args": ["sh"], "env": env}, "mounts": mounts})
    }

    fn docker_mounts() -> Value {
        json!([
            {"destination": "/proc", "type": "proc", "source": "proc"},
            {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
             "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
        ])
    }

    #[test]
    fn the_file_is_bound_beside_the_library_and_named_once() {
        let mut value = spec(docker_mounts(), &["PATH=/bin"]);
        add(&mut value, Path::new("/run/eatmydata/containers/c1/report")).unwrap();
        add(&mut value, Path::new("/run/eatmydata/containers/c1/report")).unwrap();
        assert_eq!(
            value["process"]["env"],
            json!(["PATH=/bin", "EATMYDATA_REPORT=/dev/.eatmydata/report"])
        );
        let mounts = value["mounts"].as_array().unwrap();
        assert_eq!(mounts.len(), 3);
        assert_eq!(
            mounts[2],
            json!({"destination": INSIDE, "type": "bind",
                   "source": "/run/eatmydata/containers/c1/report",
                   "options": ["rbind", "rw", "nosuid", "nodev", "noexec"]})
        );
        assert!(has_report(&value));
        // The library beside it leaves the place free.
        let mut with_library = docker_mounts();
        with_library
            .as_array_mut()
            .unwrap()
            .push(super::super::library::mount("/l.so"));
        assert_eq!(no_place(&spec(with_library, &[])), None);
    }

    #[test]
    fn a_report_of_the_images_own_is_kept() {
        let mut value = spec(docker_mounts(), &["EATMYDATA_REPORT=/tmp/mine"]);
        add(&mut value, Path::new("/r")).unwrap();
        assert_eq!(
            value["process"]["env"],
            json!(["EATMYDATA_REPORT=/tmp/mine"])
        );
    }

    #[test]
    fn no_tmpfs_at_dev_or_a_mount_of_the_specs_own_there_leaves_it_out() {
        let bound = json!([{"destination": "/dev", "type": "bind", "source": "/dev"}]);
        let mut value = spec(bound, &[]);
        assert!(add(&mut value, Path::new("/r")).is_err());
        assert!(!has_report(&value));
        assert_eq!(value["process"]["env"], json!([]), "untouched");
        assert!(no_place(&spec(json!([]), &[])).is_some());
        for taken in ["/dev/.eatmydata", "/dev/.eatmydata/", "/dev/.eatmydata/x"] {
            let mut mounts = docker_mounts();
            mounts
                .as_array_mut()
                .unwrap()
                .push(json!({"destination": taken}));
            assert!(no_place(&spec(mounts, &[])).is_some(), "{taken}");
        }
        // A user's own bind at our report's place, or the library's, is
        // the user's (an engine's options, not ours).
        for at in [INSIDE, LIBRARY] {
            let mut mounts = docker_mounts();
            let bind = json!({"destination": at, "type": "bind", "source": "/u",
                              "options": ["rbind", "rprivate"]});
            mounts.as_array_mut().unwrap().push(bind);
            let mut value = spec(mounts, &[]);
            assert!(no_place(&value).is_some(), "{at}");
            assert!(add(&mut value, Path::new("/r")).is_err());
            assert!(!has_report(&value));
        }
        // Ours, from an edit before, is not in the way.
        let mut twice = spec(docker_mounts(), &[]);
        add(&mut twice, Path::new("/r")).unwrap();
        twice["mounts"]
            .as_array_mut()
            .unwrap()
            .push(super::super::library::mount("/l.so"));
        assert_eq!(no_place(&twice), None);
        assert!(has_report(&twice));
        let mut near = docker_mounts();
        near.as_array_mut()
            .unwrap()
            .push(json!({"destination": "/dev/.eatmydatax"}));
        assert_eq!(no_place(&spec(near, &[])), None);
    }
}
