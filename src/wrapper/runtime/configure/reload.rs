//! Telling an engine to read its file again, with nothing stopped.
//! dockerd reads `runtimes` and `default-runtime` again on SIGHUP (as
//! `systemctl reload docker` sends it), running containers untouched: it
//! is found through its pid file and checked to be a dockerd reading the
//! file we changed before it gets the signal, through a pidfd, so that a
//! pid reused meanwhile is never signalled. containerd and CRI-O read
//! their files only when they start; podman at each command.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::{Engine, file};

/// Where dockerd writes its pid unless its `pidfile` setting says.
pub const DOCKER_PID_FILE: &str = "/var/run/docker.pid";

/// The file dockerd reads unless `--config-file` names another.
pub const DOCKER_CONFIG: &str = "/etc/docker/daemon.json";

/// A dockerd found running through its pid file.
pub struct Dockerd {
    pub pid: i32,
    pidfd: OwnedFd,
    args: Vec<String>,
    cwd: PathBuf,
}

impl Dockerd {
    /// The dockerd whose pid `pid_file` holds; `Err` says why there is
    /// none.
    pub fn find(pid_file: &Path) -> Result<Dockerd, String> {
        let opened = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(pid_file);
        let shown = pid_file.display();
        let bytes = match opened.and_then(|f| file::bounded(f, 64)) {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(why)) => return Err(format!("{shown}: {why}")),
            Err(error) => return Err(format!("{shown}: {}", crate::error::plain(&error))),
        };
        let text = String::from_utf8_lossy(&bytes);
        let pid: i32 = match text.trim().parse() {
            Ok(pid) if pid > 0 => pid,
            _ => return Err(format!("{shown} holds no pid")),
        };
        // SAFETY: pidfd_open takes a pid and flags and returns a new
        // descriptor or -1; no memory is passed.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            return Err(format!("no process {pid} (from {shown})"));
        }
        // SAFETY: the descriptor pidfd_open just gave us, owned here alone.
        let pidfd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let read = |name: &str| -> Vec<u8> {
            File::open(proc.join(name))
                .ok()
                .and_then(|f| file::bounded(f, 1 << 16).ok()?.ok())
                .unwrap_or_default()
        };
        let comm = read("comm");
        let args: Vec<String> = read("cmdline")
            .split(|b| *b == 0)
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect();
        let cwd = fs::read_link(proc.join("cwd")).unwrap_or_else(|_| "/".into());
        let dockerd = Dockerd {
            pid,
            pidfd,
            args,
            cwd,
        };
        // Still the process we opened: what we read was its.
        dockerd
            .signal(0)
            .map_err(|_| format!("process {pid} (from {shown}) has ended"))?;
        if comm.trim_ascii_end() != b"dockerd" {
            let comm = String::from_utf8_lossy(comm.trim_ascii_end()).into_owned();
            return Err(format!(
                "process {pid} (from {shown}) is {comm}, not dockerd"
            ));
        }
        Ok(dockerd)
    }

    /// The value of the first of `names` on dockerd's command line
    /// (`--name VALUE` or `--name=VALUE`).
    pub fn option(&self, names: &[&str]) -> Option<String> {
        let mut args = self.args.iter().skip(1);
        while let Some(arg) = args.next() {
            for name in names {
                if arg == name {
                    return args.next().cloned();
                }
                if let Some(value) = arg.strip_prefix(name).and_then(|v| v.strip_prefix('=')) {
                    return Some(value.to_owned());
                }
            }
        }
        None
    }

    /// The file dockerd reads its settings from.
    pub fn config(&self) -> PathBuf {
        let named = self.option(&["--config-file"]);
        let path = named.map_or(PathBuf::from(DOCKER_CONFIG), PathBuf::from);
        self.cwd.join(path)
    }

    /// dockerd's data-root when its command line gives it.
    pub fn data_root(&self) -> Option<PathBuf> {
        let named = self.option(&["--data-root", "-g", "--graph"])?;
        Some(self.cwd.join(named))
    }

    /// Whether dockerd reads `config`, a path under `root` ("/", or the
    /// host's root where a node installer mounts it), both resolved.
    pub fn reads(&self, root: &Path, config: &Path) -> bool {
        let theirs = fs::canonicalize(under(root, &self.config()));
        theirs.is_ok() && theirs.ok() == fs::canonicalize(config).ok()
    }

    /// Sends SIGHUP: dockerd reads its file again.
    pub fn reload(&self) -> io::Result<()> {
        self.signal(libc::SIGHUP)
    }

    fn signal(&self, signal: libc::c_int) -> io::Result<()> {
        let fd = self.pidfd.as_raw_fd();
        // SAFETY: a pidfd we own, a signal number, no siginfo, no flags.
        let sent = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fd,
                signal,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
        match sent {
            0 => Ok(()),
            _ => Err(io::Error::last_os_error()),
        }
    }
}

