//! io_uring eaten inside the process, without the supervisor: a liburing
//! program (its submit functions) and a program that drives its ring
//! through `syscall()` and `mmap()`, each against a control run without
//! the library, with the loop device's flush count as the oracle; bad
//! entries get the kernel's results; strace shows the setup the kernel got.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::common::{Flushes, Outcome, Run, TempDir, command, floor_writing, library, probe};
use crate::loopfs::LoopFs;

const LOOPS: u64 = 100;

fn program() -> PathBuf {
    probe("uring_eaten", &["-luring"])
}

/// The probe's `NAME=RESULT` lines.
fn results(outcome: &Outcome) -> BTreeMap<String, String> {
    let stdout = outcome.stdout();
    let pairs = stdout.lines().filter_map(|line| line.split_once('='));
    pairs.map(|(k, v)| (k.to_owned(), v.to_owned())).collect()
}

/// How the probe is run: alone, with `LD_PRELOAD`, through the command.
#[derive(Clone, Copy, Debug)]
enum Way {
    Alone,
    Preloaded,
    Command,
}

fn run(way: Way, args: &[&str], file: &Path) -> Run {
    let program = program();
    let (first, rest) = args.split_first().expect("a mode");
    let run = match way {
        Way::Alone => Run::new(&program),
        Way::Preloaded => Run::new(&program).preload(true),
        Way::Command => {
            library();
            Run::new(command()).arg("--no-seccomp").arg(&program)
        }
    };
    run.arg(first).arg(file).args(rest)
}

/// The flushes `mode` makes on a fresh file of `disk`, run `way`.
fn flushes(disk: &LoopFs, way: Way, mode: &str, name: &str) -> u64 {
    let file = disk.join(name);
    let count = LOOPS.to_string();
    let mut outcome = None;
    let flushed = disk.flushes_during(|| {
        outcome = Some(run(way, &[mode, &count], &file).run().success());
    });
    let found = results(&outcome.expect("ran"));
    assert_eq!(found["synced"], count, "{mode} {way:?}");
    flushed
}

/// `mode`'s flushes under the library, either way, judged against its
/// control and the floor (the probe's 16 blocks written unsynced).
fn eaten(mode: &str) {
    let disk = LoopFs::new(&format!("uring-{mode}"), 64);
    let control = flushes(&disk, Way::Alone, mode, "control");
    let floor = floor_writing(&disk, "floor", 16 * 4096);
    for way in [Way::Preloaded, Way::Command] {
        let eaten = flushes(&disk, way, mode, &format!("{way:?}"));
        Flushes {
            control,
            floor,
            eaten,
        }
        .assert_eaten(LOOPS / 2, &format!("{mode} {way:?}"));
    }
}

#[test]
fn liburing_fsyncs_linked_in_batches_of_eight_entries_reach_no_disk() {
    eaten("batch");
}

#[test]
fn liburing_fsyncs_submitted_one_by_one_reach_no_disk() {
    eaten("each");
}

/// A file registered with liburing and named by its slot: the library
/// follows the registration.
#[test]
fn liburing_fsyncs_on_a_registered_file_reach_no_disk() {
    eaten("fixed");
}

/// liburing publishes entries only in its submit functions, so an SQPOLL
/// ring is rewritten before its kernel thread can read them, and keeps
/// the flags it was given.
#[test]
fn a_liburing_sqpoll_ring_keeps_sqpoll_and_flushes_nothing() {
    eaten("sqpoll");
    let dir = TempDir::new("uring-sqpoll-flags");
    for way in [Way::Alone, Way::Preloaded, Way::Command] {
        let outcome = run(way, &["sqpoll", "2"], &dir.join("data"))
            .run()
            .success();
        assert_eq!(results(&outcome)["sqpoll"], "kept", "{way:?}");
    }
}

#[test]
fn a_ring_driven_through_syscall_flushes_nothing() {
    eaten("raw");
}

/// More rings in turn than the library holds at once: each unmapped ring
/// leaves its slot to the next.
#[test]
fn rings_made_and_unmade_in_turn_are_each_learnt() {
    eaten("rawmany");
}

/// By SQPOLL's rule (enter when the ring asks for a wakeup), with the
/// file used through its registered slot; the kernel is told no SQPOLL.
#[test]
fn a_raw_sqpoll_ring_with_a_registered_file_flushes_nothing_and_ends() {
    eaten("rawpoll");
    let dir = TempDir::new("uring-rawpoll-setup");
    let setup = |way| {
        let outcome = run(way, &["rawpoll", "2"], &dir.join("data"))
            .trace(&["io_uring_setup"])
            .run()
            .success();
        outcome.calls_of("io_uring_setup").join("\n")
    };
    assert!(setup(Way::Alone).contains("IORING_SETUP_SQPOLL"));
    let eaten = setup(Way::Preloaded);
    assert!(
        !eaten.is_empty() && !eaten.contains("IORING_SETUP_SQPOLL"),
        "{eaten}"
    );
}

