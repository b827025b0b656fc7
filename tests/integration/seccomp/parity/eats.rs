//! The third check: the parity cases pass because eatmydata gives the
//! kernel's answers, not because it does nothing. The same kinds of calls,
//! in a loop on a loop device's ext4 (`probes/parity/eats.c`), flush the
//! device alone and do not under eatmydata (seccomp mode, picked by the
//! command for the static probe; the library alone for the dynamic one).

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{Flushes, command, floor_writing, library, probe};
use crate::loopfs::LoopFs;

const ROUNDS: u64 = 50;

/// Runs the `eats` probe's `case` on a fresh ext4, alone and under
/// eatmydata: the same output, at least ROUNDS flushes alone, and under
/// eatmydata what `common::flushes` allows above the floor (a byte
/// written ROUNDS times, unsynced: io_uring's flushes no filter answers).
fn eats(case: &str) {
    eats_built(case, &["-static", "-luring"]);
}

/// [`eats`] with the probe built dynamic: served by the library alone.
fn eats_dynamic(case: &str) {
    eats_built(case, &["-luring"]);
}

fn eats_built(case: &str, flags: &[&str]) {
    library();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("probes/parity");
    fs::create_dir_all(dir).expect("create the parity probes folder");
    let program = probe("parity/eats", flags);
    let disk = LoopFs::new(&format!("parity-eats-{case}"), 32);
    let run = |eaten: bool| {
        let mut output = None;
        let flushes = disk.flushes_during(|| {
            let mut run = if eaten {
                let mut run = Command::new(command());
                run.arg(&program);
                run
            } else {
                Command::new(&program)
            };
            let done = run.arg(case).arg(disk.path()).env_remove("LD_PRELOAD");
            output = Some(done.output().expect("run the eats probe"));
        });
        let output = output.expect("the probe ran");
        assert!(output.status.success(), "{case}: {output:?}");
        (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            flushes,
        )
    };
    let (alone, control) = run(false);
    let floor = floor_writing(&disk, "floor", ROUNDS as usize);
    let (eaten, flushes) = run(true);
    assert_eq!(
        alone,
        format!("{case}={ROUNDS}\n"),
        "{case}: every round done"
    );
    assert_eq!(eaten, alone, "{case}: the same output under eatmydata");
    Flushes {
        control,
        floor,
        eaten: flushes,
    }
    .assert_eaten(ROUNDS, case);
}

#[test]
fn eats_fsync() {
    eats("fsync");
}

/// An fsync through the i386 ABI (`int $0x80`), answered by the
/// supervisor as the native one.
#[test]
fn eats_i386_fsync() {
    eats("i386_fsync");
}

#[test]
fn eats_fdatasync() {
    eats("fdatasync");
}

#[test]
fn eats_msync() {
    eats("msync");
}

#[test]
fn eats_uring_fsync() {
    eats("uring_fsync");
}

#[test]
fn eats_uring_fixed_fsync() {
    eats("uring_fixed_fsync");
}

#[test]
fn eats_uring_sqe128_fsync() {
    eats("uring_sqe128_fsync");
}

#[test]
fn eats_uring_forked_fsync() {
    eats("uring_forked_fsync");
}

#[test]
fn eats_uring_write_dsync() {
    eats("uring_write_dsync");
}

#[test]
fn eats_uring_openat_osync() {
    eats("uring_openat_osync");
}

/// An OPENAT2 entry, asked again as an OPENAT entry: its open_how is
/// left alone (`uring::openat2_readback`), and its writes are eaten.
#[test]
fn eats_uring_openat2_osync() {
    eats("uring_openat2_osync");
}

#[test]
fn eats_uring_openat2_osync_dynamic() {
    eats_dynamic("uring_openat2_osync");
}

#[test]
fn eats_openat2_osync() {
    eats("openat2_osync");
}

#[test]
fn eats_fsync_dynamic() {
    eats_dynamic("fsync");
}

#[test]
fn eats_msync_dynamic() {
    eats_dynamic("msync");
}

#[test]
fn eats_uring_fsync_dynamic() {
    eats_dynamic("uring_fsync");
}

#[test]
fn eats_openat2_osync_dynamic() {
    eats_dynamic("openat2_osync");
}
