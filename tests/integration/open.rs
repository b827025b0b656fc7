//! O_SYNC, O_DSYNC and O_DIRECT are dropped from every open, RWF_SYNC and
//! RWF_DSYNC from every pwritev2, O_DIRECT from fcntl(F_SETFL); the path, the
//! other flags, the mode (with its unusual bits) and the data pass through.

use std::process::Command;

use crate::common::{Libc, Run, TempDir, command, probe, probe_for};

const CASES: [&str; 9] = [
    "open",
    "open64",
    "openat",
    "openat64",
    "open reopen",
    "open64 reopen",
    "openat reopen",
    "openat64 reopen",
    "tmpfile",
];

/// What the open probe printed for `case`.
fn line<'a>(stdout: &'a str, case: &str) -> &'a str {
    let prefix = format!("{case}: ");
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {case:?} in:\n{stdout}"))
}

fn mode_of(case: &str) -> &'static str {
    if case == "tmpfile" { "0640" } else { "1755" }
}

/// The open probe built against `libc` with `flags`, with and without us.
pub fn check_open_probe(libc: Libc, flags: &[&str]) {
    let program = probe_for(libc, "open_flags", flags);
    let traced = &["open", "openat"];

    let dir = TempDir::new("open-plain");
    let plain = Run::new(&program)
        .arg(dir.path())
        .trace(traced)
        .run()
        .success();
    for case in CASES {
        let direct = if case == "tmpfile" { 0 } else { 1 };
        let expected = format!("sync=1 dsync=1 direct={direct} mode={}", mode_of(case));
        assert_eq!(line(&plain.stdout(), case), expected, "control, {case}");
    }
    assert!(
        plain
            .calls_with("f-openat64")
            .iter()
            .all(|c| c.contains("O_SYNC")),
        "{:?}",
        plain.calls
    );

    let dir = TempDir::new("open-eaten");
    let eaten = Run::new(&program)
        .arg(dir.path())
        .preload(true)
        .trace(traced)
        .run()
        .success();
    for case in CASES {
        let expected = format!("sync=0 dsync=0 direct=0 mode={}", mode_of(case));
        assert_eq!(
            line(&eaten.stdout(), case),
            expected,
            "with the library, {case}"
        );
    }
    let ours: Vec<_> = eaten
        .calls
        .iter()
        .filter(|c| c.contains("\"f-") || c.contains("O_TMPFILE"))
        .collect();
    assert_eq!(
        ours.len(),
        9,
        "every open reached the kernel once: {:?}",
        eaten.calls
    );
    for call in ours {
        for flag in ["O_SYNC", "O_DSYNC", "O_DIRECT"] {
            assert!(!call.contains(flag), "{flag} reached the kernel: {call}");
        }
    }
}

#[test]
fn sync_flags_are_dropped_from_every_open() {
    check_open_probe(Libc::Glibc, &[]);
}

#[test]
fn sync_flags_are_dropped_from_the_fortified_opens() {
    let flags = ["-O2", "-D_FORTIFY_SOURCE=2"];
    let program = probe("open_flags", &flags);
    let symbols = Command::new("nm")
        .arg("-u")
        .arg(&program)
        .output()
        .expect("run nm");
    let symbols = String::from_utf8_lossy(&symbols.stdout);
    for entry in ["__open_2", "__open64_2", "__openat_2", "__openat64_2"] {
        assert!(
            symbols.contains(entry),
            "the fortified probe does not call {entry}:\n{symbols}"
        );
    }
    check_open_probe(Libc::Glibc, &flags);
}

#[test]
fn o_direct_is_kept_on_request() {
    check_keep_direct(Libc::Glibc);
}