/// `path`, a path of the host, as seen from here when the host's root is
/// at `root`.
pub fn under(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// The pid file of the dockerd reading `daemon.json` with `text`: its
/// `pidfile` setting, else [`DOCKER_PID_FILE`].
pub fn docker_pid_file(text: &str) -> PathBuf {
    super::docker::setting(text, "pidfile")
        .filter(|path| !path.is_empty())
        .map_or(PathBuf::from(DOCKER_PID_FILE), PathBuf::from)
}

/// What became of a reload.
pub enum Reloaded {
    /// dockerd got SIGHUP.
    Signalled(i32),
    /// Nothing to tell the engine, or no way to: what the user does.
    Yours(String),
}

/// Tells the engine reading `config` (changed) to read it again, or says
/// what the user does for it to; `pid_file` is dockerd's. Both paths as
/// seen from here, the host's root being at `root` ("/" but for a node
/// installer, whose `/proc` must be the host's: `--pid=host`).
pub fn reload(engine: Engine, root: &Path, config: &Path, pid_file: &Path) -> Reloaded {
    match engine {
        Engine::Docker => reload_dockerd(root, config, pid_file),
        Engine::Podman => Reloaded::Yours(
            "podman reads it at its next command; nothing to reload, nothing stopped".into(),
        ),
        Engine::Containerd => Reloaded::Yours(
            "containerd reads its config only when it starts: restart it (systemctl \
             restart containerd) when convenient. Running containers keep running (each has \
             a shim of its own), but pulls and CRI calls under way fail, and the kubelet \
             sees the node's runtime gone for a few seconds"
                .into(),
        ),
        Engine::Crio => Reloaded::Yours(
            "CRI-O reads its config only when it starts: restart it (systemctl restart \
             crio) when convenient. Running containers keep running (each has a conmon of \
             its own), but pulls and CRI calls under way fail, and the kubelet sees the \
             node's runtime gone for a few seconds"
                .into(),
        ),
    }
}

fn reload_dockerd(root: &Path, config: &Path, pid_file: &Path) -> Reloaded {
    let yours = |why: String| {
        Reloaded::Yours(format!(
            "reload dockerd for it to read the change (systemctl reload docker, or \
             kill -HUP its pid): {why}. A reload stops nothing; a restart would stop \
             every running container"
        ))
    };
    let dockerd = match Dockerd::find(pid_file) {
        Ok(dockerd) => dockerd,
        Err(why) => return yours(format!("no dockerd found ({why})")),
    };
    if !dockerd.reads(root, config) {
        let theirs = dockerd.config();
        return yours(format!(
            "dockerd {} reads {}, not {}, and was not told",
            dockerd.pid,
            theirs.display(),
            config.display()
        ));
    }
    match dockerd.reload() {
        Ok(()) => Reloaded::Signalled(dockerd.pid),
        Err(error) => yours(format!(
            "SIGHUP to dockerd {} failed: {}",
            dockerd.pid,
            crate::error::plain(&error)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pid_file_that_names_no_dockerd_is_not_signalled() {
        let dir = std::env::temp_dir().join(format!("eatmydata-reload-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let pid_file = dir.join("pid");
        // This test's own process is no dockerd.
        fs::write(&pid_file, format!("{}\n", std::process::id())).unwrap();
        let why = Dockerd::find(&pid_file).err().unwrap();
        assert!(why.ends_with(", not dockerd"), "{why}");
        fs::write(&pid_file, "x").unwrap();
        assert!(
            Dockerd::find(&pid_file)
                .err()
                .unwrap()
                .ends_with("holds no pid")
        );
        fs::remove_file(&pid_file).unwrap();
        assert!(Dockerd::find(&pid_file).is_err());
        let _ = fs::remove_dir_all(&dir);
        assert_eq!(
            docker_pid_file("{\"pidfile\": \"/run/d.pid\"}"),
            Path::new("/run/d.pid")
        );
        assert_eq!(docker_pid_file("{}"), Path::new(DOCKER_PID_FILE));
        let host = Path::new("/host");
        assert_eq!(
            under(host, Path::new(DOCKER_CONFIG)),
            Path::new("/host/etc/docker/daemon.json")
        );
        assert_eq!(
            under(Path::new("/"), Path::new(DOCKER_CONFIG)),
            Path::new(DOCKER_CONFIG)
        );
    }
}
