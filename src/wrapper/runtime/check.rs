//! `eatmydata-runtime check [--eatmydata-runtime=NAME|PATH]`: proves this
//! runtime file can work for an engine before one is told to run it. It
//! finds the real runtime (and runs its `--version`), finds the library by
//! the rule every container's would be found by (`library::locate_for`,
//! the runtime's steps: never a temporary folder), and edits a throw-away
//! spec as `create` would, which must come out with the library mounted.
//! Nothing of an engine's is read or changed; the library may be placed
//! (in root's home, or beside the command), as the first container would.
//!
//! `configure` and `install` run it, as the file they register, before
//! they change any engine file ([`prove`]): a registration that could only
//! make every `docker run` fail ("cannot place the library") is refused
//! with the reason, and nothing changes.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::edit::{self, Done};
use super::{our_options, real_runtime};
use crate::library::{self, Caller};

/// The exit status of a check that failed (sysexits' EX_UNAVAILABLE);
/// `configure` and `install` exit with it too when their check fails.
pub const FAILED: u8 = 69;

/// How long the real runtime's `--version`, or a whole check run by
/// `configure`, may take.
const LIMIT: Duration = Duration::from_secs(30);

/// Runs the check with `args` (after `check`): says each step on stdout;
/// the exit status.
pub fn run(mut args: Vec<OsString>) -> std::ffi::c_int {
    if args.first().is_some_and(|a| a == "--help" || a == "-h") {
        print!("{HELP}");
        return 0;
    }
    let host_root = match args.iter().position(|a| a == "--host-root") {
        Some(at) if at + 1 < args.len() => {
            let root = PathBuf::from(args.remove(at + 1));
            args.remove(at);
            Some(root).filter(|root| root != Path::new("/"))
        }
        _ => None,
    };
    let named = match our_options(&mut args) {
        Ok(ours) if args.is_empty() => ours.runtime,
        Ok(_) => {
            eprintln!(
                "eatmydata: check takes no arguments but {}=NAME|PATH and --host-root DIR",
                super::RUNTIME_OPTION
            );
            return 2;
        }
        Err(failure) => {
            eprintln!("eatmydata: {failure}");
            return failure.exit_code().into();
        }
    };
    match steps(named, host_root.as_deref()) {
        Ok(()) => {
            println!("Ready: an engine may run this runtime.");
            0
        }
        Err(why) => {
            eprintln!("eatmydata: check: {why}");
            FAILED.into()
        }
    }
}

