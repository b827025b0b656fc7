//! Where libeatmydata.so lives on a host, and where root keeps what it
//! runs: the team's one answer (decision H1 of this round), for the
//! `eatmydata` command, for the OCI runtime that mounts the library into
//! containers, and for `configure` and `install`, which place it and
//! register the runtime.
//!
//! ## The rule every place is judged by
//!
//! A place is *safe* for a caller when the file and every folder from `/`
//! down to it belong to root or to the caller, and no one else may write
//! them (`trust.rs`: sudo's secure-path rule, checked on descriptors
//! opened one level at a time, `O_NOFOLLOW`, never through a link). A
//! file is safe when it is a regular file of root's or the caller's,
//! writable by its owner alone. The check is made on the *real* path
//! (links resolved once), and that real path is what we hand to ld.so,
//! bind into a container or register with an engine: so the name later
//! resolved from `/` leads where the check saw it lead, and no link on the
//! way, in a folder someone else controls, can be swapped after.
//! For root (and uid 0 of a user namespace), sticky folders such as
//! `/tmp` are refused on the way too; for a user they are allowed only
//! for the temporary places of step 5.
//!
//! ## Where the library comes from
//!
//! [`locate`] takes the first of these that is there and safe:
//!
//! 1. `EATMYDATA_LIBRARY`, when set: the caller's own choice, not checked
//!    (whoever sets root's environment already runs code as root).
//! 2. An **installed copy** (`installed.rs`): beside this program's real
//!    path (a build tree's `target/release/`), `PREFIX/lib/eatmydata/`,
//!    `PREFIX/lib/`, or Debian's `/usr/lib/<multiarch>/libeatmydata.so.1`,
//!    where PREFIX is the parent of the folder holding the command, used
//!    only if it is safe (`real.rs`: a link on its way is read only in a
//!    folder that passed, so a link someone else planted is refused with
//!    the folder holding it, wherever it points). One that is there but not safe is passed over
//!    and named under `-v`, never loaded: with the command at
//!    `/tmp/emd/eatmydata`, another user's `/tmp/lib/libeatmydata.so` is
//!    not root's library.
//! 3. The **placed copy** (`place.rs`):
//!    `PREFIX/lib/eatmydata/libeatmydata-<sha256[..16]>.so`, the library
//!    this command carries, written once per content beside it where
//!    PREFIX is safe: `/usr/local/bin/eatmydata` has
//!    `/usr/local/lib/eatmydata/libeatmydata-<h>.so`, and
//!    `~/.local/bin/eatmydata` has `~/.local/lib/eatmydata/...`. Written
//!    by `configure` and `install` at registration ([`place`]), and by
//!    root (or uid 0 of a user namespace) when missing. It must hold the
//!    carried bytes exactly.
//! 4. For root and the runtime only, **root's home** ([`home`]): the
//!    first of `/run/eatmydata/` and `/var/lib/eatmydata/` that is safe
//!    and not mounted `noexec` (Ubuntu mounts `/run` `noexec`; the loader
//!    cannot map from there), made mode 0755 root when missing, holding
//!    `libeatmydata-<h>.so` as in step 3. Every Linux host has one of
//!    them, so root runs the single file from anywhere (`/tmp/x`,
//!    `~user/.cargo/bin` under `sudo`, a runner's work folder) and never
//!    loads what another user can change. `EATMYDATA_HOME` names another
//!    folder instead of both (tests, and hosts whose `/run` and `/var` are
//!    unusable); it must be safe too, so it grants nothing. With it set,
//!    the runtime's account and its containers' reports live under it as
//!    well (`account.jsonl`, `containers/`): one variable keeps a test
//!    off the machine's own state.
//! 5. Only for a caller that is not root, and never for the runtime: the
//!    carried copy written out to a shared temporary place (`embedded.rs`:
//!    `$TMPDIR`, `/tmp`, `/var/tmp`, `/dev/shm`, under the same rule, a
//!    sticky folder allowed, and a private folder with an unguessable name
//!    when someone else took `eatmydata-<uid>` first). So the command
//!    alone, as a user's `cargo install` leaves it, still works.
//!
//! Root stops with exit 125 only where none of 2-4 can be used or written,
//! and says, for each place, why.
//!
//! ## The runtime file an engine runs as root
//!
//! `configure` and `install` register only a runtime file that is safe
//! *for root* (root's alone, never the caller's): where this command is
//! not, they copy it to `/usr/local/eatmydata/bin/eatmydata-runtime` (the
//! node installer's place; `EATMYDATA_HOME/bin/` when that is set), place
//! the library beside that copy, register the copy, and say so. A
//! `--runtime-path` must name this very command (same content). Before any
//! engine file changes, `eatmydata-runtime check` proves the registered
//! file works: it finds the real runtime, the library (steps 1-4), and
//! edits a throw-away spec as `create` would.
//!
//! Why root never uses the temporary places: root's `TMPDIR` may be a
//! user's folder (`sudo -E`, `su` without `-`), and whoever can rename in
//! a folder on the path can swap the library between our check and the
//! moment ld.so opens it by name, and run their code as root (issue 28's
//! review did, with `renameat2(RENAME_EXCHANGE)` in a loop). The rule
//! closes that for every place we use.
//!
//! In short, by who runs:
//!
//! - root (and uid 0 of a user namespace): override, installed (safe),
//!   placed (safe prefix), root's home; writes the placed copy or the
//!   home's when missing; never a temporary folder.
//! - the runtime, whoever runs it: the same, and never a temporary folder.
//! - a user: override, installed (safe for the user), a placed copy that
//!   passes the rule (the user's own, or root's), else the temporary
//!   places; writes a placed copy only through `configure` ([`place`]).
//!
//! Where the library goes inside a container is the runtime's
//! (`runtime/edit/library.rs`), from the host path found here.
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
mod home;
mod installed;
mod place;
mod real;
mod trust;