/// `EATMYDATA_KEEP_DIRECT=1` keeps O_DIRECT for a probe built against `libc`.
pub fn check_keep_direct(libc: Libc) {
    let program = probe_for(libc, "open_flags", &[]);
    let dir = TempDir::new("open-keep-direct");
    let kept = Run::new(&program)
        .arg(dir.path())
        .preload(true)
        .env("EATMYDATA_KEEP_DIRECT", "1")
        .run()
        .success();
    assert_eq!(
        line(&kept.stdout(), "openat"),
        "sync=0 dsync=0 direct=1 mode=1755"
    );
}

#[test]
fn the_commands_keep_direct_option_keeps_o_direct_and_only_it() {
    let program = probe("open_flags", &[]);
    let dir = TempDir::new("open-keep-direct-command");
    let line_of = |options: &[&str]| {
        let run = Run::new(command())
            .args(options)
            .arg(&program)
            .arg(dir.path())
            .trace(&["openat"])
            .run()
            .success();
        assert!(run.calls_with("O_SYNC").is_empty(), "{:?}", run.calls);
        line(&run.stdout(), "openat").to_owned()
    };
    assert_eq!(line_of(&[]), "sync=0 dsync=0 direct=0 mode=1755");
    assert_eq!(
        line_of(&["--keep-direct"]),
        "sync=0 dsync=0 direct=1 mode=1755"
    );
}

#[test]
fn per_write_sync_flags_are_dropped_and_fcntl_passes_through() {
    check_write_flags(Libc::Glibc);
}

/// pwritev2's flags (where `libc` has it) and fcntl, with and without us.
pub fn check_write_flags(libc: Libc) {
    let program = probe_for(libc, "write_flags", &[]);
    let traced = &["pwritev2", "fcntl"];
    let dir = TempDir::new("write-flags");

    let plain = Run::new(&program)
        .arg(dir.join("plain"))
        .trace(traced)
        .run()
        .success();
    let eaten = Run::new(&program)
        .arg(dir.join("eaten"))
        .preload(true)
        .trace(traced)
        .run()
        .success();
    let expected = match libc {
        Libc::Glibc => {
            "\
pwritev2 dsync: 12
pwritev2 sync+append: 6
pwritev64v2 dsync: 6
content: 24 hello world\nhello world\n
"
        }
        Libc::Musl => "pwritev2: not in this libc\n",
    };
    for outcome in [&plain, &eaten] {
        assert!(
            outcome.stdout().starts_with(expected),
            "{}",
            outcome.stdout()
        );
        for answer in [
            "dupfd_cloexec >= 100: 1",
            "setlk: 0",
            "getlk: 0 type=unlocked",
            "setfd/getfd: 0 1",
            "fcntl(-1): -1",
        ] {
            assert!(
                outcome.stdout().contains(answer),
                "{answer:?} missing:\n{}",
                outcome.stdout()
            );
        }
    }
    assert!(
        plain.stdout().contains("setfl: 0 append=1 direct=1"),
        "{}",
        plain.stdout()
    );
    assert!(
        eaten.stdout().contains("setfl: 0 append=1 direct=0"),
        "{}",
        eaten.stdout()
    );

    let rwf_sync_calls = match libc {
        Libc::Glibc => (2, 1),
        Libc::Musl => (0, 0),
    };
    assert_eq!(
        plain.calls_with("RWF_DSYNC").len(),
        rwf_sync_calls.0,
        "control: {:?}",
        plain.calls
    );
    assert_eq!(
        plain.calls_with("RWF_SYNC").len(),
        rwf_sync_calls.1,
        "control: {:?}",
        plain.calls
    );
    assert!(
        eaten.calls_with("RWF_DSYNC").is_empty() && eaten.calls_with("RWF_SYNC").is_empty(),
        "{:?}",
        eaten.calls
    );
    assert_eq!(
        eaten.calls_with("RWF_APPEND").len(),
        rwf_sync_calls.1,
        "{:?}",
        eaten.calls
    );
    let setfl = eaten.calls_with("F_SETFL");
    assert!(
        setfl.len() == 1 && !setfl[0].contains("O_DIRECT") && setfl[0].contains("O_APPEND"),
        "{setfl:?}"
    );
}
