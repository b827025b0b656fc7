//! What a container client's line needs from the machine: whether
//! docker's daemon has the runtime registered, and where
//! `eatmydata-runtime` is.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Whether docker's daemon (reached with the user's `globals`) has a
/// runtime named `eatmydata`: `docker info`'s `.Runtimes`.
pub fn docker_registered(program: &Path, globals: &[OsString]) -> bool {
    let output = std::process::Command::new(program)
        .args(globals)
        .args(["info", "--format", "{{json .Runtimes}}"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let Some(output) = output.ok().filter(|o| o.status.success()) else {
        return false;
    };
    let runtimes: Result<serde_json::Value, _> = serde_json::from_slice(&output.stdout);
    runtimes.is_ok_and(|r| r.get("eatmydata").is_some())
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
