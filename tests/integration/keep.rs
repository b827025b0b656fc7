//! `eatmydata --keep PATH` and `--only PATH`: the syncs on the mounts that
//! hold the paths reach the disk, the others are eaten (or the reverse),
//! for a dynamic program (the library) and a static one (the supervisor).
//!
//! Two file systems of the test's own, `/a` and `/b`, each on a loop
//! device whose flush counter is read before and after each run. Every
//! run is judged against two controls, the same probe without eatmydata:
//! one that syncs (a plain run: what keeping must reach) and one that
//! writes the same bytes without syncing (the file systems' own flushes,
//! which eating cannot take away). Eaten: at most 5% of the plain run's
//! flushes above the no-sync control; kept: at least 95%.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, TempDir, command, probe, whole_machine_sync};
use crate::loopfs::LoopFs;

/// Syncs each probe run makes on each file system.
const COUNT: u32 = 100;

/// The verdict of most runs here: `/a` eaten, `/b` kept.
const SPLIT: [bool; 2] = [true, false];

/// The two file systems, and a run counter for fresh file names.
struct Two {
    a: LoopFs,
    b: LoopFs,
    runs: std::cell::Cell<u32>,
}

impl Two {
    fn new(label: &str) -> Two {
        Two {
            a: LoopFs::new(&format!("{label}-a"), 16),
            b: LoopFs::new(&format!("{label}-b"), 16),
            runs: std::cell::Cell::new(0),
        }
    }

    /// The flushes on `/a` and `/b` while `probe MODE COUNT A B` runs
    /// under `prefix` (none: without eatmydata), which must succeed. A
    /// `mode` of `sh:SCRIPT` runs SCRIPT through `sh` once for each file
    /// instead, with `$P` the probe, `$f` the file and `$n` the count.
    fn flushes(&self, prefix: &[&str], probe: &Path, mode: &str, count: u32) -> (u64, u64) {
        self.flushes_with(prefix, &[], probe, mode, count).0
    }

    /// [`Two::flushes`] with `env` set too; and what the run said on
    /// stderr.
    fn flushes_with(
        &self,
        prefix: &[&str],
        env: &[(&str, &str)],
        probe: &Path,
        mode: &str,
        count: u32,
    ) -> ((u64, u64), String) {
        let run = self.runs.get() + 1;
        self.runs.set(run);
        let files = [
            self.a.join(format!("f{run}")),
            self.b.join(format!("f{run}")),
        ];
        for fs in [&self.a, &self.b] {
            let synced = Command::new("sync").arg("-f").arg(fs.path()).status();
            assert!(synced.expect("run sync").success());
        }
        let before = (self.a.flushes(), self.b.flushes());
        let (program, args): (&Path, Vec<String>) = match mode.strip_prefix("sh:") {
            Some(script) => {
                let each = format!("for f; do {script} || exit 1; done");
                (Path::new("sh"), vec!["-c".into(), each, "sh".into()])
            }
            None => (probe, vec![mode.into(), count.to_string()]),
        };
        let mut run = match prefix.split_first() {
            None => Run::new(program).preload(false),
            Some((_, options)) => Run::new(command()).args(options).arg(program),
        };
        for (name, value) in env {
            run = run.env(name, value);
        }
        let outcome = run
            .env("P", probe)
            .env("n", count.to_string())
            .args(args)
            .args(&files)
            .run();
        assert!(
            outcome.output.status.success(),
            "{prefix:?} {mode}: {}{}",
            outcome.stdout(),
            outcome.stderr()
        );
        let flushes = (self.a.flushes() - before.0, self.b.flushes() - before.1);
        (flushes, outcome.stderr())
    }

    /// The three runs of `mode` (`eatmydata OPTIONS probe`, a plain run, a
    /// run without syncs) and the verdict: `/a` eaten under `options`,
    /// `/b` kept.
    fn judge(&self, probe: &Path, mode: &str, options: &[&str]) {
        self.judge_as(SPLIT, probe, mode, options);
    }

