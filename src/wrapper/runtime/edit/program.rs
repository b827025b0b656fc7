//! What the runtime learns of a process's program before the edit: its
//! `args[0]`, found inside the container's rootfs as runc will find it
//! (through `process.env`'s `PATH` when it has no slash, from
//! `process.cwd` when relative), a `#!` script followed to its
//! interpreter, and the ELF reader's facts about what is found.
//!
//! A path under a bind mount of the spec (a volume, a host folder,
//! `docker-init` bound by `--init`) is read from the mount's source, since
//! none is mounted yet at `create`: the folder or file the engine named,
//! below which the rest of the path resolves as inside the rootfs.
//!
//! The rootfs is the container's, and so is what it writes in a volume:
//! every file is reached with `openat2`, `O_PATH` and `RESOLVE_IN_ROOT |
//! RESOLVE_NO_MAGICLINKS` below a descriptor of the rootfs (or of a bind's
//! source), so a link (absolute or `..`) resolves as inside the container
//! and never leads out of it, and nothing is opened yet: a device node the
//! container made (`/dev/watchdog`'s numbers) or a FIFO is only
//! `fstat`ed, never opened on the host. Only a regular file with an
//! execute bit is then opened for reading, through that very descriptor
//! (`/proc/self/fd`), and the ELF reader's reads are bounded.
//! The pure part (the candidates, the `#!` line) is tested alone. For a
//! static program, the loaders the rootfs holds are read too
//! (`program/loaders.rs`): whether what it starts can have the library.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::preload::Program;
use crate::durability::init::Init;
use crate::runtime::input::rootfs::{find_in, folder, reopen};
use crate::{elf, target};

/// `#!` lines followed, as the kernel's own limit (`BINPRM_MAX_RECURSION`).
const MAX_SCRIPT_DEPTH: usize = 4;
/// The longest `#!` line the kernel reads (`BINPRM_BUF_SIZE`).
const SCRIPT_HEAD: usize = 256;
/// Inits seen through, one running the next, before the last is judged
/// itself (as a static program).
const MAX_INITS: usize = 4;
/// `execvp`'s search when `PATH` is unset: glibc's, which tini, catatonit
/// and dumb-init are built with.
const EXECVP_PATH: &str = "/bin:/usr/bin";

/// The paths inside the rootfs where `arg0` may be, in the order runc
/// looks: itself when it has a slash, else each folder of `path` (the
/// `PATH` of `process.env`; an empty entry is the working folder), each
/// relative one taken from `cwd`.
pub fn candidates(arg0: &str, path: Option<&str>, cwd: &str) -> Vec<String> {
    let from_cwd = |name: &str| match name.starts_with('/') {
        true => name.to_owned(),
        false => format!("{}/{name}", cwd.trim_end_matches('/')),
    };
    if arg0.is_empty() {
        return vec![];
    }
    if arg0.contains('/') {
        return vec![from_cwd(arg0)];
    }
    let folders = path.unwrap_or_default().split(':');
    let folders = folders.map(|folder| if folder.is_empty() { "." } else { folder });
    folders
        .map(|folder| from_cwd(&format!("{}/{arg0}", folder.trim_end_matches('/'))))
        .collect()
}

/// The interpreter a `#!` line names (its first word), if `head` starts
/// with one.
pub fn interpreter(head: &[u8]) -> Option<String> {
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let word = line
        .split(|&b| b == b' ' || b == b'\t')
        .find(|word| !word.is_empty())?;
    String::from_utf8(word.to_vec()).ok()
}

/// The value of the last `NAME=` entry of `env`, as runc's lookup sees it.
pub fn variable<'a>(env: &'a [Value], name: &str) -> Option<&'a str> {
    env.iter()
        .filter_map(|entry| entry.as_str()?.strip_prefix(name)?.strip_prefix('='))
        .next_back()
}

/// The rootfs of a spec: `root.path`, relative to the bundle.
pub fn rootfs(bundle: &Path, spec: &Value) -> Option<PathBuf> {
    let path = spec.get("root")?.get("path")?.as_str()?;
    Some(bundle.join(path))
}

/// The spec's bind mounts (`type` bind, or a `bind`/`rbind` option), in
/// order: where each is in the container, and its source on the host.
pub fn binds(spec: &Value) -> Vec<(String, PathBuf)> {
    let mounts = spec.get("mounts").and_then(Value::as_array);
    let is_bind = |mount: &Value| {
        let options = mount.get("options").and_then(Value::as_array);
        let mut options = options.into_iter().flatten().filter_map(Value::as_str);
        mount.get("type").and_then(Value::as_str) == Some("bind")
            || options.any(|option| option == "bind" || option == "rbind")
    };
    let bind = |mount: &Value| {
        let destination = mount.get("destination")?.as_str()?;
        let source = mount.get("source")?.as_str()?;
        let clean = destination.trim_end_matches('/');
        (destination.starts_with('/') && source.starts_with('/') && is_bind(mount))
            .then(|| (clean.to_owned(), PathBuf::from(source)))
    };
    mounts.into_iter().flatten().filter_map(bind).collect()
}

/// Where `path` (absolute, in the container) is read from: the source of
/// the last bind mount at or above it and the rest of the path below it,
/// or `None` for the rootfs.
pub fn through_binds<'a>(
    binds: &'a [(String, PathBuf)],
    path: &'a str,
) -> Option<(&'a Path, &'a str)> {
    binds.iter().rev().find_map(|(destination, source)| {
        let rest = path.strip_prefix(destination.as_str())?;
        (rest.is_empty() || rest.starts_with('/')).then_some((source.as_path(), rest))
    })
}

