//! `eatmydata-runtime`: an OCI runtime in the habits of
//! `nvidia-container-runtime`. On `create` and `run` it edits the bundle's
//! `config.json` (`edit/`: the library mounted and preloaded, the sync
//! calls answered by the seccomp profile), on `exec --process FILE` that
//! file, and then executes the real runtime with the arguments it was
//! given, byte for byte; every other verb goes straight to it (one that
//! neither runc nor crun knows, or runc's typed by a user who is not root,
//! as a child, whose refusal gets a line of ours: `unheard.rs`). Alone, or
//! with `--help`, it gives its own help.
//!
//! `eatmydata-runtime [--eatmydata-runtime=NAME|PATH] RUNC-ARGS...`: our own
//! options come first; the real runtime is the one they name, else the one
//! `EATMYDATA_RUNTIME` names (for an engine that passes no arguments: set
//! in containerd's service, its shims inherit it; podman's conmon does not
//! pass the caller's environment on, see docs/runtime.md), else `runc` from
//! `PATH`, else `crun`; never this program. A spec that cannot
//! be read or parsed fails the verb with a message starting `eatmydata:`,
//! the spec untouched and the container never started.
//! `eatmydata-runtime configure ENGINE ...` registers the runtime
//! (`configure/`); `install` and `uninstall` do that and the rest of a
//! node's installation (`install/`).

/// `println!` for the verbs that change root's files (`configure`,
/// `install`, `uninstall`): a reader that has gone (`| head`) must not stop
/// them between writing a file and telling the engine, so what stdout
/// cannot take is dropped (with [`outlive_a_closed_stdout`]).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!`, the same way as [`say!`].
macro_rules! say_part {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

mod account;
mod barrier;
mod bundle;
mod check;
mod configure;
pub mod edit;
mod help;
mod input;
mod install;
mod log;
mod process;
mod state;
mod unheard;
mod verbs;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::{error, exec, library, search};
use bundle::Problem;
pub use configure::REGISTERED;
/// What `configure docker --remove` leaves under [`REGISTERED`] while
/// containers made under it exist: a plain alias of runc, not eatmydata.
pub(crate) use configure::docker::RUNC as REMOVED_ALIAS;
use process::Handed;
use verbs::{Line, Verb};

/// Our option naming the real runtime.
const RUNTIME_OPTION: &str = "--eatmydata-runtime";
/// Our option keeping the syncs on binds of the user's host folders in
/// every container (`configure ENGINE --keep-binds`: `edit/keep.rs`).
pub const KEEP_BINDS_OPTION: &str = "--eatmydata-keep-binds";
/// The variable naming it, where an engine cannot pass our option.
pub const RUNTIME_VARIABLE: &str = "EATMYDATA_RUNTIME";
/// The real runtimes looked for in `PATH`, in order.
const DEFAULTS: [&str; 2] = ["runc", "crun"];

/// The file name that makes the command the runtime.
pub const NAME: &str = "eatmydata-runtime";

/// Whether `argv0` names the runtime: its file name is [`NAME`].
pub fn is_its_name(argv0: &OsStr) -> bool {
    Path::new(argv0).file_name() == Some(OsStr::new(NAME))
}

/// What a file we could not use was for: the message says what did not
/// start.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Subject {
    /// A bundle's spec, on `create` or `run`.
    Container,
    /// An `exec` process file.
    Process,
}

impl Subject {
    fn not_started(self) -> &'static str {
        match self {
            Subject::Container => "container not started",
            Subject::Process => "process not started",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Subject::Container => "spec",
            Subject::Process => "process",
        }
    }
}

/// A failure of the runtime itself; `Display` is the message after
/// `eatmydata: `.
#[derive(Debug)]
enum Failure {
    Usage(String),
    NoRuntime,
    Ourselves(PathBuf),
    Command(error::Error),
    /// A spec or process file that is there and cannot be used.
    File(Subject, PathBuf, Problem),
}

