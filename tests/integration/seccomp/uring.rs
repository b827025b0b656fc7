//! io_uring flushes under the supervisor: fio's own engine (raw system
//! calls, its own idea of SQPOLL; seccomp mode on by itself for it) and a
//! liburing program (inline system calls, dynamic and static), each
//! against a control run without the supervisor, with the loop device's
//! flush count as the oracle.

use std::ffi::OsStr;
use std::path::PathBuf;

use super::{eatmydata, results};
use crate::common::{Flushes, command, fio_flushes, floor_writing, library, probe, unsynced};
use crate::loopfs::LoopFs;

/// fio's job under plain `eatmydata` (no flag: fio's own io_uring_enter
/// turns seccomp mode on) against its control. A sync_file_range
/// starts writeback without flushing the device's cache, so its control
/// flushes nothing either: that case is shown by the written sectors of
/// `a_sync_file_range_writes_nothing_out`.
fn fio_job(sync: &str, sqpoll: bool) {
    library();
    let mut job = vec!["--engine", "io_uring", "--sync", sync];
    if sqpoll {
        job.push("--fio-option=--sqthread_poll=1");
    }
    let eatmydata = command();
    let control = fio_flushes(&job, &[]);
    let floor = fio_flushes(&unsynced(&job), &[]);
    let eaten = fio_flushes(&job, &[eatmydata.to_str().unwrap()]);
    let flushes = Flushes {
        control: control.flushes,
        floor: floor.flushes,
        eaten: eaten.flushes,
    };
    if sync == "sync_file_range" {
        flushes.assert_at_floor(&eaten.line);
    } else {
        flushes.assert_eaten(100, &eaten.line);
    }
}

#[test]
fn fio_io_uring_fsync_flushes_nothing() {
    fio_job("fsync", false);
}

#[test]
fn fio_io_uring_fdatasync_flushes_nothing() {
    fio_job("fdatasync", false);
}

/// Its control flushes nothing either, and fio writes everything out
/// before verifying: what this shows is that fio, its ranges answered by
/// the supervisor, exits 0 and verifies. That the writeback is skipped is
/// `a_sync_file_range_writes_nothing_out`'s to show.
#[test]
fn fio_io_uring_sync_file_range_runs_and_verifies() {
    fio_job("sync_file_range", false);
}

#[test]
fn fio_io_uring_with_its_sqpoll_thread_flushes_nothing_and_ends() {
    fio_job("fsync", true);
}

/// A dynamic program whose own code enters io_uring gets seccomp mode by
/// itself, said once, beside the library, which still drops the O_SYNC of
/// its open (no filter can: the flag is in a register); `--no-seccomp`
/// leaves the library alone. fio is found so too.
#[test]
fn a_dynamic_program_entering_io_uring_itself_gets_seccomp_and_the_library() {
    let program = probe("own_uring_enter", &[]);
    let dir = crate::common::TempDir::new("own-uring-enter");
    let file = dir.join("f");
    let run = |options: &[&str]| {
        let mut args: Vec<&OsStr> = options.iter().map(OsStr::new).collect();
        args.extend([program.as_os_str(), file.as_os_str()]);
        eatmydata(&args)
    };
    let alone = results(&crate::common::Run::new(&program).arg(&file).run().success());
    assert_eq!((&*alone["sync"], &*alone["seccomp"]), ("kept", "0"));
    let auto = run(&[]);
    let said = super::notices(&auto);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("makes its own io_uring_enter system calls")
            && said[0].contains("--no-seccomp"),
        "{said:?}"
    );
    let auto = results(&auto);
    assert_eq!((&*auto["sync"], &*auto["seccomp"]), ("dropped", "2"));
    // The kernel's answer to its enter on a file, as without eatmydata.
    assert_eq!(auto["enter"], alone["enter"]);
    let off = run(&["--no-seccomp"]);
    assert!(super::notices(&off).is_empty());
    let off = results(&off);
    assert_eq!((&*off["sync"], &*off["seccomp"]), ("dropped", "0"));
    let fio = eatmydata(&["fio", "--version"]);
    assert!(
        super::notices(&fio)
            .iter()
            .any(|line| line.contains("fio is dynamically linked but makes its own")),
        "{}",
        fio.stderr()
    );
    // A liburing program enters through liburing.so: the library's.
    let [dynamic, _] = liburing_probes();
    let liburing = eatmydata(&[dynamic.as_os_str(), "parent".as_ref()]);
    assert!(
        super::notices(&liburing).is_empty(),
        "{}",
        liburing.stderr()
    );
}

/// The command's arguments before the probe's for `mode`. The control
/// (`--no-seccomp`) also turns the library off: it rewrites liburing's
/// rings itself now (`tests/integration/uring.rs`), and the control must
/// be the program as it runs without eatmydata.
fn mode_args(mode: &str) -> Vec<&OsStr> {
    match mode {
        "--no-seccomp" => ["--no-seccomp", "env", "EATMYDATA_DISABLE=1"]
            .map(OsStr::new)
            .to_vec(),
        _ => vec![OsStr::new(mode)],
    }
}

