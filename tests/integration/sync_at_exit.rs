//! `eatmydata --sync-at-exit`: once the command and all it started have
//! ended, the data they wrote is on the device.
//!
//! The oracle is a file system of the test's own on a loop device: after
//! the command returns, its backing file is read directly, not through the
//! mount, for a marker no other run could have written. The control run
//! (the same command without `--sync-at-exit`) must not find it there: the
//! kernel writes dirty data back after 30 s, and each check is made within
//! seconds.

use std::os::unix::fs::symlink;
use std::time::{SystemTime, UNIX_EPOCH};

pub use crate::common::whole_machine_sync;
use crate::common::{Outcome, Run, TempDir, command, library, probe, quiet_disks};
use crate::loopfs::LoopFs;

mod ending; // SIGKILL, a daemon left running, SIGINT during the flush
mod failures; // a file system that fails its writeback, or is gone
mod servers; // PostgreSQL and MariaDB stopped inside the command

/// Text that cannot be on any device by chance.
pub fn marker(label: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("eatmydata-{label}-marker-{}-{nanos}", std::process::id())
}

/// A shell line that writes `text` to `file` and fsyncs it (`dd conv=fsync`).
pub fn write_synced(text: &str, file: &std::path::Path) -> String {
    format!(
        "printf %s '{text}' | dd of='{}' conv=fsync status=none",
        file.display()
    )
}

/// `eatmydata OPTIONS sh -c SCRIPT`.
pub fn eatmydata_sh(options: &[&str], script: &str) -> Outcome {
    library();
    Run::new(command())
        .args(options)
        .args(["sh", "-c", script])
        .run()
}

#[test]
fn sqlite_data_is_on_the_device_when_the_command_returns() {
    library();
    let fs = LoopFs::new("atexit-sqlite", 64);
    let run = control_then_synced(&fs, "sqlite", |synced, marker| {
        let sql = format!(
            "PRAGMA synchronous=FULL; CREATE TABLE t(v); INSERT INTO t VALUES('{marker}');"
        );
        Run::new(command())
            .args(options(synced, &["-v"]))
            .arg("sqlite3")
            .arg(fs.join(format!("{marker}.db")))
            .arg(sql)
            .run()
            .success()
    });
    let said = format!("flushed 1 file system ({}) in ", fs.path().display());
    assert!(run.stderr().contains(&said), "{}", run.stderr());
}

#[test]
fn nothing_skipped_means_nothing_flushed() {
    let run = eatmydata_sh(&["--sync-at-exit", "-v"], "echo hello").success();
    assert_eq!(run.stdout(), "hello\n");
    assert!(
        run.stderr()
            .ends_with("eatmydata: sync-at-exit: no sync was skipped, nothing to flush\n"),
        "{}",
        run.stderr()
    );
    // Without --verbose or --report, it says nothing.
    let quiet = eatmydata_sh(&["--sync-at-exit"], "true").success();
    assert_eq!(quiet.stderr(), "");
}

/// The check every test here makes: `run(synced, marker)` without
/// `--sync-at-exit` (the control) leaves its marker off the device; with
/// it, the marker is there when the command returns. The second outcome.
///
/// The kernel may write a control's data back early when the machine as a
/// whole has much dirty data (other tests, other work): the control is
/// then tried again, with a new marker, up to three times.
pub fn control_then_synced(
    fs: &LoopFs,
    label: &str,
    run: impl Fn(bool, &str) -> Outcome,
) -> Outcome {
    let mut tries = Vec::new();
    while tries.len() < 3 {
        let control = marker(&format!("{label}-control-{}", tries.len()));
        // No test here runs sync(2) meanwhile: it would flush this too.
        let _quiet = quiet_disks();
        let outcome = run(false, &control);
        if !fs.holds(&control) {
            break;
        }
        tries.push(outcome.stderr());
    }
    assert!(
        tries.len() < 3,
        "{label}: without --sync-at-exit the data was on the device at once, 3 times:\n{tries:?}"
    );
    let synced = marker(&format!("{label}-synced"));
    let outcome = run(true, &synced);
    assert!(
        fs.holds(&synced),
        "{label}: the data is on the device\n{}",
        outcome.stderr()
    );
    outcome
}

/// `--sync-at-exit` when `synced`, and `more` options.
pub fn options<'a>(synced: bool, more: &[&'a str]) -> Vec<&'a str> {
    let mut options = more.to_vec();
    if synced {
        options.push("--sync-at-exit");
    }
    options
}

#[test]
fn symlink_mode_asks_with_the_environment() {
    let fs = LoopFs::new("atexit-symlink", 32);
    let links = TempDir::new("atexit-links");
    symlink(command(), links.join("sh")).unwrap();
    let path = format!("{}:/usr/bin:/bin", links.path().display());
    control_then_synced(&fs, "symlink", |synced, text| {
        Run::new(links.join("sh"))
            .args(["-c", &write_synced(text, &fs.join(text))])
            .env("PATH", &path)
            .env("EATMYDATA_LIBRARY", library())
            .env("EATMYDATA_SYNC_AT_EXIT", if synced { "1" } else { "0" })
            .run()
            .success()
    });
}