pub use carried::{SHA256, carried};
pub use installed::candidates;
// `unplace` is for --remove and uninstall (decision D1).
#[allow(unused_imports)]
pub use place::{place, placed_path, unplace};
use trust::Trust;

pub const FILE_NAME: &str = "libeatmydata.so";
/// The variable naming root's home instead of [`HOMES`] (rule step 4).
pub const HOME: &str = "EATMYDATA_HOME";
/// Root's own places, in order, when `EATMYDATA_HOME` is not set.
pub const HOMES: [&str; 2] = ["/run/eatmydata", "/var/lib/eatmydata"];

/// Root's home, in the order to try (rule step 4): `EATMYDATA_HOME` alone
/// when set to an absolute path, else [`HOMES`].
pub fn homes() -> Vec<PathBuf> {
    match env::var_os(HOME).map(PathBuf::from) {
        Some(home) if home.is_absolute() => vec![home],
        _ => HOMES.iter().map(PathBuf::from).collect(),
    }
}
pub const OVERRIDE: &str = crate::protocol::LIBRARY;

/// The library found: a real file on the host, and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    /// Its absolute, canonical path (no link), fit to bind-mount or preload.
    pub path: PathBuf,
    pub source: Source,
    /// Copies there but passed over on the way, and why (said under `-v`).
    pub passed: Vec<(PathBuf, String)>,
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
    /// The carried copy in root's home (rule step 4), written by this run
    /// (`written`) or earlier.
    Home { written: bool },
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
            Source::Home { written: true } => "the copy in root's home, written now",
            Source::Home { written: false } => "the copy in root's home",
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
    /// Root or the runtime: every place looked at (installed copies there,
    /// the placed copy, root's home), and why each was passed over.
    Nowhere(Vec<(PathBuf, String)>),
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
            Unwritable::Nowhere(refused) => {
                write!(
                    f,
                    "no place root may load the library from, and none it can write \
                     it to; tried:"
                )?;
                for (place, why) in refused {
                    write!(f, "\n  {}: {why}", place.display())?;
                }
                write!(
                    f,
                    "\nRoot uses a copy only where every folder from / down belongs to \
                     root and no one else may write. Set {HOME} to such a folder (not \
                     mounted noexec), or EATMYDATA_LIBRARY to a copy of libeatmydata.so."
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
                passed: Vec::new(),
            }),
            _ => Err(Error::LibraryMissing {
                looked: vec![path],
                from_override: true,
            }),
        };
    }
    let trust = Trust::caller();
    let exe = this_program();
    let looked = exe
        .as_deref()
        .and_then(Path::parent)
        .map(candidates)
        .unwrap_or_default();
    let mut passed = Vec::new();
    for place in &looked {
        match real::file(place, &trust) {
            Ok(path) => {
                return Ok(Located {
                    path,
                    source: Source::Installed,
                    passed,
                });
            }
            Err(real::Refused::Absent) => {}
            Err(real::Refused::Unsafe(why)) => passed.push((place.clone(), why)),
        }
    }
    if !carried() {
        return Err(Error::LibraryMissing {
            looked,
            from_override: false,
        });
    }
    let roots = trust.is_root() || caller == Caller::Runtime;
    if let Some(exe) = &exe {
        let path = placed_path(exe);
        match place::get(&path, &trust, trust.is_root()) {
            Ok(written) => {
                return Ok(Located {
                    path,
                    source: Source::Placed { written },
                    passed,
                });
            }
            // Not there is the usual case for a user: not worth a line.
            Err(_) if !roots && !path.exists() => {}
            Err(why) => passed.push((path, why)),
        }
    }
    if roots {
        for home in homes() {
            match home::get(&home, &trust) {
                Ok((path, written)) => {
                    return Ok(Located {
                        path,
                        source: Source::Home { written },
                        passed,
                    });
                }
                Err(why) => passed.push((home, why)),
            }
        }
        return Err(Error::LibraryUnwritable(Unwritable::Nowhere(passed)));
    }
    match embedded::write_out(&trust) {
        Ok(out) => Ok(Located {
            path: out.path,
            source: Source::Embedded {
                written: out.written,
                private: out.private,
            },
            passed,
        }),
        Err(more) => {
            passed.extend(more);
            Err(Error::LibraryUnwritable(Unwritable::Temporary(passed)))
        }
    }
}

