//! One decision per call: every durability request gets the same answer by
//! its libc name and by number through `syscall(2)` -- the same result and
//! errno, the same calls reaching the kernel, the same `--report` count --
//! and with `EATMYDATA_DISABLE=1` the kernel sees what it sees without the
//! library, on both paths.

use std::fs;
use std::path::Path;

use crate::common::{Outcome, Run, TempDir, probe};

const TRACED: &[&str] = &[
    "fsync",
    "fdatasync",
    "syncfs",
    "sync",
    "sync_file_range",
    "msync",
    "open",
    "openat",
    "pwritev2",
    "fcntl",
];
const FLUSHES: &[&str] = &["fsync", "fdatasync", "syncfs", "sync", "sync_file_range"];

/// The probe's calls made one `way`, in a fresh folder.
fn run(way: &str, preload: bool, env: &[(&str, &str)]) -> Outcome {
    let dir = TempDir::new(&format!("both-ways-{way}"));
    let mut run = Run::new(probe("both_ways", &[]))
        .args([way.as_ref(), dir.path().as_os_str()])
        .preload(preload)
        .trace(TRACED);
    for (name, value) in env {
        run = run.env(name, value);
    }
    run.run().success()
}

/// The traced calls of the probe itself, from its first open of `data` on,
/// with the process id and addresses (which move from run to run) taken out.
fn kernel_saw(outcome: &Outcome) -> Vec<String> {
    let calls: Vec<String> = outcome
        .calls
        .iter()
        .map(|line| {
            line.split_once(' ')
                .map_or(line.as_str(), |(_, c)| c)
                .trim()
        })
        .map(|call| {
            call.split([',', '(', ')'])
                .map(|part| match part.trim().starts_with("0x") {
                    true => "ADDR",
                    false => part,
                })
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect();
    let first = calls.iter().position(|c| c.contains("\"data\""));
    calls[first.expect("the probe opened its data file")..].to_vec()
}

/// The counts of the probe's `--report` line, without its pid.
fn reported(way: &str) -> String {
    let dir = TempDir::new("both-ways-report");
    let file = dir.join("report");
    fs::write(&file, "").unwrap();
    let file_str = file.to_str().unwrap();
    run(way, true, &[("EATMYDATA_REPORT", file_str)]);
    let lines = fs::read_to_string(Path::new(&file)).unwrap();
    let line = lines
        .lines()
        .find(|l| l.contains(" name=both_ways "))
        .unwrap_or_else(|| panic!("no report line from the probe: {lines:?}"));
    line.split_once(" name=").unwrap().1.to_owned()
}

#[test]
fn by_name_and_by_number_get_one_answer() {
    let plain = run("name", false, &[]);
    assert_eq!(
        run("number", false, &[]).stdout(),
        plain.stdout(),
        "control: the probe makes the same calls both ways"
    );
    let by_name = run("name", true, &[]);
    let by_number = run("number", true, &[]);
    assert_eq!(by_name.stdout(), by_number.stdout(), "answers differ");
    assert_eq!(kernel_saw(&by_name), kernel_saw(&by_number));

    // The answers are the kernel's, but for the flags the library drops.
    for (eaten, real) in by_name.stdout().lines().zip(plain.stdout().lines()) {
        if !real.contains("flags left") {
            assert_eq!(eaten, real);
        }
    }
    for call in FLUSHES {
        assert!(!plain.calls_of(call).is_empty(), "control: no {call}");
        // Only a call on a descriptor that reaches no disk goes to the
        // kernel, which refuses it (/dev/null): no flush is made.
        let made = by_number.calls_of(call);
        assert!(
            made.iter().all(|c| c.contains("= -1 E")),
            "{call} reached the kernel: {made:?}"
        );
    }
    for flag in [
        "O_SYNC",
        "O_DSYNC",
        "O_DIRECT",
        "RWF_DSYNC",
        "RWF_SYNC",
        "MS_SYNC",
    ] {
        assert!(!plain.calls_with(flag).is_empty(), "control: no {flag}");
        assert!(
            by_number.calls_with(flag).is_empty(),
            "{flag} reached the kernel: {:?}",
            by_number.calls_with(flag)
        );
    }
}

#[test]
fn by_name_and_by_number_are_counted_alike() {
    let by_name = reported("name");
    assert!(
        by_name.contains(" fsync=2 ") && by_name.contains(" sync=2 "),
        "{by_name}"
    );
    assert_eq!(reported("number"), by_name);
}

#[test]
fn disabled_the_kernel_sees_what_it_sees_without_the_library() {
    for way in ["name", "number"] {
        let plain = run(way, false, &[]);
        let disabled = run(way, true, &[("EATMYDATA_DISABLE", "1")]);
        assert_eq!(disabled.stdout(), plain.stdout(), "{way}");
        assert_eq!(kernel_saw(&disabled), kernel_saw(&plain), "{way}");
    }
}
