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
//! The pure part (the candidates, the `#!` line) is tested alone.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::preload::Program;
use crate::runtime::input::rootfs::{find_in, folder, reopen};
use crate::{elf, target};

/// `#!` lines followed, as the kernel's own limit (`BINPRM_MAX_RECURSION`).
const MAX_SCRIPT_DEPTH: usize = 4;
/// The longest `#!` line the kernel reads (`BINPRM_BUF_SIZE`).
const SCRIPT_HEAD: usize = 256;

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
/// with `library` the host's library (for the musl rule).
pub fn learn(root: &Path, binds: &[(String, PathBuf)], process: &Value, library: &Path) -> Program {
    let arg0 = process
        .get("args")
        .and_then(|a| a.get(0))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let env = process.get("env").and_then(Value::as_array);
    let env = env.map(Vec::as_slice).unwrap_or_default();
    let cwd = process.get("cwd").and_then(Value::as_str).unwrap_or("/");
    let facts = root_fd(root).and_then(|root| {
        let root = Root { fd: &root, binds };
        let (path, file) = find(&root, arg0, variable(env, "PATH"), cwd)?;
        let facts = follow(&root, file, &path)?;
        Ok(target::with_library(facts, library))
    });
    Program {
        path: arg0.to_owned(),
        facts,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn args0_is_looked_for_as_runc_looks() {
        let path = Some("/usr/local/bin:/bin/::rel");
        assert_eq!(
            candidates("sh", path, "/work"),
            ["/usr/local/bin/sh", "/bin/sh", "/work/./sh", "/work/rel/sh"]
        );
        assert_eq!(candidates("/bin/sh", path, "/w"), ["/bin/sh"]);
        assert_eq!(candidates("./x", path, "/w/"), ["/w/./x"]);
        assert_eq!(candidates("a/x", None, "/"), ["/a/x"]);
        assert_eq!(candidates("sh", None, "/"), ["/./sh"]);
        assert!(candidates("", path, "/").is_empty());
    }

    #[test]
    fn a_script_names_its_interpreter() {
        assert_eq!(interpreter(b"#!/bin/sh\necho").as_deref(), Some("/bin/sh"));
        assert_eq!(
            interpreter(b"#! \t/usr/bin/env python3\n").as_deref(),
            Some("/usr/bin/env")
        );
        assert_eq!(interpreter(b"#!\n"), None);
        assert_eq!(interpreter(b"\x7fELF"), None);
        assert_eq!(interpreter(b"#!/bin/\xff"), None);
    }

    #[test]
    fn the_last_entry_of_a_variable_counts() {
        let env = [
            json!("PATH=/a"),
            json!("PATHX=/x"),
            json!("PATH=/b"),
            json!(1),
        ];
        assert_eq!(variable(&env, "PATH"), Some("/b"));
        assert_eq!(variable(&env, "HOME"), None);
    }

    #[test]
    fn the_rootfs_is_relative_to_the_bundle() {
        let bundle = Path::new("/b");
        assert_eq!(
            rootfs(bundle, &json!({"root": {"path": "rootfs"}})),
            Some(PathBuf::from("/b/rootfs"))
        );
        assert_eq!(
            rootfs(bundle, &json!({"root": {"path": "/var/x"}})),
            Some(PathBuf::from("/var/x"))
        );
        assert_eq!(rootfs(bundle, &json!({})), None);
    }

    /// A rootfs of this test's own: links inside it resolve inside it, a
    /// link out of it does not reach the host, a FIFO is not waited for, a
    /// device node not opened.
    #[test]
    fn the_program_is_read_inside_the_rootfs_only() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let root = std::env::temp_dir().join(format!("eatmydata-program-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("bin")).unwrap();
        let exe = std::env::current_exe().unwrap();
        std::fs::copy(&exe, root.join("bin/real")).unwrap();
        symlink("/bin/real", root.join("bin/abs")).unwrap();
        symlink("../../../../../bin/real", root.join("bin/up")).unwrap();
        // Out of the rootfs: the host's /bin/sh exists, the rootfs's not.
        symlink("/bin/sh", root.join("bin/out")).unwrap();
        std::fs::write(root.join("bin/script"), "#!/bin/abs -x\n").unwrap();
        let fifo = CString::new(root.join("bin/fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: a C string path; mkfifo reads it only.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o755) }, 0);
        for name in ["script", "fifo"] {
            let mode = std::fs::Permissions::from_mode(0o755);
            std::fs::set_permissions(root.join("bin").join(name), mode).unwrap();
        }
        let library = Path::new("/nonexistent.so");
        let learn_ = |arg0: &str| {
            let process = json!({"args": [arg0], "env": ["PATH=/usr/bin:/bin"], "cwd": "/"});
            learn(&root, &[], &process, library).facts
        };
        for arg0 in ["/bin/real", "abs", "/bin/up", "script"] {
            let facts = learn_(arg0).unwrap_or_else(|e| panic!("{arg0}: {e}"));
            assert_eq!(facts.kind, elf::Kind::Dynamic, "{arg0}");
        }
        let out = learn_("out").unwrap_err();
        assert!(out.contains("/bin/out"), "{out}");
        let fifo = learn_("fifo").unwrap_err();
        assert!(fifo.contains("not an executable file"), "{fifo}");
        // A device node the container made, /dev/tty's numbers: opened, it
        // would fail with ENXIO (this test has no terminal); never opened,
        // it is only not a program. A script naming it, the same.
        let tty = CString::new(root.join("bin/tty").as_os_str().as_bytes()).unwrap();
        // SAFETY: a C string path; mknod reads it only.
        let made = unsafe { libc::mknod(tty.as_ptr(), libc::S_IFCHR | 0o755, libc::makedev(5, 0)) };
        assert_eq!(made, 0, "{}", io::Error::last_os_error());
        std::fs::write(root.join("bin/ttyscript"), "#!/bin/tty\n").unwrap();
        let mode = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(root.join("bin/ttyscript"), mode).unwrap();
        for arg0 in ["tty", "ttyscript"] {
            let device = learn_(arg0).unwrap_err();
            assert_eq!(device, "/bin/tty is not an executable file", "{arg0}");
        }
        assert!(learn_("absent").is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
