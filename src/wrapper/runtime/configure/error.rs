//! What can stop `configure`, each with the message a user reads and its
//! exit status.

use std::fmt;
use std::io;
use std::path::PathBuf;

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
    /// The path given as the engine's file is no regular file of a
    /// config's size: a FIFO, a device, a folder, a huge file.
    NotAFile {
        path: PathBuf,
        what: String,
    },
    /// The runtime to register is not this command.
    NotThisProgram {
        path: PathBuf,
        why: String,
    },
    /// This command could not be copied where root may run it.
    Copy(String),
    /// The runtime to register failed its check: no engine file changed.
    Check {
        path: PathBuf,
        why: String,
    },
}

impl Error {
    /// 2 for usage, 65 (sysexits' EX_DATAERR) for a file it cannot parse,
    /// 78 (EX_CONFIG) for a runtime path that is not this command (or not
    /// one root may run, or not a path to write), 69 (EX_UNAVAILABLE) for a
    /// runtime that failed its check, 125 for the rest, as the command's
    /// own failures.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => 2,
            Error::Unparsable { .. } => 65,
            Error::NotThisProgram { .. } => 78,
            Error::Check { .. } => crate::runtime::check::FAILED,
            Error::Io { .. } | Error::NotAFile { .. } | Error::Copy(_) => 125,
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
            Error::NotAFile { path, what } => write!(
                f,
                "configure: cannot read {}: {what}; nothing was written",
                path.display()
            ),
            Error::NotThisProgram { path, why } => write!(
                f,
                "configure: will not register {}: {why}; nothing was written. Remove it, \
                 or make it a link to this command, or give --runtime-path",
                path.display()
            ),
            Error::Copy(why) => write!(
                f,
                "configure: cannot copy this command where root may run it: {why}; \
                 nothing was registered"
            ),
            Error::Check { path, why } => write!(
                f,
                "configure: {} check failed, so no engine file was changed:\n{why}",
                path.display()
            ),
        }
    }
}
