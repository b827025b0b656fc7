//! What the engine is told to run: this command, and the library beside
//! it. The runtime registered must be this command: a link that resolves
//! to it, or a copy of the same bytes. Anything else sitting at
//! `eatmydata-runtime` beside the command (a planted script, an older
//! build) would run as root for every container.

use std::fs::{self, File};
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::args::Request;
use super::{Error, RUNTIME_FILE};

/// The `eatmydata-runtime` the engine is to run: `--runtime-path` (which
/// must exist and be this command), or the one beside the running
/// command, made as a link to it when missing (said, and not in a dry
/// run); either checked to be this command and to pass the rule of
/// `library/` for the caller (for root: root's, in root's folders). Where
/// this command does not pass it, a copy in root's place for it
/// (`/usr/local/eatmydata/bin/`, or `EATMYDATA_HOME/bin/`), made as the
/// node installer makes its own, said.
pub fn runtime_path(request: &Request) -> Result<PathBuf, Error> {
    let Some(exe) = crate::library::this_program() else {
        return Err(Error::Usage(
            "configure: cannot tell where this command is (no /proc?); give --runtime-path".into(),
        ));
    };
    chosen(request, &exe)
}

/// Refuses a runtime path holding a control character, which would be
/// written into the engine's files: before anything is made for it (the
/// link beside the command, the copy), and for a path given.
fn written_plain(path: &Path) -> Result<(), Error> {
    match path
        .as_os_str()
        .as_bytes()
        .iter()
        .position(|b| b.is_ascii_control())
    {
        None => Ok(()),
        Some(at) => Err(Error::NotThisProgram {
            path: path.to_owned(),
            why: format!(
                "its path holds a control character (byte {at}), which would be written into \
                 the engine's files"
            ),
        }),
    }
}

