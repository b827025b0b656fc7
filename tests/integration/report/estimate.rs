//! The end of `eatmydata --report`: what the skipped flushes would have
//! cost, timed on each file system where they were skipped. The estimate is
//! checked against what it estimates, the time a real workload loses to
//! its flushes: a plain run against an eaten one, on a loop-device ext4 of
//! the test's own.

use std::fs;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{Flushes, TempDir, command, nosync};
use crate::loopfs::LoopFs;

/// SQLite autocommit INSERTs, each its own transaction (four fdatasyncs in
/// the default rollback journal: 1,204 flushes for 300 rows, plus the table).
const ROWS: usize = 300;

fn inserts() -> String {
    let mut sql = String::from(
        "PRAGMA synchronous=FULL; CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value INTEGER);",
    );
    for row in 0..ROWS {
        sql.push_str(&format!(
            " INSERT INTO t VALUES ({row}, 'name-{row}', {});",
            row * 7919 % 100_000
        ));
    }
    sql.push_str(" SELECT count(*) FROM t;");
    sql
}

/// Runs sqlite3 on a new database in `fs`, after `prefix`; its wall time
/// and stderr. The rows are all there after each run.
fn sqlite(fs: &LoopFs, prefix: &[&str], sql: &str) -> (Duration, String) {
    let db = fs.join("bench.db");
    let _ = fs::remove_file(&db);
    let mut argv: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
    argv.extend(["sqlite3".into(), db.display().to_string(), sql.into()]);
    let start = Instant::now();
    let output = Command::new(&argv[0])
        .args(&argv[1..])
        .env_remove("LD_PRELOAD")
        .output()
        .expect("run sqlite3");
    let took = start.elapsed();
    assert!(output.status.success(), "{argv:?}: {output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        ROWS.to_string()
    );
    (took, String::from_utf8_lossy(&output.stderr).into_owned())
}

/// A report's estimate line for `mount`.
fn line_for<'a>(stderr: &'a str, mount: &str) -> &'a str {
    stderr
        .lines()
        .find(|line| {
            line.starts_with("eatmydata: skipped")
                && line.contains(&format!(" on {mount} (ext4 on loop"))
        })
        .unwrap_or_else(|| panic!("no estimate for {mount}: {stderr}"))
}

/// The flushes a report's estimate line for `mount` says were skipped.
fn skipped(stderr: &str, mount: &str) -> u64 {
    let line = line_for(stderr, mount);
    let count = line.split_whitespace().nth(2).expect("a count");
    count.replace(',', "").parse().expect("a number")
}

/// The time a report's estimate line for `mount` says was saved: the
/// middle (geometric mean) of its range, `about 6.7 to 12 s saved`, or
/// its one figure, `about 9.7 s saved`.
fn saved(stderr: &str, mount: &str) -> Duration {
    let line = line_for(stderr, mount);
    let said = line
        .split(": about ")
        .nth(1)
        .and_then(|rest| rest.strip_suffix(" saved"))
        .unwrap_or_else(|| panic!("no time saved in {line}"));
    let words: Vec<&str> = said.split(' ').collect();
    let seconds = |number: &str, unit: &str| {
        let number: f64 = number.parse().expect("a number");
        match unit {
            "µs" => number / 1e6,
            "ms" => number / 1e3,
            "s" => number,
            "min" => number * 60.0,
            _ => panic!("unit {unit} in {line}"),
        }
    };
    let middle = match words[..] {
        [number, unit] => seconds(number, unit),
        [low, "to", high, unit] => (seconds(low, unit) * seconds(high, unit)).sqrt(),
        [low, low_unit, "to", high, unit] => (seconds(low, low_unit) * seconds(high, unit)).sqrt(),
        _ => panic!("no time saved in {line}"),
    };
    Duration::from_secs_f64(middle)
}

