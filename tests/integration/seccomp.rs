//! Programs that bypass libc — a statically linked C program and Go
//! programs — under `eatmydata --seccomp` (the supervised filter) and
//! `--seccomp=plain`, and plain `eatmydata` never leaving them silently
//! untouched.
//!
//! strace would show a call the filter answered as made, so non-execution
//! is shown by results: calls that fail for real (fsync on a pipe is
//! EINVAL) return 0 under the filter, and a loop of fsyncs adds no flushes
//! to the disk's count in /proc/diskstats. Every filter is installed by the
//! eatmydata command in a child process, never in the test process.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::{env, fs};

use crate::common::{Outcome, Run, TempDir, command, library, probe};

mod disk; // a loop of fsyncs adds no flushes to the disk's count
mod etcd; // etcd (Go) puts flush nothing under plain eatmydata
mod lifecycle; // the supervisor: signals, exit status, killed, daemons, closed descriptors
mod parity; // kernel parity: each probe alone and under eatmydata, the same outcome
mod privileges; // no_new_privs without CAP_SYS_ADMIN; setuid commands
mod supervised; // sync flags dropped at open and pwritev2, bad input answered as the kernel does
mod uring; // io_uring flushes: fio's engine and a liburing program, SQPOLL included

fn static_probe() -> PathBuf {
    probe("seccomp_sync", &["-static"])
}

/// The Go probe, built once per process: `static` (CGO_ENABLED=0) or
/// `dynamic` (with cgo, so it links the C runtime and has an interpreter).
pub(crate) fn go_probe(linking: &'static str) -> PathBuf {
    static BUILT: [OnceLock<PathBuf>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = &BUILT[usize::from(linking == "dynamic")];
    slot.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/probes/go");
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let output = tmp.join(format!("probes/seccomp-go-{linking}"));
        let partial = output.with_extension(format!("part{}", std::process::id()));
        fs::create_dir_all(tmp.join("probes")).unwrap();
        let mut go = Command::new("go");
        go.current_dir(&source)
            .env("GOCACHE", tmp.join("go/cache"))
            .env("GOPATH", tmp.join("go/path"))
            .env("GOTOOLCHAIN", "local")
            .env("GOPROXY", "off")
            .env("GOFLAGS", "")
            // The same bytes from every checkout and commit: the engine
            // tests' image, keyed by content, holds this probe.
            .args(["build", "-buildvcs=false", "-trimpath", "-o"])
            .arg(&partial);
        go.env("CGO_ENABLED", if linking == "dynamic" { "1" } else { "0" });
        let status = go
            .arg(".")
            .status()
            .expect("run go build (install golang-go)");
        assert!(status.success(), "go build of the {linking} probe failed");
        fs::rename(&partial, &output).unwrap();
        output
    })
    .clone()
}

/// `eatmydata ARGS...` with no LD_PRELOAD of the caller's.
fn eatmydata<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Outcome {
    library();
    Run::new(command()).args(args).run().success()
}

/// The probe's `NAME=RESULT` lines.
fn results(outcome: &Outcome) -> BTreeMap<String, String> {
    let stdout = outcome.stdout();
    let pairs = stdout.lines().filter_map(|line| line.split_once('='));
    pairs.map(|(k, v)| (k.to_owned(), v.to_owned())).collect()
}

/// The lines eatmydata wrote on stderr.
fn notices(outcome: &Outcome) -> Vec<String> {
    let stderr = outcome.stderr();
    stderr
        .lines()
        .filter(|l| l.starts_with("eatmydata:"))
        .map(str::to_owned)
        .collect()
}

/// Calls that fail for real and whose failure the plain filter hides.
const ANSWERED: &[&str] = &["fsync_pipe", "fdatasync_pipe", "sync_file_range_pipe"];
const ANSWERED_C_ONLY: &[&str] = &[
    "msync_unaligned",
    "raw_fsync_pipe",
    #[cfg(target_arch = "x86_64")]
    "i386_fsync_pipe",
    #[cfg(target_arch = "x86_64")]
    "x32_fsync_pipe",
];
const ANSWERED_GO_ONLY: &[&str] = &["file_sync_pipe"];
/// Calls on descriptor -1, which every filter lets the kernel fail
/// `EBADF` (the guard on the descriptor's sign bit).
const NEGATIVE: &[&str] = &["fsync_badfd"];
const NEGATIVE_C_ONLY: &[&str] = &["syncfs_badfd"];

/// The calls on descriptor -1 got the kernel's `EBADF`, as in `off`.
fn assert_negative_fails(
    off: &BTreeMap<String, String>,
    on: &BTreeMap<String, String>,
    names: &[&str],
) {
    for name in names {
        assert_eq!(off[*name], "EBADF", "{name}: the kernel's answer");
        assert_eq!(on[*name], "EBADF", "{name} under the filter");
    }
}

fn assert_answered(found: &BTreeMap<String, String>, names: &[&str], filtered: bool) {
    for name in names {
        let result = found
            .get(*name)
            .unwrap_or_else(|| panic!("no {name} in {found:?}"));
        assert_eq!(
            result == "0",
            filtered,
            "{name}={result}, filter on: {filtered}"
        );
    }
    assert_eq!(
        found["write_pipe"], "0",
        "an ordinary write must still work"
    );
}

/// The supervised filter answers every call as the kernel does (`off`, the
/// control), in every ABI.
fn assert_kernels_answers(off: &BTreeMap<String, String>, on: &BTreeMap<String, String>) {
    assert_eq!(
        on.keys().collect::<Vec<_>>(),
        off.keys().collect::<Vec<_>>()
    );
    for (name, result) in on {
        assert_eq!(result, &off[name], "{name}: the kernel's answer");
    }
}

