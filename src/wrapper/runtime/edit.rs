//! What the runtime writes into a container's spec (a bundle's
//! `config.json`, on `create` and `run`) and into an `exec --process` file,
//! as JSON values: every field this edit does not own stays as the engine
//! wrote it, in its order. One file per thing the spec gains, each a pure
//! function of the spec and of what the runtime learned ([`Learned`]),
//! tested alone, in the shape of NVIDIA's modifiers:
//!
//! - `library.rs`: the library bound read-only inside the spec's `/dev`
//!   tmpfs, or no library, and why;
//! - `preload.rs`: `LD_PRELOAD`, only for a program that can take it, and
//!   the hooks that would inherit it kept as they were;
//! - `seccomp.rs`: the sync calls answered by the spec's seccomp profile;
//! - `account.rs`: the per-container report file, beside the library.
//!
//! `program.rs` is how the runtime learns what the process's program is,
//! inside the rootfs (through a static init, `durability/init.rs`, the
//! program it runs). Nothing at all is edited when the container's
//! environment has `EATMYDATA_DISABLE` on or its annotations [`DISABLE`];
//! the annotation [`APPLIED`] says what was done.

pub mod account;
pub mod keep;
pub mod library;
pub mod preload;
pub mod program;
pub mod seccomp;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::durability::exec::Place;
use library::NoPlace;
use seccomp::Answered;

/// The annotation that turns eatmydata off for one container.
pub const DISABLE: &str = "io.eatmydata.disable";
/// The annotation that says what the runtime did.
pub const APPLIED: &str = "io.eatmydata.applied";
/// Every annotation of ours, as a glob: what an engine that passes on
/// only the annotations it is told to (containerd's CRI) is told.
pub const ANNOTATIONS: &str = "io.eatmydata.*";

/// What the runtime learned before the edit: the facts a pure edit needs.
pub struct Learned<'a> {
    /// The library's path on the host (`library::locate()`), UTF-8.
    pub library: &'a str,
    /// The process's program, read inside the rootfs.
    pub program: preload::Program,
    /// The destinations of the binds of the user's host folders, when the
    /// runtime keeps them (`--eatmydata-keep-binds`: `keep.rs`).
    pub binds: Vec<String>,
}

/// What an edit did.
#[derive(Debug, PartialEq)]
pub enum Done {
    /// Nothing, for this reason.
    Off(&'static str),
    /// A spec for `create`: the library mounted or why not, `LD_PRELOAD`
    /// set or why not, and what the seccomp profile answers.
    Created {
        library: Result<(), NoPlace>,
        preload: Result<(), String>,
        answered: Answered,
        /// What the container keeps (`keep.rs`).
        kept: keep::Kept,
    },
    /// An `exec` process: `LD_PRELOAD` set, or why not.
    Exec { preload: Result<(), String> },
}

impl Done {
    /// Whether the file must be written back.
    pub fn changed(&self) -> bool {
        match self {
            Done::Off(_) => false,
            Done::Created { .. } => true,
            Done::Exec { preload } => preload.is_ok(),
        }
    }

