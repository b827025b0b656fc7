//! Docker 26, the first whose BuildKit takes its runc from
//! `DOCKER_BUILDKIT_RUNC_COMMAND`, beside this machine's Debian 12 Docker:
//! Debian 13's `docker.io` in a trixie root from `scripts/debian-rootfs`
//! (made once, about two minutes, and kept under /var/tmp under a name
//! that lists its packages), dockerd chrooted there inside a mount
//! namespace of its own (`unshare -m`) with /proc, /sys and /dev bound in.
//! The test's folder under /run (config, socket, pid file, exec root, the
//! data root and the runtime, each bound there) is bound in at the same
//! path, so that every path means the same to dockerd and to the test.
//! The host's docker client gets BuildKit from trixie's `docker-buildx`,
//! linked into the `cli-plugins` of a `DOCKER_CONFIG` of the test's own.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::daemon::{Dockerd, RunDir};
use super::engine::{register_as, runtime};

/// What the trixie root holds besides minbase (its cache's name lists
/// them); docker-compose is Compose v2, which `reach.rs` runs.
const PACKAGES: &str = "containerd,docker-buildx,docker-cli,docker-compose,docker.io,runc,strace";

/// Binds the root onto itself (runc's pivot_root needs a mount point),
/// the host's /proc, /sys and /dev into it, a tmpfs on its /run and the
/// test's folder at its own path there; then runs the rest of the line in
/// the root. The mounts end with the namespace, when dockerd and what it
/// started have ended.
const ENTER: &str = r#"set -e
root=$1 dir=$2
shift 2
chmod 0755 "$root"
mount --bind "$root" "$root"
for fs in proc sys dev; do mount --rbind "/$fs" "$root/$fs"; done
mount -t tmpfs -o mode=0755 tmpfs "$root/run"
mkdir -p "$root$dir"
mount --rbind "$dir" "$root$dir"
exec chroot "$root" "$@""#;

/// The trixie root with Docker 26, made once per content.
pub fn trixie_root() -> &'static Path {
    static MADE: OnceLock<PathBuf> = OnceLock::new();
    MADE.get_or_init(|| {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/debian-rootfs");
        let output = Command::new(script)
            .args(["--suite", "trixie", "--include", PACKAGES, "none"])
            .output()
            .expect("run debian-rootfs");
        assert!(
            output.status.success(),
            "debian-rootfs trixie: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
    })
}

/// Which runtime the daemon's containers and builds get.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Runtime {
    /// runc, as installed.
    Plain,
    /// eatmydata, as `configure docker --default` registers it on Docker 26:
    /// `default-runtime` in daemon.json, and `DOCKER_BUILDKIT_RUNC_COMMAND`
    /// in dockerd's environment (the systemd drop-in's line).
    Default,
    /// The same, BuildKit's runtime run under `strace -ttt -e
    /// trace=syncfs,wait4`, each call's trace in [`Docker26::traces`].
    Traced,
    /// Nothing of ours: no runtime registered, and no file of our build
    /// in dockerd's root, as on Docker Desktop.
    Absent,
}

/// A Docker 26 dockerd of the test's own; stopped when dropped.
pub struct Docker26 {
    // Dropped in this order: dockerd, then the folder and its binds.
    dockerd: Dockerd,
    dir: RunDir,
}

impl Docker26 {
    /// Starts one whose data root is `data` (a loop device's file system,
    /// say), its containers under `runtime`.
    pub fn start(label: &str, data: &Path, runtime: Runtime) -> Docker26 {
        Docker26::start_with_volume(label, data, runtime, None)
    }

    /// The same, with `volume` (another loop device's file system) bound
    /// at [`Docker26::volume`], where dockerd sees it too: a container's
    /// `-v` of that path reaches it.
    pub fn start_with_volume(
        label: &str,
        data: &Path,
        runtime: Runtime,
        volume: Option<&Path>,
    ) -> Docker26 {
        let root = trixie_root();
        let dir = RunDir::new(label);
        let bound_data = dir.join("data");
        bind(data, &bound_data, false);
        if let Some(volume) = volume {
            bind(volume, &dir.join("volume"), false);
        }
        // The runtime and the library beside it, read-only, as dockerd
        // sees them; nothing where it is to be absent.
        let bin = dir.join("bin");
        let command = self::runtime();
        if runtime != Runtime::Absent {
            bind(command.parent().unwrap(), &bin, true);
        }
        let ours = bin.join(command.file_name().unwrap());
        let config = dir.join("daemon.json");
        fs::write(&config, "{}\n").expect("write daemon.json");
        let mut dockerd = Command::new("unshare");
        dockerd
            .args(["-m", "sh", "-c", ENTER, "enter"])
            .arg(root)
            .arg(dir.path())
            .arg("dockerd");
        if !matches!(runtime, Runtime::Plain | Runtime::Absent) {
            let (name, mut value) = register_default(root, &dir, &config, &ours);
            if runtime == Runtime::Traced {
                value = traced(&dir, &value);
            }
            dockerd.env(name, value);
        }
        let client = dir.join("client/cli-plugins");
        fs::create_dir_all(&client).expect("make the client's folder");
        std::os::unix::fs::symlink(
            root.join("usr/libexec/docker/cli-plugins/docker-buildx"),
            client.join("docker-buildx"),
        )
        .expect("link docker-buildx");
        let dockerd = Dockerd::start_with(
            dockerd,
            dir.path(),
            &config,
            &bound_data,
            &dir.join("exec"),
            None,
        );
        Docker26 { dockerd, dir }
    }