fn liburing_probes() -> [PathBuf; 2] {
    [
        probe("uring_probe", &["-luring"]),
        probe("uring_probe", &["-static", "-luring"]),
    ]
}

#[test]
fn completions_keep_their_user_data_results_and_links() {
    let disk = LoopFs::new("uring-chain", 32);
    let file = disk.join("chain");
    for program in liburing_probes() {
        let run = |mode: &str| {
            let mut args = mode_args(mode);
            args.extend([program.as_os_str(), "chain".as_ref(), file.as_os_str()]);
            results(&eatmydata(&args))
        };
        let mut control = run("--no-seccomp");
        let mut eaten = run("--seccomp");
        assert_eq!(control.remove("openat_sync").as_deref(), Some("kept"));
        assert_eq!(eaten.remove("openat_sync").as_deref(), Some("dropped"));
        // Every completion as without eatmydata: the flushes 0, the writes
        // whole, the errors and the cancelled link the same.
        assert_eq!(eaten, control, "{}", program.display());
        assert_eq!(control["cqe_9"], "ECANCELED");
    }
}

#[test]
fn a_liburing_program_flushes_nothing_with_or_without_sqpoll() {
    const LOOPS: u64 = 100;
    let disk = LoopFs::new("uring-loop", 64);
    let file = disk.join("data");
    for program in liburing_probes() {
        for kind in ["loop", "sqpoll"] {
            let run = |mode: &str| {
                let before = disk.flushes();
                let count = LOOPS.to_string();
                let mut args = mode_args(mode);
                args.extend([
                    program.as_os_str(),
                    kind.as_ref(),
                    file.as_os_str(),
                    count.as_ref(),
                ]);
                let found = results(&eatmydata(&args));
                assert_eq!(found["synced"], count);
                (found, disk.flushes() - before)
            };
            let (control, flushed) = run("--no-seccomp");
            let floor = floor_writing(&disk, &format!("floor-{kind}"), 16 * 4096);
            let (eaten, eaten_flushes) = run("--seccomp");
            Flushes {
                control: flushed,
                floor,
                eaten: eaten_flushes,
            }
            .assert_eaten(LOOPS, kind);
            if kind == "sqpoll" {
                // liburing reads the flags back: it sees a ring without SQPOLL.
                assert_eq!(control["sqpoll_seen"], "yes");
                assert_eq!(eaten["sqpoll_seen"], "no");
            }
        }
    }
}

#[test]
fn a_sync_file_range_writes_nothing_out() {
    let disk = LoopFs::new("uring-range", 64);
    for (n, program) in liburing_probes().iter().enumerate() {
        let run = |mode: &str| {
            // A new file each time: ext4 writes out a file truncated and
            // written again when it is closed.
            let file = disk.join(format!("range-{n}{mode}"));
            let before = disk.stats().sectors_written;
            let mut args = mode_args(mode);
            args.extend([program.as_os_str(), "range".as_ref(), file.as_os_str()]);
            assert_eq!(results(&eatmydata(&args))["range"], "0");
            disk.stats().sectors_written - before
        };
        // 1 MiB is 2048 sectors: written out by the control at once, and
        // left in the page cache under eatmydata.
        let control = run("--no-seccomp");
        let eaten = run("--seccomp");
        assert!(control >= 2048, "{control} sectors without eatmydata");
        assert!(eaten < 1024, "{eaten} sectors under eatmydata");
    }
}

#[test]
fn bad_ring_input_gets_the_kernels_answers() {
    let disk = LoopFs::new("uring-bad", 32);
    let file = disk.join("bad");
    for program in liburing_probes() {
        let run = |mode: &str| {
            let mut args = mode_args(mode);
            args.extend([program.as_os_str(), "bad".as_ref(), file.as_os_str()]);
            results(&eatmydata(&args))
        };
        let control = run("--no-seccomp");
        assert_eq!(control["setup_badparams"], "EFAULT");
        assert_eq!(control["enter_closed_ring"], "EBADF");
        assert_eq!(run("--seccomp"), control, "{}", program.display());
    }
}

#[test]
fn the_supervisor_lets_a_closed_ring_go() {
    for program in liburing_probes() {
        let run = |mode: &str| {
            results(&eatmydata(&[
                mode.as_ref(),
                program.as_os_str(),
                "parent".as_ref(),
            ]))
        };
        // Without a supervisor the parent is the test, which maps no ring.
        let control = run("--no-seccomp");
        assert_eq!((&*control["held"], &*control["released"]), ("0", "0"));
        // The supervisor maps the ring while it is used, not after.
        let supervised = run("--seccomp");
        assert_ne!(supervised["held"], "0");
        assert_eq!(supervised["released"], "0");
    }
}
