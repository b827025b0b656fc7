//! runc's own command line through the runtime: help, lines it does not
//! read, and a bundle without its spec give runc's output and status, byte
//! for byte; a spec that is there and cannot be read safely (a FIFO, one
//! too large) is refused at once; a container id with a newline never
//! splits the log's line.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::process::{Output, Stdio};

use super::{Bundle, Via, inside, new_id, text};
use crate::common::probe;
use crate::loopfs::LoopFs;

/// `args` through `via`, with the bundle's state folder and no stdin.
fn runc(bundle: &Bundle, via: Via, args: &[&str]) -> Output {
    bundle
        .command(via, None)
        .args(args)
        .current_dir(bundle.dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("run the runtime")
}

/// `stderr` without runc's times (`time="..." `), which tick.
fn timeless(stderr: &[u8]) -> String {
    let stderr = String::from_utf8_lossy(stderr);
    stderr
        .lines()
        .map(|line| match line.strip_prefix("time=\"") {
            Some(rest) => rest.split_once("\" ").map_or(line, |(_, rest)| rest),
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn same(bundle: &Bundle, args: &[&str]) {
    let alone = runc(bundle, Via::Alone("runc"), args);
    let ours = runc(bundle, Via::Ours("runc"), args);
    assert_eq!(
        (ours.status.code(), &ours.stdout, timeless(&ours.stderr)),
        (alone.status.code(), &alone.stdout, timeless(&alone.stderr)),
        "{args:?}: {}",
        text(&ours)
    );
}

/// Before: `run -h` and the rest exited 125, "cannot read ./config.json".
#[test]
fn help_and_lines_we_do_not_read_are_runcs() {
    let program = probe("sync_calls", &["-static"]);
    let disk = LoopFs::new("runtime-help", 16);
    let bundle = Bundle::new("runtime-help", &[&program], &disk);
    fs::remove_file(bundle.config()).unwrap();
    for args in [
        &["run", "-h"][..],
        &["run", "--help"],
        &["create", "--help"],
        &["create", "-h", "ID"],
        &["exec", "-h"],
        &["exec", "--help"],
        &["delete", "--help"],
        &["--log-format", "json", "run", "--help"],
        &["run", "--bundle", "/nonexistent", "-h", "ID"],
        &["run"],
        &["create", "--frobnicate", "ID"],
        &["--version"],
    ] {
        same(&bundle, args);
    }
    let help = runc(&bundle, Via::Ours("runc"), &["run", "-h"]);
    assert!(help.status.success(), "{}", text(&help));
    assert!(String::from_utf8_lossy(&help.stdout).contains("--keep"));
}

/// Before: 125 and "eatmydata: cannot read .../config.json".
#[test]
fn a_bundle_without_its_spec_gets_runcs_error() {
    let program = probe("sync_calls", &["-static"]);
    let disk = LoopFs::new("runtime-no-spec", 16);
    let bundle = Bundle::new("runtime-no-spec", &[&program], &disk);
    fs::remove_file(bundle.config()).unwrap();
    let dir = bundle.dir.path().to_str().unwrap().to_owned();
    let missing = format!("{dir}/missing");
    for args in [
        &["create", "--bundle", &dir, "the-id"][..],
        &["run", "--bundle", &dir, "the-id"],
        &["run", "--bundle", &missing, "the-id"],
        &["run", "the-id"],
    ] {
        same(&bundle, args);
    }
    let ours = runc(&bundle, Via::Ours("runc"), &["run", "the-id"]);
    assert!(
        !String::from_utf8_lossy(&ours.stderr).contains("eatmydata"),
        "{}",
        text(&ours)
    );
}

/// Before: the FIFO hung the runtime in its open, and 17 MiB were read
/// and parsed. The guard thread ends a hang (a writer that closes at once)
/// so that the test fails rather than waits.
#[test]
fn a_spec_that_is_a_fifo_or_too_large_is_refused() {
    let program = probe("sync_calls", &["-static"]);
    let disk = LoopFs::new("runtime-fifo-spec", 16);
    let bundle = Bundle::new("runtime-fifo-spec", &[&program], &disk);
    let config = bundle.config();
    fs::remove_file(&config).unwrap();
    let name = std::ffi::CString::new(config.as_os_str().as_bytes()).unwrap();
    // SAFETY: a C string for the call.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
    let guard = config.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(30));
        let _ = fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(guard);
    });
    let dir = bundle.dir.path().to_str().unwrap().to_owned();
    let id = new_id();
    let args = ["create", "--bundle", &dir, &id];
    let fifo = runc(&bundle, Via::Ours("runc"), &args);
    assert_eq!(fifo.status.code(), Some(125), "{}", text(&fifo));
    let stderr = String::from_utf8_lossy(&fifo.stderr);
    assert!(stderr.starts_with("eatmydata: cannot read "), "{stderr}");
    assert!(stderr.contains("a FIFO, not a regular file"), "{stderr}");
    fs::remove_file(&config).unwrap();
    bundle.write_spec(&["/bin/true"], |_| {});
    let mut spec = fs::read(&config).unwrap();
    spec.resize(17 << 20, b' ');
    fs::write(&config, &spec).unwrap();
    let large = runc(&bundle, Via::Ours("runc"), &args);
    assert_eq!(large.status.code(), Some(125), "{}", text(&large));
    let stderr = String::from_utf8_lossy(&large.stderr);
    assert!(stderr.contains("larger than 16 MiB"), "{stderr}");
    assert!(stderr.ends_with("container not started\n"), "{stderr}");
    assert_eq!(fs::read(&config).unwrap(), spec, "the spec as it was");
}

/// runc refuses an id with a newline, after our line is written: in
/// logrus's text format it stays one line, escaped as Go's `%q`. Before:
/// the id's second half began a line of its own.
#[test]
fn an_id_with_a_newline_never_splits_a_log_line() {
    let program = probe("sync_calls", &["-static"]);
    let disk = LoopFs::new("runtime-log-newline", 16);
    let bundle = Bundle::new("runtime-log-newline", &[&program], &disk);
    bundle.write_spec(&[&inside(&program), "/data/a"], |_| {});
    let log = bundle.dir.join("log.txt");
    let id = "evil\ntime=2000-01-01T00:00:00Z level=error msg=forged";
    let output = bundle
        .command(Via::Ours("runc"), None)
        .arg("--log")
        .arg(&log)
        .args(["--log-format", "text", "create", "--bundle"])
        .arg(bundle.dir.path())
        .arg(id)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        !output.status.success(),
        "runc took the id: {}",
        text(&output)
    );
    let logged = fs::read_to_string(&log).unwrap();
    let ours: Vec<&str> = logged.lines().filter(|l| l.contains("eatmydata")).collect();
    // The edit's line first; the account may add its own.
    assert!(!ours.is_empty(), "{logged}");
    assert!(
        ours[0].contains(
            r#"msg="eatmydata: evil\ntime=2000-01-01T00:00:00Z level=error msg=forged: "#
        ),
        "{logged}"
    );
    for line in logged.lines() {
        assert!(
            line.starts_with("time=\""),
            "a split line: {line:?} in {logged}"
        );
    }
}