    /// Where [`Docker26::start_with_volume`] bound its volume.
    pub fn volume(&self) -> PathBuf {
        self.dir.join("volume")
    }

    /// dockerd's socket.
    pub fn socket(&self) -> &Path {
        &self.dockerd.socket
    }

    /// dockerd's pid: `/proc/PID/root` is the root it sees.
    pub fn pid(&self) -> u32 {
        self.dockerd.daemon.pid()
    }

    /// Where a [`Runtime::Traced`] daemon's traces are: `trace.PID`.
    pub fn traces(&self) -> PathBuf {
        self.dir.join("traces")
    }

    /// `docker` on this daemon, with BuildKit's plugin.
    pub fn docker(&self) -> Command {
        let mut docker = self.dockerd.docker();
        docker.env("DOCKER_CONFIG", self.dir.join("client"));
        docker
    }

    /// `eatmydata docker` on this daemon, as a user types it.
    pub fn eatmydata_docker(&self) -> Command {
        let mut docker = Command::new(crate::common::command());
        docker
            .arg("docker")
            .arg("-H")
            .arg(format!("unix://{}", self.dockerd.socket.display()))
            .env("DOCKER_CONFIG", self.dir.join("client"))
            .stdin(std::process::Stdio::null());
        docker
    }

    /// `docker args`, asserting success; its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.docker().args(args).output().expect("run docker");
        assert!(
            output.status.success(),
            "docker {args:?}: {}\n{}",
            String::from_utf8_lossy(&output.stderr),
            self.dockerd.daemon.log_text()
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The end of dockerd's log, for a failure's message.
    pub fn log(&self) -> String {
        self.dockerd.daemon.log_text()
    }
}

/// `configure docker --default` on `config` for Docker 26, the runtime at
/// `ours`: its systemd drop-in written into the test's folder (not the
/// machine's), its reload aimed at the test's own pid file. Returns the
/// variable the drop-in sets for dockerd.
fn register_default(root: &Path, dir: &RunDir, config: &Path, ours: &Path) -> (String, String) {
    let version = Command::new("chroot")
        .arg(root)
        .args(["dockerd", "--version"])
        .output()
        .expect("run dockerd --version");
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    let systemd = dir.join("systemd");
    let mut options: Vec<OsString> = ["--default", "--docker-version", version.trim()]
        .map(OsString::from)
        .into();
    options.extend(["--systemd-dir".into(), systemd.clone().into()]);
    options.extend(["--pid-file".into(), dir.join("dockerd.pid").into()]);
    register_as("docker", config, ours, &options);
    let drop_in = systemd.join("docker.service.d/eatmydata-buildkit.conf");
    let text = fs::read_to_string(&drop_in).expect("configure's drop-in for Docker 26");
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("Environment=\""))
        .and_then(|line| line.strip_suffix('"'))
        .unwrap_or_else(|| panic!("no Environment= in the drop-in:\n{text}"));
    let (name, value) = line.split_once('=').unwrap();
    (name.to_owned(), value.to_owned())
}

/// A program in `dir` that runs `runtime` under the trixie root's strace,
/// its traces in `dir/traces`; its path.
fn traced(dir: &RunDir, runtime: &str) -> String {
    let traces = dir.join("traces");
    fs::create_dir_all(&traces).expect("make the traces' folder");
    let wrapper = dir.join("traced-runtime");
    let script = format!(
        "#!/bin/sh\nexec strace -ttt -e trace=syncfs,wait4 -o {}/trace.$$ {runtime} \"$@\"\n",
        traces.display()
    );
    fs::write(&wrapper, script).expect("write the traced runtime");
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    fs::set_permissions(&wrapper, mode).expect("make it runnable");
    wrapper.display().to_string()
}

/// Binds `from` at `to` (made), read-only if asked; `RunDir` undoes it.
fn bind(from: &Path, to: &Path, read_only: bool) {
    fs::create_dir_all(to).expect("make a mount point");
    let mut mount = Command::new("mount");
    mount.arg("--bind");
    if read_only {
        mount.args(["-o", "ro"]);
    }
    let status = mount.arg(from).arg(to).status().expect("run mount");
    assert!(
        status.success(),
        "bind {} at {}",
        from.display(),
        to.display()
    );
}
