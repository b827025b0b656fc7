//! `eatmydata-runtime install` and `uninstall`: the node installer, in the
//! shape of kata-deploy. Each step is a file below and each can be taken
//! back; `uninstall` takes them back in reverse order:
//!
//! 1. `host.rs`     the machine's root as seen here (`--host-root`)
//! 2. `lock.rs`     one installer at a time on a machine
//! 3. `copy.rs`     this command into a folder of ours under /usr/local
//! 4. `register.rs` the engine's files, through `configure`'s editors,
//!    what they held before kept in `state.rs`'s record
//! 5. `restart.rs`  the engine told, only when a file changed
//! 6. `wait.rs`     until the engine answers (and lists the runtime)
//!
//! A run that finds everything in place changes nothing and restarts
//! nothing, so a DaemonSet can run it on every start of its pod.

mod args;
mod copy;
mod cri;
mod host;
mod lock;
mod register;
mod restart;
mod state;
mod wait;

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::PathBuf;

pub use args::HELP;
pub use copy::PREFIX;

/// This command copied into `prefix` under `root` as the installer copies
/// it (`configure`'s copier too): the runtime's path, as the host sees it.
pub fn copy_to(root: &std::path::Path, prefix: &str) -> Result<String, Error> {
    copy::install_in(&Host::new(root)?, prefix)
}
use args::{Engine, Request, Restart};
use host::Host;

/// A failure of the installer; `Display` is the message after `eatmydata: `.
#[derive(Debug)]
pub enum Error {
    Usage(String),
    /// An engine's file is not its format, or is not as install left it.
    Unparsable {
        file: PathBuf,
        why: String,
    },
    Io {
        doing: &'static str,
        path: PathBuf,
        error: io::Error,
    },
    /// The engine, or the machine, is not as the step needs.
    Engine(String),
    /// The runtime copied failed its check (`eatmydata-runtime check`):
    /// its path, and why; no engine file was changed.
    Check {
        runtime: String,
        why: String,
    },
}

impl Error {
    /// 2 for usage, 65 for a file left alone, 69 for a runtime that
    /// failed its check, 125 for the rest.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => 2,
            Error::Unparsable { .. } => 65,
            Error::Check { .. } => super::check::FAILED,
            Error::Io { .. } | Error::Engine(_) => 125,
        }
    }

    /// An `Io` error maker for `map_err`.
    fn io(doing: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Error {
        let path = path.into();
        move |error| Error::Io { doing, path, error }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(message) => write!(
                f,
                "{message}\nTry 'eatmydata-runtime install --help' for more information."
            ),
            Error::Unparsable { file, why } => {
                write!(
                    f,
                    "cannot edit {}: {why}; it is left as it is",
                    file.display()
                )
            }
            Error::Io { doing, path, error } => write!(
                f,
                "cannot {doing} {}: {}",
                path.display(),
                crate::error::plain(error)
            ),
            Error::Engine(message) => write!(f, "{message}"),
            Error::Check { runtime, why } => write!(
                f,
                "{runtime} check failed, so no engine file was changed:\n{why}"
            ),
        }
    }
}

