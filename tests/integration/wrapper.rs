//! The `eatmydata` command as a user runs it: it finds the command and the
//! library, executes in place with the arguments untouched, and fails with a
//! clear message and a distinct status.

use std::process::{Command, Output, Stdio};

use crate::common::{Libc, Run, TempDir, command, library, probe_for};

mod client; // a database client gets a note, once, and still runs
mod exec; // exec in place: arguments byte for byte, exit status, signals, SIGPIPE
mod install; // scripts/install.sh lays out what the command finds, and uninstalls it
mod names; // symlink mode: a link or copy named after a command; renamed copies
mod usage; // --help, --version, bad usage, and the exit statuses of env(1)

fn eatmydata(args: &[&str]) -> Output {
    library();
    Command::new(command())
        .args(args)
        .env_remove("LD_PRELOAD")
        .stdin(Stdio::null())
        .output()
        .expect("run eatmydata")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `eatmydata PROBE` for a probe built against `libc`: its fsync is eaten.
pub fn check_command_runs(libc: Libc) {
    let dir = TempDir::new("wrapped");
    let program = probe_for(libc, "sync_calls", &[]);
    let data = dir.join("data");
    let plain = Run::new(&program)
        .arg(&data)
        .trace(&["fsync"])
        .run()
        .success();
    assert_eq!(
        plain.calls_of("fsync").len(),
        1,
        "control: {:?}",
        plain.calls
    );
    let wrapped = Run::new(command())
        .arg(&program)
        .arg(&data)
        .trace(&["fsync", "execve"])
        .run()
        .success();
    assert!(wrapped.calls_of("fsync").is_empty(), "{:?}", wrapped.calls);
    // One exec of eatmydata, one of the command: no shell in between.
    assert_eq!(wrapped.calls_of("execve").len(), 2, "{:?}", wrapped.calls);
}
