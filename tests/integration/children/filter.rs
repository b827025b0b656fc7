//! Under the `eatmydata` command on a host, a program that goes without
//! the library at an exec (a static or an i386 program started by a
//! shell) gets the command's plain seccomp filter from the library, just
//! before the exec, where the process has none (issue 36): its syncs are
//! eaten, where before they reached the disk; what it prints and its
//! status stay as without eatmydata. Not for a program that keeps the
//! library, nor for a set-id one that `no_new_privs` would strip.
//! posix_spawn's children get it where the hook makes them (`spawn.rs`).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::common::{Flushes, Outcome, Run, TempDir, command, library, nosync, probe};
use crate::loopfs::LoopFs;

/// fsyncs of one run: each a 4 KiB write and its fsync.
pub(super) const FSYNCS: u64 = 40;

/// `sh -c LINE`.
fn sh(line: &str) -> Vec<String> {
    vec!["/bin/sh".into(), "-c".into(), line.into()]
}

/// The flushes of `run`, given a file on a disk of its own, and what it
/// printed.
fn counted(label: &str, run: impl FnOnce(&Path) -> Outcome) -> (u64, Outcome) {
    let disk = LoopFs::new(label, 32);
    let mut outcome = None;
    let flushes = disk.flushes_during(|| outcome = Some(run(&disk.join("data"))));
    (flushes, outcome.unwrap())
}

/// Status, stdout and stderr, to compare.
pub(super) fn shown(outcome: &Outcome) -> (Option<i32>, String, String) {
    let status = outcome.output.status.code();
    (status, outcome.stdout(), outcome.stderr())
}

#[test]
fn a_static_and_an_i386_child_of_a_shell_have_their_syncs_eaten() {
    library();
    for (label, program) in [
        ("static", probe("container_parity", &["-static"])),
        ("i386", probe("container_parity", &["-m32"])),
    ] {
        let line = |file: &Path| format!("{} loop {} {FSYNCS}", program.display(), file.display());
        let printed = format!("synced {FSYNCS}\n");
        eaten_in_a_child(label, |file| sh(&line(file)), &printed);
    }
}

/// Judges `args(file)`, a program whose child makes [`FSYNCS`] fsyncs on
/// `file`, on a disk of its own: without eatmydata (the control, which
/// prints `printed`), under `nosync` (the floor), under the command with
/// `--no-seccomp` (the library alone, before the child filter: its syncs
/// reach the disk) and under the command (eaten, the same output).
pub(super) fn eaten_in_a_child(label: &str, args: impl Fn(&Path) -> Vec<String>, printed: &str) {
    let (control, plain) = counted(label, |file| {
        Run::new(&args(file)[0]).args(&args(file)[1..]).run()
    });
    let (floor, _) = counted(label, |file| Run::new(nosync()).args(args(file)).run());
    let (before, _) = counted(label, |file| {
        Run::new(command())
            .arg("--no-seccomp")
            .args(args(file))
            .run()
    });
    let (eaten, ours) = counted(label, |file| Run::new(command()).args(args(file)).run());
    assert_eq!(plain.stdout(), printed, "{label} control");
    assert_eq!(shown(&ours), shown(&plain), "{label}: parity");
    eprintln!("flushes: {label}: the library alone, without the filter: {before}");
    assert!(
        before.saturating_sub(floor) >= FSYNCS / 2,
        "{label}: without the filter its syncs reach the disk: {before} flushes, floor {floor}"
    );
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(FSYNCS, label);
}

/// `seccomp_sync whoami` (euid, NoNewPrivs, Seccomp) run by `sh -c`,
/// with eatmydata (and `options`) or without, behind `runner`.
fn whoami(runner: &[&str], eatmydata: Option<&[&str]>, line: &str) -> Outcome {
    let mut run = Run::new(runner[0]).args(&runner[1..]);
    if let Some(options) = eatmydata {
        run = run.arg(command()).args(options);
    }
    run.args(sh(line)).run()
}

fn whoami_line(program: &Path) -> String {
    format!("{} whoami", program.display())
}

const ROOT: &[&str] = &["env", "--"];

/// setpriv with CAP_SYS_ADMIN out of the bounding set: root without it,
/// for whom a filter needs `no_new_privs`.
pub(super) const NO_SYS_ADMIN: &[&str] = &[
    "setpriv",
    "--bounding-set=-sys_admin",
    "--inh-caps=-sys_admin",
    "--",
];

/// `seccomp_sync` built dynamic, and static.
pub(super) fn whoami_probes() -> (PathBuf, PathBuf) {
    (
        probe("seccomp_sync", &[]),
        probe("seccomp_sync", &["-static"]),
    )
}

pub(super) fn state(euid: u32, nnp: u8, seccomp: u8) -> String {
    format!("euid={euid}\nNoNewPrivs:\t{nnp}\nSeccomp:\t{seccomp}\n")
}

