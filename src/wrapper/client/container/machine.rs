//! What a container client's line needs from the machine (besides what
//! the engine says of itself, `info.rs`): which builder docker's
//! client picks (as docker's own CLI does: `DOCKER_BUILDKIT`, else BuildKit
//! when its buildx component is there, else the legacy builder), which
//! runc the daemon's BuildKit runs (`DOCKER_BUILDKIT_RUNC_COMMAND` in
//! dockerd's environment, read where this user may), and where
//! `eatmydata-runtime` is.

use std::ffi::{OsStr, OsString};
use std::io::Read as _;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The builder `docker build` runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Builder {
    /// The legacy builder: each RUN step a container of the daemon's
    /// default runtime. `asked`: by `DOCKER_BUILDKIT` false, else because
    /// the client has no buildx.
    Legacy { asked: bool },
    /// BuildKit in the daemon, with its own runc.
    #[default]
    BuildKit,
    /// None: `DOCKER_BUILDKIT` true without buildx, which docker refuses
    /// itself.
    Refused,
}

/// The builder docker's client picks, as its own CLI decides:
/// `DOCKER_BUILDKIT` (`value`) as Go's `strconv.ParseBool` reads it, else
/// BuildKit when it has buildx, else the legacy builder.
pub fn builder(value: Option<&OsStr>, buildx: bool) -> Builder {
    let is = |words: &[&str]| value.is_some_and(|v| words.iter().any(|w| v == *w));
    if is(&["0", "f", "F", "false", "FALSE", "False"]) {
        return Builder::Legacy { asked: true };
    }
    let asked = is(&["1", "t", "T", "true", "TRUE", "True"]);
    match (buildx, asked) {
        (true, _) => Builder::BuildKit,
        (false, true) => Builder::Refused,
        (false, false) => Builder::Legacy { asked: false },
    }
}

/// What dockerd's environment says of BuildKit's runc.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum BuildkitRunc {
    /// Not known here: another host, a context, or not ours to read.
    #[default]
    Unknown,
    /// `DOCKER_BUILDKIT_RUNC_COMMAND` is not set: BuildKit runs its own
    /// runc.
    Unset,
    /// It is set, to this program.
    Set(OsString),
}

/// The variable dockerd's BuildKit takes its runc from.
const RUNC_VARIABLE: &[u8] = b"DOCKER_BUILDKIT_RUNC_COMMAND=";
/// The most bytes of dockerd's environment read.
const ENVIRON_MAX: u64 = 256 * 1024;

/// The unix socket docker's client talks to with `globals` and
/// `docker_host` (`DOCKER_HOST`): `-H`/`--host`, else the variable, else
/// the default socket; `None` for another scheme or a context.
pub fn docker_socket(globals: &[OsString], docker_host: Option<&OsStr>) -> Option<PathBuf> {
    let mut host = None;
    let mut words = globals.iter();
    while let Some(word) = words.next() {
        let word = word.as_bytes();
        let value = match word {
            b"-H" | b"--host" => words.next().map(|v| v.as_bytes()),
            b"-c" | b"--context" => return None,
            _ if word.starts_with(b"--context=") => return None,
            _ => word
                .strip_prefix(b"--host=")
                .or_else(|| word.strip_prefix(b"-H=")),
        };
        if value.is_some() {
            host = value;
        }
    }
    // As docker's CLI: -H, then DOCKER_HOST, then a context (named, or
    // the one its config makes current), then the default socket.
    let host = host.or_else(|| docker_host.map(OsStr::as_bytes));
    if host.is_none() && (std::env::var_os("DOCKER_CONTEXT").is_some() || other_context(globals)) {
        return None;
    }
    let host = host.unwrap_or(b"unix:///var/run/docker.sock");
    let path = host.strip_prefix(b"unix://")?;
    Some(PathBuf::from(OsString::from_vec(path.to_vec())))
}

/// Whether docker's config (`--config`, `DOCKER_CONFIG`, `~/.docker`)
/// makes a context other than `default` current.
fn other_context(globals: &[OsString]) -> bool {
    let named = globals
        .iter()
        .enumerate()
        .find_map(|(at, g)| match g.as_bytes() {
            b"--config" => globals.get(at + 1).map(PathBuf::from),
            g => g
                .strip_prefix(b"--config=")
                .map(|v| PathBuf::from(OsStr::from_bytes(v))),
        });
    let folder = named
        .or_else(|| std::env::var_os("DOCKER_CONFIG").map(PathBuf::from))
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".docker")));
    let Some(folder) = folder else {
        return false;
    };
    let mut text = Vec::new();
    let read = std::fs::File::open(folder.join("config.json"))
        .and_then(|file| file.take(ENVIRON_MAX).read_to_end(&mut text));
    if read.is_err() {
        return false;
    }
    let config: Option<serde_json::Value> = serde_json::from_slice(&text).ok();
    let current = config
        .as_ref()
        .and_then(|c| c.get("currentContext")?.as_str());
    current.is_some_and(|name| !name.is_empty() && name != "default")
}

/// `DOCKER_BUILDKIT_RUNC_COMMAND` in `environ` (NUL-separated), if set.
pub fn runc_of(environ: &[u8]) -> BuildkitRunc {
    environ
        .split(|&b| b == 0)
        .find_map(|entry| entry.strip_prefix(RUNC_VARIABLE))
        .map_or(BuildkitRunc::Unset, |value| {
            BuildkitRunc::Set(OsString::from_vec(value.to_vec()))
        })
}

/// What the daemon behind `socket` has in its environment for BuildKit's
/// runc: the socket's peer (`SO_PEERCRED`), its `/proc/PID/environ`, where
/// this user may read it (root, or dockerd's own user).
pub fn buildkit_runc(socket: &Path) -> BuildkitRunc {
    let Ok(stream) = std::os::unix::net::UnixStream::connect(socket) else {
        return BuildkitRunc::Unknown;
    };
    let Some(pid) = peer_pid(&stream) else {
        return BuildkitRunc::Unknown;
    };
    let mut environ = Vec::new();
    let read = std::fs::File::open(format!("/proc/{pid}/environ"))
        .and_then(|file| file.take(ENVIRON_MAX).read_to_end(&mut environ));
    match read {
        Ok(_) => runc_of(&environ),
        Err(_) => BuildkitRunc::Unknown,
    }
}

/// The pid of the process at the other end of a unix socket.
fn peer_pid(stream: &std::os::unix::net::UnixStream) -> Option<libc::pid_t> {
    use std::os::fd::AsRawFd;
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a connected socket we own, a ucred and its size.
    let got = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &raw mut len,
        )
    };
    (got == 0 && cred.pid > 0).then_some(cred.pid)
}

/// `eatmydata-runtime`: beside this program's real path, else in `PATH`.
pub fn runtime_path() -> Option<PathBuf> {
    let name = crate::runtime::NAME;
    let beside = crate::library::this_program()
        .and_then(|exe| Some(exe.parent()?.join(name)))
        .filter(|p| p.is_file());
    beside.or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
            .and_then(|p| std::path::absolute(p).ok())
    })
}
