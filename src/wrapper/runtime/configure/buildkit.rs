//! BuildKit, Docker's default builder, runs a build's RUN steps with a
//! runc of its own and never asks dockerd's `default-runtime`. Docker 26
//! and later take the command it runs from dockerd's environment,
//! `DOCKER_BUILDKIT_RUNC_COMMAND`: with `--default`, a systemd drop-in for
//! `docker.service` sets it to the runtime. systemd reads it at
//! `daemon-reload`, dockerd at its next start: a restart, which stops
//! running containers, so it is left to the user.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The first Docker version that reads the variable.
pub const FIRST: u32 = 26;

/// The variable dockerd hands BuildKit.
pub const VARIABLE: &str = "DOCKER_BUILDKIT_RUNC_COMMAND";

/// Where systemd's own units go unless `--systemd-dir` says.
pub const SYSTEMD_DIR: &str = "/etc/systemd/system";

/// The drop-in under `systemd_dir`.
pub fn drop_in(systemd_dir: &Path) -> PathBuf {
    systemd_dir.join("docker.service.d/eatmydata-buildkit.conf")
}

/// The drop-in's text, naming the runtime at `runtime`.
pub fn text(runtime: &str) -> String {
    format!(
        "# Written by eatmydata-runtime configure docker --default: BuildKit's RUN\n\
         # steps run through the runtime too. Removed by configure docker --remove.\n\
         [Service]\n\
         Environment=\"{VARIABLE}={}\"\n",
        quoted(runtime)
    )
}

/// `value` inside a systemd quoted word: `\` and `"` escaped, `%` (a
/// specifier) doubled.
fn quoted(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('%', "%%")
}

/// Docker's major version from `dockerd --version` ("Docker version
/// 26.1.5+dfsg1, build ..."), or from `given`.
pub fn major(given: Option<&str>) -> Option<u32> {
    let said = match given {
        Some(given) => given.to_owned(),
        None => {
            let output = Command::new("dockerd").arg("--version").output().ok()?;
            String::from_utf8_lossy(&output.stdout).into_owned()
        }
    };
    let version = said
        .split_whitespace()
        .find(|word| word.starts_with(|c: char| c.is_ascii_digit()))?;
    version.split('.').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_major_version_and_quotes_the_path() {
        assert_eq!(
            major(Some("Docker version 26.1.5+dfsg1, build a72d7cd")),
            Some(26)
        );
        assert_eq!(major(Some("20.10.24")), Some(20));
        assert_eq!(major(Some("Docker version unknown")), None);
        assert_eq!(
            text("/opt/my %d \"x\"/eatmydata-runtime").lines().last(),
            Some(
                "Environment=\"DOCKER_BUILDKIT_RUNC_COMMAND=/opt/my %%d \\\"x\\\"/eatmydata-runtime\""
            )
        );
    }
}
