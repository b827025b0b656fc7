//! What the engine says of itself, asked once per call through its own
//! client with the user's global options (so the same daemon the line
//! reaches answers): docker's runtimes, its default runtime, its seccomp
//! setting and version (`docker info`); podman's runtime, seccomp and
//! version (`podman info`). A daemon that does not answer says nothing.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

/// What `docker info` says of the daemon.
#[derive(Debug, Default, PartialEq)]
pub struct DockerRuntimes {
    /// The daemon answered (it gave its version).
    pub answered: bool,
    /// It has a runtime named `eatmydata`, other than the alias of runc
    /// that `configure docker --remove` leaves.
    pub registered: bool,
    /// Its default runtime is `eatmydata`: every container and every
    /// legacy build's RUN step gets it.
    pub default: bool,
    /// Its default runtime's name (`runc`), when it said.
    pub default_name: String,
    /// Its runtimes: each name with its program (`path`, or the shim of
    /// its `runtimeType`).
    pub runtimes: Vec<(String, String)>,
    /// Its seccomp profile for containers that ask for none (`builtin`,
    /// `default`, `unconfined`, a file's path); `None`: no seccomp.
    pub seccomp: Option<String>,
    /// Its version (`ServerVersion`).
    pub version: String,
    /// docker's client has its buildx component, which makes BuildKit
    /// its builder unless `DOCKER_BUILDKIT` says otherwise.
    pub buildx: bool,
}

/// The `docker info` template whose output [`read_runtimes`] reads.
const FORMAT: &str = concat!(
    r#"{"runtimes":{{json .Runtimes}},"default":{{json .DefaultRuntime}},"#,
    r#""security":{{json .SecurityOptions}},"version":{{json .ServerVersion}},"#,
    r#""plugins":{{json .ClientInfo.Plugins}}}"#
);

/// The daemon's runtimes, asked with the user's `globals`; nothing when
/// docker cannot say.
pub fn docker_runtimes(program: &Path, globals: &[OsString]) -> DockerRuntimes {
    let output = ask(program, globals, &["info", "--format", FORMAT]);
    // A daemon that does not answer still leaves the client's half (its
    // plugins) said.
    output.map_or_else(DockerRuntimes::default, |o| read_runtimes(&o))
}

/// How long an engine is given to answer: a remote daemon that does not
/// answer must not hold the user's command for long.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);
/// The most of its answer read.
const ANSWER_MAX: u64 = 1 << 20;

/// `program globals args`'s standard output, if it ran and ended within
/// [`ANSWER_WITHIN`] (else it is killed), whatever its exit status.
fn ask(program: &Path, globals: &[OsString], args: &[&str]) -> Option<Vec<u8>> {
    let mut command = Command::new(program);
    command.args(globals).args(args);
    crate::profile::daemon::answer(&mut command, ANSWER_WITHIN, ANSWER_MAX).map(|(_, text)| text)
}

/// Reads `docker info --format FORMAT`'s output.
pub fn read_runtimes(stdout: &[u8]) -> DockerRuntimes {
    let Ok(info) = serde_json::from_slice::<Value>(stdout) else {
        return DockerRuntimes::default();
    };
    let name = crate::runtime::REGISTERED;
    let default = info.get("default").and_then(Value::as_str);
    let plugins = info.get("plugins").and_then(Value::as_array);
    let runtimes = info.get("runtimes").and_then(Value::as_object);
    let version = info.get("version").and_then(Value::as_str).unwrap_or("");
    // `configure docker --remove` leaves the name to a plain alias of runc
    // while containers made under it exist: asking for it eats nothing.
    let ours = runtimes.and_then(|r| r.get(name));
    let alias = crate::runtime::REMOVED_ALIAS;
    let registered = ours.is_some_and(|r| r.get("path").and_then(Value::as_str) != Some(alias));
    DockerRuntimes {
        answered: !version.is_empty(),
        registered,
        default: registered && default == Some(name),
        default_name: default.unwrap_or_default().to_owned(),
        runtimes: runtimes
            .into_iter()
            .flatten()
            .map(|(name, runtime)| {
                let program = ["path", "runtimeType"]
                    .iter()
                    .find_map(|key| runtime.get(*key).and_then(Value::as_str));
                (name.clone(), program.unwrap_or_default().to_owned())
            })
            .collect(),
        seccomp: seccomp_of(info.get("security")),
        version: version.to_owned(),
        // A plugin that failed to load carries its error: docker then
        // falls back as if it were missing.
        buildx: plugins.is_some_and(|plugins| {
            plugins.iter().any(|p| {
                p.get("Name").and_then(Value::as_str) == Some("buildx")
                    && p.get("Err").is_none_or(Value::is_null)
            })
        }),
    }
}