impl Failure {
    /// 2 for usage, 127 and 126 for a real runtime missing or not
    /// runnable (as `env(1)`), 125 for a file that cannot be edited.
    fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::NoRuntime => 127,
            Failure::Ourselves(_) => 126,
            Failure::Command(error) => error.exit_code(),
            Failure::File(..) => 125,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(message) => write!(f, "{message}"),
            Failure::NoRuntime => write!(
                f,
                "no real OCI runtime: neither runc nor crun is in PATH; name one with \
                 {RUNTIME_OPTION}=PATH or {RUNTIME_VARIABLE}=PATH"
            ),
            Failure::Ourselves(path) => write!(
                f,
                "the real runtime named, {}, is eatmydata-runtime itself; name runc or crun",
                path.display()
            ),
            Failure::Command(error) => write!(f, "{error}"),
            Failure::File(subject, path, problem) => {
                let (path, not) = (path.display(), subject.not_started());
                match problem {
                    Problem::Read(e) => write!(f, "cannot read {path}: {e}; {not}"),
                    Problem::Parse(e) => {
                        write!(f, "{path} is not valid JSON ({e}); left as it is, {not}")
                    }
                    Problem::Edit(why) => write!(
                        f,
                        "{path} is not a {} eatmydata can edit: {why}; left as it is, {not}",
                        subject.noun()
                    ),
                    Problem::Write(e) => write!(
                        f,
                        "cannot write {path}: {}; left as it was, {not}",
                        error::plain(e)
                    ),
                }
            }
        }
    }
}

/// The runtime's entry, with the whole argv; returns only on failure.
pub fn main(argv: Vec<OsString>) -> std::ffi::c_int {
    let mut args = argv.into_iter().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "configure") {
        return configure::run(args.skip(1).collect());
    }
    if args.peek().is_some_and(|a| a == "check") {
        return check::run(args.skip(1).collect());
    }
    if args.peek().is_some_and(|a| a == "report") {
        return account::report(args.skip(1).collect());
    }
    if let Some(verb) = args.next_if(|a| a == "install" || a == "uninstall") {
        return install::run(verb == "uninstall", args.collect());
    }
    // Alone, or asking for help: ours, not runc's (no engine calls either).
    let alone = args.peek().is_none();
    if alone
        || args
            .peek()
            .is_some_and(|a| a == "--help" || a == "-h" || a == "help")
    {
        let mut rest = args.clone().skip(1);
        // `help VERB` is runc's help for its verb.
        if alone || rest.next().is_none() {
            print!("{}", help::text());
            return 0;
        }
    }
    let mut log = verbs::Log::default();
    let failure = match run(args.collect(), &mut log) {
        Ok(never) => match never {},
        Err(failure) => failure,
    };
    let message = format!("eatmydata: {failure}");
    log::say(&log, log::Level::Error, &message);
    eprintln!("{message}");
    std::ffi::c_int::from(failure.exit_code())
}

/// Our options, as given.
#[derive(Debug, Default, PartialEq)]
struct Ours {
    /// The real runtime named, if.
    runtime: Option<OsString>,
    keep_binds: bool,
}

/// Takes our options off the front of `args`.
fn our_options(args: &mut Vec<OsString>) -> Result<Ours, Failure> {
    let mut named = None;
    let mut keep_binds = false;
    while let Some(arg) = args.first() {
        let bytes = arg.as_bytes();
        if !bytes.starts_with(b"--eatmydata-") {
            break;
        }
        let arg = args.remove(0);
        let bytes = arg.as_bytes();
        if bytes == RUNTIME_OPTION.as_bytes() {
            if args.is_empty() {
                return Err(Failure::Usage(format!("{RUNTIME_OPTION} needs a value")));
            }
            named = Some(args.remove(0));
        } else if let Some(value) = bytes.strip_prefix(format!("{RUNTIME_OPTION}=").as_bytes()) {
            named = Some(OsStr::from_bytes(value).to_owned());
        } else if bytes == KEEP_BINDS_OPTION.as_bytes() {
            keep_binds = true;
        } else {
            return Err(Failure::Usage(format!(
                "unknown option '{}' (eatmydata-runtime's own options are \
                 {RUNTIME_OPTION}=NAME|PATH and {KEEP_BINDS_OPTION})",
                arg.to_string_lossy()
            )));
        }
    }
    Ok(Ours {
        runtime: named,
        keep_binds,
    })
}

