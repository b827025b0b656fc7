//! The supervisor as a parent: the command's exit status and signal are
//! the program's; a program killed in the middle of a call, a supervisor
//! killed under a running program, a program that closes every descriptor
//! it does not know, and a daemon that outlives the command each get what
//! they would get without it, and nothing hangs.

use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::{results, static_probe};
use crate::common::{Run, TempDir, command, library, wait_until};

fn sh(mode: &str, script: &str, args: &[&Path]) -> std::process::Output {
    library();
    Run::new(command())
        .args([mode, "sh", "-c", script, "sh"])
        .args(args)
        .run()
        .output
}

#[test]
fn exit_status_and_signals_are_the_programs() {
    for mode in ["--no-seccomp", "--seccomp"] {
        assert_eq!(sh(mode, "exit 7", &[]).status.code(), Some(7), "{mode}");
        let killed = sh(mode, "kill -9 $$", &[]).status;
        assert_eq!(killed.signal(), Some(9), "{mode}: {killed:?}");
    }
}

#[test]
fn a_program_killed_in_a_call_leaves_the_supervisor_serving() {
    let scratch = TempDir::new("seccomp-killed");
    let (loop_file, file) = (scratch.join("loop"), scratch.join("flags"));
    // Killed once /proc shows it inside fsync(2) ($4), waiting for the
    // kernel or the supervisor (a spin of at most 100000 looks).
    let script = "\"$1\" loop \"$2\" 100000000 & pid=$!; n=0; \
                  until grep -qs \"^$4 \" /proc/$pid/syscall || [ $((n += 1)) -gt 100000 ]; do :; done; \
                  kill -9 $pid; wait $pid; echo killed=$?; exec \"$1\" flags \"$3\" 1";
    let program = static_probe();
    let fsync = libc::SYS_fsync.to_string();
    for (mode, flag) in [("--no-seccomp", "kept"), ("--seccomp", "dropped")] {
        let output = sh(
            mode,
            script,
            &[&program, &loop_file, &file, Path::new(&fsync)],
        );
        assert!(output.status.success(), "{mode}: {output:?}");
        let found = results(&crate::common::Outcome {
            output,
            calls: Vec::new(),
        });
        assert_eq!(found["killed"], "137", "{mode}");
        assert_eq!(found["openat2_sync"], flag, "{mode}");
    }
}

#[test]
fn a_killed_supervisor_leaves_calls_failing_not_hanging() {
    let program = static_probe();
    let calls = |mode: &str, script: &str| {
        let output = sh(mode, script, &[&program]);
        results(&crate::common::Outcome {
            output,
            calls: Vec::new(),
        })
    };
    // Without a supervisor the shell's parent is the test: nothing to kill.
    let control = calls("--no-seccomp", "exec \"$1\" calls");
    assert_eq!(control["fsync_pipe"], "EINVAL");
    // Under it, the shell's parent is the supervisor: kill it, then call.
    // Once it is a zombie (or reaped), its descriptors, the listener's
    // among them, are closed.
    let orphaned = calls(
        "--seccomp",
        "p=$PPID; kill -9 $p; \
         while [ -e /proc/$p ] && ! grep -qs '^State:[[:space:]]*Z' /proc/$p/status; do :; done; \
         exec \"$1\" calls",
    );
    // The kernel answers what nobody serves with ENOSYS; all else runs.
    assert_eq!(orphaned["fsync_pipe"], "ENOSYS");
    assert_eq!(orphaned["write_pipe"], "0");
}

#[test]
fn a_program_that_closes_every_descriptor_is_still_served() {
    let scratch = TempDir::new("seccomp-closed");
    let file = scratch.join("data");
    let program = static_probe();
    let close_all = "import os, sys; os.closerange(3, 1 << 16); \
                     os.execv(sys.argv[1], sys.argv[1:])";
    for (mode, flag) in [("--no-seccomp", "kept"), ("--seccomp", "dropped")] {
        library();
        let outcome = Run::new(command())
            .args([mode, "python3", "-c", close_all])
            .arg(&program)
            .args(["flags".as_ref(), file.as_os_str(), "1".as_ref()])
            .run()
            .success();
        assert_eq!(results(&outcome)["openat2_sync"], flag, "{mode}");
    }
    // The listener never reaches the program.
    let fds = sh("--seccomp", "ls -l /proc/self/fd/", &[]);
    let listing = String::from_utf8_lossy(&fds.stdout);
    assert!(listing.contains("/proc/"), "{listing}");
    assert!(!listing.contains("seccomp"), "{listing}");
}

#[test]
fn a_daemon_is_served_after_the_command_ends_and_not_outlived() {
    let scratch = TempDir::new("seccomp-daemon");
    let (file, out) = (scratch.join("data"), scratch.join("out"));
    let program = static_probe();
    // A marker in the command line finds every process of this test.
    let marker = scratch.path().to_str().unwrap().to_owned();
    // The daemon starts once the command has ended: it reads a FIFO whose
    // only writer is the command's shell, and sees its end when it exits.
    let gate = scratch.join("gate");
    let made = Command::new("mkfifo").arg(&gate).status().unwrap();
    assert!(made.success());
    let script = "(read _ < \"$4\"; \"$1\" flags \"$2\" 1 > \"$3.part\"; mv \"$3.part\" \"$3\") & \
                  exec 3> \"$4\"; exit 0";
    let output = sh("--seccomp", script, &[&program, &file, &out, &gate]);
    assert!(output.status.success(), "{output:?}");
    let timeout = Duration::from_secs(30);
    wait_until("the daemon wrote its results", timeout, || out.exists());
    let found = fs::read_to_string(&out).expect("the daemon wrote its results");
    assert!(found.contains("openat2_sync=dropped"), "{found}");
    // Once the daemon has ended, so has the supervisor's copy.
    let running = || {
        let pgrep = Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .unwrap();
        !pgrep.stdout.is_empty()
    };
    wait_until("every process of the test ended", timeout, || !running());
}

#[test]
fn without_user_notification_the_plain_filter_is_used_and_said() {
    library();
    let refuse = crate::common::probe("no_listener", &[]);
    let program = static_probe();
    let run = |wrapped: bool| {
        let mut run = Run::new(if wrapped { refuse.clone() } else { command() });
        if wrapped {
            run = run.arg(command());
        }
        run.args(["--seccomp".as_ref(), program.as_os_str(), "calls".as_ref()])
            .run()
            .success()
    };
    // Control: the supervisor keeps the kernel's answer, says nothing.
    let supervised = run(false);
    assert_eq!(results(&supervised)["fsync_pipe"], "EINVAL");
    assert!(!supervised.stderr().contains("user notification"));
    // Refused: the plain filter answers 0 (but a negative descriptor's
    // EBADF, which it lets the kernel give), and the user is told once.
    let plain = run(true);
    assert_eq!(results(&plain)["fsync_pipe"], "0");
    assert_eq!(results(&plain)["fsync_badfd"], "EBADF");
    let said = plain
        .stderr()
        .matches("no seccomp user notification")
        .count();
    assert_eq!(said, 1, "{}", plain.stderr());
}
