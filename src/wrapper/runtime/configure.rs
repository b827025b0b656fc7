//! `eatmydata-runtime configure ENGINE`: registers the runtime with a
//! container engine under the name `eatmydata`, as `nvidia-ctk runtime
//! configure` registers NVIDIA's.
//!
//! Each engine's file is edited by a pure function from its text to the
//! new text (one file per format below); this module picks the file, the
//! path the engine is to run, and carries the change out: a listing of
//! what changes, then a replacement in one rename with the old file kept
//! beside it. A file that says what was asked already is left alone.

mod args;
mod containerd;
mod crio;
mod docker;
mod file;
mod podman;
mod toml;

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::NAME as RUNTIME_FILE;
pub use args::HELP;
use args::{Asked, Request};

/// The name engines know the runtime by: `--runtime=eatmydata`.
pub const REGISTERED: &str = "eatmydata";

/// The engines `configure` knows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Engine {
    Docker,
    Podman,
    Containerd,
    Crio,
}

/// What the engine's file is to say about the runtime.
#[derive(Debug)]
pub struct Want {
    /// The absolute path of the `eatmydata-runtime` the engine runs.
    pub path: String,
    /// Whether it is to be the engine's default runtime.
    pub default: bool,
    /// The real runtime, when not the runtime's own choice.
    pub real: Option<String>,
}

#[cfg(test)]
impl Want {
    /// What the formats' tests ask: the runtime at
    /// `/usr/bin/eatmydata-runtime`, as the default or not, and `real`.
    pub fn example(default: bool, real: Option<&str>) -> Want {
        Want {
            path: "/usr/bin/eatmydata-runtime".into(),
            default,
            real: real.map(str::to_owned),
        }
    }
}

/// A failure of `configure`; `Display` is the message after `eatmydata: `.
#[derive(Debug)]
pub enum Error {
    Usage(String),
    /// The file is not the engine's format, or not the shape it reads.
    Unparsable {
        file: PathBuf,
        why: String,
    },
    /// The file, its folder or the runtime's link cannot be read or made.
    Io {
        doing: &'static str,
        path: PathBuf,
        error: io::Error,
    },
}

impl Error {
    /// 2 for usage, 65 (sysexits' EX_DATAERR) for a file it cannot parse,
    /// 125 for the rest, as the command's own failures.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => 2,
            Error::Unparsable { .. } => 65,
            Error::Io { .. } => 125,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(message) => write!(
                f,
                "{message}\nTry 'eatmydata-runtime configure --help' for more information."
            ),
            Error::Unparsable { file, why } => write!(
                f,
                "configure: cannot edit {}: {why}; it is left as it was",
                file.display()
            ),
            Error::Io { doing, path, error } => write!(
                f,
                "configure: cannot {doing} {}: {}",
                path.display(),
                crate::error::plain(error)
            ),
        }
    }
}

impl Engine {
    fn named(name: &str) -> Result<Engine, Error> {
        match name {
            "docker" => Ok(Engine::Docker),
            "podman" => Ok(Engine::Podman),
            "containerd" => Ok(Engine::Containerd),
            "crio" | "cri-o" => Ok(Engine::Crio),
            _ => Err(Error::Usage(format!(
                "configure: unknown engine '{name}' (docker, podman, containerd or crio)"
            ))),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Engine::Docker => "docker",
            Engine::Podman => "podman",
            Engine::Containerd => "containerd",
            Engine::Crio => "CRI-O",
        }
    }

    /// Whether the engine's file can name the real runtime for every call
    /// of the runtime: docker's `runtimeArgs` alone can.
    fn passes_real_runtime(self) -> bool {
        self == Engine::Docker
    }

    /// The file edited unless `--config` names another.
    fn default_config(self) -> PathBuf {
        match self {
            Engine::Docker => "/etc/docker/daemon.json".into(),
            Engine::Podman => podman::default_config(),
            Engine::Containerd => "/etc/containerd/config.toml".into(),
            Engine::Crio => "/etc/crio/crio.conf.d/99-eatmydata.conf".into(),
        }
    }

    /// The new text of the engine's file; `Err` says why it cannot be.
    fn edit(self, text: &str, want: &Want) -> Result<String, String> {
        match self {
            Engine::Docker => docker::edit(text, want),
            Engine::Podman => podman::edit(text, want),
            Engine::Containerd => containerd::edit(text, want),
            Engine::Crio => crio::edit(text, want),
        }
    }

