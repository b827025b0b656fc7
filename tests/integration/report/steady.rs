//! `eatmydata-runtime report`'s estimate holds still: two reports a
//! second apart, on a machine kept busy by stress-ng (CPU and disk
//! workers, on the same loop-device ext4 the account's flushes were
//! skipped on), give time-saved ranges that overlap. The account is one
//! record written by hand (1,250 flushes on that file system, the count
//! of the issue that found two points 5x apart); the flushes the reports
//! time are counted on the device, so that the ranges stand on real
//! flushes there.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::{TempDir, command};
use crate::loopfs::LoopFs;

/// The flushes of the record.
const FLUSHES: u64 = 1250;

/// stress-ng, stopped (by its pid) and reaped when dropped; it also stops
/// by itself after its timeout.
struct Busy(Child);

impl Busy {
    fn start(on: &Path) -> Busy {
        let child = Command::new("stress-ng")
            .args([
                "--cpu",
                "2",
                "--hdd",
                "1",
                "--hdd-bytes",
                "16m",
                "--timeout",
                "60s",
            ])
            .arg("--temp-path")
            .arg(on)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run stress-ng (scripts/setup-test-deps installs it)");
        Busy(child)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        // SAFETY: a signal to the child we started, by its pid.
        unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGINT) };
        let _ = self.0.wait();
    }
}

/// An account of one container whose `FLUSHES` fsyncs were on `fs`.
fn account(dir: &TempDir, fs: &LoopFs) -> std::path::PathBuf {
    let folder = dir.join("account");
    fs::DirBuilder::new().mode(0o755).create(&folder).unwrap();
    let dev = fs::metadata(fs.path()).unwrap().dev();
    let device = format!("{}:{}", libc::major(dev), libc::minor(dev));
    let record = serde_json::json!({
        "v": 1, "id": "steady0123456789", "name": "db", "image": "postgres:16",
        "ended": "2026-12-03T10:00:00Z", "processes": 1,
        "skips": {"fsync": FLUSHES, "sync": 0, "range": 0, "msync": 0, "open": 0, "write": 0, "direct": 0},
        "flushes": [{"device": device, "count": FLUSHES, "on": fs.path().display().to_string()}],
        "flushes_unnamed": 0, "unreadable": 0,
    });
    fs::write(folder.join("account.jsonl"), format!("{record}\n")).unwrap();
    folder
}

/// `eatmydata-runtime report --json` (`runtime`), run in `fs` (where its
/// scratch file goes), on `account`.
fn report(runtime: &Path, fs: &LoopFs, account: &Path) -> Value {
    let output = Command::new(runtime)
        .args(["report", "--json"])
        .current_dir(fs.path())
        .env("EATMYDATA_ACCOUNT", account)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The time-saved range of a report, in seconds.
fn range(report: &Value) -> (f64, f64) {
    let estimate = &report["estimate"];
    let low = estimate["saved_seconds_low"].as_f64();
    let high = estimate["saved_seconds_high"].as_f64();
    match (low, high) {
        (Some(low), Some(high)) => (low, high),
        _ => panic!("no range: {report:#}"),
    }
}

#[test]
fn two_reports_a_second_apart_on_a_busy_machine_overlap() {
    let fs = LoopFs::new("report-steady", 128);
    let dir = TempDir::new("report-steady");
    let account = account(&dir, &fs);
    let runtime = dir.join("eatmydata-runtime");
    std::os::unix::fs::symlink(command(), &runtime).unwrap();
    let busy = Busy::start(fs.path());
    std::thread::sleep(Duration::from_secs(2));
    let mut said = Vec::new();
    let flushes = fs.flushes_during(|| {
        for pair in 0..3 {
            let first = report(&runtime, &fs, &account);
            std::thread::sleep(Duration::from_secs(1));
            let second = report(&runtime, &fs, &account);
            said.push((pair, first, second));
        }
    });
    drop(busy);
    let mut timed = 0;
    for (pair, first, second) in &said {
        let (a, b) = (range(first), range(second));
        let points = [first, second].map(|r| r["estimate"]["saved_seconds"].as_f64().unwrap());
        eprintln!(
            "report: pair {pair}: {:.3} to {:.3} s and {:.3} to {:.3} s (points {:.3} and {:.3} s)",
            a.0, a.1, b.0, b.1, points[0], points[1]
        );
        assert!(a.0 <= points[0] && points[0] <= a.1, "{first:#}");
        assert!(
            a.0 <= b.1 && b.0 <= a.1,
            "pair {pair}: {a:?} and {b:?} do not overlap"
        );
        for one in [first, second] {
            let system = &one["estimate"]["file_systems"][0];
            assert_eq!(system["flushes"], FLUSHES, "{one:#}");
            timed += system["flushes_timed"].as_u64().unwrap();
        }
    }
    // The reports' flushes reached the device (stress-ng's too: at least).
    assert!(
        flushes >= timed,
        "{flushes} flushes on the device, {timed} timed"
    );
}
