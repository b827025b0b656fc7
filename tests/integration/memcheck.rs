//! The library under valgrind's memcheck: every hook, from threads, after
//! fork and across exec, with no error reported.
//!
//! `LD_PRELOAD` given to `valgrind` reaches the client (valgrind adds its
//! own preloads to it), so each run also shows the library was loaded: a
//! file opened `O_SYNC` keeps the flag only without it.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::{TempDir, library, probe};

/// valgrind's exit status when it found an error.
const ERRORS: i32 = 99;

/// Runs `program args` under memcheck, with or without the library.
fn under_valgrind(preload: bool, program: &Path, args: &[&OsStr]) -> Output {
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
    valgrind.output().expect("run valgrind (package valgrind)")
}

/// The stdout of `program args` under memcheck; fails on any memcheck error
/// or a non-zero exit.
fn memcheck(preload: bool, program: &Path, args: &[&OsStr]) -> String {
    let output = under_valgrind(preload, program, args);
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
    let with = memcheck(true, &probe, &[dir.path().as_os_str()]);
    assert!(
        with.starts_with("osync=0 direct=0"),
        "the library was not loaded under valgrind: {with}"
    );
    let without = memcheck(false, &probe, &[dir.path().as_os_str()]);
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
    let out = memcheck(true, &probe, &args);
    assert!(out.starts_with("ok "), "{out}");
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
    let output = under_valgrind(true, &program, &[]);
    assert_eq!(
        output.status.code(),
        Some(ERRORS),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
