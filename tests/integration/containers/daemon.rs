//! The daemons the engine tests start (dockerd, containerd), each stopped
//! by its pid when dropped, also when a test fails, and the one dockerd
//! starter the configure tests use too; the short folders under /run
//! their sockets and state live in, emptied of mounts when dropped; and
//! the lock that gives one test at a time an engine's store.

use std::fs::{self, File};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::engine::CACHE;
use crate::common::locked;

/// A lock of one engine's store, held for a whole test.
pub struct StoreLock(#[allow(dead_code)] File);

impl StoreLock {
    pub fn take(engine: &str) -> StoreLock {
        super::engine::own_cache();
        let path = Path::new(CACHE).join(format!("{engine}.lock"));
        StoreLock(locked(&path, libc::LOCK_EX))
    }
}

/// A short folder of a test's own under /run (a daemon's sockets must fit
/// in 108 bytes), emptied of mounts and removed when dropped.
pub struct RunDir(PathBuf);

impl RunDir {
    pub fn new(label: &str) -> RunDir {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let path = PathBuf::from(format!(
            "/run/eatmydata-test/{label}-{}-{n}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).expect("make a folder under /run");
        RunDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        unmount_under(&self.0);
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A folder whose mounts are undone when dropped (a daemon's store, after
/// the daemon is gone).
pub struct Unmounted(pub PathBuf);

impl Drop for Unmounted {
    fn drop(&mut self) {
        unmount_under(&self.0);
    }
}

/// Unmounts (lazily, deepest first) whatever a daemon left mounted under
/// `dir`: the mounts of its containers, its own tmpfs.
pub fn unmount_under(dir: &Path) {
    let table = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut points: Vec<&str> = table
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .filter(|point| Path::new(point).starts_with(dir))
        .collect();
    points.sort_by_key(|point| std::cmp::Reverse(point.len()));
    for point in points {
        let _ = Command::new("umount").args(["-l", point]).status();
    }
}

/// A dockerd of the test's own, off the host's network (no bridge, no
/// iptables, no masquerading), on its own config file, store and state;
/// stopped by its pid when dropped.
pub struct Dockerd {
    pub daemon: Daemon,
    pub socket: PathBuf,
}

impl Dockerd {
    /// Starts one on `config`, its store in `data_root`, its state in
    /// `exec_root` (where it starts a containerd of its own unless given
    /// `containerd`'s socket), its socket, pid file and log in `dir`;
    /// returns once it answers.
    pub fn start(
        dir: &Path,
        config: &Path,
        data_root: &Path,
        exec_root: &Path,
        containerd: Option<&Path>,
    ) -> Dockerd {
        Dockerd::start_with(
            Command::new("dockerd"),
            dir,
            config,
            data_root,
            exec_root,
            containerd,
        )
    }

    /// The same with `dockerd`, a command that runs a dockerd with the
    /// arguments it is given (another Docker's, in a root of its own: see
    /// `docker26.rs`); the paths are the same for it as here.
    pub fn start_with(
        mut dockerd: Command,
        dir: &Path,
        config: &Path,
        data_root: &Path,
        exec_root: &Path,
        containerd: Option<&Path>,
    ) -> Dockerd {
        dockerd.args([
            "--bridge=none",
            "--iptables=false",
            "--ip6tables=false",
            "--ip-masq=false",
        ]);
        Dockerd::start_on(dockerd, dir, config, data_root, exec_root, containerd)
    }

    /// A dockerd in a network namespace of its own (`unshare -n`, its
    /// loopback up) with its default bridge there, which touches nothing
    /// of the host's network: for clients that publish ports and connect
    /// to them (Testcontainers' modules, Compose), run in that namespace
    /// by [`Dockerd::in_netns`]. Its own containerd, no iptables.
    pub fn start_netns(dir: &Path, config: &Path, data_root: &Path, exec_root: &Path) -> Dockerd {
        let mut dockerd = Command::new("unshare");
        dockerd.args([
            "-n",
            "sh",
            "-c",
            "ip link set lo up && exec \"$@\"",
            "netns",
            "dockerd",
            "--iptables=false",
            "--ip6tables=false",
            "--ip-masq=false",
        ]);
        Dockerd::start_on(dockerd, dir, config, data_root, exec_root, None)
    }

    /// `program` run in the daemon's network namespace (for a daemon of
    /// [`Dockerd::start_netns`]), its stdin empty.
    pub fn in_netns(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new("nsenter");
        command
            .arg(format!("--net=/proc/{}/ns/net", self.daemon.pid()))
            .arg("--")
            .arg(program)
            .stdin(Stdio::null());
        command
    }

    /// `dockerd`, given its network options, on the rest.
    fn start_on(
        mut dockerd: Command,
        dir: &Path,
        config: &Path,
        data_root: &Path,
        exec_root: &Path,
        containerd: Option<&Path>,
    ) -> Dockerd {
        let socket = dir.join("docker.sock");
        dockerd
            .arg("--config-file")
            .arg(config)
            .arg("--data-root")
            .arg(data_root)
            .arg("--exec-root")
            .arg(exec_root)
            .arg("--pidfile")
            .arg(dir.join("dockerd.pid"))
            .arg("--host")
            .arg(format!("unix://{}", socket.display()));
        if let Some(containerd) = containerd {
            dockerd.arg("--containerd").arg(containerd);
        }
        let daemon = Daemon::start("dockerd", dockerd, &socket, dir.join("dockerd.log"));
        Dockerd { daemon, socket }
    }

    /// `docker` on this daemon, its stdin empty.
    pub fn docker(&self) -> Command {
        let mut docker = Command::new("docker");
        docker
            .arg("-H")
            .arg(format!("unix://{}", self.socket.display()))
            .stdin(Stdio::null());
        docker
    }

    /// `docker args` on this daemon, asserting success (the failure's
    /// message ends with the daemon's log); its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.docker().args(args).output().expect("run docker");
        assert!(
            output.status.success(),
            "docker {args:?}: {}\n{}",
            String::from_utf8_lossy(&output.stderr),
            self.daemon.log_text()
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

/// A daemon the test started, stopped by its pid when dropped: SIGTERM,
/// then SIGKILL if it has not ended within 30 s.
pub struct Daemon {
    child: Child,
    name: &'static str,
    log: PathBuf,
}

impl Daemon {
    /// Starts `command`, its output to `log`, and waits until it answers on
    /// `socket`.
    pub fn start(name: &'static str, mut command: Command, socket: &Path, log: PathBuf) -> Daemon {
        let out = File::create(&log).expect("create the daemon's log");
        let child = command
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        let mut daemon = Daemon { child, name, log };
        let deadline = Instant::now() + Duration::from_secs(60);
        while UnixStream::connect(socket).is_err() {
            daemon.assert_running();
            assert!(
                Instant::now() < deadline,
                "{name} did not answer within 60 s:\n{}",
                daemon.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        daemon
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Panics, with the end of its log, if the daemon has ended.
    pub fn assert_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("{} ended ({status}):\n{}", self.name, self.log_text());
        }
    }

    pub fn log_text(&self) -> String {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let mut start = text.len().saturating_sub(4000);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        text[start..].to_owned()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: a signal to the process we started, which we have not
        // reaped yet (its pid cannot have been reused).
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(30);
        while matches!(self.child.try_wait(), Ok(None)) {
            if Instant::now() > deadline {
                eprintln!("{} did not end on SIGTERM: killed", self.name);
                let _ = self.child.kill();
                let _ = self.child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
