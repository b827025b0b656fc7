//! Many threads and processes at once: opening, writing, syncing, forking
//! from threads and exec'ing under the library, with no crash, no hang and
//! every byte where it belongs.
//!
//! Bounded in count (threads × rounds × processes) and in time (each run is
//! killed by `timeout` if it hangs); nothing waits by sleeping.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::common::{Run, TempDir, library, probe};

const PROCESSES: usize = 6;
const THREADS: usize = 12;
const ROUNDS: usize = 40;
/// Seconds before a run counts as hung.
const LIMIT: &str = "120";

/// Files one probe process writes: one per round, two per fork.
fn files_per_process(threads: usize, rounds: usize) -> usize {
    threads * (rounds + 2 * rounds.div_ceil(4))
}

fn spawn(dir: &Path, tag: &str, preload: bool, threads: usize, rounds: usize) -> Child {
    let mut command = Command::new("timeout");
    command
        .args(["-s", "KILL", LIMIT])
        .arg(probe("stress_mix", &["-pthread"]));
    command
        .arg(dir)
        .arg(tag)
        .arg(threads.to_string())
        .arg(rounds.to_string());
    command
        .env_remove("LD_PRELOAD")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if preload {
        command.env("LD_PRELOAD", library());
    }
    command.spawn().expect("start the stress probe")
}

/// Every file holds its own name, line after line, and nothing else.
fn check_files(dir: &Path, expected: usize) {
    let mut count = 0;
    for entry in fs::read_dir(dir).expect("read the stress folder") {
        let entry = entry.expect("a folder entry");
        let name = entry.file_name().into_string().expect("a UTF-8 name");
        let text = fs::read_to_string(entry.path()).expect("read a stress file");
        assert!(
            !text.is_empty() && text.lines().all(|line| line == name),
            "{name} holds something else"
        );
        assert!(text.ends_with('\n'), "{name} is cut short");
        count += 1;
    }
    assert_eq!(count, expected, "files written");
}

#[test]
fn threads_and_processes_sync_fork_and_exec_at_once() {
    let dir = TempDir::new("stress");
    let children: Vec<Child> = (0..PROCESSES)
        .map(|p| spawn(dir.path(), &format!("p{p}"), true, THREADS, ROUNDS))
        .collect();
    for (p, child) in children.into_iter().enumerate() {
        let output = child.wait_with_output().expect("wait for a stress process");
        assert!(
            output.status.success(),
            "process {p}: {:?} (exit 137: killed by timeout, a hang)\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        let want = format!("ok {} files\n", files_per_process(THREADS, ROUNDS));
        assert_eq!(String::from_utf8_lossy(&output.stdout), want);
    }
    check_files(dir.path(), PROCESSES * files_per_process(THREADS, ROUNDS));
}

#[test]
fn stress_probe_passes_without_the_library_and_syncs_only_then() {
    // The control: the probe itself is right, and it does ask for syncs.
    let dir = TempDir::new("stress-control");
    let output = spawn(dir.path(), "c", false, 4, 8)
        .wait_with_output()
        .expect("wait for the probe");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    check_files(dir.path(), files_per_process(4, 8));

    // A smaller run under strace -f: forks and execs followed, no sync
    // reaches the kernel with the library and many do without it.
    let probe = probe("stress_mix", &["-pthread"]);
    let calls = [
        "fsync",
        "fdatasync",
        "syncfs",
        "sync_file_range",
        "msync",
        "execve",
    ];
    let synced = |preload: bool| {
        let dir = TempDir::new("stress-traced");
        let run = Run::new("timeout")
            .args(["-s", "KILL", LIMIT])
            .arg(&probe)
            .arg(dir.path());
        let outcome = run
            .args(["s", "4", "8"])
            .preload(preload)
            .trace(&calls)
            .run()
            .success();
        check_files(dir.path(), files_per_process(4, 8));
        let execs = outcome.calls_with("--child").len();
        assert!(execs >= 8, "the forked children exec'd: {execs}");
        let syncs = calls[..4]
            .iter()
            .map(|c| outcome.calls_of(c).len())
            .sum::<usize>();
        syncs + outcome.calls_with("MS_SYNC").len()
    };
    let eaten = synced(true);
    assert_eq!(eaten, 0, "syncs reached the kernel under the library");
    let control = synced(false);
    assert!(control > 100, "the control made only {control} syncs");
}
