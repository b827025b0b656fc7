//! The barrier at the end of a build step: when a RUN step run through the
//! runtime ends, one `syncfs(2)` of each file system the step wrote to (its
//! rootfs, an overlay's upper folder, and its read-write binds), before the
//! builder snapshots it. The step's own syncs stay eaten; its result is on
//! the disk before the next step builds on it.
//!
//! How a step is told apart from a plain container, by what the runtime
//! sees ([`step`]):
//!
//! - **BuildKit** (its runc executor, Docker's embedded one through
//!   `DOCKER_BUILDKIT_RUNC_COMMAND`): the verb. go-runc's `Run` calls
//!   `run --bundle B [--keep] ID` and waits for it; containerd's shim,
//!   dockerd and conmon only ever call `create` then `start`. A `run` that
//!   does not `--detach` is a step: the runtime waits for the real runtime
//!   instead of becoming it (`wait.rs`), then flushes, then exits with its
//!   status. BuildKit's `delete` may come after its snapshot (it is
//!   released asynchronously when it samples the step's cgroup), so the
//!   barrier cannot wait for it.
//! - **buildah** (and `podman build`, which is buildah): the id. buildah
//!   runs each step as `create --bundle DIR`, `start`, `state` until it
//!   stopped, then `delete`, and names the container `buildah-` and the
//!   name of its bundle, a temporary folder named `buildah…`. The create
//!   marks the spec ([`ANNOTATION`]); the `delete`, before the real one,
//!   flushes what the marked spec names.
//! - **Docker's legacy builder**: not told apart. Its steps are containers
//!   like any `docker run`: the same verbs, the same spec but for the
//!   command, no annotation, and the labels of the container stay in
//!   dockerd. It gets no barrier.
//!
//! [`ANNOTATION`] on gives any container the barrier at its `delete`;
//! off takes the barrier away from a step. Only the engine's side sets
//! an annotation (`docker run --annotation`, `podman run --annotation`):
//! the container's environment, which an image's `ENV` writes, has no
//! say (security review 3, issue 45). A container eatmydata is off for
//! gets none: its syncs reached the disk.
//!
//! What a step may have written to is named at `create`, before the
//! container runs: each path resolved then, as the engine made it
//! ([`resolved`]), kept in the spec for a `delete` ([`TARGETS`]), and
//! reopened at the barrier without following any link (`flush.rs`): a
//! link the container put in place of a bind's source (in a folder above
//! it that another bind gives it) leads the barrier nowhere.

mod flush;
mod wait;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

pub use flush::flush;
pub use wait::run as wait_for;

use crate::protocol::switch_on;

/// The annotation that asks for the barrier (on) or takes it away (off);
/// the runtime writes it, with the builder's name, on a step it marks.
pub const ANNOTATION: &str = "io.eatmydata.barrier";
/// The annotation that keeps, for a step whose `delete` flushes, what
/// [`resolved`] named at its `create`: a JSON array of paths.
pub const TARGETS: &str = "io.eatmydata.barrier.targets";

/// Whose step a container is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Builder {
    BuildKit,
    Buildah,
    /// Not told apart, but asked for by [`ANNOTATION`].
    Asked,
}

impl Builder {
    pub fn name(self) -> &'static str {
        match self {
            Builder::BuildKit => "buildkit",
            Builder::Buildah => "buildah",
            Builder::Asked => "asked",
        }
    }
}

/// The engine's word on the barrier: `Some(on)` when the annotation is
/// set, `None` when it is not.
fn asked(spec: &Value) -> Option<bool> {
    let annotation = spec.get("annotations").and_then(|a| a.get(ANNOTATION));
    annotation
        .and_then(Value::as_str)
        .map(|value| switch_on(value.as_bytes()))
}

/// Whether container `id` of `bundle` is buildah's: `buildah-` and the
/// bundle's name, which buildah makes as `buildah…`.
fn is_buildah(id: &OsStr, bundle: &Path) -> bool {
    let Some(name) = bundle.file_name() else {
        return false;
    };
    name.as_bytes().starts_with(b"buildah")
        && id.as_bytes().strip_prefix(b"buildah-") == Some(name.as_bytes())
}

