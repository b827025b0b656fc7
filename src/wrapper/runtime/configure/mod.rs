//! `eatmydata-runtime configure ENGINE`: registers the runtime with a
//! container engine under the name `eatmydata`, as `nvidia-ctk runtime
//! configure` registers NVIDIA's.
//!
//! Each engine's file is edited by a pair of pure functions from its text
//! to the new text, one file per format: `register`, and `remove`, which
//! gives back the bytes `register` took (`Engine::register`,
//! `Engine::remove`, `Engine::holds_nothing`; the node installer calls
//! them too, with `reload`). `flow.rs` carries a change out: the runtime
//! checked to be this command and its library placed (`program.rs`), a
//! listing of what changes, a replacement in one rename with the old file
//! kept beside it, BuildKit's drop-in for docker (`buildkit.rs`), then the
//! engine told to reload (`reload.rs`). A file that says what was asked
//! already is left alone.

mod args;
mod buildkit;
pub(crate) mod containerd;
pub(crate) mod crio;
pub(crate) mod docker;
mod error;
pub(crate) mod file;
mod flow;
pub(crate) mod inuse;
mod json;
mod podman;
mod program;
mod reach;
pub(crate) mod reload;
pub(crate) mod toml;

use std::ffi::OsString;
use std::path::PathBuf;

use super::NAME as RUNTIME_FILE;
use args::Asked;
pub use args::HELP;
pub use error::Error;

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
    /// Binds of the user's host folders kept durable in every container
    /// (`--keep-binds`: the runtime's `--eatmydata-keep-binds`).
    pub keep_binds: bool,
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
            keep_binds: false,
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
    pub fn register(self, text: &str, want: &Want) -> Result<String, String> {
        match self {
            Engine::Docker => docker::register(text, want),
            Engine::Podman => podman::register(text, want),
            Engine::Containerd => containerd::register(text, want),
            Engine::Crio => crio::register(text, want),
        }
    }

    /// The text of the engine's file without what [`Engine::register`]
    /// added; for docker and podman, `alias` keeps the name as an alias
    /// of runc (containers made with it exist, and start by that name).
    pub fn remove(self, text: &str, alias: bool) -> Result<String, String> {
        match self {
            Engine::Docker => docker::remove(text, alias),
            Engine::Podman => podman::remove(text, alias),
            Engine::Containerd => containerd::remove(text),
            Engine::Crio => crio::remove(text),
        }
    }

    /// Whether a file left with `text` by a removal holds nothing of
    /// anyone's, and can go as registration made it: an engine reads a
    /// missing file as one with nothing in it.
    pub fn holds_nothing(self, text: &str) -> bool {
        match self {
            Engine::Docker => docker::holds_nothing(text),
            Engine::Podman => podman::holds_nothing(text),
            Engine::Containerd => containerd::holds_nothing(text),
            Engine::Crio => crio::holds_nothing(text),
        }
    }

    /// Whether the engine's file, now `text`, makes the runtime its
    /// default: a registration without `--default` keeps one made before.
    pub fn names_default(self, text: &str) -> bool {
        match self {
            Engine::Docker => docker::names_default(text),
            Engine::Podman => podman::names_default(text),
            Engine::Containerd | Engine::Crio => false,
        }
    }

    /// How containers reach the runtime once the engine has read it.
    fn how_to_use(self, default: bool) -> String {
        let run = if default {
            "every container runs through eatmydata"
        } else {
            "ask for it per container"
        };
        match self {
            Engine::Docker => format!("{run} (docker run --runtime=eatmydata ...)"),
            Engine::Podman => format!("{run} (podman run --runtime=eatmydata ...)"),
            Engine::Containerd => format!(
                "{run} (a RuntimeClass with handler: eatmydata, or ctr run --runtime \
                 io.containerd.runc.v2 --runc-binary {RUNTIME_FILE} ...)"
            ),
            Engine::Crio => format!("{run} (a RuntimeClass with handler: eatmydata)"),
        }
    }
}

/// Runs `eatmydata-runtime configure ARGS...` (the arguments after
/// `configure`), telling on stdout what it did; the exit status.
pub fn run(args: Vec<OsString>) -> std::ffi::c_int {
    super::outlive_a_closed_stdout();
    let done = match args::parse(args) {
        Ok(Asked::Help) => {
            say_part!("{HELP}");
            Ok(())
        }
        Ok(Asked::Configure(request)) => match writable(&request) {
            Err(error) => Err(error),
            Ok(()) if request.remove => flow::remove(&request),
            Ok(()) => flow::register(&request),
        },
        Err(error) => Err(error),
    };
    match done {
        Ok(()) => 0,
        Err(error) => {
            let io = match &error {
                Error::Io { error, .. } => Some(error),
                _ => None,
            };
            let said = super::help::with_root_hint(format!("eatmydata: {error}"), io);
            eprintln!("{said}");
            error.exit_code().into()
        }
    }
}

/// Refuses, before anything is made, a run (not a dry run) that could
/// not write the engine's file: a caller who is not root, mostly. The
/// file where it is, else the nearest folder above it that is.
fn writable(request: &args::Request) -> Result<(), Error> {
    if request.dry_run {
        return Ok(());
    }
    let config = config_of(request);
    let Some(there) = config.ancestors().find(|p| p.symlink_metadata().is_ok()) else {
        return Ok(());
    };
    let Ok(path) = std::ffi::CString::new(there.as_os_str().as_encoded_bytes()) else {
        return Ok(());
    };
    // SAFETY: `path` is a C string that outlives the call.
    let status =
        unsafe { libc::faccessat(libc::AT_FDCWD, path.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    match status {
        0 => Ok(()),
        _ => Err(Error::Io {
            doing: "change",
            path: config,
            error: std::io::Error::last_os_error(),
        }),
    }
}

/// The file `configure` edits for `engine` unless `--config` names another.
fn config_of(request: &args::Request) -> PathBuf {
    request
        .config
        .clone()
        .unwrap_or_else(|| request.engine.default_config())
}