    /// The log's words for it.
    pub fn describe(&self) -> String {
        let preloaded = |preload: &Result<(), String>| match preload {
            Ok(()) => "LD_PRELOAD set".to_owned(),
            Err(why) => format!("no LD_PRELOAD ({why})"),
        };
        match self {
            Done::Off(why) => format!("off ({why}): spec untouched"),
            Done::Exec { preload } => preloaded(preload),
            Done::Created {
                library,
                preload,
                answered,
                kept,
            } => {
                let mut text = match library {
                    Ok(()) => format!(
                        "library mounted at {}, {}",
                        library::MOUNTED,
                        preloaded(preload)
                    ),
                    Err(why) => format!("no library ({}): no LD_PRELOAD", why.describe()),
                };
                if kept.scoped() {
                    text += &format!(", {}", kept.describe());
                    return text;
                }
                text += &format!(
                    ", {} sync calls answered 0 by seccomp ({})",
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

/// Adds the library to `process`'s `LD_PRELOAD` where `place` puts it
/// (an `env` made if missing).
fn preload_in(process: &mut Map<String, Value>, place: Place) -> Result<(), String> {
    let env = process.entry("env").or_insert_with(|| json!([]));
    let env = env.as_array_mut().ok_or("process.env is not a list")?;
    preload::preload(env, place);
    Ok(())
}

/// Whether `spec` turns eatmydata off, and how.
pub fn off(spec: &Value) -> Option<&'static str> {
    let annotation = spec.get("annotations").and_then(|a| a.get(DISABLE));
    let annotation = annotation.and_then(Value::as_str);
    if annotation.is_some_and(|v| crate::protocol::switch_on(v.as_bytes())) {
        return Some("annotation io.eatmydata.disable");
    }
    preload::disabled(env_of(spec.get("process"))).then_some("EATMYDATA_DISABLE in its environment")
}

/// The `create` edit as the runtime makes it: what the process's program
/// is, learned inside the rootfs of `bundle`, then [`edit_config`] with
/// `library`, the host's.
pub fn create(
    spec: &mut Value,
    bundle: &Path,
    library: &Path,
    keep_binds: bool,
) -> Result<Done, String> {
    let source = library
        .to_str()
        .ok_or_else(|| format!("the library's path {} is not UTF-8", library.display()))?;
    let root = program::rootfs(bundle, spec).unwrap_or_default();
    let process = spec.get("process").unwrap_or(&Value::Null);
    let binds = match keep_binds {
        true => keep::binds(spec, Path::is_dir),
        false => vec![],
    };
    let learned = Learned {
        library: source,
        program: program::learn(&root, &program::binds(spec), process, library),
        binds,
    };
    edit_config(spec, &learned)
}

/// The `exec` edit as the runtime makes it: `container` is the bundle and
/// spec of the container (from the real runtime's state), if found; the
/// program is read in its rootfs when it has the library.
pub fn exec(process: &mut Value, container: Option<(PathBuf, Value)>) -> Result<Done, String> {
    let mut refused = Ok(());
    let program = container.and_then(|(bundle, spec)| {
        let library = Path::new(library::source(&spec)?);
        let root = program::rootfs(&bundle, &spec)?;
        refused = profile_answers_first(&spec);
        let binds = program::binds(&spec);
        let program = program::learn(&root, &binds, process, library);
        Some((program, spec))
    });
    if let (Err(why), Some(_)) = (refused, &program) {
        return Ok(Done::Exec { preload: Err(why) });
    }
    let done = edit_process(process, program.as_ref().map(|(program, _)| program))?;
    let env = process.get_mut("env").and_then(Value::as_array_mut);
    if let (true, Some((_, spec)), Some(env)) = (done.changed(), &program, env) {
        keep::pass_on(env, spec);
    }
    Ok(done)
}

/// Refuses a spec whose fields this edit may touch are not shaped as the
/// runtime spec says, whatever the edit then touches: the answer must not
/// depend on the program.
fn shaped(spec: &Value) -> Result<(), String> {
    let spec = spec.as_object().ok_or("the spec is not a JSON object")?;
    let is =
        |value: Option<&Value>, ok: fn(&Value) -> bool| value.is_none_or(|v| v.is_null() || ok(v));
    let process = spec.get("process");
    if !is(process, Value::is_object) {
        return Err("process is not an object".into());
    }
    if !is(process.and_then(|p| p.get("env")), Value::is_array) {
        return Err("process.env is not a list".into());
    }
    if !is(spec.get("mounts"), Value::is_array) {
        return Err("mounts is not a list".into());
    }
    if !is(spec.get("hooks"), Value::is_object) {
        return Err("hooks is not an object".into());
    }
    Ok(())
}

/// `Err` when the profile refuses a sync call (or allows it only under
/// conditions): the library would answer it 0 before the kernel could
/// refuse it, so the program goes without, and the kernel answers as
/// under runc; the rules answer the other sync calls.
fn answers_first(answered: &Answered) -> Result<(), String> {
    match answered.left.is_empty() {
        true => Ok(()),
        false => Err(format!(
            "the seccomp profile refuses or conditions {}, which the library would answer first",
            answered.left.join(" ")
        )),
    }
}

/// The same of the container `spec`'s profile, for an `exec` (the edit
/// of a copy: it changes nothing a second time, and says what is left).
fn profile_answers_first(spec: &Value) -> Result<(), String> {
    let mut linux = spec.get("linux").cloned().unwrap_or_else(|| json!({}));
    let linux = linux.as_object_mut().ok_or("linux is not an object")?;
    answers_first(&seccomp::edit(linux)?)
}

/// Edits a bundle's `config.json` for `create`, with what was learned.
pub fn edit_config(spec: &mut Value, learned: &Learned) -> Result<Done, String> {
    if let Some(why) = off(spec) {
        return Ok(Done::Off(why));
    }
    shaped(spec)?;
    // Checked before anything is added; a second edit finds ours.
    let library = match library::in_spec(spec) {
        true => Ok(()),
        false => library::place(spec),
    };
    let fresh = !library::in_spec(spec) && library.is_ok();
    let original = env_of(spec.get("process")).to_vec();
    let kept = keep::kept(spec, &learned.binds);
    let placed = library
        .map_err(|_| "no library".to_owned())
        .and_then(|()| preload::placed(&learned.program, &original));
    let spec = spec
        .as_object_mut()
        .ok_or("the spec is not a JSON object")?;
    // An error leaves the value half-edited, but it is then never written.
    let linux = spec.entry("linux").or_insert_with(|| json!({}));
    let linux = linux.as_object_mut().ok_or("linux is not an object")?;
    // With a list given, the profile is left as it is (its rules cannot
    // tell mounts apart); what it would answer is still asked, for the
    // library must not answer 0 what the profile refuses.
    let answered = match kept.scoped() {
        false => seccomp::edit(linux)?,
        true => seccomp::edit(&mut linux.clone())?,
    };
    let placed = placed.and_then(|place| answers_first(&answered).map(|()| place));
    // Whatever process.env gains (our LD_PRELOAD here, the account's
    // EATMYDATA_REPORT after, for a static program too), the hooks that
    // would inherit it get it as it was.
    if let Some(hooks) = spec.get_mut("hooks").filter(|h| !h.is_null()) {
        preload::keep_hooks(hooks, &original)?;
    }
    if let (Ok(place), Some(process)) = (&placed, spec.get_mut("process")) {
        let process = process.as_object_mut().ok_or("process is not an object")?;
        preload_in(process, *place)?;
        if kept.scoped() {
            let env = process.entry("env").or_insert_with(|| json!([]));
            keep::name(
                env.as_array_mut().ok_or("process.env is not a list")?,
                &kept,
            );
        }
    }
    let preload = placed.map(|_| ());
    if fresh {
        let mounts = spec.entry("mounts").or_insert_with(|| json!([]));
        let mounts = mounts.as_array_mut().ok_or("mounts is not a list")?;
        mounts.push(library::mount(learned.library));
    }
    let done = Done::Created {
        library,
        preload,
        answered,
        kept,
    };
    let annotations = spec.entry("annotations").or_insert_with(|| json!({}));
    let annotations = annotations
        .as_object_mut()
        .ok_or("annotations is not an object")?;
    annotations.insert(APPLIED.into(), json!(done.describe()));
    Ok(done)
}

/// Edits an `exec --process` file: `program` is what the process's
/// program is in the container's rootfs, `None` when the container has no
/// library (`library::source` of its spec).
pub fn edit_process(
    process: &mut Value,
    program: Option<&preload::Program>,
) -> Result<Done, String> {
    let process = process
        .as_object_mut()
        .ok_or("the process is not a JSON object")?;
    let Some(program) = program else {
        return Ok(Done::Off("the container has no library mounted"));
    };
    let env = process.get("env").and_then(Value::as_array);
    if preload::disabled(env.map(Vec::as_slice).unwrap_or_default()) {
        return Ok(Done::Off("EATMYDATA_DISABLE in its environment"));
    }
    let env = process.get("env").and_then(Value::as_array);
    let placed = preload::placed(program, env.map(Vec::as_slice).unwrap_or_default());
    if let Ok(place) = placed {
        preload_in(process, place)?;
    }
    Ok(Done::Exec {
        preload: placed.map(|_| ()),
    })
}

#[cfg(test)]
mod tests;
