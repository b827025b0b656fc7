//! What a program run by the `eatmydata` command starts sees what it
//! would without eatmydata (issue 36): the library decides at each exec
//! whether the child keeps it. An i386 and an ASan program started by a
//! shell, `ldd` of a dynamic program, and a chroot made by debootstrap
//! running its shell and apt:
//! the same status, stdout and stderr as the control run without the
//! command. The controls are checked to succeed, and the library alone is
//! shown to break the first cases when it stays (what it did before).
//! Their syncs: `filter.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Outcome, Run, TempDir, command, library, probe};

/// What a spawned child starts with by its attributes and file actions.
mod attributes;
/// A child that goes without the library gets the plain filter instead.
mod filter;
/// The PATH search that tells which program an execvp or posix_spawnp runs.
mod path_search;
/// posix_spawn's children too, made by the hook or from a thread.
mod spawn;
/// What another user sees of such a child: its own arguments, not its environment.
mod unseen;

/// The probe's fsync loop on `file`, ten times.
fn looping(program: &Path, file: &Path) -> String {
    format!("{} loop {} 10", program.display(), file.display())
}

/// `args` without and with the command: status, stdout and stderr alike,
/// and the control succeeded.
fn same(label: &str, args: &[String]) -> (Outcome, Outcome) {
    let control = Run::new(&args[0]).args(&args[1..]).run();
    let eaten = Run::new(command()).args(args).run();
    let show = |o: &Outcome| {
        format!(
            "{:?} {:?} {:?}",
            o.output.status.code(),
            o.stdout(),
            o.stderr()
        )
    };
    assert_eq!(
        control.output.status.code(),
        Some(0),
        "{label} control: {}",
        show(&control)
    );
    assert_eq!(
        (
            control.output.status.code(),
            control.stdout(),
            control.stderr()
        ),
        (eaten.output.status.code(), eaten.stdout(), eaten.stderr()),
        "{label}: under eatmydata {}",
        show(&eaten)
    );
    (control, eaten)
}

#[test]
fn what_a_shell_starts_is_as_without_eatmydata() {
    library();
    let dir = TempDir::new("children");
    let file = dir.join("synced");
    let i386 = probe("container_parity", &["-m32"]);
    let asan = probe("container_parity", &["-fsanitize=address"]);
    let sh = |line: String| vec!["/bin/sh".to_owned(), "-c".to_owned(), line];
    same("sh -c i386", &sh(looping(&i386, &file)));
    same("sh -c ./asan", &sh(looping(&asan, &file)));
    // The library kept in the i386 program, as a shell's child had it
    // before: what the check avoids.
    let kept = Run::new(&i386)
        .args(["loop", file.to_str().unwrap(), "10"])
        .preload(true)
        .run();
    assert!(
        kept.stderr().contains("wrong ELF class"),
        "{}",
        kept.stderr()
    );
}

#[test]
fn ldd_lists_what_it_would_without_eatmydata() {
    library();
    let program = probe("container_parity", &[]);
    let line = format!(
        "ldd {} | while read -r l; do echo \"${{l%% (*}}\"; done",
        program.display()
    );
    let (control, _) = same("ldd", &["/bin/sh".to_owned(), "-c".to_owned(), line]);
    assert!(
        control.stdout().contains("libc.so.6"),
        "{}",
        control.stdout()
    );
}

#[test]
fn a_debootstrap_chroot_runs_its_shell_and_apt_as_without_eatmydata() {
    library();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/debian-rootfs");
    let output = Command::new(script)
        .arg("none")
        .output()
        .expect("run debian-rootfs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let line = "echo in the chroot; apt-get --version | head -n 1";
    let args = ["/usr/sbin/chroot", &tree, "/bin/sh", "-c", line].map(str::to_owned);
    let (control, _) = same("chroot", &args);
    assert!(
        control.stdout().starts_with("in the chroot\napt "),
        "{}",
        control.stdout()
    );
}

/// A shell that executes a static init (tini, as entry scripts do): the
/// program tini runs is judged in its place. A dynamic one keeps the
/// library (it maps it, where without eatmydata it maps nothing; before,
/// it went without, as under any static program); an i386 one starts as
/// without eatmydata.
#[test]
fn what_a_static_init_runs_is_judged_in_its_place() {
    judged_in_its_place(Path::new("/usr/bin/tini-static"), "-s --", "tini");
}

/// An entry script's `exec gosu USER PROGRAM` (the official postgres,
/// mariadb and redis images end so; gosu is a static Go program): the
/// same.
#[test]
fn what_gosu_runs_is_judged_in_its_place() {
    judged_in_its_place(Path::new("/usr/sbin/gosu"), "root", "gosu");
}

/// `sh -c 'exec LAUNCHER WORDS PROGRAM'` under eatmydata beside the same
/// alone: a dynamic PROGRAM maps the library, an i386 one runs as alone.
/// And `eatmydata LAUNCHER WORDS PROGRAM`: the command judges PROGRAM
/// too, so a dynamic one has the library and no filter (before, the
/// static launcher took seccomp mode, and PROGRAM went without).
fn judged_in_its_place(launcher: &Path, words: &str, package: &str) {
    library();
    assert!(
        launcher.exists(),
        "{} (apt-get install {package})",
        launcher.display()
    );
    let sh = |line: String| vec!["/bin/sh".to_owned(), "-c".to_owned(), line];
    let exec = |program: String| format!("exec {} {words} {program}", launcher.display());
    let dynamic = probe("container_parity", &[]);
    let args = sh(exec(format!("{} mapped", dynamic.display())));
    let control = Run::new(&args[0]).args(&args[1..]).run();
    let eaten = Run::new(command()).args(&args).run();
    assert_eq!(control.stdout(), "mapped=\n", "{}", control.stderr());
    let mapped = eaten.stdout();
    assert!(
        mapped.starts_with("mapped=/") && mapped.contains("libeatmydata"),
        "under eatmydata: {mapped:?} {}",
        eaten.stderr()
    );
    assert_eq!(
        (eaten.output.status.code(), eaten.stderr()),
        (control.output.status.code(), control.stderr())
    );
    let direct: Vec<String> = std::iter::once(launcher.display().to_string())
        .chain(words.split(' ').map(str::to_owned))
        .chain([dynamic.display().to_string(), "mapped".to_owned()])
        .collect();
    let control = Run::new(&direct[0]).args(&direct[1..]).run();
    let eaten = Run::new(command()).arg("-v").args(&direct).run();
    assert_eq!(control.stdout(), "mapped=\n", "{}", control.stderr());
    let mapped = eaten.stdout();
    assert!(
        mapped.starts_with("mapped=/") && mapped.contains("libeatmydata"),
        "eatmydata {direct:?}: {mapped:?} {}",
        eaten.stderr()
    );
    let said = eaten.stderr();
    assert!(
        said.contains("judged in its place") && !said.contains("seccomp"),
        "{said}"
    );
    let dir = TempDir::new(&format!("children-{package}"));
    let i386 = probe("container_parity", &["-m32"]);
    let line = exec(looping(&i386, &dir.join("synced")));
    same(&format!("{package} i386"), &sh(line));
}