    /// [`Two::judge`] with the verdict `eaten` (for `/a`, `/b`).
    fn judge_as(&self, eaten: [bool; 2], probe: &Path, mode: &str, options: &[&str]) {
        let plain = self.flushes(&[], probe, mode, COUNT);
        self.judge_against(eaten, plain, probe, mode, COUNT, options);
    }

    /// [`Two::judge_as`] with the plain run's flushes measured already.
    fn judge_against(
        &self,
        eaten: [bool; 2],
        plain: (u64, u64),
        probe: &Path,
        mode: &str,
        count: u32,
        options: &[&str],
    ) {
        let quiet = self.flushes(&[], &dynamic_probe(), "none", count);
        let mut prefix = vec!["eatmydata"];
        prefix.extend(options);
        let under = self.flushes(&prefix, probe, mode, count);
        let what =
            format!("{options:?} {mode}: plain {plain:?}, no sync {quiet:?}, under {under:?}");
        let pairs = [(plain.0, quiet.0, under.0), (plain.1, quiet.1, under.1)];
        for (eaten, (plain, quiet, under)) in eaten.into_iter().zip(pairs) {
            let syncs = plain.saturating_sub(quiet);
            assert!(
                syncs >= u64::from(count),
                "{what}: the control did not flush for real"
            );
            let made = under.saturating_sub(quiet);
            if eaten {
                assert!(
                    made * 20 <= syncs,
                    "{what}: more than 5% reached the eaten disk"
                );
            } else if mode.starts_with("sh:") || mode == "sync" {
                // Flushes in flight are merged by the journal as their
                // timing falls (a plain run's count wanders too), and a
                // plain sync() flushes an idle file system more than its
                // syncfs does: each kept sync still makes at least one.
                assert!(
                    made >= u64::from(count),
                    "{what}: fewer flushes than syncs on a kept disk"
                );
            } else {
                assert!(
                    made * 100 >= syncs * 95,
                    "{what}: less than 95% on a kept disk"
                );
            }
        }
    }

    fn path(&self, which: char) -> String {
        let fs = if which == 'a' { &self.a } else { &self.b };
        fs.path().to_str().expect("a UTF-8 path").to_owned()
    }
}

fn dynamic_probe() -> PathBuf {
    probe("keep_mounts", &[])
}

fn static_probe() -> PathBuf {
    probe("keep_mounts", &["-static"])
}

#[test]
fn keep_keeps_fsyncs_on_its_mount_and_eats_the_others() {
    let two = Two::new("keep-fsync");
    let b = two.path('b');
    two.judge(&dynamic_probe(), "fsync", &["--keep", &b]);
}

#[test]
fn keep_keeps_o_dsync_writes_and_rwf_dsync_on_its_mount() {
    let two = Two::new("keep-dsync");
    let b = two.path('b');
    two.judge(&dynamic_probe(), "dsync", &["--keep", &b]);
    two.judge(&dynamic_probe(), "rwf", &["--keep", &b]);
}

/// `msync` is judged by the device of the mapped file (`/proc/self/maps`).
#[test]
fn keep_keeps_msync_of_a_mapping_of_its_mount() {
    let two = Two::new("keep-msync");
    let b = two.path('b');
    two.judge(&dynamic_probe(), "msync", &["--keep", &b]);
}

#[test]
fn only_eats_on_its_mount_and_keeps_the_others() {
    let two = Two::new("keep-only");
    let a = two.path('a');
    two.judge(&dynamic_probe(), "fsync", &["--only", &a]);
    two.judge(&dynamic_probe(), "dsync", &[&format!("--only={a}")]);
}

#[test]
fn a_static_program_keeps_by_mount_through_the_supervisor() {
    let two = Two::new("keep-static");
    let (a, b) = (two.path('a'), two.path('b'));
    two.judge(&static_probe(), "fsync", &["--keep", &b]);
    two.judge(&static_probe(), "fsync", &["--only", &a]);
}