/// What the program `process` (a spec's `process`, or an `exec` process
/// file) starts is, inside the rootfs at `root` with the spec's `binds`,
/// with `library` the host's library (for the musl rule). A static init
/// (C or Go) known by its name (`durability/init.rs`) is seen through: what is learned is the
/// program it runs, found as its `execvp` finds it, inits in inits too.
pub fn learn(root: &Path, binds: &[(String, PathBuf)], process: &Value, library: &Path) -> Program {
    let args = process.get("args").and_then(Value::as_array);
    let args: Vec<&str> = args
        .into_iter()
        .flatten()
        .map(|arg| arg.as_str().unwrap_or_default())
        .collect();
    let env = process.get("env").and_then(Value::as_array);
    let env = env.map(Vec::as_slice).unwrap_or_default();
    let cwd = process.get("cwd").and_then(Value::as_str).unwrap_or("/");
    let root = root_fd(root);
    let mut args = args.as_slice();
    // runc's lookup for the process, the init's execvp for what it runs.
    let mut path = variable(env, "PATH");
    let mut init = None;
    let mut depth = 0;
    loop {
        let arg0 = args.first().copied().unwrap_or_default();
        let facts = root.as_ref().map_err(Clone::clone).and_then(|fd| {
            let root = Root { fd, binds };
            let (found, file) = find(&root, arg0, path, cwd)?;
            follow(&root, file, &found)
        });
        let runs = match &facts {
            // gosu is a static Go program.
            Ok(facts)
                if matches!(facts.kind, elf::Kind::Static | elf::Kind::Go) && depth < MAX_INITS =>
            {
                let name = arg0.rsplit('/').next().unwrap_or_default();
                let arg = |at: usize| Some(args.get(1 + at)?.as_bytes());
                Init::named(name.as_bytes()).and_then(|init| init.program(arg))
            }
            _ => None,
        };
        let Some(at) = runs else {
            let root_fits = match &facts {
                Ok(facts) if facts.loader.is_none() && facts.kind != elf::Kind::Unknown => root
                    .as_ref()
                    .map_err(Clone::clone)
                    .and_then(|fd| loaders::judge(&Root { fd, binds }, library)),
                _ => Err("not read: the program is not static".to_owned()),
            };
            return Program {
                path: arg0.to_owned(),
                facts: facts.map(|facts| target::with_library(facts, library)),
                init,
                root_fits,
            };
        };
        init.get_or_insert_with(|| arg0.to_owned());
        args = args.get(1 + at..).unwrap_or_default();
        path = Some(path.unwrap_or(EXECVP_PATH));
        depth += 1;
    }
}

fn root_fd(root: &Path) -> Result<File, String> {
    folder(root).map_err(|e| format!("the rootfs: {}", crate::error::plain(&e)))
}

/// The container's files before it starts: the rootfs, and the binds.
struct Root<'a> {
    fd: &'a File,
    binds: &'a [(String, PathBuf)],
}

impl Root<'_> {
    /// Finds `path` (in the container) as `find_in` does, through a bind
    /// when one holds it: an `O_PATH` descriptor.
    fn find(&self, path: &str) -> io::Result<File> {
        let Some((source, rest)) = through_binds(self.binds, path) else {
            return find_in(self.fd, path);
        };
        // The source is the engine's, as the bundle is: below it, the rest
        // resolves as inside the container.
        let source = find_in(&folder(Path::new("/"))?, &source.to_string_lossy())?;
        match rest {
            "" => Ok(source),
            rest => find_in(&source, rest),
        }
    }

    /// Opens `path` for reading only when it is a regular file with an
    /// execute bit; else says why.
    fn open_program(&self, path: &str) -> Result<File, String> {
        let plain = |e: io::Error| format!("{path}: {}", crate::error::plain(&e));
        let found = self.find(path).map_err(plain)?;
        let executable = found
            .metadata()
            .is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0);
        if !executable {
            return Err(format!("{path} is not an executable file"));
        }
        reopen(&found).map_err(plain)
    }
}

/// The first candidate that is an executable regular file.
fn find(root: &Root, arg0: &str, path: Option<&str>, cwd: &str) -> Result<(String, File), String> {
    let mut last = "no args[0]".to_owned();
    for candidate in candidates(arg0, path, cwd) {
        match root.open_program(&candidate) {
            Ok(file) => return Ok((candidate, file)),
            Err(why) => last = why,
        }
    }
    Err(last)
}

/// The facts of `file`, following `#!` lines to the interpreter.
fn follow(root: &Root, mut file: File, path: &str) -> Result<elf::Program, String> {
    let mut path = path.to_owned();
    for _ in 0..=MAX_SCRIPT_DEPTH {
        let mut head = [0u8; SCRIPT_HEAD];
        let read = file
            .read_at(&mut head, 0)
            .map_err(|e| crate::error::plain(&e))?;
        let Some(next) = interpreter(&head[..read]) else {
            return elf::inspect_elf(&file).ok_or_else(|| format!("{path} is not an ELF file"));
        };
        file = root.open_program(&next)?;
        path = next;
    }
    Err(format!("{path}: too many #! levels"))
}

#[path = "program/loaders.rs"]
mod loaders; // what a static program may start: the loaders its rootfs holds

#[cfg(test)]
#[path = "program/tests.rs"]
mod tests;