/// The profile of `SecurityOptions`' `name=seccomp,profile=P` entry.
fn seccomp_of(security: Option<&Value>) -> Option<String> {
    let entries = security.and_then(Value::as_array)?;
    let entry = entries.iter().filter_map(Value::as_str).find_map(|e| {
        let mut fields = e.split(',');
        (fields.next() == Some("name=seccomp")).then_some(fields)
    })?;
    let profile = entry
        .into_iter()
        .find_map(|field| field.strip_prefix("profile="));
    Some(profile.unwrap_or("default").to_owned())
}

/// What `podman info` says.
#[derive(Debug, Default, PartialEq)]
pub struct PodmanInfo {
    pub answered: bool,
    /// Its OCI runtime's name and program.
    pub runtime: (String, String),
    /// seccomp is on, and its default profile's path.
    pub seccomp: Option<String>,
    pub version: String,
}

/// The `podman info` template [`read_podman`] reads.
const PODMAN_FORMAT: &str = concat!(
    r#"{"runtime":{{json .Host.OCIRuntime.Name}},"path":{{json .Host.OCIRuntime.Path}},"#,
    r#""seccomp":{{json .Host.Security.SECCOMPEnabled}},"#,
    r#""profile":{{json .Host.Security.SECCOMPProfilePath}},"version":{{json .Version.Version}}}"#
);

/// podman's own account, asked with the user's `globals`.
pub fn podman_info(program: &Path, globals: &[OsString]) -> PodmanInfo {
    let output = ask(program, globals, &["info", "--format", PODMAN_FORMAT]);
    output.map_or_else(PodmanInfo::default, |o| read_podman(&o))
}

/// Reads `podman info --format PODMAN_FORMAT`'s output.
pub fn read_podman(stdout: &[u8]) -> PodmanInfo {
    let Ok(info) = serde_json::from_slice::<Value>(stdout) else {
        return PodmanInfo::default();
    };
    let text = |key| info.get(key).and_then(Value::as_str).unwrap_or_default();
    let on = info.get("seccomp").and_then(Value::as_bool) == Some(true);
    PodmanInfo {
        answered: !text("version").is_empty(),
        runtime: (text("runtime").to_owned(), text("path").to_owned()),
        seccomp: on.then(|| text("profile").to_owned()),
        version: text("version").to_owned(),
    }
}

/// What an image's config asks of eatmydata, where the engine holds the
/// image: a keeping variable in its `Env` or one of our labels; `None`
/// when it asks nothing or the engine does not hold it (it is pulled at
/// the run, which eatmydata cannot see coming).
pub fn image_asks(program: &Path, globals: &[OsString], image: &OsString) -> Option<String> {
    let image = image.to_str()?;
    let format = "{{json .Config.Env}}\n{{json .Config.Labels}}";
    let args = ["image", "inspect", "--format", format, "--", image];
    read_image(&ask(program, globals, &args)?, image)
}

/// Reads `image inspect`'s two lines: the image's `Env`, its `Labels`.
pub fn read_image(stdout: &[u8], image: &str) -> Option<String> {
    let mut lines = stdout.split(|&b| b == b'\n');
    let list = |line: Option<&[u8]>| serde_json::from_slice::<Value>(line.unwrap_or_default());
    let env = list(lines.next()).ok()?;
    let labels = list(lines.next()).unwrap_or(Value::Null);
    let mut entries = env
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    let named = entries.find_map(|entry| super::options::keeping_variable(entry.as_bytes()));
    if let Some(name) = named {
        return Some(format!("{name} in the image's environment ({image})"));
    }
    let mut keys = labels.as_object().into_iter().flat_map(|l| l.keys());
    let label = keys.find_map(|key| super::options::keeping_name(key.as_bytes()));
    label.map(|name| format!("the image's label {name} ({image})"))
}
