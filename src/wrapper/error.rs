//! What can go wrong before the command runs, as the user reads it.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::PathBuf;

/// A failure of `eatmydata` itself; `Display` is the message after
/// `eatmydata: `.
#[derive(Debug)]
pub enum Error {
    /// Bad usage: an unknown option, or no command.
    Usage(String),
    /// The library is not where an override said, or nowhere we looked.
    LibraryMissing {
        looked: Vec<PathBuf>,
        from_override: bool,
    },
    /// The library this command carries could be written out nowhere:
    /// each place tried, and why it was passed over.
    LibraryUnwritable(crate::library::Unwritable),
    /// The library's path cannot stand in `LD_PRELOAD`.
    LibraryPath(PathBuf),
    /// The command is nowhere in `PATH`, or its path names nothing.
    NotFound(OsString),
    /// The command exists but cannot be executed.
    CannotRun(OsString, io::Error),
    /// The seccomp filter could not be built or installed.
    Seccomp(String),
    /// `--report` could not make its file.
    Report(io::Error),
    /// `--sync-at-exit` could not make its list.
    FlushList(io::Error),
    /// The command could not be run as a child, or waited for.
    Child(io::Error),
    /// `eatmydata profile`: an engine, version or configuration that
    /// gives no profile, and why.
    Profile(String),
    /// `eatmydata profile --output FILE` could not write it.
    ProfileOutput(PathBuf, io::Error),
}

impl Error {
    /// 2 for usage, 125 for our own failures, 126 and 127 for the command,
    /// as `env(1)` and `timeout(1)` answer.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) | Error::Profile(_) => 2,
            Error::LibraryMissing { .. }
            | Error::LibraryUnwritable(_)
            | Error::LibraryPath(_)
            | Error::Seccomp(_)
            | Error::Report(_)
            | Error::FlushList(_)
            | Error::Child(_)
            | Error::ProfileOutput(..) => 125,
            // A missing interpreter is "not found" too, as env(1) counts it.
            Error::CannotRun(_, error) if error.raw_os_error() == Some(libc::ENOENT) => 127,
            Error::CannotRun(..) => 126,
            Error::NotFound(_) => 127,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(message) => {
                write!(f, "{message}\nTry 'eatmydata --help' for more information.")
            }
            Error::LibraryMissing {
                looked,
                from_override: true,
            } => {
                let path = looked
                    .first()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                write!(f, "EATMYDATA_LIBRARY names {path}, which is not a file")
            }
            Error::LibraryMissing {
                looked,
                from_override: false,
            } if looked.is_empty() => write!(
                f,
                "cannot tell where eatmydata itself is (/proc is not mounted, and the path \
                 it was run by names no file), so cannot find libeatmydata.so beside it; \
                 set EATMYDATA_LIBRARY to its path"
            ),
            Error::LibraryMissing {
                looked,
                from_override: false,
            } => {
                write!(f, "cannot find libeatmydata.so; looked in:")?;
                for path in looked {
                    write!(f, "\n  {}", path.display())?;
                }
                write!(
                    f,
                    "\nThis command was built without the library inside it \
                     (EATMYDATA_EMBED=0) and needs one installed with it: install the \
                     libeatmydata1 package, or run scripts/install.sh from the source, or \
                     set EATMYDATA_LIBRARY to its path."
                )
            }
            Error::LibraryUnwritable(why) => write!(f, "{why}"),
            Error::LibraryPath(path) => write!(
                f,
                "the library's path {} contains a space or a colon, which LD_PRELOAD cannot carry",
                path.display()
            ),
            Error::NotFound(command) => {
                write!(f, "{}: command not found", command.to_string_lossy())
            }
            Error::CannotRun(command, error) => {
                write!(f, "{}: {}", command.to_string_lossy(), plain(error))
            }
            Error::Seccomp(reason) => write!(f, "cannot install the seccomp filter: {reason}"),
            Error::Report(error) => write!(f, "--report: {}", plain(error)),
            Error::FlushList(error) => write!(f, "--sync-at-exit: {}", plain(error)),
            Error::Child(error) => write!(f, "cannot run the command as a child: {}", plain(error)),
            Error::Profile(why) => write!(f, "profile: {why}"),
            Error::ProfileOutput(path, error) => {
                write!(f, "profile: {}: {}", path.display(), plain(error))
            }
        }
    }
}

/// An I/O error's text without Rust's " (os error N)".
pub fn plain(error: &io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}