#[test]
fn entries_the_library_must_not_answer_get_the_kernels_results() {
    let dir = TempDir::new("uring-bad");
    let answers = |way| results(&run(way, &["bad"], &dir.join("bad")).run().success());
    let control = answers(Way::Alone);
    for (name, expected) in [
        ("fsync_file", "0"),
        ("fsync_unknown_flags", "EINVAL"),
        ("fsync_addr", "EINVAL"),
        ("fsync_buf_index", "EINVAL"),
        ("range_bad_flags", "EINVAL"),
        ("range_negative_offset", "EINVAL"),
        ("fsync_unregistered_slot", "EBADF"),
        ("fsync_pipe", "EINVAL"),
        ("range_pipe", "ESPIPE"),
        ("fsync_devnull", "EINVAL"),
        ("fsync_badfd", "EBADF"),
        ("fsync_registered_slot", "0"),
        ("fsync_slot_past_the_table", "EBADF"),
        ("fsync_slot_now_a_pipe", "EINVAL"),
        ("direct_0", "0"),
        ("direct_1", "EINVAL"),
    ] {
        assert_eq!(control[name], expected, "control's {name}");
    }
    assert_eq!(answers(Way::Preloaded), control);
    assert_eq!(answers(Way::Command), control);
}

#[test]
fn openat2_entries_lose_o_dsync_and_the_programs_how_is_left_alone() {
    let dir = TempDir::new("uring-openat2");
    let answers = |way| results(&run(way, &["open2"], &dir.join("file")).run().success());
    let control = answers(Way::Alone);
    assert!(control.values().all(|v| v == "dsync"), "{control:?}");
    let eaten = answers(Way::Preloaded);
    // Each entry is asked again as an OPENAT entry without O_DSYNC,
    // wherever its how lies (writable, read-only, a shared mapping of a
    // file); the how itself, the program's, is never written.
    for how in ["writable", "readonly", "shared"] {
        assert_eq!(eaten[&format!("{how}_file")], "plain", "{how}");
        assert_eq!(eaten[&format!("{how}_how")], "dsync", "{how}");
    }
    assert_eq!(eaten["shared_stored"], "dsync");
}

#[test]
fn eatmydata_disable_passes_rings_through_untouched() {
    let disk = LoopFs::new("uring-disabled", 64);
    for mode in ["batch", "raw", "rawpoll"] {
        let file = disk.join(mode);
        let count = LOOPS.to_string();
        let flushed = disk.flushes_during(|| {
            run(Way::Preloaded, &[mode, &count], &file)
                .env("EATMYDATA_DISABLE", "1")
                .run()
                .success();
        });
        assert!(flushed >= LOOPS / 2, "{mode}: {flushed} flushes");
    }
    let open2 = run(Way::Preloaded, &["open2"], &disk.join("open2"))
        .env("EATMYDATA_DISABLE", "1")
        .run()
        .success();
    assert!(results(&open2).values().all(|v| v == "dsync"));
}

#[test]
fn eaten_entries_are_reported_and_their_file_systems_recorded() {
    let disk = LoopFs::new("uring-report", 32);
    let dir = TempDir::new("uring-report");
    let (report, list) = (dir.join("report"), dir.join("flush-list"));
    fs::write(&report, "").unwrap();
    fs::write(&list, "").unwrap();
    for mode in ["each", "raw"] {
        run(Way::Preloaded, &[mode, "10"], &disk.join(mode))
            .env("EATMYDATA_REPORT", &report)
            .env("EATMYDATA_FLUSH_LIST", &list)
            .run()
            .success();
    }
    let lines = fs::read_to_string(&report).unwrap();
    assert_eq!(lines.lines().count(), 2, "{lines}");
    for line in lines.lines() {
        assert!(line.contains(" fsync=10 "), "{line}");
    }
    // Both processes name the loop device's file system, once each.
    let recorded = fs::read_to_string(&list).unwrap();
    let dev = fs::metadata(disk.path()).unwrap().dev();
    let device = format!("{:08x}:{:08x}", libc::major(dev), libc::minor(dev));
    let ours = recorded.lines().filter(|l| l.ends_with(&device)).count();
    assert_eq!(ours, 2, "{device} in {recorded}");
}
