//! What the engine the client talks to says its version is: the daemon's
//! for docker (`docker version`, with the user's global options, so the
//! same `-H` or context), podman's own for a local podman and its
//! service's for a remote one. The answer picks the default profile.

use std::ffi::OsString;
use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::Engine;

/// How long an engine is given to answer.
const LIMIT: Duration = Duration::from_secs(15);
/// The most of its answer read.
const ANSWER_MAX: u64 = 64 * 1024;

/// The engine's version as it says it (`26.1.5+dfsg1`), asked with
/// `client_globals` (the options before the verb: `-H`, `--context`,
/// `--remote`, ...); `None` when no daemon answers within a time limit.
pub fn daemon_version(engine: Engine, client_globals: &[OsString]) -> Option<String> {
    let mut command = Command::new(engine.name());
    command.args(client_globals).arg("version");
    let answer = match engine {
        // The server's part alone: it is empty, and docker fails, when
        // no daemon answers.
        Engine::Docker => run(command.args(["--format", "{{.Server.Version}}"]))?,
        // A local podman is its own engine (no server part); a remote
        // one's server part is its service's.
        Engine::Podman => podman_version(&run(command.args(["--format", "json"]))?)?,
    };
    let version = answer.trim();
    (!version.is_empty() && version.len() < 128).then(|| version.to_owned())
}

/// The name of the engine's default OCI runtime (`runc`, `crun`,
/// `runsc`), asked as [`daemon_version`] asks; `None` when it does not say.
pub fn default_runtime(engine: Engine, client_globals: &[OsString]) -> Option<String> {
    let mut command = Command::new(engine.name());
    command.args(client_globals).arg("info").arg("--format");
    let answer = match engine {
        Engine::Docker => run(command.arg("{{.DefaultRuntime}}"))?,
        Engine::Podman => run(command.arg("{{.Host.OCIRuntime.Name}}"))?,
    };
    let name = answer.trim();
    (!name.is_empty() && name.len() < 256).then(|| name.to_owned())
}

/// `podman version --format json`: the server's version if there is
/// one, else the client's.
pub fn podman_version(answer: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(answer).ok()?;
    let of = |part: &str| value.get(part)?.get("Version")?.as_str().map(str::to_owned);
    of("Server").or_else(|| of("Client"))
}

/// Runs `command`, its stdin null and stderr dropped; its stdout when it
/// succeeds within [`LIMIT`].
fn run(command: &mut Command) -> Option<String> {
    let (succeeded, text) = answer(command, LIMIT, ANSWER_MAX)?;
    succeeded.then(|| String::from_utf8_lossy(&text).into_owned())
}

/// Runs `command`, its stdin null and stderr dropped, and reads at most
/// `max` bytes of its stdout: whether it succeeded, and what it said,
/// when it ended within `within` (else it is killed and `None`). An
/// engine's client asked of a daemon that may not answer (here, and the
/// client's `docker info`) is held to both.
pub fn answer(command: &mut Command, within: Duration, max: u64) -> Option<(bool, Vec<u8>)> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stdout.take(max).read_to_end(&mut text);
        text
    });
    let deadline = Instant::now() + within;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let text = reader.join().ok()?;
    Some((status.success(), text))
}
