//! The library under valgrind's memcheck: every hook, from threads, after
//! fork and across exec, with no error reported.
//!
//! `LD_PRELOAD` given to `valgrind` reaches the client (valgrind adds its
//! own preloads to it), so each run also shows the library was loaded: a
//! file opened `O_SYNC` keeps the flag only without it.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::{TempDir, library, probe, whole_machine_sync};

/// valgrind's exit status when it found an error.
const ERRORS: i32 = 99;

/// Runs `program args` under memcheck, with or without the library, each
/// process that loads it reporting to `report`, if given.
fn under_valgrind(preload: bool, program: &Path, args: &[&OsStr], report: Option<&Path>) -> Output {
    let mut valgrind = Command::new("valgrind");
    valgrind.args([
        "--tool=memcheck",
        "--error-exitcode=99",
        "--leak-check=full",
        "--errors-for-leak-kinds=definite",
        "--track-origins=yes",
        "--trace-children=yes",
        "--child-silent-after-fork=no",
        "--quiet",
    ]);
    valgrind.arg(program).args(args).env_remove("LD_PRELOAD");
    if preload {
        valgrind.env("LD_PRELOAD", library());
    }
    if let Some(report) = report {
        valgrind.env("EATMYDATA_REPORT", report);
    }
    valgrind.output().expect("run valgrind (package valgrind)")
}

/// The stdout of `program args` under memcheck; fails on any memcheck error
/// or a non-zero exit.
fn memcheck(preload: bool, program: &Path, args: &[&OsStr], report: Option<&Path>) -> String {
    let output = under_valgrind(preload, program, args, report);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(
        output.status.code(),
        Some(ERRORS),
        "memcheck found errors:\n{stderr}"
    );
    assert!(
        output.status.success(),
        "{}: {:?}\n{stderr}",
        program.display(),
        output.status
    );
    assert!(!stderr.contains("=="), "valgrind reported:\n{stderr}");
    String::from_utf8(output.stdout).expect("text output")
}

#[test]
fn every_hook_is_clean_under_memcheck() {
    let dir = TempDir::new("memcheck");
    let probe = probe("memcheck_calls", &["-pthread"]);
    let with = memcheck(true, &probe, &[dir.path().as_os_str()], None);
    assert!(
        with.starts_with("osync=0 direct=0"),
        "the library was not loaded under valgrind: {with}"
    );
    // The control calls sync(2): no test counts flushes meanwhile.
    let without = whole_machine_sync(|| memcheck(false, &probe, &[dir.path().as_os_str()], None));
    assert!(
        without.starts_with("osync=1"),
        "the control keeps O_SYNC: {without}"
    );
}

#[test]
fn fork_and_exec_from_threads_are_clean_under_memcheck() {
    // The stress probe, small: threads fork, children exec (traced too).
    let dir = TempDir::new("memcheck-stress");
    let probe = probe("stress_mix", &["-pthread"]);
    let args = [
        dir.path().as_os_str(),
        "m".as_ref(),
        "3".as_ref(),
        "5".as_ref(),
    ];
    let report = dir.join("report");
    std::fs::write(&report, "").unwrap();
    let out = memcheck(true, &probe, &args, Some(&report));
    assert!(out.starts_with("ok "), "{out}");
    // The library was there, in the threads' children too: they report
    // what they skipped.
    let lines = std::fs::read_to_string(&report).unwrap();
    let skipped: u64 = lines
        .split_whitespace()
        .filter(|field| !field.starts_with("pid=") && !field.starts_with("name="))
        .filter_map(|field| field.split_once('=')?.1.parse::<u64>().ok())
        .sum();
    assert!(lines.lines().count() > 1 && skipped > 0, "{lines}");
}

#[test]
fn memcheck_reports_errors_so_a_clean_run_means_something() {
    // The oracle: a program with a real error fails the same check.
    let dir = TempDir::new("memcheck-oracle");
    let source = dir.join("bad.c");
    std::fs::write(
        &source,
        "#include <stdlib.h>\nint main(void) { int *p = malloc(8); free(p); return p[1]; }\n",
    )
    .expect("write bad.c");
    let program = dir.join("bad");
    let status = Command::new("cc")
        .arg("-o")
        .arg(&program)
        .arg(&source)
        .status()
        .expect("run cc");
    assert!(status.success());
    let output = under_valgrind(true, &program, &[], None);
    assert_eq!(
        output.status.code(),
        Some(ERRORS),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
