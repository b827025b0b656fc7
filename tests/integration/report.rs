//! `eatmydata --report`: each process under the library counts what it
//! skipped and appends a line at exit; the command sums the lines up, and
//! says what the skipped flushes would have cost (`estimate.rs`).

mod estimate;
mod latency; // the estimate against a device whose flushes take a known time
mod steady; // eatmydata-runtime report's range holds still on a busy machine

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::common::{Libc, Run, TempDir, command, probe, probe_for};

/// Runs `program FILE` with the library, reporting to `report`.
fn run_reported(program: &Path, file: &Path, report: &Path) {
    Run::new(program)
        .arg(file)
        .preload(true)
        .env("EATMYDATA_REPORT", report)
        .run()
        .success();
}

#[test]
fn each_process_appends_what_it_skipped() {
    check_report_lines(Libc::Glibc);
}

/// The report lines of a probe built against `libc`; none when disabled.
pub fn check_report_lines(libc: Libc) {
    let dir = TempDir::new("report-lines");
    let report = dir.join("report");
    fs::write(&report, "").unwrap();
    let program = probe_for(libc, "sync_calls", &[]);
    run_reported(&program, &dir.join("a"), &report);
    run_reported(&program, &dir.join("b"), &report);
    let lines = fs::read_to_string(&report).unwrap();
    let name = program.file_name().unwrap().to_string_lossy();
    // The file system of the file: fsync, fdatasync, syncfs and msync were
    // flushes there; sync() was one where none could be named.
    let device = fs::metadata(dir.path()).unwrap().dev();
    let (major, minor) = (libc::major(device), libc::minor(device));
    let expected = format!(
        "name={name} fsync=2 sync=2 range=1 msync=1 open=0 write=0 direct=0 flushes_on={major}:{minor}:4 flushes_unnamed=1 kept_on= kept_unnamed=0"
    );
    assert_eq!(lines.lines().count(), 2, "{lines}");
    assert!(
        lines
            .lines()
            .all(|line| line.starts_with("pid=") && line.ends_with(&expected)),
        "{lines}"
    );

    // The control: without the library, or with it disabled, nothing.
    fs::write(&report, "").unwrap();
    Run::new(&program)
        .arg(dir.join("c"))
        .env("EATMYDATA_REPORT", &report)
        .run()
        .success();
    let disabled = Run::new(&program)
        .arg(dir.join("d"))
        .preload(true)
        .env("EATMYDATA_DISABLE", "1");
    disabled.env("EATMYDATA_REPORT", &report).run().success();
    assert_eq!(fs::read_to_string(&report).unwrap(), "");
}

#[test]
fn a_report_file_is_never_created_by_the_library() {
    let dir = TempDir::new("report-absent");
    let report = dir.join("absent");
    let program = probe("sync_calls", &[]);
    run_reported(&program, &dir.join("a"), &report);
    assert!(!report.exists());
    // The control: the same run, the file there, gets its line.
    fs::write(&report, "").unwrap();
    run_reported(&program, &dir.join("b"), &report);
    let lines = fs::read_to_string(&report).unwrap();
    assert!(lines.contains(" fsync=2 "), "{lines}");
}

#[test]
fn the_command_sums_up_every_process_it_started() {
    check_command_report(Libc::Glibc);
}

/// `eatmydata --report` over two runs of a probe built against `libc`.
pub fn check_command_report(libc: Libc) {
    let dir = TempDir::new("report-command");
    let tmp = dir.join("tmp");
    fs::create_dir(&tmp).unwrap();
    let program = probe_for(libc, "sync_calls", &[]);
    let script = format!(
        "{0} {1}/a && {0} {1}/b",
        program.display(),
        dir.path().display()
    );

    let reported = Run::new(command())
        .args(["--report", "sh", "-c", &script])
        .env("TMPDIR", &tmp)
        .run()
        .success();
    let stderr = reported.stderr();
    let row = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("sync_calls"))
        .unwrap_or_else(|| panic!("{stderr}"));
    let numbers: Vec<&str> = row.split_whitespace().skip(1).collect();
    assert_eq!(
        numbers,
        ["2", "4", "4", "2", "2", "0", "0", "0"],
        "{stderr}"
    );
    assert_eq!(
        fs::read_dir(&tmp).unwrap().count(),
        0,
        "the report file is removed"
    );

    // The control: without --report the command says nothing.
    let quiet = Run::new(command())
        .args(["sh", "-c", &script])
        .run()
        .success();
    assert_eq!(quiet.stderr(), "");
}

#[test]
fn the_commands_exit_status_and_signal_survive_the_report() {
    // sync(1) first, whose sync(2) the report must show skipped: the
    // library was there, and the report made, whatever the ending.
    let synced = |report: &str| {
        report.lines().any(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.first() == Some(&"sync") && fields.get(3) == Some(&"1")
        })
    };
    let run = Run::new(command())
        .args(["--report", "sh", "-c", "sync; exit 7"])
        .run();
    assert_eq!(run.output.status.code(), Some(7));
    assert!(synced(&run.stderr()), "{}", run.stderr());
    let run = Run::new(command())
        .args(["--report", "sh", "-c", "sync; kill -TERM $$"])
        .run();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&run.output.status),
        Some(libc::SIGTERM)
    );
    assert!(synced(&run.stderr()), "{}", run.stderr());
}

