//! `eatmydata --report`: each process under the library counts what it
//! skipped and appends a line at exit; the command sums the lines up.

use std::fs;

use crate::common::{Run, TempDir, probe};

#[test]
fn each_process_appends_what_it_skipped() {
    let dir = TempDir::new("report-lines");
    let report = dir.join("report");
    fs::write(&report, "").unwrap();
    let program = probe("sync_calls", &[]);
    Run::new(&program)
        .arg(dir.join("a"))
        .preload(true)
        .env("EATMYDATA_REPORT", &report)
        .run()
        .success();
    Run::new(&program)
        .arg(dir.join("b"))
        .preload(true)
        .env("EATMYDATA_REPORT", &report)
        .run()
        .success();
    let lines = fs::read_to_string(&report).unwrap();
    let expected = "name=sync_calls fsync=2 sync=2 range=1 msync=1 open=0 write=0 direct=0";
    assert_eq!(lines.lines().count(), 2, "{lines}");
    assert!(
        lines
            .lines()
            .all(|line| line.starts_with("pid=") && line.ends_with(expected)),
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
    Run::new(&program)
        .arg(dir.join("a"))
        .preload(true)
        .env("EATMYDATA_REPORT", &report)
        .run()
        .success();
    assert!(!report.exists());
}
