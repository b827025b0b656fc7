//! Kernel parity: each small static probe runs twice from the same fresh
//! setup, once alone and once under `eatmydata` (seccomp mode, which the
//! command picks for a static program by itself; each C probe runs built
//! dynamic too, where the library serves it, and under `eatmydata
//! --seccomp`, where the library and the filter both do), and both runs
//! must show the same: the same stdout, the same stderr (but for the
//! command's own `eatmydata:` lines), the same exit status, and the same
//! files on disk afterwards (names, kinds, sizes, contents, owners, modes
//! with their setuid bits). Only the flushes may differ; `eats.rs` checks that they
//! do, so that the harness cannot pass by eatmydata doing nothing.
//!
//! Each run gets the same folder path (`area`), emptied and laid out again
//! by the case's setup, and starts in `area/cwd`, which is also the
//! supervisor's working directory: a file the supervisor made for the
//! program in the wrong place is seen in the snapshot. Each run is bound by
//! a deadline, after which its whole process group is killed: a hang is an
//! outcome (`timed out`) like any other.
//!
//! The probes (`tests/integration/probes/parity/*.c`, one file per class,
//! one concern per case argument, and a Go twin in `parity/go`) print
//! `name=result` lines, with errno names for failures. Cases that differ
//! are listed in `parity/known.rs`, each with why it is a limit.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common::{TempDir, command, library, probe};

mod cases; // one test per probe case, by class
mod eats; // the same calls under eatmydata flush nothing on a loop device
mod known; // KNOWN_DIFFERENCES: the cases that differ today, and how
mod snapshot; // the files a run left, and the mounts it left behind

use known::known;
use snapshot::{Entry, Unmount, snapshot};

/// What a case is: which probe, which case in it, how its folder is laid
/// out, and how long it may take.
pub struct Case {
    /// `probe::case`, as KNOWN_DIFFERENCES names it.
    pub name: String,
    /// The probe's file under `probes/parity/`, without `.c`.
    pub probe: &'static str,
    /// The case, the probe's first argument.
    pub arg: &'static str,
    /// Built dynamic, so that eatmydata serves it with the library alone.
    pub dynamic: bool,
    /// Extra compiler flags (libraries).
    pub libs: &'static [&'static str],
    /// Options given to eatmydata before the program.
    pub options: &'static [&'static str],
    pub setup: fn(&Path),
    pub deadline: Duration,
}

/// What one run showed.
#[derive(Debug, PartialEq)]
struct Observation {
    status: String,
    stdout: String,
    stderr: String,
    files: BTreeMap<PathBuf, Entry>,
}

/// The parity probe's Go twin (`probes/parity/go`), built once per process
/// without cgo, so that it is static and a Go program both.
fn go_program() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
            let output = tmp.join("probes/parity/go-parity");
            let partial = output.with_extension(format!("part{}", std::process::id()));
            fs::create_dir_all(tmp.join("probes/parity")).expect("make the probes folder");
            let status = Command::new("go")
                .current_dir(root.join("tests/integration/probes/parity/go"))
                .env("GOCACHE", tmp.join("go/cache"))
                .env("GOPATH", tmp.join("go/path"))
                .env("GOTOOLCHAIN", "local")
                .env("GOPROXY", "off")
                .env("GOFLAGS", "")
                .env("CGO_ENABLED", "0")
                .args(["build", "-buildvcs=false", "-o"])
                .arg(&partial)
                .arg(".")
                .status()
                .expect("run go build (install golang-go)");
            assert!(status.success(), "go build of the parity probe failed");
            fs::rename(&partial, &output).expect("move the Go probe into place");
            output
        })
        .clone()
}

/// The program `probe` of a case, built static.
fn program(case: &Case) -> PathBuf {
    if case.probe == "go" {
        return go_program();
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("probes/parity");
    fs::create_dir_all(dir).expect("create the parity probes folder");
    let mut flags = if case.dynamic {
        vec![]
    } else {
        vec!["-static"]
    };
    flags.extend_from_slice(case.libs);
    probe(&format!("parity/{}", case.probe), &flags)
}

/// Runs the case's probe in a fresh `area` laid out by its setup, alone or
/// under eatmydata, and looks at what it left.
fn observe(case: &Case, scratch: &Path, eaten: bool) -> Observation {
    let area = scratch.join("area");
    if area.exists() {
        fs::remove_dir_all(&area).expect("empty the area");
    }
    fs::create_dir_all(area.join("cwd")).expect("make the area");
    (case.setup)(&area);
    let (out, err) = (scratch.join("stdout"), scratch.join("stderr"));
    let unmount = Unmount(&area);
    let mut run = if eaten {
        let mut run = Command::new(command());
        run.args(case.options).arg(program(case));
        run
    } else {
        Command::new(program(case))
    };
    run.arg(case.arg)
        .arg(&area)
        .current_dir(area.join("cwd"))
        .env_remove("LD_PRELOAD")
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out).expect("create stdout"))
        .stderr(fs::File::create(&err).expect("create stderr"))
        .process_group(0);
    let mut child = run.spawn().expect("start the probe");
    let pgid = child.id() as libc::pid_t;
    let started = Instant::now();
    let ended = loop {
        if exited(pgid) {
            break true;
        }
        if started.elapsed() > case.deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // The group we started, and only it: the run and anything it left
    // behind (a daemon), so that nothing outlives the run. Its leader is
    // not reaped yet, so the group's number cannot have gone to another.
    // SAFETY: kill takes integers; the group is our child's own.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    let reaped = child.wait().expect("reap the probe");
    let status = match (ended, reaped.code(), reaped.signal()) {
        (false, _, _) => "timed out".to_owned(),
        (true, Some(code), _) => format!("exit {code}"),
        (true, None, Some(signal)) => format!("signal {signal}"),
        (true, None, None) => format!("{reaped:?}"),
    };
    drop(unmount);
    let stderr = fs::read_to_string(&err).unwrap_or_default();
    if eaten {
        // Proof that the supervisor served a static run; a dynamic one
        // gets the library alone (eats.rs shows that it acts).
        assert_eq!(
            stderr.contains("using seccomp mode"),
            !case.dynamic,
            "{}: eatmydata's choice of seccomp mode: {stderr}",
            case.name
        );
    }
    let stderr = stderr
        .lines()
        .filter(|line| !line.starts_with("eatmydata:"))
        .collect::<Vec<_>>()
        .join("\n");
    Observation {
        status,
        stdout: fs::read_to_string(&out).unwrap_or_default(),
        stderr,
        files: snapshot(&area),
    }
}