/// The `Seccomp:` mode of `/proc/self/status` the probe sees when run by
/// eatmydata with `options`: "0" without a filter, "2" with one.
fn seccomp_mode(probe: &std::path::Path, options: &[&str]) -> String {
    let mut args: Vec<&std::ffi::OsStr> = options.iter().map(|o| o.as_ref()).collect();
    args.extend([probe.as_os_str(), "whoami".as_ref()]);
    let stdout = eatmydata(&args).stdout();
    let line = stdout.lines().find_map(|l| l.strip_prefix("Seccomp:"));
    line.expect("a Seccomp: line").trim().to_owned()
}

#[test]
fn a_static_programs_syncs_return_0_without_running() {
    let probe = static_probe();
    let off = results(&eatmydata(&[
        "--no-seccomp".as_ref(),
        probe.as_os_str(),
        "calls".as_ref(),
    ]));
    assert_answered(&off, ANSWERED, false);
    assert_answered(&off, ANSWERED_C_ONLY, false);
    let supervised = results(&eatmydata(&[
        "--seccomp".as_ref(),
        probe.as_os_str(),
        "calls".as_ref(),
    ]));
    assert_kernels_answers(&off, &supervised);
    let on = results(&eatmydata(&[
        "--seccomp=plain".as_ref(),
        probe.as_os_str(),
        "calls".as_ref(),
    ]));
    assert_answered(&on, ANSWERED, true);
    assert_answered(&on, ANSWERED_C_ONLY, true);
    assert_negative_fails(&off, &on, &[NEGATIVE, NEGATIVE_C_ONLY].concat());
    // Other calls run unchanged in every ABI.
    #[cfg(target_arch = "x86_64")]
    {
        assert_eq!(on["i386_getpid"], "same");
        assert_ne!(
            on["x32_close_badfd"], "0",
            "x32 close must reach the kernel"
        );
    }
}

#[test]
fn a_go_programs_syncs_return_0_without_running() {
    let probe = go_probe("static");
    let run = |mode: &str| {
        results(&eatmydata(&[
            mode.as_ref(),
            probe.as_os_str(),
            "calls".as_ref(),
        ]))
    };
    let off = run("--no-seccomp");
    assert_answered(&off, ANSWERED, false);
    assert_answered(&off, ANSWERED_GO_ONLY, false);
    // For Go, the supervised filter answers fsync and fdatasync itself
    // (os.File.Sync is fsync), the supervisor the rest.
    let fast = run("--seccomp");
    let by_filter = ["fsync_pipe", "fdatasync_pipe", "file_sync_pipe"];
    assert_answered(&fast, &by_filter, true);
    assert_negative_fails(&off, &fast, NEGATIVE);
    assert_eq!(fast["sync_file_range_pipe"], off["sync_file_range_pipe"]);
    let on = run("--seccomp=plain");
    assert_answered(&on, ANSWERED, true);
    assert_answered(&on, ANSWERED_GO_ONLY, true);
    assert_negative_fails(&off, &on, NEGATIVE);
}

#[test]
fn plain_eatmydata_turns_seccomp_on_for_static_and_go_and_says_so_once() {
    for (program, what) in [
        (static_probe(), "is statically linked"),
        (go_probe("static"), "is a Go program"),
        (go_probe("dynamic"), "is a Go program"),
    ] {
        let scratch = TempDir::new("seccomp-auto");
        let file = scratch.join("file");
        let outcome = eatmydata(&[
            program.as_os_str(),
            "flags".as_ref(),
            file.as_os_str(),
            "1".as_ref(),
        ]);
        assert_eq!(
            results(&outcome)["openat2_sync"],
            "dropped",
            "{}",
            program.display()
        );
        let said = notices(&outcome);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains(what) && said[0].contains("--no-seccomp"),
            "{said:?}"
        );
    }
    // The dynamic Go probe really has an interpreter: found as Go, not static.
    let headers = Command::new("readelf")
        .arg("-l")
        .arg(go_probe("dynamic"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&headers.stdout).contains("program interpreter"));
}

#[test]
fn a_dynamic_program_keeps_the_library_and_gets_the_filter_only_when_asked() {
    let probe = probe("seccomp_sync", &[]);
    // Plain: nothing said, no filter.
    let plain = eatmydata(&[probe.as_os_str(), "calls".as_ref()]);
    assert!(notices(&plain).is_empty(), "{:?}", notices(&plain));
    assert_eq!(seccomp_mode(&probe, &[]), "0");
    // --seccomp: the filter is there, and the library still answers first,
    // keeping the errors the plain filter would turn into 0.
    assert_eq!(seccomp_mode(&probe, &["--seccomp"]), "2");
    let both = results(&eatmydata(&[
        "--seccomp".as_ref(),
        probe.as_os_str(),
        "calls".as_ref(),
    ]));
    for (name, library_answer) in [("fsync_pipe", "EINVAL"), ("fsync_badfd", "EBADF")] {
        assert_eq!(both[name], library_answer, "{name}: the library's answer");
    }
}

#[test]
fn the_filter_reaches_the_whole_process_tree() {
    let script = "\"$0\" calls; \"$1\" calls";
    let (c, go) = (static_probe(), go_probe("static"));
    let args = [
        "--seccomp=plain".as_ref(),
        "sh".as_ref(),
        "-c".as_ref(),
        script.as_ref(),
        c.as_os_str(),
        go.as_os_str(),
    ];
    let outcome = eatmydata(&args);
    let stdout = outcome.stdout();
    let answered: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("fsync_pipe="))
        .collect();
    assert_eq!(answered, ["fsync_pipe=0", "fsync_pipe=0"], "{stdout}");
}