/// A static program's `O_DSYNC` open keeps its flag on every mount under
/// `--keep` and `--only` (docs/sync-at-exit.md says why: the flag is in a
/// register, and the supervisor opens nothing for a program), so its
/// writes reach both disks; beside it, the same program's fsyncs on the
/// same two file systems are split by mount, so the supervisor was there.
#[test]
fn a_static_program_keeps_its_o_dsync_writes_on_every_mount() {
    let two = Two::new("keep-static-dsync");
    let (a, b) = (two.path('a'), two.path('b'));
    let probe = static_probe();
    for options in [["--keep", &b], ["--only", &a]] {
        two.judge_as([false, false], &probe, "dsync", &options);
        two.judge(&probe, "fsync", &options);
    }
    // And the user is told so.
    let told = Run::new(command())
        .args(["--keep", &b])
        .arg(&probe)
        .args(["none", "1", "/dev/null"])
        .run()
        .success();
    let notice = "an O_SYNC or O_DSYNC open keeps its flag on every mount";
    assert!(told.stderr().contains(notice), "{}", told.stderr());
}

/// io_uring fsync entries (through liburing and through `syscall()`) and
/// Linux AIO flushes: each kept one still reaches the disk; their flushes
/// are merged by timing, so kept is judged as at least one per sync.
#[test]
fn keep_keeps_io_uring_and_linux_aio_flushes_on_its_mount() {
    let two = Two::new("keep-async");
    let b = two.path('b');
    let uring = probe("uring_eaten", &["-luring"]);
    for script in [r#"sh:"$P" each "$f" "$n""#, r#"sh:"$P" raw "$f" "$n""#] {
        two.judge(&uring, script, &["--keep", &b]);
    }
    let aio = probe("linux_aio", &["-l:libaio.so.1"]);
    two.judge(&aio, r#"sh:"$P" "$f" "$n" >/dev/null"#, &["--keep", &b]);
}

/// `sync()` under `--keep` is a `syncfs` of the kept mount alone. Its
/// control syncs the whole machine: it runs while no other test counts
/// flushes, and before this test's own first count (`LoopFs` says why).
#[test]
fn sync_under_keep_flushes_the_kept_mount_alone() {
    let two = Two::new("keep-sync");
    let probe = dynamic_probe();
    let plain = whole_machine_sync(|| two.flushes(&[], &probe, "sync", 20));
    let b = two.path('b');
    two.judge_against(SPLIT, plain, &probe, "sync", 20, &["--keep", &b]);
}

/// A list that cannot be read keeps every sync (issue 45): under
/// `EATMYDATA_KEEP` holding a relative entry, one that names no mount, or
/// an empty one (`B:`), and `EATMYDATA_ONLY` holding a relative one, a
/// dynamic program's fsyncs (the library) and a static one's (the
/// supervisor) reach both disks, at least 95% of a plain run's flushes
/// above the no-sync control, and `-v` and `--report` name the entry
/// and why. Beside them the control: `EATMYDATA_KEEP=B`, read, eats on
/// `/a` (without `--report`, whose estimate flushes where syncs were
/// eaten).
#[test]
fn a_list_that_cannot_be_read_keeps_every_sync_and_says_which_entry() {
    let two = Two::new("keep-unread");
    let (dynamic, fixed) = (dynamic_probe(), static_probe());
    let plain = two.flushes(&[], &dynamic, "fsync", COUNT);
    let quiet = two.flushes(&[], &dynamic, "none", COUNT);
    let b = two.path('b');
    let empty = format!("{b}:");
    let cases = [
        ("EATMYDATA_KEEP", "data", "is relative", &fixed),
        ("EATMYDATA_KEEP", "/nonexistent", "names no mount", &dynamic),
        ("EATMYDATA_KEEP", &empty, "cannot be parsed", &fixed),
        ("EATMYDATA_KEEP", &empty, "cannot be parsed", &dynamic),
        ("EATMYDATA_ONLY", "a", "is relative", &dynamic),
        ("EATMYDATA_KEEP", &b, "", &dynamic),
    ];
    for (name, value, why, probe) in cases {
        // --report's estimate times real flushes where syncs were eaten:
        // not in the control.
        let options = match why.is_empty() {
            true => &["eatmydata", "-v"][..],
            false => &["eatmydata", "-v", "--report"],
        };
        let (under, said) = two.flushes_with(options, &[(name, value)], probe, "fsync", COUNT);
        let what = format!(
            "{name}={value} {}: plain {plain:?}, no sync {quiet:?}, under {under:?}",
            probe.display()
        );
        eprintln!("keep: {what}");
        let pairs = [(plain.0, quiet.0, under.0), (plain.1, quiet.1, under.1)];
        for (at, (plain, quiet, under)) in pairs.into_iter().enumerate() {
            let syncs = plain.saturating_sub(quiet);
            assert!(
                syncs >= u64::from(COUNT),
                "{what}: the control did not flush"
            );
            let made = under.saturating_sub(quiet);
            if why.is_empty() && at == 0 {
                assert!(made * 20 <= syncs, "{what}: the control ate nothing on /a");
            } else {
                assert!(made * 100 >= syncs * 95, "{what}: less than 95% kept");
            }
        }
        let told = format!("{name} entry {value:?} {why}");
        if why.is_empty() {
            assert!(!said.contains("every sync is kept"), "{what}: {said}");
            continue;
        }
        // Under -v, and in the report: the command's reading, which the
        // library's lines repeat.
        let verbose = format!("eatmydata: {told}");
        let reported = format!("eatmydata: report: {told}");
        assert!(said.contains(&verbose), "{what}: {said}");
        assert!(said.contains(&reported), "{what}: {said}");
    }
}

#[test]
fn a_path_that_is_not_there_is_bad_usage() {
    let probe = dynamic_probe();
    let run = Run::new(command())
        .args(["--keep", "/no/such/place", "--"])
        .arg(&probe)
        .args(["none", "1", "/dev/null"])
        .run();
    assert_eq!(run.output.status.code(), Some(2));
    assert!(
        run.stderr()
            .starts_with("eatmydata: --keep /no/such/place: No such file or directory"),
        "{}",
        run.stderr()
    );
    // The same, well formed, runs: the refusal was the path's.
    let fine = Run::new(command())
        .args(["--keep", "/", "--"])
        .arg(&probe)
        .args(["none", "1", "/dev/null"])
        .run();
    assert!(fine.output.status.success(), "{}", fine.stderr());
}

/// Under kept mounts, a sync the library eats is told by its mount and
/// kind (one `statx`) and its open flags (`fcntl`: `O_PATH`), not by the
/// `ioctl` it asks without (`src/preload/sync.rs`): every answer of the
/// error probe (a closed, an `O_PATH` descriptor, pipes, sockets, devices,
/// `/proc`, a folder, tmpfs) is the kernel's whichever mounts are kept or
/// eaten, and the successful fsyncs that reach the kernel are those of the
/// kept mounts: the probe's file and folder (on one mount, the scratch
/// folder's) and its tmpfs file.
#[test]
fn kept_mounts_change_no_answer_a_sync_gets() {
    let dir = TempDir::new("keep-errors");
    let program = probe("sync_errors", &[]);
    let run = |scope: Option<(&str, &Path)>| {
        let mut run = Run::new(&program)
            .arg(dir.join("data"))
            .cwd(dir.path())
            .trace(&["fsync"]);
        if let Some((name, value)) = scope {
            run = run.preload(true).env(name, value);
        }
        let outcome = run.run().success();
        let made = outcome.calls_of("fsync");
        let flushed = made.iter().filter(|call| call.ends_with("= 0")).count();
        (outcome.stdout(), flushed)
    };
    let (plain, flushed) = run(None);
    assert!(plain.contains("fsync(O_PATH): EBADF"), "{plain}");
    // The file and the folder, and the tmpfs file where /dev/shm is one.
    let tmpfs = flushed
        .checked_sub(2)
        .expect("the control's file and folder");
    let proc_fs = Path::new("/proc");
    for (name, value, kept) in [
        ("EATMYDATA_KEEP", proc_fs, 0),
        ("EATMYDATA_KEEP", dir.path(), 2),
        ("EATMYDATA_ONLY", dir.path(), tmpfs),
        ("EATMYDATA_ONLY", proc_fs, 2 + tmpfs),
    ] {
        let (under, flushed) = run(Some((name, value)));
        let what = format!("{name}={}", value.display());
        assert_eq!(under, plain, "{what}: an answer changed");
        assert_eq!(flushed, kept, "{what}: the fsyncs made");
    }
}
