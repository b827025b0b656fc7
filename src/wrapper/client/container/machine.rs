//! What a container client's line needs from the machine: which runtimes
//! docker's daemon has and which is its default, which builder docker's
//! client picks, and where `eatmydata-runtime` is.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// What `docker info` says of the daemon's runtimes.
#[derive(Debug, Default, PartialEq)]
pub struct DockerRuntimes {
    /// It has a runtime named `eatmydata`.
    pub registered: bool,
    /// Its default runtime is `eatmydata`: every container and every
    /// legacy build's RUN step gets it.
    pub default: bool,
}

/// The `docker info` template whose output [`read_runtimes`] reads.
const FORMAT: &str = r#"{"runtimes":{{json .Runtimes}},"default":{{json .DefaultRuntime}}}"#;

/// The daemon's runtimes, asked with the user's `globals`; nothing when
/// docker cannot say.
pub fn docker_runtimes(program: &Path, globals: &[OsString]) -> DockerRuntimes {
    let output = std::process::Command::new(program)
        .args(globals)
        .args(["info", "--format", FORMAT])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match output {
        Ok(output) if output.status.success() => read_runtimes(&output.stdout),
        _ => DockerRuntimes::default(),
    }
}

/// Reads `docker info --format FORMAT`'s output.
pub fn read_runtimes(stdout: &[u8]) -> DockerRuntimes {
    let Ok(info) = serde_json::from_slice::<serde_json::Value>(stdout) else {
        return DockerRuntimes::default();
    };
    let name = crate::runtime::REGISTERED;
    DockerRuntimes {
        registered: info.get("runtimes").is_some_and(|r| r.get(name).is_some()),
        default: info.get("default").and_then(|d| d.as_str()) == Some(name),
    }
}

/// Whether docker's client uses the legacy builder: `DOCKER_BUILDKIT`
/// false, as Go's `strconv.ParseBool` reads it.
pub fn legacy_builder(value: Option<&OsStr>) -> bool {
    value.is_some_and(|v| {
        ["0", "f", "F", "false", "FALSE", "False"]
            .iter()
            .any(|off| v == *off)
    })
}

/// `eatmydata-runtime`: beside this program's real path, else in `PATH`.
pub fn runtime_path() -> Option<PathBuf> {
    let name = crate::runtime::NAME;
    let beside = crate::library::this_program()
        .and_then(|exe| Some(exe.parent()?.join(name)))
        .filter(|p| p.is_file());
    beside.or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
            .and_then(|p| std::path::absolute(p).ok())
    })
}
