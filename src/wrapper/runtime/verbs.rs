//! Which verb an engine asked the real runtime for, read from runc's (or
//! crun's) command line as the callers write it: containerd's shim and
//! BuildKit (go-runc: `--root R --log L --log-format json create --bundle B
//! --pid-file P ID`, `run --bundle B --keep ID`, `exec --process F --detach
//! --pid-file P ID`, `delete ID`), docker's, and podman's conmon
//! (`--systemd-cgroup create --bundle B --pid-file P --no-pivot ID`).
//!
//! Every option runc and crun know is listed below with whether it takes a
//! value, so that a flag (`--keep`, `-d`) is never read as taking the
//! bundle or the id after it. A help option (`-h`, `--help`), an option
//! not listed, or a line without its id is not ours to read: it goes to
//! the real runtime untouched, which prints its help or its own error.
//! The line itself is never changed but for one value: an `exec` process
//! file we read is handed on by another name (`mod.rs`).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// The options of one verb (or of the globals) in runc and crun: those
/// that take a value (`--log L`, `--log=L`; runc's flag library takes one
/// dash too), and the flags.
struct Options {
    valued: &'static [&'static str],
    flags: &'static [&'static str],
}

/// Asking for help, wherever it comes; runc's flag library knows both.
const HELP: [&str; 2] = ["help", "h"];

const GLOBAL: Options = Options {
    valued: &[
        "log",
        "log-format",
        "log-level",
        "root",
        "criu",
        "rootless",
        "cgroup-manager",
    ],
    flags: &["debug", "systemd-cgroup", "version", "v"],
};

/// `create` and `run` (runc's run adds `--detach`, `--keep`,
/// `--no-subreaper`; crun's create takes `--no-subreaper` too).
const CREATE: Options = Options {
    valued: &[
        "bundle",
        "b",
        "console-socket",
        "pidfd-socket",
        "pid-file",
        "preserve-fds",
        "config",
        "f",
    ],
    flags: &[
        "detach",
        "d",
        "keep",
        "no-subreaper",
        "no-pivot",
        "no-new-keyring",
    ],
};

const EXEC: Options = Options {
    valued: &[
        "process",
        "p",
        "console-socket",
        "pidfd-socket",
        "cwd",
        "env",
        "e",
        "user",
        "u",
        "additional-gids",
        "g",
        "process-label",
        "apparmor",
        "cap",
        "c",
        "preserve-fds",
        "pid-file",
        "cgroup",
    ],
    // crun's `--tty` takes an optional value, only as `--tty=VALUE`.
    flags: &["tty", "t", "detach", "d", "no-new-privs", "ignore-paused"],
};

const DELETE: Options = Options {
    valued: &[],
    flags: &["force", "f"],
};

/// The log the runtime was told to write, where the shims read it.
#[derive(Debug, Default, PartialEq)]
pub struct Log {
    pub file: Option<PathBuf>,
    /// `--log-format json`; runc's default is text.
    pub json: bool,
}

/// Where an `exec` process file was named on the line: the argument at
/// `at` is `prefix` (`--process=`, or nothing when the value stands
/// alone) followed by `path`.
#[derive(Debug, PartialEq)]
pub struct ProcessFile {
    pub path: PathBuf,
    pub at: usize,
    pub prefix: Vec<u8>,
}

impl ProcessFile {
    /// The argument that names `path` instead, in the same form.
    pub fn renamed(&self, path: &OsStr) -> OsString {
        let mut arg = self.prefix.clone();
        arg.extend_from_slice(path.as_bytes());
        OsString::from_vec(arg)
    }
}

/// What the runtime is asked to do, as far as eatmydata cares.
#[derive(Debug, PartialEq)]
pub enum Verb {
    /// `create` or `run`: the bundle (`--bundle`, default the current
    /// folder), crun's `--config` file if given, and the container's id;
    /// `waits` for a `run` without `--detach`, which lasts as long as the
    /// container's process (BuildKit's steps: go-runc's `Run`).
    Create {
        bundle: PathBuf,
        config: Option<PathBuf>,
        id: OsString,
        waits: bool,
    },
    /// `exec`: the `--process` file, if the process is given by one.
    Exec {
        process: Option<ProcessFile>,
        id: OsString,
    },
    /// `delete`: the container is gone after it.
    Delete { id: OsString },
    /// An option this reader does not know: the line is handed on as it
    /// is, and the log says so.
    Unknown { option: String },
    /// A verb neither runc nor crun has (a typo, or one newer than this
    /// list): still handed on, but the real runtime's refusal gets a line
    /// naming eatmydata-runtime's own verbs.
    Unheard { verb: OsString },
    /// Anything else: `start`, `state`, `kill`, `features`, a help
    /// option, a line without its id, ...
    Other,
}

/// The verbs runc and crun know (runc 1.1's, with `help`'s alias `h`
/// and the hidden `init`; crun's `mounts`): any other is [`Verb::Unheard`].
const KNOWN: [&str; 21] = [
    "checkpoint",
    "create",
    "delete",
    "events",
    "exec",
    "features",
    "help",
    "h",
    "init",
    "kill",
    "list",
    "mounts",
    "pause",
    "ps",
    "restore",
    "resume",
    "run",
    "spec",
    "start",
    "state",
    "update",
];

/// The line, read.
#[derive(Debug, PartialEq)]
pub struct Line {
    pub root: Option<PathBuf>,
    pub log: Log,
    pub verb: Verb,
}

