//! What breaks preload libraries in the field: another preloaded library's
//! constructor syncing before ours has run, many threads racing the first
//! lookups, children made by fork, exec and system(3), thread cancellation,
//! and the switch that turns the library off. Each check has a control run
//! without the library (or with it switched off), so that it cannot pass
//! because the probe never asked for a sync; `strace -f` is the oracle.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use crate::common::{self, Outcome, Run, TempDir};

/// The system calls that carry a sync, or a sync flag, to the kernel.
const SYNCS: &[&str] = &[
    "fsync",
    "fdatasync",
    "sync_file_range",
    "msync",
    "open",
    "openat",
    "pwritev2",
];

/// How many `name` calls started (a call cut by another thread's is logged
/// twice, `unfinished` then `resumed`; only the first counts).
fn started(outcome: &Outcome, name: &str) -> usize {
    let head = format!("{name}(");
    outcome
        .calls_of(name)
        .iter()
        .filter(|call| call.starts_with(&head))
        .count()
}

/// The opens of files under `dir` that asked for O_SYNC or O_DSYNC.
fn sync_opens<'a>(outcome: &'a Outcome, dir: &Path) -> Vec<&'a str> {
    let dir = dir.to_str().expect("a UTF-8 scratch path");
    ["open", "openat"]
        .iter()
        .flat_map(|name| outcome.calls_of(name))
        .filter(|call| call.contains(dir) && (call.contains("O_SYNC") || call.contains("O_DSYNC")))
        .collect()
}

/// Asserts that nothing of a sync reached the kernel in the traced run.
fn assert_nothing_synced(outcome: &Outcome, dir: &Path) {
    for call in ["fsync", "fdatasync", "sync_file_range"] {
        assert_eq!(
            started(outcome, call),
            0,
            "{call} reached the kernel:\n{:#?}",
            outcome.calls
        );
    }
    for flag in ["MS_SYNC", "RWF_SYNC", "RWF_DSYNC"] {
        assert!(
            outcome.calls_with(flag).is_empty(),
            "{flag} reached the kernel"
        );
    }
    assert_eq!(
        sync_opens(outcome, dir),
        Vec::<&str>::new(),
        "sync flags reached the kernel"
    );
}

#[test]
fn syncs_in_another_librarys_constructor_are_eaten_in_either_preload_order() {
    let other = common::probe("field_ctor_lib", &["-shared", "-fPIC", "-pthread"]);
    let ours = common::library();
    // The other library's constructor under `preload`, traced or (so that
    // its 16 threads really run at once) not.
    let run = |preload: &str, trace: bool| {
        let dir = TempDir::new("field-ctor");
        let mut run = Run::new("true").env("LD_PRELOAD", preload);
        if trace {
            run = run.trace(SYNCS);
        }
        let outcome = run.env("FIELD_DIR", dir.path()).run().success();
        assert_eq!(outcome.stdout(), "constructor: 17 files\n", "{preload}");
        for n in 0..17 {
            let path = dir.join(format!("ctor-{n}"));
            let written = fs::read_to_string(&path).expect("the constructor wrote its file");
            assert_eq!(written, path.to_str().unwrap());
        }
        (dir, outcome)
    };
    let (ours, other) = (ours.display(), other.display());
    for preload in [format!("{ours}:{other}"), format!("{other}:{ours}")] {
        run(&preload, false);
        let (dir, outcome) = run(&preload, true);
        assert_nothing_synced(&outcome, dir.path());
    }

    // Control: the other library alone, and every sync reaches the kernel.
    let (dir, outcome) = run(&other.to_string(), true);
    assert_eq!(started(&outcome, "fsync"), 17);
    assert_eq!(started(&outcome, "fdatasync"), 17);
    assert_eq!(sync_opens(&outcome, dir.path()).len(), 17);
}