#[test]
fn a_forked_child_reports_its_own_skips_not_its_parents() {
    check_forked_report(Libc::Glibc);
}

/// A forked child of a probe built against `libc` reports its own skips
/// (the library's pthread_atfork handler ran in it).
pub fn check_forked_report(libc: Libc) {
    let dir = TempDir::new("report-fork");
    let report = dir.join("report");
    fs::write(&report, "").unwrap();
    let program = probe_for(libc, "report_fork", &[]);
    run_reported(&program, &dir.join("data"), &report);
    let lines = fs::read_to_string(&report).unwrap();
    let mut fsyncs: Vec<&str> = lines
        .lines()
        .filter_map(|line| line.split_whitespace().find(|w| w.starts_with("fsync=")))
        .collect();
    fsyncs.sort();
    assert_eq!(fsyncs, ["fsync=1", "fsync=3"], "{lines}");
}

/// Keep by mount: a sync the library lets reach the disk because its
/// mount is kept is counted as kept, by its file system (`kept_on`), as a
/// skipped one is by its (`flushes_on`): 20 calls of each kind to a file
/// on each of two loop-device file systems, `b` kept. `sync()` keeps a
/// `syncfs` of `b` and skips the rest (one where none can be named). The
/// control, nothing kept: every flush skipped, none kept.
#[test]
fn keep_by_mount_counts_the_kept_flushes_on_their_file_system() {
    const COUNT: u64 = 20;
    let (a, b) = (
        crate::loopfs::LoopFs::new("report-kept-a", 32),
        crate::loopfs::LoopFs::new("report-kept-b", 32),
    );
    let device = |fs: &crate::loopfs::LoopFs| {
        let dev = fs::metadata(fs.path()).unwrap().dev();
        format!("{}:{}", libc::major(dev), libc::minor(dev))
    };
    let (on_a, on_b) = (device(&a), device(&b));
    let dir = TempDir::new("report-kept");
    let report = dir.join("report");
    let program = probe("keep_mounts", &[]);
    let line = |mode: &str, keep: Option<&Path>| {
        fs::write(&report, "").unwrap();
        let mut run = Run::new(&program)
            .args([mode, &COUNT.to_string()])
            .arg(a.join("f"))
            .arg(b.join("f"))
            .preload(true)
            .env("EATMYDATA_REPORT", &report);
        if let Some(keep) = keep {
            run = run.env("EATMYDATA_KEEP", keep);
        }
        run.run().success();
        let lines = fs::read_to_string(&report).unwrap();
        assert_eq!(lines.lines().count(), 1, "{lines}");
        lines.trim_end().to_owned()
    };
    let field = |line: &str, key: &str| -> String {
        let word = line
            .split_whitespace()
            .find(|w| w.starts_with(&format!("{key}=")));
        word.unwrap_or_else(|| panic!("{key}: {line}"))[key.len() + 1..].to_owned()
    };
    for mode in ["fsync", "rwf", "msync"] {
        let kept = line(mode, Some(b.path()));
        assert_eq!(
            field(&kept, "flushes_on"),
            format!("{on_a}:{COUNT}"),
            "{mode}: {kept}"
        );
        assert_eq!(
            field(&kept, "kept_on"),
            format!("{on_b}:{COUNT}"),
            "{mode}: {kept}"
        );
        assert_eq!(field(&kept, "kept_unnamed"), "0", "{mode}: {kept}");
        let control = line(mode, None);
        let both = format!("{on_a}:{COUNT},{on_b}:{COUNT}");
        assert_eq!(field(&control, "flushes_on"), both, "{mode}: {control}");
        assert_eq!(field(&control, "kept_on"), "", "{mode}: {control}");
    }
    // sync() after each write: 2 x COUNT calls, each a syncfs of b.
    let synced = line("sync", Some(b.path()));
    assert_eq!(field(&synced, "sync"), format!("{}", 2 * COUNT), "{synced}");
    assert_eq!(
        field(&synced, "flushes_unnamed"),
        format!("{}", 2 * COUNT),
        "{synced}"
    );
    assert_eq!(
        field(&synced, "kept_on"),
        format!("{on_b}:{}", 2 * COUNT),
        "{synced}"
    );
    let control = line("sync", None);
    assert_eq!(field(&control, "kept_on"), "", "{control}");

    // The command says so beside its table; not without --keep.
    let reported = |keep: &[&Path]| {
        let mut run = Run::new(command());
        for path in keep {
            run = run.arg("--keep").arg(path);
        }
        let count = COUNT.to_string();
        let run = run.args(["--report", program.to_str().unwrap(), "fsync", &count]);
        let run = run
            .arg(a.join("f"))
            .arg(b.join("f"))
            .env("TMPDIR", dir.path());
        run.run().success().stderr()
    };
    let said = format!("kept: {COUNT} flushes on the kept mounts");
    let kept = reported(&[b.path()]);
    assert!(kept.contains(&said), "{kept}");
    let control = reported(&[]);
    assert!(!control.contains("kept:"), "{control}");
}