/// Whether our child `pid` has ended, leaving it to be reaped (so that its
/// number, and its process group's, stay ours until then).
fn exited(pid: libc::pid_t) -> bool {
    let mut info = std::mem::MaybeUninit::<libc::siginfo_t>::zeroed();
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    // SAFETY: waitid fills the siginfo_t it is given, here zeroed first.
    let rc = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, info.as_mut_ptr(), flags) };
    // SAFETY: zeroed, then filled or left as is by waitid; si_pid reads
    // the field waitid sets for a child that ended (0 when none did).
    rc == 0 && unsafe { info.assume_init().si_pid() } != 0
}

/// What differs between the two runs, one line per difference.
fn differences(alone: &Observation, eaten: &Observation) -> Vec<String> {
    let mut found = Vec::new();
    for (what, a, e) in [
        ("status", &alone.status, &eaten.status),
        ("stdout", &alone.stdout, &eaten.stdout),
        ("stderr", &alone.stderr, &eaten.stderr),
    ] {
        if a != e {
            found.push(format!("{what}: alone {a:?}, under eatmydata {e:?}"));
        }
    }
    let names = alone.files.keys().chain(eaten.files.keys());
    let mut names: Vec<_> = names.collect();
    names.sort();
    names.dedup();
    for name in names {
        let (a, e) = (alone.files.get(name), eaten.files.get(name));
        if a != e {
            let name = name.display();
            found.push(format!("{name}: alone {a:?}, under eatmydata {e:?}"));
        }
    }
    found
}

/// Runs `case` alone and under eatmydata, and requires the same outcome
/// (or the listed difference).
pub fn check(case: Case) {
    library();
    let scratch = TempDir::new(&format!("parity-{}", case.name.replace("::", "-")));
    let alone = observe(&case, scratch.path(), false);
    assert_ne!(alone.status, "timed out", "{}: the control hung", case.name);
    // Exit 3: the probe could not set its case up, and would pass by
    // failing alike twice.
    assert_ne!(
        alone.status, "exit 3",
        "{}: the probe could not set the case up: {}",
        case.name, alone.stderr
    );
    let eaten = observe(&case, scratch.path(), true);
    let found = differences(&alone, &eaten);
    let (known, combined) = known(&case.name);
    match (found.is_empty(), known) {
        (true, None) => {}
        // The library and the filter both: either may answer first.
        (true, Some(_)) if combined => {}
        (false, Some(reason)) => {
            // No listed difference is a hang: a new one is not excused.
            assert_ne!(eaten.status, "timed out", "{}: now hangs", case.name);
            eprintln!("{}: a known difference ({reason}):", case.name);
            for line in &found {
                eprintln!("  {line}");
            }
        }
        (true, Some(_)) => panic!(
            "{}: now as the kernel; take it out of KNOWN_DIFFERENCES\nstdout: {}",
            case.name, alone.stdout
        ),
        (false, None) => panic!(
            "{}: eatmydata differs from the kernel:\n  {}",
            case.name,
            found.join("\n  ")
        ),
    }
}

/// The comparison itself sees what it is for: a set-id bit, one byte of
/// content, an exit status, a file only one run made.
#[test]
fn parity_oracle_sees_modes_contents_statuses_and_extra_files() {
    let scratch = TempDir::new("parity-oracle");
    let area = scratch.join("area");
    fs::create_dir_all(&area).unwrap();
    fs::write(area.join("f"), "same size").unwrap();
    let observe = || Observation {
        status: "exit 0".to_owned(),
        stdout: "x=ok\n".to_owned(),
        stderr: String::new(),
        files: snapshot(&area),
    };
    let base = observe();
    assert!(differences(&base, &observe()).is_empty());
    let mut changed = observe();
    changed.status = "signal 25".to_owned();
    assert_eq!(differences(&base, &changed).len(), 1);
    use std::os::unix::fs::PermissionsExt;
    for change in [
        |area: &Path| fs::set_permissions(area.join("f"), fs::Permissions::from_mode(0o4644)),
        |area: &Path| fs::write(area.join("f"), "same sizf"),
        |area: &Path| fs::write(area.join("g"), ""),
    ] {
        fs::write(area.join("f"), "same size").unwrap();
        fs::set_permissions(area.join("f"), fs::Permissions::from_mode(0o644)).unwrap();
        let _ = fs::remove_file(area.join("g"));
        let before = observe();
        change(&area).unwrap();
        assert_eq!(differences(&before, &observe()).len(), 1);
    }
}