#[test]
fn a_plugin_loaded_with_dlopen_can_sync_from_threads_in_its_constructor() {
    // dlopen holds the loader's lock while the constructor runs and waits
    // for its threads, whose opens are the first calls of their hooks: a
    // lookup that took that lock (dlsym does) would hang, so `timeout` ends
    // the run. The library's walk (objects.rs) takes only the lock that
    // guards the list of objects, which dlopen does not hold meanwhile.
    let plugin = common::probe("field_ctor_lib", &["-shared", "-fPIC", "-pthread"]);
    let host = common::probe("field_dlopen", &["-ldl"]);
    let load = |dir: &TempDir, preload: bool| {
        let outcome = Run::new("timeout")
            .arg("30")
            .arg(&host)
            .arg(&plugin)
            .env("FIELD_DIR", dir.path())
            .preload(preload)
            .trace(SYNCS)
            .run()
            .success();
        assert_eq!(outcome.stdout(), "constructor: 17 files\nloaded\n");
        outcome
    };
    let dir = TempDir::new("field-dlopen");
    assert_nothing_synced(&load(&dir, true), dir.path());

    let dir = TempDir::new("field-dlopen");
    let outcome = load(&dir, false);
    assert_eq!(started(&outcome, "fsync"), 17);
    assert_eq!(sync_opens(&outcome, dir.path()).len(), 17);
}

#[test]
fn thirty_two_threads_syncing_at_once_keep_their_data_and_reach_no_sync() {
    let threads = common::probe("field_threads", &["-pthread"]);
    let dir = TempDir::new("field-threads");
    let run = Run::new(&threads).arg(dir.path()).args(["32", "200"]);
    assert_eq!(run.preload(true).run().success().stdout(), "ok 6400\n");

    let dir = TempDir::new("field-threads");
    let outcome = Run::new(&threads)
        .arg(dir.path())
        .args(["32", "200"])
        .preload(true)
        .trace(SYNCS)
        .run()
        .success();
    assert_eq!(outcome.stdout(), "ok 6400\n");
    assert_nothing_synced(&outcome, dir.path());

    // Control, smaller: without the library each round trip syncs.
    let dir = TempDir::new("field-threads");
    let outcome = Run::new(&threads)
        .arg(dir.path())
        .args(["4", "6"])
        .trace(SYNCS)
        .run()
        .success();
    assert_eq!(outcome.stdout(), "ok 24\n");
    assert_eq!(started(&outcome, "fsync"), 24);
    assert_eq!(started(&outcome, "fdatasync"), 24);
    assert_eq!(sync_opens(&outcome, dir.path()).len(), 24);
}

/// Runs field_spawn under strace: a forked child, a forked and exec'd child,
/// and system(3) running the probe and `dd conv=fsync oflag=sync` all sync.
fn spawn(dir: &TempDir, preload: bool, disable: Option<&str>) -> Outcome {
    let mut run = Run::new(common::probe("field_spawn", &[])).arg(dir.path());
    if let Some(value) = disable {
        run = run.env("EATMYDATA_DISABLE", value);
    }
    let outcome = run.preload(preload).trace(SYNCS).run().success();
    assert_eq!(outcome.stdout(), "spawned: fork exec system dd\n");
    for name in ["fork", "exec", "system", "dd"] {
        assert!(dir.join(name).is_file(), "{name} wrote no file");
    }
    outcome
}

/// Asserts that each of the four children synced, each in its own process.
fn assert_children_synced(outcome: &Outcome, dir: &TempDir) {
    let opens = sync_opens(outcome, dir.path());
    for name in ["fork", "exec", "system", "dd"] {
        let path = format!("\"{}\"", dir.join(name).display());
        assert!(
            opens.iter().any(|open| open.contains(&path)),
            "no O_SYNC open of {name}"
        );
    }
    let pids: BTreeSet<&str> = (outcome.calls.iter())
        .filter(|line| line.contains(" fsync("))
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    assert_eq!(
        pids.len(),
        4,
        "fsync from four processes:\n{:#?}",
        outcome.calls
    );
    assert_eq!(started(outcome, "fdatasync"), 3, "the dd child only fsyncs");
}

#[test]
fn children_made_by_fork_exec_and_system_inherit_the_library() {
    let dir = TempDir::new("field-spawn");
    assert_nothing_synced(&spawn(&dir, true, None), dir.path());

    let dir = TempDir::new("field-spawn");
    assert_children_synced(&spawn(&dir, false, None), &dir);
}

#[test]
fn eatmydata_disable_passes_syncs_through_in_the_process_and_its_children() {
    let dir = TempDir::new("field-disable");
    assert_children_synced(&spawn(&dir, true, Some("1")), &dir);
}