pub const HELP: &str = "\
Usage: eatmydata-runtime check [--eatmydata-runtime=NAME|PATH] [--host-root DIR]
Prove this runtime can work before an engine runs it: find the real runtime
(and run its --version), find or place the library as a container's would
be, and edit a throw-away spec as create would. Changes no engine file.
configure and install run it, as the file they register, before they change
anything. With --host-root (a node installer's view of the machine), the
real runtime is looked for in PATH under DIR first.

Exit status: 0 when ready; 69 when a step fails (the reason on stderr);
2 for bad usage.
";

fn steps(named: Option<OsString>, host_root: Option<&Path>) -> Result<(), String> {
    match host_root.and_then(|root| on_host(root, named.as_deref())) {
        Some(found) => println!("Real runtime: {} (on the host).", found.display()),
        None => {
            let (runtime, _) = real_runtime(named).map_err(|failure| failure.to_string())?;
            let version = version_of(&runtime)?;
            println!("Real runtime: {} ({version}).", runtime.display());
        }
    }
    let found = library::locate_for(Caller::Runtime).map_err(|error| error.to_string())?;
    println!("Library: {} ({}).", found.path.display(), found.source);
    let mut spec = throw_away();
    let done = edit::create(&mut spec, Path::new("/nonexistent"), &found.path, false)?;
    match &done {
        Done::Created {
            library: Ok(()), ..
        } => println!("A spec edited as create would: {}.", done.describe()),
        Done::Created {
            library: Err(why), ..
        } => {
            return Err(format!(
                "a spec would not get the library: {}",
                why.describe()
            ));
        }
        other => return Err(format!("a spec was not edited: {}", other.describe())),
    }
    Ok(())
}

/// The real runtime as the host has it under `root`: `named` (or the
/// variable's, else runc, else crun), an absolute path or found in `PATH`
/// under `root`, an executable regular file. Not run: a host's program
/// may not run from a node installer's image.
fn on_host(root: &Path, named: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let variable = std::env::var_os(super::RUNTIME_VARIABLE).filter(|v| !v.is_empty());
    let names: Vec<OsString> = match named.map(OsStr::to_owned).or(variable) {
        Some(name) => vec![name],
        None => super::DEFAULTS.iter().map(OsString::from).collect(),
    };
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/sbin:/usr/bin:/sbin:/bin".into());
    let runs = |file: &Path| {
        std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    names.iter().find_map(|name| {
        let name = Path::new(name);
        if name.is_absolute() {
            let file = root.join(name.strip_prefix("/").ok()?);
            return runs(&file).then(|| name.to_owned());
        }
        path.split(':')
            .filter(|dir| dir.starts_with('/'))
            .find_map(|dir| {
                let file = root.join(dir.trim_start_matches('/')).join(name);
                runs(&file).then(|| Path::new(dir).join(name))
            })
    })
}

/// A spec as Docker writes one for `docker run IMAGE sh`, small.
fn throw_away() -> serde_json::Value {
    json!({
        "ociVersion": "1.0.2",
        "process": {
            "args": ["sh"],
            "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
            "cwd": "/"
        },
        "root": {"path": "rootfs"},
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc"},
            {
                "destination": "/dev",
                "type": "tmpfs",
                "source": "tmpfs",
                "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]
            }
        ],
        "linux": {
            "seccomp": {
                "defaultAction": "SCMP_ACT_ERRNO",
                "syscalls": [{
                    "names": ["fdatasync", "fsync", "msync", "sync", "sync_file_range", "syncfs"],
                    "action": "SCMP_ACT_ALLOW"
                }]
            }
        }
    })
}

/// The first line of `runtime --version`, run with a time limit.
fn version_of(runtime: &Path) -> Result<String, String> {
    let (status, out) = bounded(Command::new(runtime).arg("--version"))
        .map_err(|why| format!("{} --version: {why}", runtime.display()))?;
    if !status.success() {
        return Err(format!("{} --version: {status}", runtime.display()));
    }
    Ok(out.lines().next().unwrap_or("").trim().to_owned())
}

/// Runs `command` with its output read (stderr merged after stdout), and
/// killed after [`LIMIT`].
fn bounded(command: &mut Command) -> Result<(std::process::ExitStatus, String), String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| crate::error::plain(&e))?;
    let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(out) = stdout.as_mut() {
            let _ = out.take(1 << 16).read_to_end(&mut text);
        }
        if let Some(err) = stderr.as_mut() {
            let _ = err.take(1 << 16).read_to_end(&mut text);
        }
        text
    });
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no answer within {} s", LIMIT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(crate::error::plain(&e)),
        }
    };
    let text = reader.join().unwrap_or_default();
    Ok((status, String::from_utf8_lossy(&text).into_owned()))
}

/// Runs `RUNTIME check` as `configure` and `install` do before changing
/// an engine file: `runtime` is the file registered, as seen here; `root`
/// the machine's root as seen here (`/`, or the host's for a node
/// installer); `real` the real runtime the engine will name, if any. `Ok`
/// holds what it said; `Err` why it failed.
pub fn prove(root: &Path, runtime: &Path, real: Option<&str>) -> Result<String, String> {
    let mut command = Command::new(runtime);
    command.arg("check");
    if let Some(real) = real {
        command.arg(format!("{}={real}", super::RUNTIME_OPTION));
    }
    if root != Path::new("/") {
        command.arg("--host-root").arg(root);
    }
    let (status, said) = bounded(&mut command)
        .map_err(|why| format!("cannot run {} check: {why}", runtime.display()))?;
    if status.success() {
        Ok(said)
    } else {
        Err(said.trim_end().to_owned())
    }
}
