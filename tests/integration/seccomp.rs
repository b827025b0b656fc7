//! Programs that bypass libc — a statically linked C program and Go
//! programs — under `eatmydata --seccomp`, and plain `eatmydata` never
//! leaving them silently untouched.
//!
//! strace would show a call the filter answered as made, so non-execution
//! is shown by results: calls that fail for real (fsync on a pipe is
//! EINVAL) return 0 under the filter, and a loop of fsyncs adds no flushes
//! to the disk's count in /proc/diskstats. Every filter is installed by the
//! eatmydata command in a child process, never in the test process.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::{env, fs};

use crate::common::{Outcome, Run, TempDir, command, library, probe};

fn static_probe() -> PathBuf {
    probe("seccomp_sync", &["-static"])
}

/// The Go probe, built once per process: `static` (CGO_ENABLED=0) or
/// `dynamic` (with cgo, so it links the C runtime and has an interpreter).
fn go_probe(linking: &'static str) -> PathBuf {
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
            .args(["build", "-o"])
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

/// Calls that fail for real and whose failure the filter must hide.
const ANSWERED: &[&str] = &[
    "fsync_pipe",
    "fdatasync_pipe",
    "fsync_badfd",
    "sync_file_range_pipe",
];
const ANSWERED_C_ONLY: &[&str] = &[
    "syncfs_badfd",
    "msync_unaligned",
    "raw_fsync_pipe",
    #[cfg(target_arch = "x86_64")]
    "i386_fsync_pipe",
    #[cfg(target_arch = "x86_64")]
    "x32_fsync_pipe",
];
const ANSWERED_GO_ONLY: &[&str] = &["file_sync_pipe"];

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
    let on = results(&eatmydata(&[
        "--seccomp".as_ref(),
        probe.as_os_str(),
        "calls".as_ref(),
    ]));
    assert_answered(&on, ANSWERED, true);
    assert_answered(&on, ANSWERED_C_ONLY, true);
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
    let off = results(&eatmydata(&[
        "--no-seccomp".as_ref(),
        probe.as_os_str(),
        "calls".as_ref(),
    ]));
    assert_answered(&off, ANSWERED, false);
    assert_answered(&off, ANSWERED_GO_ONLY, false);
    let on = results(&eatmydata(&[
        "--seccomp".as_ref(),
        probe.as_os_str(),
        "calls".as_ref(),
    ]));
    assert_answered(&on, ANSWERED, true);
    assert_answered(&on, ANSWERED_GO_ONLY, true);
}