#[test]
fn eatmydata_disable_zero_or_empty_keeps_eating() {
    for value in ["0", ""] {
        let dir = TempDir::new("field-disable");
        assert_nothing_synced(&spawn(&dir, true, Some(value)), dir.path());
    }
}

const CANCELLATION_POINTS: &[&str] = &["fsync", "fdatasync", "msync", "sync_file_range", "open"];

/// The field of a report line that counts `call`.
fn report_field(call: &str) -> &'static str {
    match call {
        "fsync" | "fdatasync" => "fsync",
        "msync" => "msync",
        "sync_file_range" => "range",
        _ => "open",
    }
}

/// field_cancel's answer for `call` in `state`, the same with and without the
/// library. The library shows it was there: the probe's report line
/// (`EATMYDATA_REPORT`), and, where the call returned, the call counted.
fn cancel(call: &str, state: &str) -> String {
    let cancel = common::probe("field_cancel", &["-pthread"]);
    let answers: Vec<String> = [false, true]
        .into_iter()
        .map(|preload| {
            let dir = TempDir::new("field-cancel");
            let report = dir.join("report");
            fs::write(&report, "").unwrap();
            // A thread that is never cancelled would hang its join.
            let run = Run::new("timeout").arg("30").arg(&cancel);
            let run = run.arg(dir.path()).args([call, state]);
            let run = run.env("EATMYDATA_REPORT", &report);
            let answer = run.preload(preload).run().success().stdout();
            let lines = fs::read_to_string(&report).unwrap();
            let ours: Vec<&str> = lines
                .lines()
                .filter(|line| line.contains(" name=field_cancel"))
                .collect();
            assert_eq!(ours.len(), usize::from(preload), "{call} {state}: {lines}");
            let counted = format!(" {}=0", report_field(call));
            // Cancelled before the call, it may not have been counted.
            if preload && state != "enabled" {
                assert!(
                    !ours[0].contains(&counted),
                    "{call} {state}: the library skipped nothing: {lines}"
                );
            }
            answer
        })
        .collect();
    assert_eq!(
        answers[0], answers[1],
        "{call} {state}: without, then with the library"
    );
    answers[0].clone()
}

#[test]
fn a_pending_cancel_acts_at_each_hooked_cancellation_point() {
    for call in CANCELLATION_POINTS {
        assert_eq!(cancel(call, "enabled"), format!("cancelled {call}\n"));
    }
}

#[test]
fn with_cancellation_disabled_each_hooked_call_returns() {
    for call in CANCELLATION_POINTS {
        assert_eq!(cancel(call, "disabled"), format!("returned {call}\n"));
    }
}

#[test]
fn a_thread_blocked_in_a_hooked_open_is_cancelled_there() {
    assert_eq!(cancel("open", "blocked"), "blocked: cancelled open\n");
}

#[test]
fn data_written_with_every_sync_request_is_all_there_for_another_process() {
    const BYTES: &str = "4194311"; // 4 MiB and a few, not a page multiple
    let data = common::probe("field_data", &[]);
    let write = |dir: &TempDir, preload: bool| {
        let file = dir.join("data");
        let outcome = Run::new(&data)
            .arg("write")
            .arg(&file)
            .arg(BYTES)
            .preload(preload)
            .trace(SYNCS)
            .run()
            .success();
        assert_eq!(fs::metadata(&file).unwrap().len().to_string(), BYTES);
        let check = Run::new(&data).arg("check").arg(&file).arg(BYTES).run();
        assert_eq!(
            check.success().stdout(),
            outcome.stdout(),
            "read back without the library"
        );
        outcome
    };

    let dir = TempDir::new("field-data");
    let eaten = write(&dir, true);
    assert_nothing_synced(&eaten, dir.path());

    // Control: the writer asks for every kind of sync, and gets them.
    let dir = TempDir::new("field-data");
    let synced = write(&dir, false);
    assert_eq!(synced.stdout(), eaten.stdout(), "the same bytes either way");
    assert!(started(&synced, "fsync") > 1);
    assert!(started(&synced, "fdatasync") > 1);
    for flag in ["MS_SYNC", "RWF_SYNC", "RWF_DSYNC"] {
        assert_eq!(synced.calls_with(flag).len(), 1, "{flag} in the control");
    }
    assert_eq!(sync_opens(&synced, dir.path()).len(), 1);
}
