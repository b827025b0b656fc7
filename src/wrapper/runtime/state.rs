//! Whether a running container has the library, for `exec`: its bundle's
//! `config.json`, found from the real runtime's state folder, has a mount
//! at `edit::library::MOUNTED` put there by `create` (a user's own `-v`
//! at that place is the user's): `edit::library::in_spec`.
//!
//! runc keeps `ROOT/ID/state.json`, whose `config.labels` hold
//! `bundle=DIR`; crun keeps `ROOT/ID/status`, whose `bundle` is the folder.
//! The default roots are `/run/NAME` for root and `$XDG_RUNTIME_DIR/NAME`
//! otherwise, as both runtimes choose them. Each file is read bounded, as
//! a regular file, without following a link (`input.rs`); an id runc
//! would refuse (`/`, `..`) is never joined to a path.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::input;

/// The state folder of runtime `name` (`runc`, `crun`) without `--root`.
fn default_root(name: &str) -> PathBuf {
    // SAFETY: geteuid cannot fail and touches no memory.
    let root = unsafe { libc::geteuid() } == 0;
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|_| !root) {
        Some(dir) => Path::new(&dir).join(name),
        None => Path::new("/run").join(name),
    }
}

fn json(path: &Path) -> Option<Value> {
    let input = input::regular(path, input::SPEC_LIMIT).ok()?;
    serde_json::from_slice(&input.bytes).ok()
}

/// Whether `id` is one runc takes (`^[\w+-\.]+$`, where `+-\.` is the
/// range `+,-.`; not `.` or `..`), and so a single path component.
fn valid_id(id: &OsStr) -> bool {
    let bytes = id.as_bytes();
    let allowed = |b: &u8| b.is_ascii_alphanumeric() || b"_+,-.".contains(b);
    !bytes.is_empty() && bytes != b"." && bytes != b".." && bytes.iter().all(allowed)
}

/// The bundle of container `id`, from the state the runtime keeps.
fn bundle(root: &Path, id: &OsStr) -> Option<PathBuf> {
    if !valid_id(id) {
        return None;
    }
    let folder = root.join(id);
    if let Some(state) = json(&folder.join("state.json")) {
        let labels = state.get("config")?.get("labels")?.as_array()?;
        let bundle = labels
            .iter()
            .find_map(|l| l.as_str()?.strip_prefix("bundle="))?;
        return Some(PathBuf::from(bundle));
    }
    let status = json(&folder.join("status"))?;
    Some(PathBuf::from(status.get("bundle")?.as_str()?))
}

/// The state folder of the real runtime at `runtime`: `root` (its
/// `--root`) when given, else its default.
pub fn root_of(runtime: &Path, root: Option<&Path>) -> PathBuf {
    let name = runtime.file_name().and_then(OsStr::to_str).unwrap_or("");
    let name = if name.contains("crun") {
        "crun"
    } else {
        "runc"
    };
    root.map_or_else(|| default_root(name), Path::to_owned)
}

/// The bundle and spec of container `id` of the runtime at `runtime`,
/// whose state is under `root` (its `--root`), when they can be found.
pub fn container(runtime: &Path, root: Option<&Path>, id: &OsStr) -> Option<(PathBuf, Value)> {
    let bundle = bundle(&root_of(runtime, root), id)?;
    let config = json(&bundle.join("config.json"))?;
    Some((bundle, config))
}

#[cfg(test)]
mod tests {
    use super::super::edit;
    use super::*;
    use std::fs;

    /// Whether container `id` has the library mounted, as `exec` asks.
    fn has_library(runtime: &Path, root: Option<&Path>, id: &OsStr) -> bool {
        container(runtime, root, id).is_some_and(|(_, config)| edit::library::in_spec(&config))
    }

    #[test]
    fn ids_runc_refuses_are_never_paths() {
        for good in ["a", "eatmydata-test-1-2", "A_b+c.d", "a,b"] {
            assert!(valid_id(OsStr::new(good)), "{good}");
        }
        for bad in ["", ".", "..", "../x", "a/b", "a\nb", "a b"] {
            assert!(!valid_id(OsStr::new(bad)), "{bad}");
        }
    }

    /// runc's `state.json` (the part read) and crun's `status` (its
    /// `write_container_status` fields), in folders of this test's own.
    #[test]
    fn the_bundle_is_found_in_either_runtimes_state() {
        let root = std::env::temp_dir().join(format!("eatmydata-state-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let bundle = root.join("bundle");
        fs::create_dir_all(root.join("runc/a")).unwrap();
        fs::create_dir_all(root.join("crun/b")).unwrap();
        fs::create_dir_all(&bundle).unwrap();
        let labels = format!(
            r#"{{"config": {{"labels": ["x=1", "bundle={}"]}}}}"#,
            bundle.display()
        );
        fs::write(root.join("runc/a/state.json"), labels).unwrap();
        let status = format!(
            r#"{{"pid": 1, "bundle": "{}", "created": "t"}}"#,
            bundle.display()
        );
        fs::write(root.join("crun/b/status"), status).unwrap();
        let runc = Path::new("/usr/sbin/runc");
        let crun = Path::new("/usr/bin/crun");
        // No config.json yet: no library.
        assert!(!has_library(
            runc,
            Some(&root.join("runc")),
            OsStr::new("a")
        ));
        let mounts = serde_json::json!({"mounts": [edit::library::mount("/l.so")]});
        let config = mounts.to_string();
        fs::write(bundle.join("config.json"), config).unwrap();
        assert!(has_library(runc, Some(&root.join("runc")), OsStr::new("a")));
        assert!(has_library(crun, Some(&root.join("crun")), OsStr::new("b")));
        assert!(!has_library(
            runc,
            Some(&root.join("runc")),
            OsStr::new("c")
        ));
        fs::write(bundle.join("config.json"), r#"{"mounts": []}"#).unwrap();
        assert!(!has_library(
            crun,
            Some(&root.join("crun")),
            OsStr::new("b")
        ));
        fs::remove_dir_all(&root).unwrap();
    }
}
