//! Where libeatmydata.so comes from, in one place: for the command, and
//! for the OCI runtime that mounts it into containers.
//!
//! In order: where `EATMYDATA_LIBRARY` says; an installed copy, next to
//! this program's real path, so that a link to it from anywhere works and
//! so does a build tree (`target/release/`); in the install layout,
//! `PREFIX/lib/eatmydata/` beside `PREFIX/bin/`; in Debian's layout,
//! `/usr/lib/<multiarch>/` beside `/usr/bin/`, where the `libeatmydata1`
//! package puts it. Never in a fixed system folder: a copy of the command
//! elsewhere could pick up another libeatmydata there (Debian's original)
//! without a word. Last, the copy this command carries, written out once
//! per content ([`embedded`]): so the command alone, as `cargo install`
//! leaves it or copied into an image, is enough.
//!
//! This program's real path comes from `/proc/self/exe`; where `/proc` is
//! not mounted (a minimal container or chroot), from the path it was
//! executed by, which the kernel leaves in the auxiliary vector.

use std::env;
use std::ffi::{CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::Error;

mod at;
pub mod embedded;

pub const FILE_NAME: &str = "libeatmydata.so";
pub const OVERRIDE: &str = crate::protocol::LIBRARY;
/// The file Debian's `libeatmydata1` package installs (its SONAME).
const DEBIAN_FILE_NAME: &str = "libeatmydata.so.1";

/// Debian's multiarch folder for the glibc library of this architecture
/// (the library is a glibc one even when this command is static).
const MULTIARCH: &str = if cfg!(target_arch = "x86_64") {
    "x86_64-linux-gnu"
} else if cfg!(target_arch = "aarch64") {
    "aarch64-linux-gnu"
} else if cfg!(target_arch = "x86") {
    "i386-linux-gnu"
} else if cfg!(target_arch = "arm") {
    "arm-linux-gnueabihf"
} else if cfg!(target_arch = "riscv64") {
    "riscv64-linux-gnu"
} else if cfg!(target_arch = "s390x") {
    "s390x-linux-gnu"
} else {
    // Not a Debian architecture we build for: the folder does not exist.
    "unknown-linux-gnu"
};

/// The places to look, given the folder holding this program's real path.
pub fn candidates(exe_dir: &Path) -> Vec<PathBuf> {
    let mut places = vec![exe_dir.join(FILE_NAME)];
    if let Some(prefix) = exe_dir.parent() {
        places.push(prefix.join("lib/eatmydata").join(FILE_NAME));
        places.push(prefix.join("lib").join(FILE_NAME));
        places.push(prefix.join("lib").join(MULTIARCH).join(DEBIAN_FILE_NAME));
    }
    places
}

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
    /// The copy embedded in the command, written out by this run
    /// (`written`) or found already written by an earlier one.
    Embedded { written: bool },
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Source::Override => "from EATMYDATA_LIBRARY",
            Source::Installed => "the installed copy",
            Source::Embedded { written: true } => "the copy embedded in eatmydata, written out now",
            Source::Embedded { written: false } => "the copy embedded in eatmydata",
        })
    }
}

/// The library to preload, found or written out.
pub fn locate() -> Result<Located, Error> {
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
    if !embedded::carried() {
        return Err(Error::LibraryMissing {
            looked,
            from_override: false,
        });
    }
    match embedded::write_out() {
        Ok((path, written)) => Ok(Located {
            path,
            source: Source::Embedded { written },
        }),
        Err(refused) => Err(Error::LibraryUnwritable(refused)),
    }
}

/// The line `--version` gives about the library this command carries.
pub fn carried_line() -> String {
    if embedded::carried() {
        format!("library: embedded, sha256 {}", embedded::SHA256)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_beside_then_in_the_install_layout() {
        let places = candidates(Path::new("/opt/emd/bin"));
        assert_eq!(
            places,
            [
                PathBuf::from("/opt/emd/bin/libeatmydata.so"),
                PathBuf::from("/opt/emd/lib/eatmydata/libeatmydata.so"),
                PathBuf::from("/opt/emd/lib/libeatmydata.so"),
                PathBuf::from(format!("/opt/emd/lib/{MULTIARCH}/libeatmydata.so.1")),
            ]
        );
        assert_eq!(
            candidates(Path::new("/usr/bin")).last(),
            Some(&PathBuf::from(format!(
                "/usr/lib/{MULTIARCH}/libeatmydata.so.1"
            )))
        );
    }
}