fn chosen(request: &Request, exe: &Path) -> Result<PathBuf, Error> {
    let checked = |path: PathBuf| {
        written_plain(&path)?;
        match check(&path, exe).and_then(|()| safe(&path)) {
            Ok(()) => Ok(path),
            Err(why) => Err(Error::NotThisProgram { path, why }),
        }
    };
    if let Some(path) = &request.runtime_path {
        if path.symlink_metadata().is_err() {
            return Err(Error::NotThisProgram {
                path: path.clone(),
                why: "it does not exist".into(),
            });
        }
        return checked(path.clone());
    }
    if let Err(why) = crate::library::safe_file(exe) {
        return copied(request, exe, &why);
    }
    let (Some(folder), Some(name)) = (exe.parent(), exe.file_name()) else {
        return Err(Error::Usage(format!(
            "configure: cannot tell the folder of {}; give --runtime-path",
            exe.display()
        )));
    };
    let beside = folder.join(RUNTIME_FILE);
    if beside.symlink_metadata().is_ok() {
        return checked(beside);
    }
    written_plain(&beside)?;
    if request.dry_run {
        say!(
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
    say!(
        "Made {}, a link to {}.",
        beside.display(),
        Path::new(name).display()
    );
    Ok(beside)
}

/// Whether the file at `path` passes the rule for the caller.
fn safe(path: &Path) -> Result<(), String> {
    crate::library::safe_file(path)
        .map(drop)
        .map_err(|why| format!("an engine must not run it from there: {why}"))
}

/// This command copied to root's place for it (the node installer's
/// copier), because `exe` is where root must not run it from (`why`):
/// the copy's `eatmydata-runtime`.
fn copied(request: &Request, exe: &Path, why: &str) -> Result<PathBuf, Error> {
    let (prefix, _) = roots_place();
    let runtime = prefix.join("bin").join(RUNTIME_FILE);
    written_plain(&runtime)?;
    say!(
        "This command is at {}, where an engine must not run it from ({why}): \
         copying it where only root may change it.",
        exe.display(),
    );
    crate::library::safe_folder(&prefix).map_err(Error::Copy)?;
    if request.dry_run {
        say!("Would copy it to {}, and register that.", runtime.display());
        return Ok(runtime);
    }
    let prefix = prefix
        .to_str()
        .ok_or_else(|| Error::Usage(format!("configure: {} is not UTF-8", prefix.display())))?;
    let made = crate::runtime::install::copy_to(Path::new("/"), prefix)
        .map_err(|error| Error::Copy(error.to_string()))?;
    let made = PathBuf::from(made);
    written_plain(&made)?;
    safe(&made).map_err(|why| Error::NotThisProgram {
        path: made.clone(),
        why,
    })?;
    say!("Registering the copy, {}.", made.display());
    Ok(made)
}

/// Root's place for a copy of this command (`/usr/local/eatmydata`, or
/// `EATMYDATA_HOME`), and whether it is the usual one.
pub fn roots_place() -> (PathBuf, bool) {
    match std::env::var_os(crate::library::HOME).map(PathBuf::from) {
        Some(home) if home.is_absolute() => (home, false),
        _ => (PathBuf::from(crate::runtime::install::PREFIX), true),
    }
}

/// Places the library for the runtime at `runtime` (decision D1: a
/// root-owned copy beside the command, which the runtime then uses), or
/// says why not: the runtime places it itself when it runs as root and
/// finds it missing, and without it a container's syncs are still eaten
/// by the seccomp rules.
pub fn place_library(request: &Request, runtime: &Path) {
    if runtime.symlink_metadata().is_err() {
        say!(
            "Note: no library placed: {} is not there yet.",
            runtime.display()
        );
        return;
    }
    let command = fs::canonicalize(runtime).unwrap_or_else(|_| runtime.to_owned());
    let placed = crate::library::placed_path(&command);
    if request.dry_run {
        if !placed.exists() {
            say!("Would place the library at {}.", placed.display());
        }
        return;
    }
    let existed = placed.exists();
    match crate::library::place(Path::new("/"), &command) {
        Ok(path) if !existed => say!("Placed the library at {}.", path.display()),
        Ok(_) => {}
        Err(error) => say!("Note: {error}"),
    }
}

/// Says that the placed library stays: another engine's registration,
/// in a file this run was not given, may use it (and its runtime would
/// only place it again); containers being made meanwhile too. Taking it
/// away is the node installer's uninstall, or the user's `rm`. Nothing
/// when it is under `said` (a folder whose staying was said already).
pub fn library_left(said: Option<&Path>) {
    let Some(command) = crate::library::this_program() else {
        return;
    };
    let placed = crate::library::placed_path(&command);
    let placed = fs::canonicalize(&placed).unwrap_or(placed);
    if said.is_some_and(|folder| placed.starts_with(folder)) {
        return;
    }
    if placed.exists() {
        say!(
            "The library stays at {}: another engine's registration may use it \
             (remove it by hand once none does).",
            placed.display()
        );
    }
}

/// Whether `path` is the program at `this`; `Err` says how it is not.
pub fn check(path: &Path, this: &Path) -> Result<(), String> {
    let resolved = fs::canonicalize(path).map_err(|e| crate::error::plain(&e))?;
    let this = fs::canonicalize(this).map_err(|e| crate::error::plain(&e))?;
    if resolved == this {
        return Ok(());
    }
    // This command's bytes from the file running, not by its name.
    match same_bytes(&resolved, Path::new(crate::library::RUNNING)) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!(
            "it is not this command ({}) nor a link to it, and its bytes differ",
            this.display()
        )),
        Err(error) => Err(format!(
            "it cannot be compared with this command: {}",
            crate::error::plain(&error)
        )),
    }
}

/// Whether two regular files hold the same bytes.
fn same_bytes(a: &Path, b: &Path) -> io::Result<bool> {
    let (mut a, mut b) = (File::open(a)?, File::open(b)?);
    let (meta_a, meta_b) = (a.metadata()?, b.metadata()?);
    if !meta_a.is_file() || meta_a.len() != meta_b.len() {
        return Ok(false);
    }
    let (mut x, mut y) = (vec![0; 1 << 16], vec![0; 1 << 16]);
    loop {
        let n = a.read(&mut x)?;
        if n == 0 {
            return Ok(true);
        }
        b.read_exact(&mut y[..n])?;
        if x[..n] != y[..n] {
            return Ok(false);
        }
    }
}
