//! Which verb an engine asked the real runtime for, read from runc's (or
//! crun's) command line as the shims write it:
//! `--root R --log L --log-format json create --bundle B --pid-file P ID`.
//!
//! Only `create` and `run` (the bundle's `config.json`) and `exec` (its
//! `--process` file) are edited, and `delete` read for its id (the
//! account); every other verb, and anything this
//! parser does not understand, goes to the real runtime untouched. The
//! line itself is never changed: what is read here only says which file to
//! edit, and what to write in the log.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Global options of runc and crun that take a value (`--log L` or
/// `--log=L`; runc's flag library takes one dash too).
const GLOBAL_VALUED: &[&str] = &[
    "log",
    "log-format",
    "log-level",
    "root",
    "criu",
    "rootless",
    "cgroup-manager",
];

/// Options of `create` and `run` that take a value.
const CREATE_VALUED: &[&str] = &[
    "bundle",
    "b",
    "console-socket",
    "pid-file",
    "preserve-fds",
    "config",
    "f",
];

/// Options of `exec` that take a value.
const EXEC_VALUED: &[&str] = &[
    "process",
    "p",
    "console-socket",
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
];

/// The log the runtime was told to write, where the shims read it.
#[derive(Debug, Default, PartialEq)]
pub struct Log {
    pub file: Option<PathBuf>,
    /// `--log-format json`; runc's default is text.
    pub json: bool,
}

/// What the runtime is asked to do, as far as eatmydata cares.
#[derive(Debug, PartialEq)]
pub enum Verb {
    /// `create` or `run`: the bundle (`--bundle`, default the current
    /// folder), crun's `--config` file if given, and the container's id.
    Create {
        bundle: PathBuf,
        config: Option<PathBuf>,
        id: Option<OsString>,
    },
    /// `exec`: the `--process` file, if the process is given by one.
    Exec {
        process: Option<PathBuf>,
        id: Option<OsString>,
    },
    /// `delete`: the container's id, for its account.
    Delete { id: Option<OsString> },
    /// Anything else: `start`, `state`, `kill`, `features`, ...
    Other,
}

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

/// Walks options from `args`: for each, `seen(name, value)`; stops at the
/// first argument that is not an option and returns its index.
fn options<'a>(
    args: &'a [OsString],
    valued: &[&str],
    mut seen: impl FnMut(&[u8], Option<&'a OsStr>),
) -> usize {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_bytes();
        if arg == b"--" {
            return i + 1;
        }
        let Some((name, inline)) = option(arg) else {
            return i;
        };
        let takes = valued.iter().any(|v| v.as_bytes() == name);
        let value = match inline {
            Some(value) => Some(OsStr::from_bytes(value)),
            None if takes => {
                i += 1;
                args.get(i).map(OsString::as_os_str)
            }
            None => None,
        };
        seen(name, value);
        i += 1;
    }
    i
}

/// Reads the line (without argv\[0\] and without our own options).
pub fn parse(args: &[OsString]) -> Line {
    let (mut root, mut log) = (None, Log::default());
    let at = options(args, GLOBAL_VALUED, |name, value| match (name, value) {
        (b"root", Some(v)) => root = Some(PathBuf::from(v)),
        (b"log", Some(v)) => log.file = Some(PathBuf::from(v)),
        (b"log-format", Some(v)) => log.json = v.as_bytes() == b"json",
        _ => {}
    });
    let verb = match args.get(at).map(|v| v.as_bytes()) {
        Some(b"create" | b"run") => create(&args[at + 1..]),
        Some(b"exec") => exec(&args[at + 1..]),
        Some(b"delete") => {
            let rest = &args[at + 1..];
            let at = options(rest, &[], |_, _| {});
            Verb::Delete {
                id: rest.get(at).cloned(),
            }
        }
        _ => Verb::Other,
    };
    Line { root, log, verb }
}

fn create(args: &[OsString]) -> Verb {
    let (mut bundle, mut config) = (None, None);
    let at = options(args, CREATE_VALUED, |name, value| match (name, value) {
        (b"bundle" | b"b", Some(v)) => bundle = Some(PathBuf::from(v)),
        (b"config" | b"f", Some(v)) => config = Some(PathBuf::from(v)),
        _ => {}
    });
    Verb::Create {
        bundle: bundle.unwrap_or_else(|| PathBuf::from(".")),
        config,
        id: args.get(at).cloned(),
    }
}

fn exec(args: &[OsString]) -> Verb {
    let mut process = None;
    let at = options(args, EXEC_VALUED, |name, value| {
        if let (b"process" | b"p", Some(v)) = (name, value) {
            process = Some(PathBuf::from(v));
        }
    });
    Verb::Exec {
        process,
        id: args.get(at).cloned(),
    }
}

#[cfg(test)]
mod tests;