/// The real runtime: its path, and the name it was given as (`runc`, or a
/// path), which it gets as its argv\[0\] as it would called alone (runc
/// names itself by it in its messages).
fn real_runtime(named: Option<OsString>) -> Result<(PathBuf, OsString), Failure> {
    let named = named.or_else(|| std::env::var_os(RUNTIME_VARIABLE).filter(|v| !v.is_empty()));
    let (path, name) = match named {
        Some(named) => (search::resolve(&named).map_err(Failure::Command)?, named),
        None => DEFAULTS
            .iter()
            .find_map(|name| Some((search::resolve(OsStr::new(name)).ok()?, name.into())))
            .ok_or(Failure::NoRuntime)?,
    };
    let us = library::this_program().and_then(|p| p.canonicalize().ok());
    if us.is_some() && path.canonicalize().ok() == us {
        return Err(Failure::Ourselves(path));
    }
    Ok((path, name))
}

/// Edits what the verb needs, then executes the real runtime.
fn run(mut args: Vec<OsString>, log: &mut verbs::Log) -> Result<std::convert::Infallible, Failure> {
    let Ours {
        runtime: named,
        keep_binds,
    } = our_options(&mut args)?;
    let Line {
        root,
        log: runtime_log,
        verb,
    } = verbs::parse(&args);
    // Known before anything can fail, so that the shim reads why.
    *log = runtime_log;
    let (runtime, argv0) = real_runtime(named)?;
    match verb {
        Verb::Create {
            bundle,
            config,
            id,
            waits,
        } => {
            let path = bundle.join(config.unwrap_or_else(|| "config.json".into()));
            let mut account_said = String::new();
            // A step that waits: what the barrier flushes once it ends.
            let mut step = None;
            // No spec there: the real runtime's own error, not ours.
            if let Some(done) = edit(&path, |value| {
                if let Some(why) = edit::off(value) {
                    return Ok(edit::Done::Off(why));
                }
                // Only now: a container switched off needs no library.
                let library = library::locate_for(library::Caller::Runtime)
                    .map_err(Failure::Command)?
                    .path;
                let done = edit::create(value, &bundle, &library, keep_binds).map_err(|why| {
                    Failure::File(Subject::Container, path.clone(), Problem::Edit(why))
                })?;
                // The report file goes beside the library only: where the
                // library has no place (a mount of the user's there), the
                // user's file is not named in EATMYDATA_REPORT either.
                account_said = match &done {
                    edit::Done::Created {
                        library: Ok(()),
                        kept,
                        ..
                    } => {
                        let state = state::root_of(&runtime, root.as_deref());
                        account::at_create(value, Some(&id), &state, &bundle, kept)
                    }
                    _ => "no account (no library)".to_owned(),
                };
                if let Some(builder) = barrier::step(value, &id, &bundle, waits) {
                    let targets = barrier::resolved(barrier::targets(value, &bundle));
                    match waits {
                        true => step = Some((builder, targets)),
                        false => barrier::mark(value, builder, &targets).map_err(|why| {
                            Failure::File(Subject::Container, path.clone(), Problem::Edit(why))
                        })?,
                    }
                }
                Ok(done)
            })? {
                say(log, &id, &done.describe());
            }
            if !account_said.is_empty() {
                say(log, &id, &account_said);
            }
            if let Some((builder, targets)) = step {
                let code = barrier::wait_for(&runtime, &argv0, &args)
                    .map_err(|e| Failure::Command(error::Error::CannotRun(argv0.clone(), e)))?;
                let flushed = barrier::flush(&targets);
                account::barrier(&id, flushed.flushed);
                say(log, &id, &flushed.describe(builder.name()));
                std::process::exit(code);
            }
        }
        Verb::Exec {
            process: Some(process),
            id,
        } => {
            // Decided before the file is opened: without the library it is
            // not read at all, and a pipe keeps its bytes for the runtime.
            let container = state::container(&runtime, root.as_deref(), &id);
            let mounted = container
                .as_ref()
                .is_some_and(|(_, config)| edit::library::source(config).is_some());
            if mounted {
                let reported = container
                    .as_ref()
                    .is_some_and(|(_, config)| edit::account::has_report(config));
                let handed = process::hand_on(&process, |value| {
                    let done = edit::exec(value, container)?;
                    if reported && done.changed() {
                        let env = value
                            .get_mut("env")
                            .and_then(serde_json::Value::as_array_mut);
                        env.into_iter().for_each(edit::account::name_report);
                    }
                    Ok(done)
                })
                .map_err(|p| Failure::File(Subject::Process, process.path.clone(), p))?;
                let done = match handed {
                    Handed::Read { arg, done } => {
                        args[process.at] = arg;
                        done
                    }
                    Handed::Unchanged(done) => done,
                };
                say(log, &id, &done.describe());
            }
        }
        Verb::Delete { id } => {
            flush_marked(&runtime, root.as_deref(), &id, log);
            if account::has_folder(&id) {
                let (code, said) = account::delete(&runtime, &args, &id).map_err(|e| {
                    Failure::Command(error::Error::CannotRun(runtime.clone().into_os_string(), e))
                })?;
                say(log, &id, &said);
                std::process::exit(code);
            }
        }
        Verb::Unknown { option } => {
            let message = format!("option {option} unknown to eatmydata: handed on untouched");
            say(log, OsStr::new(""), &message);
        }
        Verb::Unheard { verb } => {
            let code = unheard::run(&runtime, &argv0, &args, Some(&verb))
                .map_err(|e| Failure::Command(error::Error::CannotRun(argv0.clone(), e)))?;
            std::process::exit(code);
        }
        Verb::Other if root.is_none() && help::as_root().is_some() => {
            let code = unheard::run(&runtime, &argv0, &args, None)
                .map_err(|e| Failure::Command(error::Error::CannotRun(argv0.clone(), e)))?;
            std::process::exit(code);
        }
        Verb::Exec { process: None, .. } | Verb::Other => {}
    }
    Err(Failure::Command(exec::replace_process(
        &runtime,
        &argv0,
        &args,
        &[],
    )))
}

