//! This command onto the host, in a folder of ours next to nothing of the
//! host's: `/usr/local/eatmydata/bin/eatmydata`, and `eatmydata-runtime`
//! beside it, a link to it (the name makes it the runtime). The library
//! goes where `locate()` looks for a command there: under
//! `/usr/local/eatmydata/lib/eatmydata/`. Uninstall removes exactly
//! these, then the folders if empty.
//!
//! The one copier of the runtime file: `configure` copies this command
//! the same way ([`install_in`], into `EATMYDATA_HOME` when set) when it
//! lives where root must not run it from.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::host::Host;
use super::{Error, register};
use crate::runtime::NAME as RUNTIME_FILE;

/// Our prefix on the host.
pub const PREFIX: &str = "/usr/local/eatmydata";
/// The command, as the host sees it.
pub const COMMAND: &str = "/usr/local/eatmydata/bin/eatmydata";

/// Copies this command (the file running, never by its name, which the
/// owner of its folder may change) and makes the link, where not there
/// already; the runtime's path, as the host sees it.
pub fn install(host: &Host) -> Result<String, Error> {
    install_in(host, PREFIX)
}

/// Whether the library could be placed in `prefix` on the host: every
/// folder from `/` down to it (or to the nearest one there, under
/// `--host-root`), as seen here, root's and writable by no one else.
/// Asked before anything is made; the message names the folder judged.
pub fn placeable(host: &Host, prefix: &str) -> Result<(), Error> {
    let judged = host.at(prefix);
    crate::library::safe_folder(&judged).map_err(|why| {
        Error::Engine(format!(
            "cannot install into {}: {why}; the command and its library go only where \
             every folder from / down is root's and no one else may write. Nothing was made",
            judged.display()
        ))
    })
}

/// The same in `prefix` (a host's absolute path): `prefix/bin/eatmydata`,
/// the link `prefix/bin/eatmydata-runtime`, the library placed in
/// `prefix/lib/eatmydata/`. Where the library cannot be placed, what this
/// made is taken away again.
pub fn install_in(host: &Host, prefix: &str) -> Result<String, Error> {
    placeable(host, prefix)?;
    let running = Path::new(crate::library::RUNNING);
    let bytes = crate::library::this_program_bytes().map_err(Error::io("read", running))?;
    let bin_path = format!("{prefix}/bin");
    // The folders about to be made, deepest first, to take back.
    let missing: Vec<std::path::PathBuf> = host
        .at(&bin_path)
        .ancestors()
        .take_while(|folder| *folder != host.root() && folder.symlink_metadata().is_err())
        .map(Path::to_path_buf)
        .collect();
    let bin = host.own_folder(&bin_path)?;
    let (command, runtime) = (
        format!("{prefix}/bin/eatmydata"),
        format!("{prefix}/bin/{RUNTIME_FILE}"),
    );
    let mut made = Vec::new();
    if read_no_link(&bin.join("eatmydata"))?.as_deref() == Some(&bytes[..]) {
        say!("{command} is this command already.");
    } else {
        let existed = bin.join("eatmydata").symlink_metadata().is_ok();
        register::write(&bin.join("eatmydata"), &bytes, 0o755)?;
        say!("Copied this command to {command}.");
        if !existed {
            made.push(bin.join("eatmydata"));
        }
    }
    let link = bin.join(RUNTIME_FILE);
    match fs::read_link(&link) {
        Ok(target) if target == Path::new("eatmydata") => {}
        Ok(_) | Err(_) if link.symlink_metadata().is_ok() => {
            fs::remove_file(&link).map_err(Error::io("remove", &link))?;
            make_link(&link, &runtime)?;
        }
        _ => {
            make_link(&link, &runtime)?;
            made.push(link);
        }
    }
    match crate::library::place(host.root(), Path::new(&command)) {
        Ok(placed) => say!("The library is in {}.", placed.display()),
        Err(error) => {
            made.iter().for_each(|file| drop(fs::remove_file(file)));
            missing
                .iter()
                .for_each(|folder| drop(fs::remove_dir(folder)));
            return Err(Error::Engine(format!(
                "{error}\n(Judged under {}; what this install made there is taken away again.)",
                host.root().display()
            )));
        }
    }
    Ok(runtime)
}

fn make_link(link: &Path, runtime: &str) -> Result<(), Error> {
    std::os::unix::fs::symlink("eatmydata", link).map_err(Error::io("make the link", link))?;
    say!("Made {runtime}, a link to eatmydata.");
    Ok(())
}

/// Removes what `install` made, and our folders once empty.
pub fn uninstall(host: &Host) -> Result<(), Error> {
    for removed in crate::library::unplace(host.root(), Path::new(COMMAND))
        .map_err(|error| Error::Engine(error.to_string()))?
    {
        say!("Removed {}.", removed.display());
    }
    let bin = host.no_link(&format!("{PREFIX}/bin"))?;
    for name in [RUNTIME_FILE, "eatmydata"] {
        let path = bin.join(name);
        match fs::remove_file(&path) {
            Ok(()) => say!("Removed {PREFIX}/bin/{name}."),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(Error::io("remove", &path)(error)),
        }
    }
    for folder in [
        format!("{PREFIX}/bin"),
        format!("{PREFIX}/lib"),
        PREFIX.into(),
    ] {
        let path = host.no_link(&folder)?;
        match fs::remove_dir(&path) {
            // The folder the node's DaemonSet mounts alone (its hostPath):
            // emptied, and left to the node.
            Err(error) if error.kind() == io::ErrorKind::ResourceBusy => {
                say!("Left {folder}, empty: a mount point here.");
            }
            Err(error)
                if error.kind() != io::ErrorKind::NotFound
                    && error.kind() != io::ErrorKind::DirectoryNotEmpty =>
            {
                return Err(Error::io("remove", &path)(error));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The file's bytes, `None` when missing; a link is refused.
fn read_no_link(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path);
    let mut file = match file {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(Error::io("open", path)(error)),
    };
    let mut bytes = Vec::new();
    (&mut file)
        .take(1 << 30)
        .read_to_end(&mut bytes)
        .map_err(Error::io("read", path))?;
    Ok(Some(bytes))
}
