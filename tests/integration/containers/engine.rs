//! What the engine tests share: the runtime under test, the daemons they
//! start (each stopped by its pid when dropped, also when a test fails),
//! and the oracle: a container run without the runtime (plain runc) beside
//! the same run with it, their flushes counted on a loop device mounted as
//! the container's volume.

use std::fs::{self, File};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::command;
use crate::loopfs::LoopFs;

/// Where the engines keep what outlives one test (their image stores,
/// keyed by the image's content) and the locks that give one test at a
/// time each store.
pub const CACHE: &str = "/var/tmp/eatmydata-engines";

/// The runtime under test: `eatmydata-runtime`, a link to the command
/// beside it (so that it finds the library it was built with).
pub fn runtime() -> PathBuf {
    let command = command();
    let link = command.with_file_name("eatmydata-runtime");
    if fs::symlink_metadata(&link).is_err() {
        let partial = link.with_extension(format!("part{}", std::process::id()));
        let _ = fs::remove_file(&partial);
        std::os::unix::fs::symlink("eatmydata", &partial).expect("link eatmydata-runtime");
        fs::rename(&partial, &link).expect("move the link into place");
    }
    link
}

/// Registers the runtime with `engine` in its config file `config`, as a
/// user does: `eatmydata-runtime configure ENGINE --config FILE`.
pub fn register(engine: &str, config: &Path) {
    let runtime = runtime();
    let output = Command::new(&runtime)
        .args(["configure", engine, "--config"])
        .arg(config)
        .arg("--runtime-path")
        .arg(&runtime)
        .output()
        .expect("run eatmydata-runtime configure");
    assert!(
        output.status.success(),
        "eatmydata-runtime configure {engine}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// What a container gave: its exit status and output.
#[derive(Debug)]
pub struct Ran {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Ran {
    fn from(output: Output) -> Ran {
        Ran {
            status: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// One container run an engine makes: with the runtime (`eaten`) or with
/// plain runc, of `image`, with `/data` on the test's loop device.
pub struct Job<'a> {
    pub eaten: bool,
    pub image: &'a str,
    pub env: &'a [&'a str],
    pub args: &'a [&'a str],
}

/// An engine started for a test.
pub trait Engine {
    fn name(&self) -> &'static str;
    /// The image with the servers and probes (see `image.rs`).
    fn image(&self) -> &str;
    /// Runs `job` to its end, `/data` being `disk`.
    fn run(&self, disk: &LoopFs, job: &Job) -> Ran;
}

/// A run and the flushes it made on the volume's device.
pub struct Measured {
    pub flushes: u64,
    pub ran: Ran,
    pub took: Duration,
}

/// Runs `job` on `disk` and counts its flushes.
pub fn measure(engine: &dyn Engine, disk: &LoopFs, job: &Job) -> Measured {
    measure_with(disk, || engine.run(disk, job))
}

/// Counts the flushes `run` makes on `disk`, and times it.
pub fn measure_with(disk: &LoopFs, run: impl FnOnce() -> Ran) -> Measured {
    let start = Instant::now();
    let mut ran = None;
    let flushes = disk.flushes_during(|| ran = Some(run()));
    Measured {
        flushes,
        ran: ran.unwrap(),
        took: start.elapsed(),
    }
}

/// The numbers a case must reach: the control flushed for real (at least
/// `at_least` flushes), the run under the runtime at most 5% of that, with
/// the same exit status and output. Prints the figures.
pub fn assert_eaten(engine: &str, case: &str, control: &Measured, eaten: &Measured, at_least: u64) {
    assert_eq!(
        (eaten.ran.status, &eaten.ran.stdout),
        (control.ran.status, &control.ran.stdout),
        "{engine} {case}: the run under the runtime differs: {:?}",
        eaten.ran
    );
    assert_flushes_eaten(engine, case, control, eaten, at_least);
}

/// The flush half of [`assert_eaten`], for a case whose output differs
/// on purpose.
pub fn assert_flushes_eaten(
    engine: &str,
    case: &str,
    control: &Measured,
    eaten: &Measured,
    at_least: u64,
) {
    report(engine, case, control, eaten);
    assert_eq!(
        control.ran.status,
        Some(0),
        "{engine} {case}, control: {:?}",
        control.ran
    );
    assert!(
        control.flushes >= at_least,
        "{engine} {case}: control made {} flushes, fewer than {at_least}",
        control.flushes
    );
    assert!(
        eaten.flushes * 20 <= control.flushes,
        "{engine} {case}: {} flushes under the runtime, more than 5% of the control's {}: {:?}",
        eaten.flushes,
        control.flushes,
        eaten.ran
    );
}

/// One line per case, for the report (`--no-capture` shows them).
pub fn report(engine: &str, case: &str, control: &Measured, other: &Measured) {
    eprintln!(
        "engines: {engine} {case}: control {} flushes ({:.1} s), runtime {} flushes ({:.1} s)",
        control.flushes,
        control.took.as_secs_f64(),
        other.flushes,
        other.took.as_secs_f64()
    );
}

/// A lock of one engine's store, held for a whole test.
pub struct StoreLock(#[allow(dead_code)] File);

impl StoreLock {
    pub fn take(engine: &str) -> StoreLock {
        fs::create_dir_all(CACHE).expect("make the engines' cache");
        let file = File::create(Path::new(CACHE).join(format!("{engine}.lock"))).unwrap();
        // SAFETY: flock on a descriptor we own; it blocks until granted.
        while unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&file), libc::LOCK_EX) } != 0 {
            let error = std::io::Error::last_os_error();
            assert_eq!(
                error.kind(),
                std::io::ErrorKind::Interrupted,
                "flock: {error}"
            );
        }
        StoreLock(file)
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
            if let Ok(Some(status)) = daemon.child.try_wait() {
                panic!(
                    "{name} ended ({status}) before it answered:\n{}",
                    daemon.log_text()
                );
            }
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

/// `sh /opt/tests/SCRIPT ...`, the servers' scripts in the image.
pub fn script(name: &str) -> String {
    format!("/opt/tests/{name}")
}
