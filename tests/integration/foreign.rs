//! Programs the library cannot be loaded into are treated like static ones
//! (the seccomp filter, one notice, no `LD_PRELOAD`): a 32-bit program,
//! whose loader would print an error and ignore the 64-bit library; a musl
//! program when the library found is one musl's loader would die of; a
//! program run by a loader that is neither glibc's nor musl's. The oracle
//! is the flush counter of a loop device the probe writes to.

use std::path::{Path, PathBuf};

use crate::common::{
    Flushes, Libc, Outcome, Run, command, library, nosync, probe, probe_for, whole_machine_sync,
};
use crate::loopfs::LoopFs;

/// How many times each count runs `sync_calls` (six sync calls, about as
/// many flushes, each time): enough for the judge to tell.
const ROUNDS: usize = 4;

/// The flushes `sync_calls` (the program given) causes on a disk of its
/// own, run [`ROUNDS`] times as `run` makes it, and what it printed the
/// last time. The probe calls sync(2) where nothing stops it: the control
/// counts are taken with [`control_flushes_of`].
fn flushes_of(label: &str, mut run: impl FnMut(&Path) -> Outcome) -> (u64, Outcome) {
    let disk = LoopFs::new(label, 64);
    let mut outcome = None;
    let flushes = disk.flushes_during(|| {
        for round in 0..ROUNDS {
            outcome = Some(run(&disk.join(format!("data{round}"))));
        }
    });
    (flushes, outcome.unwrap())
}

/// [`flushes_of`] for a run whose sync(2) reaches the kernel: no other
/// test counts flushes meanwhile.
fn control_flushes_of(label: &str, run: impl FnMut(&Path) -> Outcome) -> (u64, Outcome) {
    whole_machine_sync(|| flushes_of(label, run))
}

/// The floor: the same files written by the native `sync_calls` without
/// syncing (under `nosync`).
fn floor_of(label: &str) -> u64 {
    let program = probe("sync_calls", &[]);
    flushes_of(label, |data| {
        Run::new(nosync()).arg(&program).arg(data).run().success()
    })
    .0
}

/// Checks that `program` (a sync_calls probe) flushes without eatmydata,
/// not under it, and that the command said `notice` and nothing else but
/// the -v line; returns the stderr lines.
fn check_filtered(label: &str, program: &Path, envs: &[(&str, &Path)], notice: &str) {
    let (control, _) =
        control_flushes_of(label, |data| Run::new(program).arg(data).run().success());
    let floor = floor_of(label);
    let (eaten, run) = flushes_of(label, |data| {
        let mut run = Run::new(command()).arg("-v").arg(program).arg(data);
        for (name, value) in envs {
            run = run.env(name, value);
        }
        run.run().success()
    });
    // fsync, fdatasync, syncfs, sync_file_range, sync, msync: about one
    // flush each without the library; with it, what the floor makes.
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(6 * ROUNDS as u64, label);
    // From a checkout under /var/tmp, -v also names the copies of the
    // library it passed over (not root's to load): not this test's.
    let said: Vec<String> = run
        .stderr()
        .lines()
        .filter(|line| !line.starts_with("eatmydata: passed over "))
        .map(str::to_owned)
        .collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said[0].contains(notice), "{said:?}");
    assert!(
        said[1].contains("without the library") && said[1].contains("seccomp filter"),
        "{said:?}"
    );
}

/// A program linked with AddressSanitizer exits 1 when anything is
/// preloaded ("ASan runtime does not come first in initial library
/// list"), which `eatmydata ./program` did: it gets seccomp mode instead,
/// said by -v, and without -v the same status, output and error output as
/// without eatmydata, its syncs answered before the disk.
#[test]
fn a_sanitizer_program_gets_the_filter_not_the_library() {
    library();
    let program = probe("sync_calls", &["-fsanitize=address"]);
    // What the library alone does to it: the sanitizer refuses to run.
    let preloaded = Run::new(&program).arg("/dev/null").preload(true).run();
    assert_eq!(preloaded.output.status.code(), Some(1));
    assert!(
        preloaded
            .stderr()
            .contains("ASan runtime does not come first"),
        "{}",
        preloaded.stderr()
    );
    check_filtered("asan", &program, &[], "linked with a sanitizer runtime");
    let (control, plain) =
        control_flushes_of("asan-parity", |data| Run::new(&program).arg(data).run());
    let (eaten, ours) = flushes_of("asan-parity", |data| {
        Run::new(command()).arg(&program).arg(data).run()
    });
    assert_eq!(
        (ours.output.status, ours.stdout(), ours.stderr()),
        (plain.output.status, plain.stdout(), plain.stderr())
    );
    Flushes {
        control,
        floor: floor_of("asan-parity"),
        eaten,
    }
    .assert_eaten(6 * ROUNDS as u64, "asan parity");
}

#[test]
fn a_32_bit_program_gets_the_filter_and_a_clean_stderr() {
    library();
    let program = probe("sync_calls", &["-m32"]);
    // The control: preloaded the plain way, the loader refuses the library
    // aloud and the syncs reach the disk.
    let (flushes, preloaded) = control_flushes_of("thirty-two-preloaded", |data| {
        Run::new(&program).arg(data).preload(true).run().success()
    });
    assert!(
        preloaded.stderr().contains("wrong ELF class"),
        "{}",
        preloaded.stderr()
    );
    assert!(flushes >= 6 * ROUNDS as u64, "{flushes} flushes");
    check_filtered("thirty-two", &program, &[], "is a 32-bit program");
}

#[test]
fn a_library_musl_cannot_load_never_reaches_a_musl_program() {
    let old = probe(
        "glibc_only_lib",
        &["-shared", "-fPIC", "-O2", "-D_FORTIFY_SOURCE=2"],
    );
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    // The control: preloaded by hand, musl's loader kills the program.
    let killed = Run::new(&program)
        .arg("/nonexistent/never-written")
        .env("LD_PRELOAD", &old)
        .run();
    assert_eq!(
        killed.output.status.code(),
        Some(127),
        "{}",
        killed.stderr()
    );
    assert!(
        killed.stderr().contains("__fprintf_chk"),
        "{}",
        killed.stderr()
    );
    check_filtered(
        "musl-old-library",
        &program,
        &[("EATMYDATA_LIBRARY", &old)],
        "is a musl program",
    );
}

#[test]
fn a_program_whose_loader_is_unknown_gets_the_filter_not_the_library() {
    library();
    // glibc's loader under another name, as a program built for another
    // libc would name its own: the command cannot tell what it will do.
    let loader = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ld-other.so.1");
    if loader.symlink_metadata().is_err() {
        let _ = std::os::unix::fs::symlink("/lib64/ld-linux-x86-64.so.2", &loader);
    }
    let flag = format!("-Wl,--dynamic-linker={}", loader.display());
    let program = probe("sync_calls", &[&flag]);
    check_filtered(
        "unknown-loader",
        &program,
        &[],
        "run by a loader that is neither glibc's nor musl's",
    );
}
