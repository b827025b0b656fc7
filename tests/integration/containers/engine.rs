//! What the engine tests share: the runtime under test and its
//! registration, the engine interface the cases use, and the oracle: a
//! container run without the runtime (plain runc) beside the same run with
//! it, their flushes counted on a loop device mounted as the container's
//! volume. The daemons themselves are `daemon.rs`'s.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{Flushes, command, registered_runtime};
use crate::loopfs::LoopFs;

/// Where the engines keep what outlives one test (their image stores,
/// keyed by the image's content) and the locks that give one test at a
/// time each store.
pub const CACHE: &str = "/var/tmp/eatmydata-engines";

/// [`CACHE`], made root's, or the test fails where another user made it
/// (`common::own_folder`): once per test process, before anything is
/// made or read in it.
pub fn own_cache() {
    static CHECKED: std::sync::Once = std::sync::Once::new();
    CHECKED.call_once(|| crate::common::own_folder(std::path::Path::new(CACHE)));
}

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
/// user does: `eatmydata-runtime configure ENGINE --config FILE`, naming
/// root's copy (`common::registered_runtime`): `configure` registers no
/// file in the checkout, which may be in a shared folder.
pub fn register(engine: &str, config: &Path) {
    register_as::<&str>(engine, config, &registered_runtime(), &[]);
}

/// The same with `--default`: eatmydata the default runtime of every
/// container (and build) of the engine.
pub fn register_default(engine: &str, config: &Path) {
    register_as(engine, config, &registered_runtime(), &["--default"]);
}

/// `eatmydata-runtime configure ENGINE --config FILE OPTIONS`, naming the
/// runtime at `runtime` (a link to the command, or a bind of its folder).
pub fn register_as<S: AsRef<std::ffi::OsStr>>(
    engine: &str,
    config: &Path,
    runtime: &Path,
    options: &[S],
) {
    let mut configure = Command::new(runtime);
    configure
        .args(["configure", engine, "--config"])
        .arg(config)
        .arg("--runtime-path")
        .arg(runtime);
    // Docker 26 and later: BuildKit's drop-in beside the file, never in
    // the machine's own systemd folder (an option given wins: it comes
    // later).
    if engine == "docker" {
        let folder = config.parent().unwrap_or(Path::new("/nonexistent"));
        configure.arg("--systemd-dir").arg(folder.join("systemd"));
    }
    let output = configure
        .args(options)
        .output()
        .expect("run eatmydata-runtime configure");
    assert!(
        output.status.success(),
        "eatmydata-runtime configure {engine}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// What a container gave: its exit status and output.
#[derive(Clone, Debug)]
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
#[derive(Clone)]
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

/// `args` run under `nosync` (copied into `disk`, the container's
/// `/data`): the job's floor, the same files written without syncing.
pub fn floor_args<'a>(disk: &LoopFs, args: &[&'a str]) -> Vec<&'a str> {
    crate::common::nosync_into(disk.path());
    let mut floor = vec!["/data/nosync"];
    floor.extend(args);
    floor
}

/// The numbers a case must reach: the control flushed for real (at least
/// `at_least` flushes above the floor, the same job under `nosync`), the
/// run under the runtime no more than the floor allows
/// (`common::flushes`), with the same exit status and output. Prints the
/// figures.
pub fn assert_eaten(
    engine: &str,
    case: &str,
    [control, floor, eaten]: [&Measured; 3],
    at_least: u64,
) {
    assert_eq!(
        (eaten.ran.status, &eaten.ran.stdout),
        (control.ran.status, &control.ran.stdout),
        "{engine} {case}: the run under the runtime differs: {:?}",
        eaten.ran
    );
    assert_flushes_eaten(engine, case, [control, floor, eaten], at_least);
}

/// The flush half of [`assert_eaten`], for a case whose output differs
/// on purpose.
pub fn assert_flushes_eaten(
    engine: &str,
    case: &str,
    [control, floor, eaten]: [&Measured; 3],
    at_least: u64,
) {
    report(engine, case, control, eaten);
    assert_eq!(
        control.ran.status,
        Some(0),
        "{engine} {case}, control: {:?}",
        control.ran
    );
    assert_eq!(
        floor.ran.status,
        Some(0),
        "{engine} {case}, floor: {:?}",
        floor.ran
    );
    Flushes {
        control: control.flushes,
        floor: floor.flushes,
        eaten: eaten.flushes,
    }
    .assert_eaten(
        at_least,
        &format!("{engine} {case}, under the runtime {:?}", eaten.ran),
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

/// `sh /opt/tests/SCRIPT ...`, the servers' scripts in the image.
pub fn script(name: &str) -> String {
    format!("/opt/tests/{name}")
}