/// Runs `eatmydata-runtime install|uninstall ARGS...`; the exit status.
pub fn run(uninstall: bool, args: Vec<OsString>) -> std::ffi::c_int {
    super::outlive_a_closed_stdout();
    let done = match args::parse(uninstall, args) {
        Ok(None) => {
            say_part!("{HELP}");
            return 0;
        }
        Ok(Some(request)) if request.uninstall => take_back(&request),
        Ok(Some(request)) => install(&request),
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

fn install(request: &Request) -> Result<(), Error> {
    let host = Host::new(&request.root)?;
    // Before the lock's folder is made: a host root no copy may go under
    // is refused with nothing made.
    copy::placeable(&host, PREFIX)?;
    let _lock = lock::take(&host)?;
    let engine = match request.engine {
        Some(engine) => engine,
        None => register::detect(&host)?,
    };
    let mut record = state::read(&host)?;
    let runtime = copy::install(&host)?;
    if request.keep_binds && engine != Engine::Docker {
        return Err(Error::Usage(
            "install: --keep-binds is written in Docker's runtimeArgs; containerd and CRI-O \
             pass a runtime no option: name the mounts to keep per container \
             (EATMYDATA_KEEP, or the annotation io.eatmydata.keep)"
                .into(),
        ));
    }
    let changes = register::plan(engine, &host, &runtime, request.keep_binds)?;
    // Proved, as the file the engine will run, before any file changes.
    let said =
        super::check::prove(host.root(), &host.at(&runtime), None).map_err(|why| Error::Check {
            runtime: runtime.clone(),
            why,
        })?;
    say!(
        "{runtime} check: {}",
        said.lines().last().unwrap_or("ready")
    );
    let changed = !changes.is_empty();
    for change in &changes {
        let new = change.new.as_deref().unwrap_or_default();
        record.note(&change.path, change.old.as_deref(), new);
    }
    // The record first: a run stopped half-way can still be taken back.
    state::write(&host, &record)?;
    for change in &changes {
        register::apply(&host, change)?;
        say!("Registered {} in {}.", register::NAME, change.path);
    }
    // Healed whenever the engine does not report the handler: a first
    // run whose restart failed left the files changed and the engine not.
    let name = engine_name(engine);
    let missing = match wait::reports_now(engine, &host, request) {
        Ok(Some(true)) | Ok(None) => None,
        Ok(Some(false)) => Some(format!("{name} does not report the handler")),
        Err(why) => Some(format!("{name} does not answer ({why})")),
    };
    if request.restart == Restart::None {
        match (changed, &missing) {
            (false, None) => say!(
                "The engine's files already register {} and {name} reports it: nothing \
                 to restart.",
                register::NAME
            ),
            _ => say!(
                "--restart none: registered; {name} takes the handler once you {} it \
                 (systemctl {} {}).",
                restart::verb(engine),
                restart::verb(engine),
                restart::unit(engine)
            ),
        }
        return Ok(());
    }
    match (changed, missing) {
        (true, _) => restart::engine(engine, &host, request)?,
        (false, Some(why)) => {
            say!(
                "The engine's files already register {}, but {why}: telling it again.",
                register::NAME
            );
            restart::engine(engine, &host, request)?;
        }
        (false, None) => say!(
            "The engine's files already register {} and {name} reports it: nothing \
             restarted.",
            register::NAME
        ),
    }
    wait::until_ready(engine, &host, request, true)?;
    label();
    Ok(())
}

fn take_back(request: &Request) -> Result<(), Error> {
    let host = Host::new(&request.root)?;
    let _lock = lock::take(&host)?;
    let record = state::read(&host)?;
    let engine = match (request.engine, record.engine()) {
        (Some(engine), _) | (None, Some(engine)) => engine,
        (None, None) => register::detect(&host)?,
    };
    let changes = register::undo(&host, &record)?;
    for change in &changes {
        register::apply(&host, change)?;
        say!("Put {} back as it was before install.", change.path);
    }
    // Healed likewise: an engine that still reports the handler with the
    // files put back (a restart that failed before) is told again; not
    // dockerd, whose reload keeps a runtime the file no longer names.
    let name = engine_name(engine);
    let still = engine != Engine::Docker
        && changes.is_empty()
        && wait::reports_now(engine, &host, request) == Ok(Some(true));
    if request.restart == Restart::None {
        if !changes.is_empty() || still {
            say!(
                "--restart none: files put back; {name} drops the handler once you {} it \
                 (systemctl {} {}).",
                restart::verb(engine),
                restart::verb(engine),
                restart::unit(engine)
            );
        }
        copy::uninstall(&host)?;
        return state::remove(&host);
    }
    if still {
        say!(
            "No engine file holds what install wrote, but {name} still reports the handler: \
             restarting it."
        );
        restart::engine(engine, &host, request)?;
        wait::until_ready(engine, &host, request, false)?;
    } else if engine == Engine::Docker && !changes.is_empty() {
        // A reload keeps a runtime whose key went missing from the file.
        restart::engine(engine, &host, request)?;
        wait::until_answers(engine, &host, request)?;
        say!(
            "dockerd lists {} until its next restart: a reload keeps a runtime the file              no longer names (`configure docker --remove` names it runc instead).",
            register::NAME
        );
    } else if !changes.is_empty() {
        restart::engine(engine, &host, request)?;
        wait::until_ready(engine, &host, request, false)?;
    } else {
        say!("No engine file holds what install wrote: nothing restarted.");
    }
    copy::uninstall(&host)?;
    state::remove(&host)?;
    Ok(())
}

/// The node's label, which the RuntimeClass's nodeSelector names: set by
/// the DaemonSet's own step (kubectl), not here; said.
fn label() {
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() {
        say!(
            "Ready. The DaemonSet's label step marks the node {}=true.",
            register::LABEL
        );
    } else {
        say!("Ready. Not in Kubernetes: no node to label.");
    }
}

/// Which engine's name the lines say.
fn engine_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Containerd => "containerd",
        Engine::Crio => "CRI-O",
        Engine::Docker => "dockerd",
    }
}