/// The real path of the file at `path` when it passes the rule for the
/// caller (for root: root's alone, in a chain of root's folders, none
/// sticky): what `configure` and `install` may register for an engine to
/// run; `Err` says why not.
pub fn safe_file(path: &Path) -> Result<PathBuf, String> {
    let path = match path.is_absolute() {
        true => path.to_owned(),
        false => env::current_dir().map_err(|e| e.to_string())?.join(path),
    };
    real::file(&path, &Trust::caller()).map_err(|refused| match refused {
        real::Refused::Absent => format!("{} is not there", path.display()),
        real::Refused::Unsafe(why) => why,
    })
}

/// Whether the folder at `path` (absolute), or the nearest one above it
/// that exists, passes the rule for the caller: a place to make root's
/// files in. `Err` says why not.
pub fn safe_folder(path: &Path) -> Result<(), String> {
    let existing = path
        .ancestors()
        .find(|p| p.exists())
        .unwrap_or(Path::new("/"));
    trust::open(existing, &Trust::caller(), trust::Shared::Refused, |_| {
        Ok(())
    })
    .map(drop)
}

/// The line `--version` gives about the library this command carries.
pub fn carried_line() -> String {
    if carried() {
        format!("library: embedded, sha256 {SHA256}")
    } else {
        "library: not embedded (built with EATMYDATA_EMBED=0): needs an installed one".into()
    }
}

/// Where this program's own bytes are read: the very file running, by
/// the kernel's link to it, whatever its name has become since.
pub const RUNNING: &str = "/proc/self/exe";

/// This program's own bytes, read from the file running ([`RUNNING`]),
/// never by its path: the owner of the folder it is in could put another
/// file at that name meanwhile (even one named `eatmydata (deleted)`,
/// which is what the link reads once the name is gone).
pub fn this_program_bytes() -> std::io::Result<Vec<u8>> {
    std::fs::read(RUNNING)
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
