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
//! The rootfs is the container's: every file is opened with `openat2` and
//! `RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS` below a descriptor of the
//! rootfs, so a link (absolute or `..`) resolves as inside the container
//! and never leads out of it; `O_NONBLOCK` so that a FIFO never blocks;
//! only a regular file is read, and the ELF reader's reads are bounded.
//! The pure part (the candidates, the `#!` line) is tested alone.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::preload::Program;
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
    File::open(root).map_err(|e| format!("the rootfs: {}", crate::error::plain(&e)))
}

/// The container's files before it starts: the rootfs, and the binds.
struct Root<'a> {
    fd: &'a File,
    binds: &'a [(String, PathBuf)],
}

impl Root<'_> {
    /// Opens `path` (in the container) as [`open_in`] does, through a bind
    /// when one holds it.
    fn open(&self, path: &str) -> io::Result<File> {
        let Some((source, rest)) = through_binds(self.binds, path) else {
            return open_in(self.fd, path);
        };
        // The source is the engine's, as the bundle is: below it, the rest
        // resolves as inside the container.
        let source = open_in(&File::open("/")?, &source.to_string_lossy())?;
        match rest {
            "" => Ok(source),
            rest => open_in(&source, rest),
        }
    }
}

/// The first candidate that is an executable regular file.
fn find(root: &Root, arg0: &str, path: Option<&str>, cwd: &str) -> Result<(String, File), String> {
    let mut last = "no args[0]".to_owned();
    for candidate in candidates(arg0, path, cwd) {
        match root.open(&candidate) {
            Ok(file) if executable(&file) => return Ok((candidate, file)),
            Ok(_) => last = format!("{candidate} is not an executable file"),
            Err(e) => last = format!("{candidate}: {}", crate::error::plain(&e)),
        }
    }
    Err(last)
}

/// Whether `file` is a regular file with an execute bit.
fn executable(file: &File) -> bool {
    file.metadata()
        .is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0)
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
        file = root
            .open(&next)
            .map_err(|e| format!("{next}: {}", crate::error::plain(&e)))?;
        if !executable(&file) {
            return Err(format!("{next} is not an executable file"));
        }
        path = next;
    }
    Err(format!("{path}: too many #! levels"))
}

/// Opens `path` for reading inside the tree below `root`, as if `root`
/// were `/`: links resolved inside it, magic links refused, a FIFO not
/// waited for.
fn open_in(root: &File, path: &str) -> io::Result<File> {
    let name = CString::new(Path::new(path).as_os_str().as_bytes())?;
    // The kernel's struct open_how, laid out as libc's (whose own is
    // non-exhaustive): flags, mode, resolve.
    let how: [u64; 3] = [
        (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK) as u64,
        0,
        libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS,
    ];
    // SAFETY: `name` is a C string and `how` an open_how of the size given,
    // both alive for the call; the result is a new descriptor or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root.as_raw_fd(),
            name.as_ptr(),
            how.as_ptr(),
            std::mem::size_of_val(&how),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
    // SAFETY: openat2 returned a new descriptor that nothing else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    /// link out of it does not reach the host, a FIFO is not waited for.
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
        assert!(learn_("absent").is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