    /// What the user does next for the engine to read the change.
    fn next_step(self, default: bool) -> String {
        let run = if default {
            "every container then runs through eatmydata"
        } else {
            "then ask for it per container"
        };
        match self {
            Engine::Docker => format!(
                "restart dockerd (systemctl restart docker); {run} \
                 (docker run --runtime=eatmydata ...)"
            ),
            Engine::Podman => format!(
                "podman reads it on its next start; {run} (podman run --runtime=eatmydata ...)"
            ),
            Engine::Containerd => format!(
                "restart containerd (systemctl restart containerd); {run} (a RuntimeClass \
                 with handler: eatmydata, or ctr run --runtime io.containerd.runc.v2 \
                 --runc-binary {RUNTIME_FILE} ...)"
            ),
            Engine::Crio => format!(
                "restart CRI-O (systemctl restart crio); {run} (a RuntimeClass with \
                 handler: eatmydata)"
            ),
        }
    }
}

/// Runs `eatmydata-runtime configure ARGS...` (the arguments after
/// `configure`), telling on stdout what it did; the exit status.
pub fn run(args: Vec<OsString>) -> std::ffi::c_int {
    match configure(args) {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("eatmydata: {error}");
            error.exit_code().into()
        }
    }
}

fn configure(args: Vec<OsString>) -> Result<(), Error> {
    let request = match args::parse(args)? {
        Asked::Help => {
            print!("{HELP}");
            return Ok(());
        }
        Asked::Configure(request) => request,
    };
    let config = request
        .config
        .clone()
        .unwrap_or_else(|| request.engine.default_config());
    let runtime = runtime_path(&request)?;
    let want = Want {
        path: runtime.display().to_string(),
        default: request.default,
        real: request.real_runtime.clone(),
    };
    let old = file::read(&config)?;
    let text = old.as_deref().unwrap_or("");
    let new = request
        .engine
        .edit(text, &want)
        .map_err(|why| Error::Unparsable {
            file: config.clone(),
            why,
        })?;
    if old.as_deref() == Some(new.as_str()) {
        println!(
            "{} already registers {REGISTERED} as asked; nothing changed.",
            config.display()
        );
        return Ok(());
    }
    print!("{}", file::listing(&config, text, &new));
    if request.dry_run {
        println!("Dry run: nothing written.");
        return Ok(());
    }
    match file::replace(&config, old.is_some(), new.as_bytes())? {
        Some(backup) => println!(
            "Wrote {}; the file as it was is in {}.",
            config.display(),
            backup.display()
        ),
        None => println!("Made {}.", config.display()),
    }
    println!("Next: {}.", request.engine.next_step(request.default));
    Ok(())
}

/// The `eatmydata-runtime` the engine is to run: `--runtime-path`, or the
/// one beside the running command, made as a link to it when missing
/// (said, and not in a dry run).
fn runtime_path(request: &Request) -> Result<PathBuf, Error> {
    if let Some(path) = &request.runtime_path {
        if !path.exists() {
            println!("Note: {} does not exist yet.", path.display());
        }
        return Ok(path.clone());
    }
    let Some(exe) = crate::library::this_program() else {
        return Err(Error::Usage(
            "configure: cannot tell where this command is (no /proc?); give --runtime-path".into(),
        ));
    };
    let (Some(folder), Some(name)) = (exe.parent(), exe.file_name()) else {
        return Err(Error::Usage(format!(
            "configure: cannot tell the folder of {}; give --runtime-path",
            exe.display()
        )));
    };
    let beside = folder.join(RUNTIME_FILE);
    if beside.symlink_metadata().is_ok() {
        return Ok(beside);
    }
    if request.dry_run {
        println!(
            "Would make {}, a link to {}.",
            beside.display(),
            Path::new(name).display()
        );
        return Ok(beside);
    }
    std::os::unix::fs::symlink(name, &beside).map_err(|error| Error::Io {
        doing: "make the link",
        path: beside.clone(),
        error,
    })?;
    println!(
        "Made {}, a link to {}.",
        beside.display(),
        Path::new(name).display()
    );
    Ok(beside)
}