/// At `delete`, before the real one: the barrier of a step whose create
/// marked it (`barrier.rs`), while its rootfs is still there.
fn flush_marked(runtime: &Path, root: Option<&Path>, id: &OsStr, log: &verbs::Log) {
    let container = state::container(runtime, root, id);
    if let Some((bundle, spec)) = container.filter(|(_, spec)| barrier::marked(spec)) {
        let flushed = barrier::flush(&barrier::marked_targets(&spec, &bundle));
        account::barrier(id, flushed.flushed);
        let builder = spec["annotations"][barrier::ANNOTATION].as_str();
        say(log, id, &flushed.describe(builder.unwrap_or_default()));
    }
}

/// Reads the spec at `path`, edits it with `change`, and writes it back if
/// anything was applied; `None` when there is no file at `path`.
fn edit(
    path: &Path,
    change: impl FnOnce(&mut serde_json::Value) -> Result<edit::Done, Failure>,
) -> Result<Option<edit::Done>, Failure> {
    let failed = |p| Failure::File(Subject::Container, path.to_owned(), p);
    let Some(mut file) = bundle::read(path).map_err(failed)? else {
        return Ok(None);
    };
    let done = change(&mut file.value)?;
    if done.changed() {
        file.write().map_err(failed)?;
    }
    Ok(Some(done))
}

/// The log's line for a container (or for the line, without an id).
fn say(log: &verbs::Log, id: &OsStr, what: &str) {
    let message = match id.to_string_lossy() {
        id if id.is_empty() => format!("eatmydata: {what}"),
        id => format!("eatmydata: {id}: {what}"),
    };
    log::say(log, log::Level::Info, &message);
}

#[cfg(test)]
mod tests;

/// Lets a write to a pipe whose reader has gone fail with `EPIPE` instead
/// of ending the process, for the verbs that change root's files: a
/// handler that does nothing, which, unlike `SIG_IGN`, the programs they
/// start do not inherit.
pub(crate) fn outlive_a_closed_stdout() {
    extern "C" fn nothing(_: libc::c_int) {}
    let handler = nothing as extern "C" fn(libc::c_int);
    // SAFETY: installs a handler that touches nothing, for a signal whose
    // default would end the process; async-signal-safe by being empty.
    unsafe { libc::signal(libc::SIGPIPE, handler as libc::sighandler_t) };
}
