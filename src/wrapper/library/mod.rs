//! Where libeatmydata.so lives on a host: the team's one answer, for the
//! `eatmydata` command, for the OCI runtime that mounts it into
//! containers, and for `configure` and `install`, which place it.
//!
//! [`locate`] takes the first of these that is there:
//!
//! 1. `EATMYDATA_LIBRARY`, when set: the user's own choice, not checked.
//! 2. An installed copy (`installed.rs`): beside this program's real path
//!    (a build tree's `target/release/`), `PREFIX/lib/eatmydata/`,
//!    `PREFIX/lib/`, or Debian's `/usr/lib/<multiarch>/libeatmydata.so.1`,
//!    where PREFIX is the parent of the folder holding the command. It
//!    came with the command, from whoever could write the command.
//! 3. The **placed copy** (`place.rs`):
//!    `PREFIX/lib/eatmydata/libeatmydata-<sha256[..16]>.so`, the library
//!    this command carries, written once per content beside it:
//!    `/usr/local/bin/eatmydata` has
//!    `/usr/local/lib/eatmydata/libeatmydata-<h>.so`, and
//!    `~/.local/bin/eatmydata` has `~/.local/lib/eatmydata/...`.
//!    `configure` and `install` write it at registration ([`place`]; as
//!    root, root's; as a user for a rootless engine, the user's own), and
//!    the command and the runtime write it themselves when they run as
//!    root, or as uid 0 of a user namespace (how rootless podman runs the
//!    runtime, with no environment at all: conmon passes none), and find
//!    it missing. It is used only if the file and every folder from `/`
//!    down to it belong to root or to the caller and no one else may
//!    write them (`trust.rs`, the rule sudo applies to its secure path),
//!    checked on descriptors opened without following a link, and if it
//!    holds the carried bytes exactly. [`unplace`] takes it away again.
//! 4. Only for a caller that is not root, and never for the runtime: the
//!    carried copy written out to a shared temporary place (`embedded.rs`:
//!    `$TMPDIR`, `/tmp`, `/var/tmp`, `/dev/shm`, under the same rule, a
//!    sticky folder allowed, and a private folder with an unguessable name
//!    when someone else took `eatmydata-<uid>` first). So the command
//!    alone, as a user's `cargo install` leaves it, still works.
//!
//! Why root never uses the temporary places: root's `TMPDIR` may be a
//! user's folder (`sudo -E`, `su` without `-`), and whoever can rename in
//! a folder on the path can swap the library between our check and the
//! moment ld.so opens it by name, and run their code as root (issue 28's
//! review did, with `renameat2(RENAME_EXCHANGE)` in a loop). The rule of
//! `trust.rs` closes that for every place we use: no one but root and the
//! caller can rename anything on the path, so the path ld.so resolves
//! later leads where the check, made on descriptors, saw it lead. A place
//! beside the command, under the command's own prefix, is as trustworthy
//! as the command itself, and only root (or the caller) can change it. A
//! root run that cannot use or make the placed copy stops and says why,
//! rather than fall back to a shared folder.
//!
//! In short, by who runs:
//!
//! - root (and uid 0 of a user namespace): override, installed, placed;
//!   writes the placed copy when missing; never a temporary folder.
//! - the runtime, whoever runs it: the same, and never a temporary folder.
//! - a user: override, installed, a placed copy that passes the rule (the
//!   user's own, or root's), else the temporary places; writes a placed
//!   copy only through `configure` ([`place`]).
//!
//! Where the library goes inside a container is the runtime's
//! (`runtime/edit/library.rs`), from the host path found here.
//!
//! Never a fixed system folder: a copy of the command elsewhere could pick
//! up another libeatmydata there (Debian's original) without a word.
//!
//! This program's real path comes from `/proc/self/exe`; where `/proc` is
//! not mounted (a minimal container or chroot), from the path it was
//! executed by, which the kernel leaves in the auxiliary vector.

use std::env;
use std::ffi::{CStr, OsStr};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::Error;

mod at;
mod carried;
mod embedded;
mod installed;
mod place;
mod trust;

pub use carried::{SHA256, carried};
pub use installed::candidates;
// `unplace` is for --remove and uninstall (decision D1).
#[allow(unused_imports)]
pub use place::{place, placed_path, unplace};
use trust::Trust;

pub const FILE_NAME: &str = "libeatmydata.so";
pub const OVERRIDE: &str = crate::protocol::LIBRARY;

/// The library found: a real file on the host, and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    /// Its absolute, canonical path (no link), fit to bind-mount or preload.
    pub path: PathBuf,
    pub source: Source,
}

/// Which of the places in [`locate`]'s order gave the library.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Source {
    /// `EATMYDATA_LIBRARY`.
    Override,
    /// A copy installed beside the command or in its prefix.
    Installed,
    /// The carried copy placed beside the command, by this run
    /// (`written`) or earlier.
    Placed { written: bool },
    /// The carried copy written out to a temporary place by this run
    /// (`written`) or an earlier one; `private` when in a folder of an
    /// unguessable name, because someone else took `eatmydata-<uid>`.
    Embedded { written: bool, private: bool },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Override => "from EATMYDATA_LIBRARY",
            Source::Installed => "the installed copy",
            Source::Placed { written: true } => "the copy placed beside eatmydata, written now",
            Source::Placed { written: false } => "the copy placed beside eatmydata",
            Source::Embedded { written, private } => {
                f.write_str("the copy embedded in eatmydata")?;
                if *written {
                    f.write_str(", written out now")?;
                }
                if *private {
                    f.write_str(", in a private folder: another user took the usual one's name")?;
                }
                return Ok(());
            }
        })
    }
}

