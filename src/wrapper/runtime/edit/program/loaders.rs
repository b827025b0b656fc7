//! What a static program may start, judged by the loaders its rootfs
//! holds. A static program (a static shell, busybox, a Go server) reads
//! no `LD_PRELOAD`, and its execs never pass through the library's exec
//! wrapper, so each program it starts inherits the entry unchecked: a
//! 32-bit or foreign one's loader would print "cannot be preloaded" on
//! stderr, a sanitizer runtime would exit. But a dynamic program runs only
//! under the loader its `PT_INTERP` names, a path in the container: when
//! every loader there is this machine's glibc (or a musl that can relocate
//! the library), and no sanitizer runtime is where the loader looks, every
//! dynamic program the static one can start takes the library, and the
//! static program keeps it to pass on (`durability/exec.rs`,
//! `Context::root_fits`). Its dynamic children then drop `O_SYNC` and
//! `O_DSYNC` from their opens, which no seccomp rule can.
//!
//! The rule of glibc's loader decides the shape: it prints its warning
//! for every `LD_PRELOAD` entry it cannot load, found or not, so a
//! path that only the native loader expands to the library (`$LIB`,
//! `$PLATFORM`) would need a loadable stub at every other expansion, and
//! those collide across distributions (`$LIB` is `lib` for Arch's x86_64
//! and for Fedora's i686); musl expands neither. Reading the rootfs needs
//! nothing in the container.
//!
//! A chroot the static program makes itself (busybox's `chroot` applet)
//! leads its programs where the library's path is nothing, and glibc's
//! loader says so: a bind holding a root of its own (a loader in its
//! `lib` folders, a tree made by debootstrap) keeps the library out too.
//! Not seen, and so not judged: such a tree made inside the image or by
//! the container itself, a sanitizer runtime found through a program's
//! own `RUNPATH` or `LD_LIBRARY_PATH`. Anything that cannot be read, a folder of more
//! than [`MAX_ENTRIES`] names or more than [`MAX_LOADERS`] loaders keeps
//! the library out (the old answer).

use std::fs;
use std::os::fd::AsRawFd;
use std::path::Path;

use super::Root;
use crate::durability::loader::Loader;
use crate::durability::sanitizer::is_sanitizer;
use crate::runtime::input::rootfs::reopen;
use crate::{elf, target};

/// The folders of every `PT_INTERP` path a Linux ABI names: glibc's
/// `/lib64/ld-linux-x86-64.so.2`, `/lib/ld-linux.so.2`,
/// `/libx32/ld-linux-x32.so.2`, `/lib/ld-linux-aarch64.so.1`,
/// `/lib64/ld64.so.2`, musl's `/lib/ld-musl-ARCH.so.1`. With usrmerge,
/// `/lib` leads to `/usr/lib`, inside the rootfs.
const LOADER_FOLDERS: [&str; 4] = ["/lib", "/lib64", "/lib32", "/libx32"];

/// Where a loader finds a sanitizer runtime by default or through a
/// distribution's `ld.so.conf` (Debian's multiarch folders, Fedora's
/// `lib64`, Alpine's and Arch's `lib`), besides this machine's triplet.
const LIBRARY_FOLDERS: [&str; 5] = ["/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"];

/// Names read from one folder at most: a folder of more is not judged.
pub const MAX_ENTRIES: usize = 65_536;

/// Loaders read at most (a rootfs has one to a few per architecture): a
/// rootfs of more is not judged, and costs no more than this many reads.
pub const MAX_LOADERS: usize = 64;

/// Whether a file name in a loader folder is a loader's: `ld-linux*`,
/// `ld-musl-*`, `ld64.so.*`, `ld.so.1`, and any other `ld-` (uClibc's,
/// a versioned glibc file).
pub fn is_loader_name(name: &[u8]) -> bool {
    name.starts_with(b"ld-") || name.starts_with(b"ld.so") || name.starts_with(b"ld64.so")
}

/// Whether the loader called `name` takes the library, given whether its
/// file is of this machine's class and architecture (`None`: no ELF file,
/// which runs nothing) and whether musl can relocate the library.
pub fn takes(name: &[u8], native: Option<bool>, fits_musl: bool) -> Result<(), &'static str> {
    match (native, Loader::named(name)) {
        (None, _) => Ok(()),
        (Some(false), _) => Err("a loader of another class or architecture"),
        (Some(true), Loader::Glibc) => Ok(()),
        (Some(true), Loader::Musl) if fits_musl => Ok(()),
        (Some(true), Loader::Musl) => Err("musl's loader, which cannot relocate this library"),
        (Some(true), Loader::Other) => Err("a loader neither glibc's nor musl's"),
    }
}