/// An option's name without its dashes, and its inline value after `=`.
fn option(arg: &[u8]) -> Option<(&[u8], Option<&[u8]>)> {
    let body = arg.strip_prefix(b"--").or_else(|| arg.strip_prefix(b"-"))?;
    if body.is_empty() {
        return None;
    }
    Some(match body.iter().position(|&b| b == b'=') {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    })
}

/// How a walk over options ended.
#[derive(Debug, PartialEq)]
enum Walk {
    /// At the first argument that is not an option (or past `--`).
    At(usize),
    /// A help option: the real runtime prints its help.
    Help,
    /// An option not in the table.
    Unknown(String),
    /// A valued option at the end of the line, without its value.
    Missing,
}

/// One option seen: its name, its value and where the value is.
struct Seen<'a> {
    name: &'a [u8],
    value: Option<&'a OsStr>,
    at: usize,
    prefix: &'a [u8],
}

/// Walks the options at the start of `args` (from `start`): for each,
/// `seen`.
fn options<'a>(
    args: &'a [OsString],
    start: usize,
    table: &Options,
    mut seen: impl FnMut(Seen<'a>),
) -> Walk {
    let mut i = start;
    while i < args.len() {
        let arg = args[i].as_bytes();
        if arg == b"--" {
            return Walk::At(i + 1);
        }
        let Some((name, inline)) = option(arg) else {
            return Walk::At(i);
        };
        let is = |list: &[&str]| list.iter().any(|v| v.as_bytes() == name);
        if is(&HELP) {
            return Walk::Help;
        }
        if !is(table.valued) && !is(table.flags) {
            return Walk::Unknown(String::from_utf8_lossy(arg).into_owned());
        }
        let (value, at, prefix) = match inline {
            Some(value) => (
                Some(OsStr::from_bytes(value)),
                i,
                &arg[..arg.len() - value.len()],
            ),
            None if is(table.valued) => {
                i += 1;
                match args.get(i) {
                    Some(value) => (Some(value.as_os_str()), i, &b""[..]),
                    None => return Walk::Missing,
                }
            }
            None => (None, i, &b""[..]),
        };
        seen(Seen {
            name,
            value,
            at,
            prefix,
        });
        i += 1;
    }
    Walk::At(i)
}

/// Reads the line (without argv\[0\] and without our own options).
pub fn parse(args: &[OsString]) -> Line {
    let (mut root, mut log) = (None, Log::default());
    let walk = options(args, 0, &GLOBAL, |seen| match (seen.name, seen.value) {
        (b"root", Some(v)) => root = Some(PathBuf::from(v)),
        (b"log", Some(v)) => log.file = Some(PathBuf::from(v)),
        (b"log-format", Some(v)) => log.json = v.as_bytes() == b"json",
        _ => {}
    });
    let verb = match walk {
        Walk::At(at) => match args.get(at).map(|v| v.as_bytes()) {
            Some(b"create") => create(args, at + 1, false),
            Some(b"run") => create(args, at + 1, true),
            Some(b"exec") => exec(args, at + 1),
            Some(b"delete") => delete(args, at + 1),
            Some(word) if !KNOWN.iter().any(|k| k.as_bytes() == word) => Verb::Unheard {
                verb: OsStr::from_bytes(word).to_owned(),
            },
            _ => Verb::Other,
        },
        Walk::Unknown(option) => Verb::Unknown { option },
        Walk::Help | Walk::Missing => Verb::Other,
    };
    Line { root, log, verb }
}

/// The verb's id at `at`, or why the line is not ours to read.
fn id(args: &[OsString], walk: Walk) -> Result<OsString, Verb> {
    match walk {
        Walk::At(at) => args.get(at).cloned().ok_or(Verb::Other),
        Walk::Unknown(option) => Err(Verb::Unknown { option }),
        Walk::Help | Walk::Missing => Err(Verb::Other),
    }
}

/// `create`, or `run` (`run`: whether it waits, without `--detach`).
fn create(args: &[OsString], start: usize, run: bool) -> Verb {
    let (mut bundle, mut config, mut detach) = (None, None, false);
    let walk = options(args, start, &CREATE, |seen| match (seen.name, seen.value) {
        (b"bundle" | b"b", Some(v)) => bundle = Some(PathBuf::from(v)),
        (b"config" | b"f", Some(v)) => config = Some(PathBuf::from(v)),
        (b"detach" | b"d", value) => detach = value.is_none_or(|v| v.as_bytes() != b"false"),
        _ => {}
    });
    match id(args, walk) {
        Ok(id) => Verb::Create {
            bundle: bundle.unwrap_or_else(|| PathBuf::from(".")),
            config,
            id,
            waits: run && !detach,
        },
        Err(verb) => verb,
    }
}

fn exec(args: &[OsString], start: usize) -> Verb {
    let mut process = None;
    let walk = options(args, start, &EXEC, |seen| {
        if let (b"process" | b"p", Some(v)) = (seen.name, seen.value) {
            process = Some(ProcessFile {
                path: PathBuf::from(v),
                at: seen.at,
                prefix: seen.prefix.to_vec(),
            });
        }
    });
    match id(args, walk) {
        Ok(id) => Verb::Exec { process, id },
        Err(verb) => verb,
    }
}

fn delete(args: &[OsString], start: usize) -> Verb {
    let walk = options(args, start, &DELETE, |_| {});
    match id(args, walk) {
        Ok(id) => Verb::Delete { id },
        Err(verb) => verb,
    }
}

#[cfg(test)]
mod tests;
