//! The edit of a bundle's `config.json` (on `create` and `run`) and of an
//! `exec --process` file, as JSON values: every field this edit does not
//! own stays as the engine wrote it, in its order.
//!
//! On `create`: the library bind-mounted read-only at [`MOUNTED`], first in
//! the process's `LD_PRELOAD`, the sync calls answered by the seccomp
//! profile (`profile.rs`), and an annotation [`APPLIED`] saying so. On
//! `exec`: `LD_PRELOAD` alone, when the container has the library. Nothing
//! at all when the container's environment has `EATMYDATA_DISABLE` on or
//! its annotations [`DISABLE`].

use std::path::Path;

use serde_json::{Map, Value, json};

use super::env;
use super::profile::{self, Answered};

/// Where the library is inside every container.
pub const MOUNTED: &str = "/opt/eatmydata/libeatmydata.so";
/// The annotation that turns eatmydata off for one container.
pub const DISABLE: &str = "io.eatmydata.disable";
/// The annotation that says what the runtime did.
pub const APPLIED: &str = "io.eatmydata.applied";
/// Every annotation of ours, as a glob: what an engine that passes on
/// only the annotations it is told to (containerd's CRI) is told.
pub const ANNOTATIONS: &str = "io.eatmydata.*";

/// A read-only bind of one file: `rbind` as runc and crun want for a bind
/// (a file has no submounts, so `bind` would do the same), `nosuid` and
/// `nodev` because an unprivileged (rootless) runtime may not clear them
/// when it remounts read-only.
const MOUNT_OPTIONS: [&str; 4] = ["rbind", "ro", "nosuid", "nodev"];

/// What an edit did.
#[derive(Debug, PartialEq)]
pub enum Done {
    /// Nothing, for this reason.
    Off(&'static str),
    /// The library is mounted (on `create`), `LD_PRELOAD` set, and the
    /// seccomp profile answers these calls.
    Applied { answered: Option<Answered> },
}

impl Done {
    /// The log's words for it.
    pub fn describe(&self) -> String {
        match self {
            Done::Off(why) => format!("off ({why}): spec untouched"),
            Done::Applied { answered: None } => "LD_PRELOAD set".to_owned(),
            Done::Applied {
                answered: Some(answered),
            } => {
                let mut text = format!(
                    "library mounted at {MOUNTED}, LD_PRELOAD set, {} sync calls answered 0 \
                     by seccomp ({})",
                    answered.calls.len(),
                    answered.calls.join(" ")
                );
                if !answered.left.is_empty() {
                    text += &format!(
                        "; left as the profile has them: {}",
                        answered.left.join(" ")
                    );
                }
                text
            }
        }
    }
}

/// The process's environment, if it has one.
fn env_of(process: Option<&Value>) -> &[Value] {
    let env = process.and_then(|p| p.get("env")).and_then(Value::as_array);
    env.map(Vec::as_slice).unwrap_or_default()
}

/// Adds the library to `process`'s `LD_PRELOAD` (an `env` made if missing).
fn preload(process: &mut Map<String, Value>) -> Result<(), String> {
    let env = process.entry("env").or_insert_with(|| json!([]));
    let env = env.as_array_mut().ok_or("process.env is not a list")?;
    env::preload(env);
    Ok(())
}

/// Whether `spec` turns eatmydata off, and how.
pub fn off(spec: &Value) -> Option<&'static str> {
    let annotation = spec.get("annotations").and_then(|a| a.get(DISABLE));
    let annotation = annotation.and_then(Value::as_str);
    if annotation.is_some_and(|v| crate::protocol::switch_on(v.as_bytes())) {
        return Some("annotation io.eatmydata.disable");
    }
    env::disabled(env_of(spec.get("process"))).then_some("EATMYDATA_DISABLE in its environment")
}

/// Whether `spec` has something mounted at [`MOUNTED`].
pub fn has_library(spec: &Value) -> bool {
    let mounts = spec.get("mounts").and_then(Value::as_array);
    mounts
        .into_iter()
        .flatten()
        .any(|m| m.get("destination").and_then(Value::as_str) == Some(MOUNTED))
}

/// Edits a bundle's `config.json` for `create`, with `library` the host
/// path to mount.
pub fn edit_config(spec: &mut Value, library: &Path) -> Result<Done, String> {
    let source = library
        .to_str()
        .ok_or_else(|| format!("the library's path {} is not UTF-8", library.display()))?;
    if let Some(why) = off(spec) {
        return Ok(Done::Off(why));
    }
    let has_library = has_library(spec);
    let spec = spec
        .as_object_mut()
        .ok_or("the spec is not a JSON object")?;
    // An error leaves the value half-edited, but it is then never written.
    let linux = spec.entry("linux").or_insert_with(|| json!({}));
    let linux = linux.as_object_mut().ok_or("linux is not an object")?;
    let answered = profile::edit(linux)?;
    if let Some(process) = spec.get_mut("process") {
        let process = process.as_object_mut().ok_or("process is not an object")?;
        preload(process)?;
    }
    if !has_library {
        let mounts = spec.entry("mounts").or_insert_with(|| json!([]));
        let mounts = mounts.as_array_mut().ok_or("mounts is not a list")?;
        mounts.push(json!({
            "destination": MOUNTED, "type": "bind", "source": source, "options": MOUNT_OPTIONS
        }));
    }
    let done = Done::Applied {
        answered: Some(answered),
    };
    let annotations = spec.entry("annotations").or_insert_with(|| json!({}));
    let annotations = annotations
        .as_object_mut()
        .ok_or("annotations is not an object")?;
    annotations.insert(APPLIED.into(), json!(done.describe()));
    Ok(done)
}

/// Edits an `exec --process` file; `mounted` says whether the container
/// has the library.
pub fn edit_process(process: &mut Value, mounted: bool) -> Result<Done, String> {
    let process = process
        .as_object_mut()
        .ok_or("the process is not a JSON object")?;
    if !mounted {
        return Ok(Done::Off("the container has no library mounted"));
    }
    let env = process.get("env").and_then(Value::as_array);
    if env::disabled(env.map(Vec::as_slice).unwrap_or_default()) {
        return Ok(Done::Off("EATMYDATA_DISABLE in its environment"));
    }
    preload(process)?;
    Ok(Done::Applied { answered: None })
}

#[cfg(test)]
mod tests;
