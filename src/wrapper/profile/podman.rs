//! podman's default profile is a file, named where podman finds it: the
//! `seccomp_profile` of its `containers.conf` files (the last that sets
//! it wins), else `/etc/containers/seccomp.json` where it exists, else
//! `/usr/share/containers/seccomp.json` where it exists, else the profile
//! built into podman (this command's embedded one stands for it).
//!
//! The files read are those containers.conf(5) lists: `CONTAINERS_CONF`
//! alone when set; else `/usr/share/containers/containers.conf`,
//! `/etc/containers/containers.conf` and `/etc/containers/containers.conf.d/*.conf`,
//! and for a user other than root the same under `$XDG_CONFIG_HOME` (or
//! `~/.config`); then `CONTAINERS_CONF_OVERRIDE`. Each read is bounded.

use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

/// The most of a `containers.conf` read, and of a profile.
const CONF_MAX: u64 = 1024 * 1024;
pub const PROFILE_MAX: u64 = 4 * 1024 * 1024;

/// podman's built-in fallbacks when no `containers.conf` names a profile.
const OVERRIDE: &str = "/etc/containers/seccomp.json";
const PACKAGED: &str = "/usr/share/containers/seccomp.json";

/// Where podman's default profile comes from.
#[derive(Debug, PartialEq)]
pub enum Source {
    /// A `containers.conf` (this one) names it.
    Named { conf: PathBuf, profile: String },
    /// No `containers.conf` names one; this file exists where podman
    /// looks next.
    Found(PathBuf),
    /// Neither: podman's built-in profile.
    BuiltIn,
}

/// Where podman's default profile comes from on this machine. `Err` for
/// a `containers.conf` that cannot be read as TOML, naming it.
pub fn source() -> Result<Source, String> {
    source_in(&conf_files(), Path::new("/"))
}

/// [`source`] with the files to read and the root the fallbacks are
/// looked for under, for the tests.
fn source_in(files: &[PathBuf], root: &Path) -> Result<Source, String> {
    let mut named = None;
    for file in files {
        if let Some(profile) = seccomp_profile(file)? {
            named = Some(Source::Named {
                conf: file.clone(),
                profile,
            });
        }
    }
    if let Some(named) = named {
        return Ok(named);
    }
    for fallback in [OVERRIDE, PACKAGED] {
        let path = root.join(fallback.trim_start_matches('/'));
        if path.is_file() {
            return Ok(Source::Found(path));
        }
    }
    Ok(Source::BuiltIn)
}

/// The `containers.conf` files podman reads, in order.
fn conf_files() -> Vec<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let mut files = vec![];
    if let Some(only) = var("CONTAINERS_CONF") {
        files.push(PathBuf::from(only));
    } else {
        let mut dirs = vec![
            PathBuf::from("/usr/share/containers"),
            "/etc/containers".into(),
        ];
        // SAFETY: geteuid cannot fail and touches no memory.
        if unsafe { libc::geteuid() } != 0 {
            let config = var("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".config")));
            dirs.extend(config.map(|c| c.join("containers")));
        }
        for dir in dirs {
            files.push(dir.join("containers.conf"));
            files.extend(drop_ins(&dir.join("containers.conf.d")));
        }
    }
    files.extend(var("CONTAINERS_CONF_OVERRIDE").map(PathBuf::from));
    files
}

/// A `.d` folder's `*.conf` files, in the order of their names.
fn drop_ins(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "conf"))
        .collect();
    files.sort();
    files
}

/// The `[containers] seccomp_profile` a file sets, if it exists and sets
/// one.
fn seccomp_profile(file: &Path) -> Result<Option<String>, String> {
    let text = match read_bounded(file, CONF_MAX) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {}", file.display(), crate::error::plain(&e))),
    };
    let text = String::from_utf8(text).map_err(|_| format!("{}: not UTF-8", file.display()))?;
    let document: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| format!("{}: {}", file.display(), e.message()))?;
    let value = document
        .get("containers")
        .and_then(|c| c.get("seccomp_profile"));
    match value {
        None => Ok(None),
        Some(value) => match value.as_str() {
            Some(profile) => Ok(Some(profile.to_owned())),
            None => Err(format!(
                "{}: seccomp_profile is not a string",
                file.display()
            )),
        },
    }
}

/// Reads at most `max` bytes of `path`, failing on a longer file or one
/// that is not a regular file.
pub fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    // Non-blocking: a FIFO named here must not hang the open.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = Vec::new();
    file.take(max + 1).read_to_end(&mut text)?;
    if text.len() as u64 > max {
        return Err(std::io::Error::other(format!("larger than {max} bytes")));
    }
    Ok(text)
}

#[cfg(test)]
mod tests;