/// `Ok` when every loader the rootfs (and the binds in it) holds takes
/// `library` and no sanitizer runtime is in the loader's folders; else
/// what the rootfs holds, for the log.
pub fn judge(root: &Root, library: &Path) -> Result<(), String> {
    let fits_musl = target::fits_musl(library);
    let mut read = 0;
    for folder in LOADER_FOLDERS {
        for name in names(root, folder)? {
            if !is_loader_name(name.as_bytes()) {
                continue;
            }
            read += 1;
            if read > MAX_LOADERS {
                return Err(format!("the rootfs holds more than {MAX_LOADERS} loaders"));
            }
            let path = format!("{folder}/{name}");
            let native = native(root, &path);
            takes(name.as_bytes(), native, fits_musl)
                .map_err(|what| format!("the rootfs holds {path}, {what}"))?;
        }
    }
    let triplet = [
        format!("/lib/{}-linux-gnu", std::env::consts::ARCH),
        format!("/usr/lib/{}-linux-gnu", std::env::consts::ARCH),
    ];
    let folders = LIBRARY_FOLDERS
        .iter()
        .copied()
        .chain(triplet.iter().map(String::as_str));
    for folder in folders {
        if let Some(name) = names(root, folder)?
            .into_iter()
            .find(|name| is_sanitizer(name.as_bytes()))
        {
            return Err(format!(
                "the rootfs holds {folder}/{name}, a sanitizer runtime that must come first"
            ));
        }
    }
    bound_roots(root)
}

/// `Err` when a bind holds a root of its own (a loader in its `lib`
/// folders: a tree made by debootstrap, bound in to be built in): a
/// static program that enters it (busybox's `chroot` applet) would start
/// its programs where the library's path leads nowhere, and glibc's
/// loader would say so on their stderr.
fn bound_roots(root: &Root) -> Result<(), String> {
    for (destination, _) in root.binds {
        if destination.is_empty() {
            continue;
        }
        for folder in LOADER_FOLDERS {
            let folder = format!("{destination}{folder}");
            if let Some(name) = names(root, &folder)?
                .into_iter()
                .find(|name| is_loader_name(name.as_bytes()))
            {
                return Err(format!(
                    "the bind at {destination} holds a root of its own ({folder}/{name}), \
                     where a chroot would lead its programs away from the library"
                ));
            }
        }
    }
    Ok(())
}

/// The names in `folder` (in the container: the rootfs's, or a bind's
/// source), and those of the binds made right in it; none when it is not
/// there.
fn names(root: &Root, folder: &str) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = root
        .binds
        .iter()
        .filter_map(|(destination, _)| {
            let (parent, name) = destination.rsplit_once('/')?;
            let parent = parent.strip_prefix("/usr").unwrap_or(parent);
            (parent == folder.strip_prefix("/usr").unwrap_or(folder)).then(|| name.to_owned())
        })
        .collect();
    let Ok(found) = root.find(folder) else {
        return Ok(names);
    };
    if !found.metadata().is_ok_and(|m| m.is_dir()) {
        return Ok(names);
    }
    // The folder found inside the rootfs, through its own descriptor.
    let listing = fs::read_dir(format!("/proc/self/fd/{}", found.as_raw_fd()))
        .map_err(|e| format!("{folder}: {}", crate::error::plain(&e)))?;
    for entry in listing {
        let entry = entry.map_err(|e| format!("{folder}: {}", crate::error::plain(&e)))?;
        if names.len() >= MAX_ENTRIES {
            return Err(format!("{folder} holds more than {MAX_ENTRIES} names"));
        }
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    Ok(names)
}

/// Whether the file at `path` is of this machine's class and
/// architecture; `None` when it is not there (a dangling link), not a
/// regular file, or not ELF.
fn native(root: &Root, path: &str) -> Option<bool> {
    let found = root.find(path).ok()?;
    if !found.metadata().is_ok_and(|m| m.is_file()) {
        return None;
    }
    elf::is_native(&reopen(&found).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loaders_are_known_by_their_names() {
        for name in [
            "ld-linux-x86-64.so.2",
            "ld-linux.so.2",
            "ld-linux-aarch64.so.1",
            "ld-musl-x86_64.so.1",
            "ld64.so.2",
            "ld.so.1",
            "ld-uClibc.so.0",
            "ld-2.31.so",
        ] {
            assert!(is_loader_name(name.as_bytes()), "{name}");
        }
        for name in ["libc.so.6", "ldconfig", "x86_64-linux-gnu", "libld.so", ""] {
            assert!(!is_loader_name(name.as_bytes()), "{name}");
        }
    }

    #[test]
    fn only_this_machines_glibc_and_a_musl_that_fits_take_it() {
        assert_eq!(takes(b"ld-linux-x86-64.so.2", Some(true), false), Ok(()));
        assert_eq!(takes(b"ld-musl-x86_64.so.1", Some(true), true), Ok(()));
        assert!(takes(b"ld-musl-x86_64.so.1", Some(true), false).is_err());
        assert!(takes(b"ld-linux.so.2", Some(false), true).is_err());
        assert!(takes(b"ld-uClibc.so.0", Some(true), true).is_err());
        // No ELF file there (a script, a dangling link): nothing runs.
        assert_eq!(takes(b"ld-linux.so.2", None, true), Ok(()));
    }
}
