//! `eatmydata profile docker|podman [--engine-version V] [--output FILE]`:
//! prints the profile, the JSON alone on stdout (or in FILE, written
//! whole or not at all), and which default it was made from, and whence,
//! on stderr.

use std::ffi::OsString;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use super::{
    Engine, daemon_version, default_for, default_runtime, defaults, drops_errno_ret,
    embedded_default,
};
use crate::error::Error;

pub const HELP: &str = "\
Usage: eatmydata profile docker|podman [--engine-version V] [--output FILE]
       eatmydata profile --list
Print a seccomp profile that is the engine's default profile, rule for
rule, with fsync, fdatasync, sync_file_range(2), syncfs, sync and msync
with MS_SYNC answered 0 without running them (a negative descriptor still
fails EBADF). Give it to a container with its create request, where no
runtime can be registered (Docker Desktop, a remote engine, dind):

  docker run --security-opt seccomp=eatmydata-docker.json ...

The default is the one of the engine version the daemon gives (docker
version, podman version), or --engine-version V when given or when no
daemon answers; for a version it does not carry, the nearest older one.
A local podman's is the file its containers.conf names (seccomp_profile),
else the one it ships. The JSON alone goes to stdout; which default, and
whence, to stderr. A daemon whose default runtime is gVisor's runsc gets
no profile: runsc drops errnoRet, and every sync would fail EPERM.

The profile does not strip O_SYNC or O_DSYNC from opens, does not see
io_uring, and writes no report.

Options:
      --engine-version V  the engine's version (26.1, 20.10.24, 28.0): its
                          default as this command carries it, the daemon
                          not asked
      --output FILE       write the JSON to FILE instead of stdout
      --list              list the defaults carried: engine, version, and
                          the release's file of the profile made from it
  -h, --help              print this help and exit

Exit status: 0; 2 for bad usage, an unknown engine or version, or a
podman configuration that gives no profile; 125 when FILE cannot be written.
";

/// What `eatmydata profile ARGS` asks.
#[derive(Debug, PartialEq)]
pub enum Asked {
    Help,
    List,
    Make {
        engine: Engine,
        version: Option<String>,
        output: Option<PathBuf>,
    },
}

/// Reads the arguments after `profile`.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Asked, Error> {
    let usage = |why: String| Error::Usage(format!("profile: {why}"));
    let (mut engine, mut version, mut output) = (None, None, None);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let text = arg
            .to_str()
            .ok_or_else(|| usage(format!("'{}' is not UTF-8", arg.to_string_lossy())))?;
        let (option, inline) = match text.split_once('=') {
            Some((option, value)) if option.starts_with("--") => (option, Some(value.to_owned())),
            _ => (text, None),
        };
        let mut value = |name: &str| -> Result<String, Error> {
            match inline
                .clone()
                .or_else(|| args.next().map(|v| v.to_string_lossy().into_owned()))
            {
                Some(value) if !value.is_empty() => Ok(value),
                _ => Err(usage(format!("option '{name}' needs a value"))),
            }
        };
        match option {
            "-h" | "--help" => return Ok(Asked::Help),
            "--list" => return Ok(Asked::List),
            "--engine-version" => version = Some(value(option)?),
            "--output" | "-o" => output = Some(PathBuf::from(value(option)?)),
            _ if option.starts_with('-') => {
                return Err(usage(format!("unknown option '{text}'")));
            }
            _ if engine.is_some() => return Err(usage(format!("one engine, not also '{text}'"))),
            name => {
                let known = Engine::from_name(name)
                    .ok_or_else(|| usage(format!("unknown engine '{name}' (docker or podman)")))?;
                engine = Some(known);
            }
        }
    }
    let engine = engine.ok_or_else(|| usage("name an engine: docker or podman".into()))?;
    Ok(Asked::Make {
        engine,
        version,
        output,
    })
}

/// Runs `eatmydata profile ARGS`; the exit status.
pub fn run(args: Vec<OsString>) -> Result<i32, Error> {
    let (engine, version, output) = match parse(args)? {
        Asked::Help => {
            print!("{HELP}");
            return Ok(0);
        }
        Asked::List => {
            for carried in defaults::EMBEDDED {
                let (engine, version) = (carried.engine.name(), carried.version_name());
                println!("{engine} {version} {}", carried.file_name());
            }
            return Ok(0);
        }
        Asked::Make {
            engine,
            version,
            output,
        } => (engine, version, output),
    };
    let (chosen, whence) = match version {
        Some(version) => (
            embedded_default(engine, Some(&version))?,
            " (--engine-version)".to_owned(),
        ),
        None => match daemon_version(engine, &[]) {
            Some(version) => {
                if let Some(runtime) = default_runtime(engine, &[]).filter(|r| drops_errno_ret(r)) {
                    return Err(Error::Profile(format!(
                        "the {} daemon's default runtime is {runtime}, which drops a rule's \
                         errnoRet: every sync would fail EPERM (PostgreSQL panics on that)",
                        engine.name()
                    )));
                }
                let chosen = default_for(engine, Some(&version))?;
                (chosen, " (version asked of the daemon)".to_owned())
            }
            None => (
                default_for(engine, None)?,
                format!(
                    "; no {} daemon answered: --engine-version names one",
                    engine.name()
                ),
            ),
        },
    };
    let mut text = serde_json::to_string_pretty(&chosen.json).unwrap_or_default();
    text.push('\n');
    match &output {
        Some(path) => {
            write_whole(path, text.as_bytes()).map_err(|e| Error::ProfileOutput(path.clone(), e))?
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            if let Err(e) = stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
            {
                return Err(Error::ProfileOutput("standard output".into(), e));
            }
        }
    }
    eprintln!("{}{whence}", chosen.note);
    if !chosen.answered.left.is_empty() {
        eprintln!(
            "eatmydata: profile: left as the default has them (refused, or only under \
             conditions): {}",
            chosen.answered.left.join(" ")
        );
    }
    Ok(0)
}

/// Writes `bytes` to a new file beside `path` and renames it over
/// `path`: a reader sees the old file or the whole new one.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".eatmydata-{}.tmp", std::process::id()));
    let temp = PathBuf::from(name);
    // Not ours if it is there already: left alone.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&temp)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

#[cfg(test)]
mod tests;