#[test]
fn the_estimate_is_within_a_factor_of_two_of_the_time_the_flushes_cost() {
    let fs = LoopFs::new("report-estimate", 256);
    let mount = fs.path().display().to_string();
    let eatmydata = command().display().to_string();
    let sql = inserts();
    // The device's flushes: the plain run's reach it, the eaten run's do
    // not, and only --report adds the flushes it times.
    fs.flushes(); // from here on, no sync(2) of another test meanwhile
    let plain_flushes = fs.flushes_during(|| drop(sqlite(&fs, &[], &sql)));
    let nosync = nosync().display().to_string();
    let floor = fs.flushes_during(|| drop(sqlite(&fs, &[&nosync], &sql)));
    let eaten_flushes = fs.flushes_during(|| drop(sqlite(&fs, &[&eatmydata], &sql)));
    Flushes {
        control: plain_flushes,
        floor,
        eaten: eaten_flushes,
    }
    .assert_eaten(ROWS as u64, "sqlite3 under eatmydata --report");
    // Each try: three --report runs between four plain ones, so that the
    // load of the machine, which changes from second to second, weighs on
    // both sides alike: the median estimate against the mean plain run.
    let mut tries = Vec::new();
    for _ in 0..3 {
        let (eaten, _) = sqlite(&fs, &[&eatmydata], &sql);
        let mut plain = vec![sqlite(&fs, &[], &sql).0];
        let mut estimates = Vec::new();
        for _ in 0..3 {
            let mut stderr = String::new();
            let timing_flushes = fs.flushes_during(|| {
                stderr = sqlite(&fs, &[&eatmydata, "--report"], &sql).1;
            });
            plain.push(sqlite(&fs, &[], &sql).0);
            // SQLite 3.40 makes 1,204; another version a few more or fewer.
            let count = skipped(&stderr, &mount);
            assert!(
                (3 * ROWS as u64..6 * ROWS as u64).contains(&count),
                "{stderr}"
            );
            assert!(
                (8..100).contains(&timing_flushes),
                "the estimate's 8 to 24 timed flushes, and few others: {timing_flushes}"
            );
            estimates.push(saved(&stderr, &mount));
        }
        estimates.sort();
        let estimate = estimates[1];
        let measured = plain.iter().sum::<Duration>() / plain.len() as u32 - eaten;
        let ratio = estimate.as_secs_f64() / measured.as_secs_f64();
        tries.push(format!(
            "plain {plain:.2?}, eaten {eaten:.2?}: {measured:.2?} saved; estimated {estimates:.2?} (ratio of the median {ratio:.2})"
        ));
        eprintln!("{}", tries.last().unwrap());
        if (0.5..=2.0).contains(&ratio) {
            let left: Vec<_> = fs::read_dir(fs.path())
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect();
            assert!(
                !left
                    .iter()
                    .any(|name| name.to_string_lossy().starts_with(".eatmydata-flush")),
                "the scratch file stays: {left:?}"
            );
            return;
        }
    }
    panic!(
        "the estimate is off by more than 2 in three tries:\n{}",
        tries.join("\n")
    );
}

#[test]
fn where_no_scratch_file_can_go_the_count_is_said_alone() {
    let fs = LoopFs::new("report-readonly", 32);
    let file = fs.join("f");
    fs::write(&file, "data").unwrap();
    // `sync --data FILE`: coreutils' fdatasync of one file.
    let report = || {
        let output = Command::new(command())
            .args(["--report", "sync", "--data"])
            .arg(&file)
            .output()
            .expect("run eatmydata");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let skipped = format!(
        "eatmydata: skipped 1 flush on {} (ext4 on loop",
        fs.path().display()
    );
    // The control: writable, it gets its estimate.
    let writable = report();
    let line = writable
        .lines()
        .find(|l| l.starts_with(&skipped))
        .unwrap_or_else(|| panic!("{writable}"));
    assert!(line.contains("; a flush there takes about "), "{writable}");
    // The control of the tmpfs test below: a flush here is not free.
    assert!(!line.contains("nearly free"), "{writable}");
    assert!(writable.contains("  An estimate: "), "{writable}");
    let remount = |how: &str| {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{how}")])
            .arg(fs.path())
            .status()
            .unwrap();
        assert!(status.success(), "remount {how}");
    };
    remount("ro");
    let read_only = report();
    remount("rw");
    let line = read_only
        .lines()
        .find(|l| l.starts_with(&skipped))
        .unwrap_or_else(|| panic!("{read_only}"));
    assert!(
        line.ends_with(
            ": not estimated, no scratch file could be flushed there (Read-only file system)"
        ),
        "{read_only}"
    );
    assert!(!read_only.contains("An estimate"), "{read_only}");
}

#[test]
fn a_flush_on_tmpfs_is_said_to_be_nearly_free() {
    let dir = TempDir::new("report-tmpfs");
    let status = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success(), "mount a tmpfs");
    let file = dir.join("f");
    fs::write(&file, "data").unwrap();
    let output = Command::new(command())
        .args(["--report", "sync", "--data"])
        .arg(&file)
        .output()
        .unwrap();
    let _ = Command::new("umount").arg("-l").arg(dir.path()).status();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr
        .lines()
        .find(|l| {
            l.starts_with(&format!(
                "eatmydata: skipped 1 flush on {} (tmpfs)",
                dir.path().display()
            ))
        })
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        line.ends_with(" saved (it keeps its files in memory: a flush there is nearly free)"),
        "{stderr}"
    );
}
