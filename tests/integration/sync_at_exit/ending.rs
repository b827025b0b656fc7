//! The command's end: by SIGKILL, with a daemon left running, with SIGINT
//! arriving during the flush.

use std::fs;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{control_then_synced, eatmydata_sh, marker, options, write_synced};
use crate::common::{Outcome, Run, TempDir, command, library, wait_until};
use crate::loopfs::LoopFs;

#[test]
fn a_process_killed_by_sigkill_has_told_and_the_signal_is_passed_on() {
    let fs = LoopFs::new("atexit-kill", 32);
    library();
    let run = control_then_synced(&fs, "killed", |synced, text| {
        // The process that skipped the fsync dies by SIGKILL: no exit
        // handler runs, the record was written at the skip.
        let script = format!(
            "import os; f = open('{}', 'w'); f.write('{text}'); f.flush(); os.fsync(f.fileno()); os.kill(os.getpid(), 9)",
            fs.join(text).display()
        );
        let run = Run::new(command())
            .args(options(synced, &[]))
            .args(["python3", "-c", &script])
            .run();
        assert_eq!(run.output.status.signal(), Some(9), "{}", run.stderr());
        run
    });
    assert_eq!(run.stderr(), "");
}

#[test]
fn the_command_waits_for_what_the_command_left_running() {
    let fs = LoopFs::new("atexit-daemon", 32);
    let scratch = TempDir::new("atexit-daemon-gates");
    let run = control_then_synced(&fs, "daemon", |synced, text| {
        // A daemon: in a session of its own, writing once eatmydata has
        // seen the command end (the shell, $$, is gone from /proc: reaped),
        // then saying so.
        let done = scratch.join(format!("done-{synced}"));
        let script = format!(
            "setsid sh -c \"n=0; while [ -e /proc/$$ ] && [ \\$((n += 1)) -lt 10000000 ]; do :; done; \
               {}; touch '{done}'\" </dev/null >/dev/null 2>&1 & exit 0",
            write_synced(text, &fs.join(text)),
            done = done.display(),
        );
        let run = eatmydata_sh(&options(synced, &[]), &script).success();
        // With --sync-at-exit, eatmydata waited for the daemon; without,
        // the test waits for it before looking.
        assert!(
            !synced || done.exists(),
            "eatmydata returned before the daemon ended"
        );
        wait_until("the daemon wrote", Duration::from_secs(30), || {
            done.exists()
        });
        fs::remove_file(&done).unwrap();
        run
    });
    assert!(
        run.stderr()
            .contains("the command has ended; waiting for the 1 process it left running"),
        "{}",
        run.stderr()
    );
}

#[test]
fn sigint_during_the_flush_does_not_cut_it_short() {
    library();
    let fs = LoopFs::new("atexit-sigint", 96);
    let text = marker("interrupted");
    let started = fs.join("started");
    let script = format!(
        "touch '{}'; dd if=/dev/urandom of='{}' bs=1M count=48 conv=fsync status=none; {}",
        started.display(),
        fs.join("bulk").display(),
        write_synced(&text, &fs.join("m"))
    );
    let mut child = Command::new(command())
        .args(["--sync-at-exit", "sh", "-c", &script])
        .env_remove("LD_PRELOAD")
        .stdin(Stdio::null())
        .spawn()
        .expect("run eatmydata");
    // SIGINT to eatmydata alone, again and again, from when the command has
    // started until eatmydata ends: the flush of 48 MB takes the longest.
    let pid = child.id() as libc::pid_t;
    // Before the command runs, eatmydata is any program: SIGINT ends it.
    wait_until("the command started", Duration::from_secs(60), || {
        started.exists()
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        // SAFETY: a signal to our own child, not yet reaped.
        unsafe { libc::kill(pid, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(fs.holds(&text), "the flush finished");
}

#[test]
fn ctrl_c_stops_the_wait_for_a_daemon_and_flushes_at_once() {
    library();
    let mut child = Command::new(command())
        .args([
            "--sync-at-exit",
            "sh",
            "-c",
            "setsid sleep 60 </dev/null >/dev/null 2>&1 & exit 0",
        ])
        .env_remove("LD_PRELOAD")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run eatmydata");
    // The note comes once the command has ended and the daemon is waited for.
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut note = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut note).expect("read the note");
    let daemon: libc::pid_t = note
        .split("left running (")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("a pid in: {note}"));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().expect("wait for eatmydata");
    // SAFETY: the daemon this test started, still running: end it.
    let alive = unsafe { libc::kill(daemon, libc::SIGKILL) } == 0;
    assert_eq!(status.code(), Some(0), "{note}");
    assert!(alive, "the daemon was left running, not killed: {note}");
}

#[test]
fn the_files_go_even_when_the_command_dies_by_a_signal() {
    library();
    let scratch = crate::common::TempDir::new("atexit-tmpdir");
    let run = Run::new(command())
        .args(["--report", "--sync-at-exit", "sh", "-c"])
        .arg("ls \"$TMPDIR\"; kill -KILL $$")
        .env("TMPDIR", scratch.path())
        .run();
    assert_eq!(run.output.status.signal(), Some(9), "{}", run.stderr());
    // While the command ran, the report and the list were there.
    let listed = run.stdout();
    assert!(
        listed.contains("eatmydata-report-") && listed.contains("eatmydata-flush-"),
        "{listed}"
    );
    let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A reader of eatmydata's output that goes before it has read it all (`2>&1
/// | head -1`): the report is lost, not the flush, and the status is the
/// command's. SIGPIPE ended eatmydata at the report's first line, before
/// the flush (status 141, the data not on the device). The control runs
/// without --report (whose timed flushes would commit its marker).
#[test]
fn a_reader_that_goes_cuts_neither_the_flush_nor_the_status() {
    let fs = LoopFs::new("atexit-pipe", 32);
    library();
    control_then_synced(&fs, "pipe", |synced, text| {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let report: &[&str] = if synced { &["--report"] } else { &[] };
        let mut eatmydata = Command::new(command());
        // As a shell starts it: SIGPIPE at its default (this test process
        // ignores it, and a child would inherit that).
        // SAFETY: signal(2) is async-signal-safe, as pre_exec asks.
        unsafe {
            eatmydata.pre_exec(|| {
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                Ok(())
            })
        };
        let output = eatmydata
            .args(options(synced, report))
            .args(["sh", "-c", &write_synced(text, &fs.join(text))])
            .stdin(Stdio::null())
            .stderr(writer)
            .output()
            .unwrap();
        assert!(output.status.success(), "{:?}", output.status);
        Outcome {
            output,
            calls: vec![],
        }
    });
}