#[test]
fn only_a_child_that_goes_without_the_library_gets_the_filter() {
    library();
    let (dynamic, fixed) = whoami_probes();
    // The control: no filter, in either.
    for program in [&dynamic, &fixed] {
        let control = whoami(ROOT, None, &whoami_line(program));
        assert_eq!(control.stdout(), state(0, 0, 0));
    }
    // One that keeps the library: as without eatmydata.
    let kept = whoami(ROOT, Some(&[]), &whoami_line(&dynamic));
    assert_eq!(shown(&kept), (Some(0), state(0, 0, 0), String::new()));
    // One that goes without it: filtered; with CAP_SYS_ADMIN, without
    // no_new_privs, and without it, with.
    let filtered = whoami(ROOT, Some(&[]), &whoami_line(&fixed));
    assert_eq!(shown(&filtered), (Some(0), state(0, 0, 2), String::new()));
    let filtered = whoami(NO_SYS_ADMIN, Some(&[]), &whoami_line(&fixed));
    assert_eq!(filtered.stdout(), state(0, 1, 2));
    // Durability asked back in its environment, or --no-seccomp: none.
    let line = format!("EATMYDATA_DISABLE=1 {}", whoami_line(&fixed));
    assert_eq!(whoami(ROOT, Some(&[]), &line).stdout(), state(0, 0, 0));
    let off = whoami(ROOT, Some(&["--no-seccomp"]), &whoami_line(&fixed));
    assert_eq!(off.stdout(), state(0, 0, 0));
}

/// A static program, setuid to nobody, in a folder of its own.
pub(super) fn setuid_probe(dir: &TempDir) -> PathBuf {
    let program = dir.join("setuid-probe");
    fs::copy(probe("seccomp_sync", &["-static"]), &program).unwrap();
    std::os::unix::fs::chown(&program, Some(65534), Some(65534)).unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o4755)).unwrap();
    program
}

#[test]
fn a_setuid_child_keeps_its_privileges() {
    library();
    let dir = TempDir::new("children-setuid");
    let line = whoami_line(&setuid_probe(&dir));
    // Without CAP_SYS_ADMIN the filter would need no_new_privs, which
    // would keep the bit from working: none, and the same as without.
    let control = whoami(NO_SYS_ADMIN, None, &line);
    assert_eq!(control.stdout(), state(65534, 0, 0), "the setuid bit works");
    let ours = whoami(NO_SYS_ADMIN, Some(&[]), &line);
    assert_eq!(shown(&ours), shown(&control));
    let said = whoami(NO_SYS_ADMIN, Some(&["-v"]), &line);
    assert_eq!(said.stdout(), control.stdout());
    assert!(said.stderr().contains("set-user-ID"), "{}", said.stderr());
    // With it, the filter goes on without no_new_privs: the bit still works.
    let root = whoami(ROOT, Some(&[]), &line);
    assert_eq!(root.stdout(), state(65534, 0, 2));
    // File capabilities, which no_new_privs would take away too.
    let capable = dir.join("capable-probe");
    fs::copy(probe("seccomp_sync", &["-static"]), &capable).unwrap();
    let setcap = Run::new("setcap").arg("cap_net_raw+ep").arg(&capable).run();
    assert!(setcap.output.status.success(), "{}", setcap.stderr());
    let said = whoami(NO_SYS_ADMIN, Some(&["-v"]), &whoami_line(&capable));
    assert_eq!(said.stdout(), state(0, 0, 0));
    assert!(
        said.stderr().contains("file capabilities"),
        "{}",
        said.stderr()
    );
}

#[test]
fn verbose_says_what_each_such_child_got() {
    library();
    let program = probe("container_parity", &["-static"]);
    let line = format!("{} true", program.display());
    let quiet = Run::new(command()).args(sh(&line)).run().success();
    assert_eq!(quiet.stderr(), "", "said only under -v");
    let said = Run::new(command())
        .arg("-v")
        .args(sh(&line))
        .run()
        .success();
    let stderr = said.stderr();
    // From a checkout under /var/tmp, -v also names the copies of the
    // library it passed over (not root's to load): not this test's.
    let passed_over = |line: &&str| line.starts_with("eatmydata: passed over ");
    let lines: Vec<&str> = stderr.lines().filter(|l| !passed_over(l)).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("eatmydata: running "), "{lines:?}");
    assert_eq!(
        lines[1],
        format!(
            "eatmydata: {} runs without the library (a static program, whose own \
             children would inherit it unchecked); the plain seccomp filter answers its \
             syncs instead",
            program.display()
        )
    );
}

/// GNU make starts a command without shell syntax by posix_spawn, whose
/// child no hook reaches: the hook makes it, and it takes the filter
/// first (`spawn.rs` has the rest), said under -v.
#[test]
fn make_s_posix_spawn_child_is_filtered() {
    library();
    let dir = TempDir::new("children-spawn");
    let program = probe("seccomp_sync", &["-static"]);
    let makefile = dir.join("Makefile");
    fs::write(
        &makefile,
        format!("all:\n\t@{} whoami\n", program.display()),
    )
    .unwrap();
    let make = ["make", "-s", "-f", makefile.to_str().unwrap()];
    let control = Run::new(make[0]).args(&make[1..]).run().success();
    assert_eq!(control.stdout(), state(0, 0, 0));
    let quiet = Run::new(command()).args(make).run().success();
    assert_eq!(shown(&quiet), (Some(0), state(0, 0, 2), String::new()));
    let said = Run::new(command()).arg("-v").args(make).run().success();
    assert_eq!(said.stdout(), state(0, 0, 2));
    let line = format!(
        "eatmydata: {} runs without the library (a static program, whose own children \
         would inherit it unchecked); the plain seccomp filter answers its syncs instead",
        program.display()
    );
    assert!(
        said.stderr().lines().any(|said| said == line),
        "{}",
        said.stderr()
    );
}