#[test]
fn plain_eatmydata_turns_seccomp_on_for_static_and_go_and_says_so_once() {
    for (program, what) in [
        (static_probe(), "is statically linked"),
        (go_probe("static"), "is a Go program"),
        (go_probe("dynamic"), "is a Go program"),
    ] {
        let outcome = eatmydata(&[program.as_os_str(), "calls".as_ref()]);
        assert_answered(&results(&outcome), ANSWERED, true);
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
    // Plain: nothing said, no filter (i386 fsync reaches the kernel).
    let plain = eatmydata(&[probe.as_os_str(), "calls".as_ref()]);
    assert!(notices(&plain).is_empty(), "{:?}", notices(&plain));
    #[cfg(target_arch = "x86_64")]
    assert_eq!(results(&plain)["i386_fsync_pipe"], "EINVAL");
    // --seccomp: the filter is there, and the library still answers first,
    // keeping the errors the filter alone would turn into 0 (as it does for
    // the static probe).
    let both = results(&eatmydata(&[
        "--seccomp".as_ref(),
        probe.as_os_str(),
        "calls".as_ref(),
    ]));
    for (name, library_answer) in [("fsync_pipe", "EINVAL"), ("fsync_badfd", "EBADF")] {
        assert_eq!(both[name], library_answer, "{name}: the library's answer");
    }
    #[cfg(target_arch = "x86_64")]
    assert_eq!(both["i386_fsync_pipe"], "0", "the filter's answer");
}

#[test]
fn the_filter_reaches_the_whole_process_tree() {
    let script = "\"$0\" calls; \"$1\" calls";
    let (c, go) = (static_probe(), go_probe("static"));
    let args = [
        "--seccomp".as_ref(),
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

/// Completed flush requests of the disk holding `path` (/proc/diskstats,
/// field 16 of the statistics).
fn flushes(path: &Path) -> u64 {
    let dev = fs::metadata(path).unwrap().dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    // A partition's flushes are counted on its disk.
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let disk = match sys.join("partition").exists() {
        true => fs::read_to_string(sys.join("../dev"))
            .unwrap()
            .trim()
            .to_owned(),
        false => format!("{major}:{minor}"),
    };
    let stats = fs::read_to_string("/proc/diskstats").unwrap();
    let line = stats
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| format!("{}:{}", f[0], f[1]) == disk);
    let line =
        line.unwrap_or_else(|| panic!("{} is on no disk in /proc/diskstats", path.display()));
    line.get(18)
        .expect("a kernel that counts flushes (4.18+)")
        .parse()
        .unwrap()
}

#[test]
fn a_loop_of_fsyncs_under_seccomp_adds_no_disk_flushes() {
    const LOOPS: u64 = 300;
    let dir = TempDir::new("seccomp-flush");
    let file = dir.join("data");
    for program in [static_probe(), go_probe("static")] {
        let run = |mode: &str| {
            let before = flushes(dir.path());
            let args = [
                mode.as_ref(),
                program.as_os_str(),
                "loop".as_ref(),
                file.as_os_str(),
                "300".as_ref(),
            ];
            assert_eq!(eatmydata(&args).stdout().trim(), "synced 300");
            flushes(dir.path()) - before
        };
        let control = run("--no-seccomp");
        assert!(
            control >= LOOPS * 9 / 10,
            "{}: only {control} flushes without the filter",
            program.display()
        );
        // Other processes flush too, and can only add: a quiet try is proof.
        let filtered: Vec<u64> = (0..3).map(|_| run("--seccomp")).collect();
        assert!(
            filtered.iter().any(|&n| n < LOOPS / 10),
            "{}: flushes with the filter: {filtered:?}",
            program.display()
        );
    }
}

/// `whoami` of the static probe, through eatmydata run by `runner`.
fn whoami(
    runner: &[&str],
    options: &[&str],
    program: &Path,
) -> (BTreeMap<String, String>, Vec<String>) {
    library();
    let mut run = Run::new(runner[0])
        .args(&runner[1..])
        .arg(command())
        .args(options);
    run = run.arg(program).arg("whoami");
    let outcome = run.run().success();
    let mut found = results(&outcome);
    for line in outcome.stdout().lines().filter_map(|l| l.split_once(':')) {
        found.insert(line.0.to_owned(), line.1.trim().to_owned());
    }
    (found, notices(&outcome))
}

/// setpriv with CAP_SYS_ADMIN out of the bounding set: root without it.
const NO_SYS_ADMIN: &[&str] = &[
    "setpriv",
    "--bounding-set=-sys_admin",
    "--inh-caps=-sys_admin",
    "--",
];

#[test]
fn without_cap_sys_admin_no_new_privs_is_set_and_said_once() {
    let program = static_probe();
    let (found, said) = whoami(NO_SYS_ADMIN, &["--seccomp"], &program);
    assert_eq!(
        (found["NoNewPrivs"].as_str(), found["Seccomp"].as_str()),
        ("1", "2")
    );
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("no_new_privs") && said[0].contains("setuid"),
        "{said:?}"
    );
    // With CAP_SYS_ADMIN the filter goes on alone, and nothing is said.
    let (found, said) = whoami(&["env", "--"], &["--seccomp"], &program);
    assert_eq!(
        (found["NoNewPrivs"].as_str(), found["Seccomp"].as_str()),
        ("0", "2")
    );
    assert!(said.is_empty(), "{said:?}");
}

#[test]
fn a_setuid_command_is_named_with_the_order_that_works() {
    // A static program, setuid to nobody, run by root: exec changes who runs it.
    let dir = TempDir::new("seccomp-setuid");
    let program = dir.join("setuid-probe");
    fs::copy(static_probe(), &program).unwrap();
    std::os::unix::fs::chown(&program, Some(65534), Some(65534)).unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o4755)).unwrap();
    let (found, said) = whoami(&["env", "--"], &[], &program);
    assert_eq!(found["euid"], "65534", "the setuid bit works");
    assert_eq!(
        found["Seccomp"], "0",
        "no filter by itself for a set-id program"
    );
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("is setuid") && said[0].contains("eatmydata COMMAND...'"),
        "{said:?}"
    );
    // Asked for without CAP_SYS_ADMIN: no_new_privs, and the bit is ignored,
    // as the notice says.
    let (found, said) = whoami(NO_SYS_ADMIN, &["--seccomp"], &program);
    assert_eq!(
        (found["euid"].as_str(), found["NoNewPrivs"].as_str()),
        ("0", "1")
    );
    assert_eq!(said.len(), 2, "{said:?}");
}