/// Why the carried library could be had nowhere.
#[derive(Debug)]
pub enum Unwritable {
    /// Root, the runtime, or `place`: the placed copy, and why not.
    Placed { path: PathBuf, why: String },
    /// `unplace`: the placed copies' folder, and why not.
    #[allow(dead_code)] // for --remove and uninstall (decision D1)
    Unplace { path: PathBuf, why: String },
    /// A caller that is not root: the placed copy's refusal (if it was
    /// looked for), then each temporary place, and why each was passed over.
    Temporary(Vec<(PathBuf, String)>),
}

impl fmt::Display for Unwritable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unwritable::Placed { path, why } => write!(
                f,
                "cannot place the library this command carries at {}: {why}\n\
                 It goes beside the command only where every folder from / down belongs \
                 to root or to the user running it and no one else may write, and root \
                 never takes it from a shared temporary folder. Install eatmydata in such \
                 a prefix (as /usr/local/bin), or set EATMYDATA_LIBRARY to a copy of \
                 libeatmydata.so.",
                path.display()
            ),
            Unwritable::Unplace { path, why } => {
                write!(
                    f,
                    "cannot remove the library placed in {}: {why}",
                    path.display()
                )
            }
            Unwritable::Temporary(refused) => {
                write!(
                    f,
                    "cannot write out the library this command carries; tried:"
                )?;
                for (place, why) in refused {
                    write!(f, "\n  {}: {why}", place.display())?;
                }
                write!(
                    f,
                    "\nSet TMPDIR to a folder it can write to and load from, or \
                     EATMYDATA_LIBRARY to a copy of libeatmydata.so."
                )
            }
        }
    }
}

/// Who is asking: the command may fall back to a temporary place when not
/// root; the runtime never does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Caller {
    Command,
    Runtime,
}

/// The library to preload, for the command.
pub fn locate() -> Result<Located, Error> {
    locate_for(Caller::Command)
}

/// The library to preload or mount, found, placed, or (for the command
/// run by a user who is not root) written out.
pub fn locate_for(caller: Caller) -> Result<Located, Error> {
    if let Some(path) = env::var_os(OVERRIDE).filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return match path.canonicalize() {
            Ok(real) if real.is_file() => Ok(Located {
                path: real,
                source: Source::Override,
            }),
            _ => Err(Error::LibraryMissing {
                looked: vec![path],
                from_override: true,
            }),
        };
    }
    let exe = this_program();
    let looked = exe
        .as_deref()
        .and_then(Path::parent)
        .map(candidates)
        .unwrap_or_default();
    for place in &looked {
        if let Ok(real) = place.canonicalize()
            && real.is_file()
        {
            return Ok(Located {
                path: real,
                source: Source::Installed,
            });
        }
    }
    if !carried() {
        return Err(Error::LibraryMissing {
            looked,
            from_override: false,
        });
    }
    let trust = Trust::caller();
    let no_temporary = trust.is_root() || caller == Caller::Runtime;
    let mut refused = Vec::new();
    if let Some(exe) = &exe {
        let path = placed_path(exe);
        match place::get(&path, &trust, trust.is_root()) {
            Ok(written) => {
                return Ok(Located {
                    path,
                    source: Source::Placed { written },
                });
            }
            Err(why) if no_temporary => {
                return Err(Error::LibraryUnwritable(Unwritable::Placed { path, why }));
            }
            // Not there is the usual case for a user: not worth a line.
            Err(_) if !path.exists() => {}
            Err(why) => refused.push((path, why)),
        }
    } else if no_temporary {
        return Err(Error::LibraryMissing {
            looked,
            from_override: false,
        });
    }
    match embedded::write_out(&trust) {
        Ok(out) => Ok(Located {
            path: out.path,
            source: Source::Embedded {
                written: out.written,
                private: out.private,
            },
        }),
        Err(more) => {
            refused.extend(more);
            Err(Error::LibraryUnwritable(Unwritable::Temporary(refused)))
        }
    }
}

/// The line `--version` gives about the library this command carries.
pub fn carried_line() -> String {
    if carried() {
        format!("library: embedded, sha256 {SHA256}")
    } else {
        "library: not embedded (built with EATMYDATA_EMBED=0): needs an installed one".into()
    }
}

/// This program's real file, whatever link it was run through.
pub fn this_program() -> Option<PathBuf> {
    if let Ok(exe) = env::current_exe() {
        return Some(exe);
    }
    // SAFETY: getauxval only reads the auxiliary vector.
    let execfn = unsafe { libc::getauxval(libc::AT_EXECFN) };
    if execfn == 0 {
        return None;
    }
    // SAFETY: AT_EXECFN is the address of the NUL-terminated path given to
    // execve, which the kernel copied onto our stack for the process's life.
    let name = unsafe { CStr::from_ptr(execfn as *const std::ffi::c_char) };
    // Relative to the folder we were started in, which we have not left.
    let path = env::current_dir()
        .ok()?
        .join(OsStr::from_bytes(name.to_bytes()));
    path.canonicalize().ok()
}