/// Whose step the container `id` of `bundle`, created with `spec` by a
/// `run` that `waits` (or a `create`), is; `None` for a container that
/// gets no barrier.
pub fn step(spec: &Value, id: &OsStr, bundle: &Path, waits: bool) -> Option<Builder> {
    let builder = if waits {
        Some(Builder::BuildKit)
    } else if is_buildah(id, bundle) {
        Some(Builder::Buildah)
    } else {
        None
    };
    match asked(spec) {
        Some(false) => None,
        Some(true) => builder.or(Some(Builder::Asked)),
        None => builder,
    }
}

/// Marks `spec` as a step whose `delete` flushes (a step that does not
/// wait): [`ANNOTATION`] set to the builder's name, and [`TARGETS`] to
/// `targets`, what [`resolved`] named.
pub fn mark(spec: &mut Value, builder: Builder, targets: &[PathBuf]) -> Result<(), String> {
    let spec = spec
        .as_object_mut()
        .ok_or("the spec is not a JSON object")?;
    let annotations = spec.entry("annotations").or_insert_with(|| json!({}));
    let annotations = annotations
        .as_object_mut()
        .ok_or("annotations is not an object")?;
    annotations.insert(ANNOTATION.into(), json!(builder.name()));
    let named: Option<Vec<&str>> = targets.iter().map(|path| path.to_str()).collect();
    let named = named.ok_or("a path to flush is not UTF-8")?;
    annotations.insert(TARGETS.into(), json!(json!(named).to_string()));
    Ok(())
}

/// What a marked step's `delete` flushes: what its `create` named
/// ([`TARGETS`]); for a spec marked without them (by an earlier
/// version), its [`targets`] as the spec names them, which `flush.rs`
/// reaches without following a link all the same.
pub fn marked_targets(spec: &Value, bundle: &Path) -> Vec<PathBuf> {
    let annotation = spec.get("annotations").and_then(|a| a.get(TARGETS));
    let named = annotation
        .and_then(Value::as_str)
        .and_then(|text| serde_json::from_str::<Vec<PathBuf>>(text).ok());
    named.unwrap_or_else(|| targets(spec, bundle))
}

/// `targets` as the host resolves them now, at `create`, before the
/// container runs: each link in them, the engine's or the host's, is
/// followed once, here. One that cannot be resolved stays as it is.
pub fn resolved(targets: Vec<PathBuf>) -> Vec<PathBuf> {
    targets
        .into_iter()
        .map(|path| path.canonicalize().unwrap_or(path))
        .collect()
}

/// Whether a container's spec asks its `delete` to flush.
pub fn marked(spec: &Value) -> bool {
    let annotation = spec.get("annotations").and_then(|a| a.get(ANNOTATION));
    annotation
        .and_then(Value::as_str)
        .is_some_and(|value| switch_on(value.as_bytes()))
}

/// What a step may have written to, as the host names it: its rootfs
/// (`root.path`, relative to `bundle` when not absolute) and the sources
/// of its read-write binds, but for the runtime's own under
/// `/dev/.eatmydata`.
pub fn targets(spec: &Value, bundle: &Path) -> Vec<PathBuf> {
    let mut targets = vec![];
    let root = spec.get("root").and_then(|r| r.get("path"));
    if let Some(root) = root.and_then(Value::as_str) {
        targets.push(bundle.join(root));
    }
    let mounts = spec.get("mounts").and_then(Value::as_array);
    for mount in mounts.into_iter().flatten() {
        let text = |key| mount.get(key).and_then(Value::as_str).unwrap_or_default();
        let options: Vec<&str> = mount
            .get("options")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let bind = text("type") == "bind" || options.iter().any(|o| *o == "bind" || *o == "rbind");
        let destination = super::edit::library::clean(text("destination"));
        let ours = destination
            .strip_prefix(super::edit::account::FOLDER)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'));
        if bind && !ours && !options.contains(&"ro") && text("source").starts_with('/') {
            targets.push(PathBuf::from(text("source")));
        }
    }
    targets
}

#[cfg(test)]
mod tests;