#[test]
fn under_an_outer_eatmydata_the_flush_is_still_real() {
    let fs = LoopFs::new("atexit-nested", 32);
    // The inner eatmydata runs with the library loaded: its own syncfs must
    // not be eaten.
    control_then_synced(&fs, "nested", |synced, text| {
        let inner = format!(
            "{} {} sh -c \"{}\"",
            command().display(),
            options(synced, &[]).join(" "),
            write_synced(text, &fs.join(text))
        );
        eatmydata_sh(&[], &inner).success()
    });
}

#[test]
fn with_seccomp_it_says_what_it_cannot_see_and_syncs_all() {
    let fs = LoopFs::new("atexit-seccomp", 32);
    let static_probe = probe("seccomp_sync", &["-static"]);
    // The shell syncs nothing; the static program's fsync is answered by
    // the filter, which the library never sees: nothing is recorded.
    let run = control_then_synced(&fs, "seccomp", |synced, text| {
        let script = format!(
            "printf %s '{text}' > '{}' && {} loop '{}' 1 >/dev/null",
            fs.join(text).display(),
            static_probe.display(),
            fs.join(format!("{text}.block")).display()
        );
        let run = || eatmydata_sh(&options(synced, &["--seccomp", "-v"]), &script).success();
        if synced {
            whole_machine_sync(run)
        } else {
            run()
        }
    });
    assert!(
        run.stderr()
            .contains("ran sync(2), since the seccomp filter's answers are not recorded"),
        "{}",
        run.stderr()
    );
}

#[test]
fn with_report_both_are_said() {
    let fs = LoopFs::new("atexit-report", 32);
    // The control runs without --report: the flushes the report times there
    // commit the journal, and with it the file's name, the marker.
    let run = control_then_synced(&fs, "report", |synced, text| {
        let report: &[&str] = if synced { &["--report"] } else { &[] };
        eatmydata_sh(
            &options(synced, report),
            &write_synced(text, &fs.join(text)),
        )
        .success()
    });
    let stderr = run.stderr();
    assert!(
        stderr.contains("eatmydata: report: what the library skipped"),
        "{stderr}"
    );
    assert!(stderr.contains("  dd "), "{stderr}");
    let flushed = format!(
        "eatmydata: sync-at-exit: flushed 1 file system ({}) in ",
        fs.path().display()
    );
    assert!(stderr.contains(&flushed), "{stderr}");
}

#[test]
fn every_kind_of_skip_records_its_file_system() {
    let fs = LoopFs::new("atexit-kinds", 64);
    // Each workload writes MARKER to FILE and asks for it to be durable in
    // one way; the flush must name the file system (sync() alone cannot).
    let python = |code: &str| format!("python3 -c \"import os, mmap; {code}\"");
    let kinds: [(&str, String); 7] = [
        (
            "fdatasync",
            "printf %s MARKER | dd of=FILE conv=fdatasync status=none".into(),
        ),
        (
            "O_SYNC",
            "printf %s MARKER | dd of=FILE oflag=sync status=none".into(),
        ),
        (
            "O_DIRECT",
            "printf %-4096s MARKER | dd of=FILE bs=4096 oflag=direct status=none".into(),
        ),
        ("syncfs", "printf %s MARKER > FILE && sync -f FILE".into()),
        (
            "RWF_DSYNC",
            python(
                "fd = os.open('FILE', os.O_WRONLY | os.O_CREAT); os.pwritev(fd, [b'MARKER'], 0, os.RWF_DSYNC)",
            ),
        ),
        (
            "msync",
            python(
                "fd = os.open('FILE', os.O_RDWR | os.O_CREAT); os.ftruncate(fd, 4096); m = mmap.mmap(fd, 4096); m[:len(b'MARKER')] = b'MARKER'; m.flush()",
            ),
        ),
        ("sync", "printf %s MARKER > FILE && sync".into()),
    ];
    for (kind, workload) in kinds {
        let run = control_then_synced(&fs, kind, |synced, text| {
            let script = workload
                .replace("MARKER", text)
                .replace("FILE", &fs.join(text).display().to_string());
            let run = || eatmydata_sh(&options(synced, &["-v"]), &script).success();
            // sync() (and sync -f) ask for a flush themselves: under the
            // library they are eaten, and the flush at exit is sync(2).
            if kind == "sync" && synced {
                whole_machine_sync(run)
            } else {
                run()
            }
        });
        let stderr = run.stderr();
        let named = format!("flushed 1 file system ({}) ", fs.path().display());
        let whole = "ran sync(2), since a sync() was skipped";
        if kind == "sync" {
            assert!(stderr.contains(whole), "{kind}: {stderr}");
        } else {
            assert!(
                stderr.contains(&named) && !stderr.contains(whole),
                "{kind}: {stderr}"
            );
        }
    }
}

#[test]
fn a_process_run_as_another_user_records_too() {
    let fs = LoopFs::new("atexit-user", 32);
    control_then_synced(&fs, "user", |synced, text| {
        let script = format!(
            "runuser -u nobody -- sh -c \"{}\"",
            write_synced(text, &fs.join(text))
        );
        eatmydata_sh(&options(synced, &[]), &script).success()
    });
}
