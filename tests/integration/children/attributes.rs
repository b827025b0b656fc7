//! What a `posix_spawn` child that gets the filter starts with, by its
//! attributes and file actions, and what the caller is left with,
//! against a control without eatmydata: `probes/spawn_attrs.c`. In a
//! glibc program the hook makes the child itself, as glibc does; in a
//! musl one, libc makes it on a thread made for the call
//! (`src/preload/c/spawn.c`).

use std::path::Path;

use super::filter::{NO_SYS_ADMIN, shown};
use super::spawn::spawned;
use crate::common::{Libc, Outcome, Run, TempDir, command, library, probe, probe_for};

/// `spawn_attrs CASE` behind `runner`, under eatmydata (with
/// `options`) or without: the lines of the filter (the child's
/// no_new_privs and seccomp mode), and the others: the child's signal
/// mask, ignored and caught signals, parent, process group, session,
/// scheduling policy, folder and descriptors, by the attributes and
/// file actions of CASE, and the caller's own threads (the one made for
/// the call gone once the child has ended), signal mask, filter and
/// errno after the call; or the error of a file action that fails in the
/// child. DIR is `dir`.
fn attrs(
    dir: &Path,
    runner: &[&str],
    eatmydata: Option<&[&str]>,
    case: &str,
) -> (Outcome, String, String) {
    let fixed = probe("spawn_attrs", &["-static"]);
    let mut run = Run::new(runner[0]).args(&runner[1..]);
    if let Some(options) = eatmydata {
        run = run.arg(command()).args(options);
    }
    let run = run.arg(probe("spawn_attrs", &[])).args([
        case,
        fixed.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    let outcome = run.run();
    let stdout = outcome.stdout();
    let (filter, rest): (Vec<&str>, Vec<&str>) = stdout
        .lines()
        .partition(|line| line.starts_with("Seccomp:") || line.starts_with("NoNewPrivs:"));
    let (filter, rest) = (filter.join(" "), rest.join("\n"));
    (outcome, filter, rest)
}

/// Only the filter differs: in the child alone.
#[test]
fn attributes_and_file_actions_reach_the_child_as_without_eatmydata() {
    library();
    let dir = TempDir::new("children-spawn-attrs");
    let attrs = |runner, eatmydata, case| attrs(dir.path(), runner, eatmydata, case);
    for case in ["plain", "attrs", "mask", "setsid", "actions"] {
        let (control, control_filter, shown) = attrs(&["env"], None, case);
        let (ours, filter, ours_shown) = attrs(&["env"], Some(&[]), case);
        assert_eq!(control.output.status.code(), Some(0), "{case}: {shown}");
        assert_eq!(ours_shown, shown, "{case}");
        assert_eq!(ours.stderr(), control.stderr(), "{case}");
        assert_eq!(control_filter, "NoNewPrivs:\t0 Seccomp:\t0", "{case}");
        assert_eq!(filter, "NoNewPrivs:\t0 Seccomp:\t2", "{case}");
        for line in ["Threads:\t1", "caller_seccomp=0 caller_nnp=0"] {
            assert!(shown.contains(line), "{case}: {shown}");
        }
        // errno as libc's call leaves it: the caller's, but for the
        // closefrom action, whose child (sharing the caller's memory)
        // leaves EBADF.
        let errno = if case == "actions" { "EBADF" } else { "EDOM" };
        assert!(shown.contains(&format!("errno={errno}")), "{case}: {shown}");
    }
    // Each branch of the file actions and attributes the child made by
    // the hook takes, against the real call.
    for case in ["schedparam", "dup2-same", "open-lowest"] {
        let (control, _, shown) = attrs(&["env"], None, case);
        let (ours, filter, ours_shown) = attrs(&["env"], Some(&[]), case);
        assert_eq!(control.output.status.code(), Some(0), "{case}: {shown}");
        assert_eq!(
            (ours_shown, ours.stderr()),
            (shown, control.stderr()),
            "{case}"
        );
        assert_eq!(filter, "NoNewPrivs:\t0 Seccomp:\t2", "{case}");
    }
    // Without CAP_SYS_ADMIN: no_new_privs too, on the child alone.
    let (_, control_filter, shown) = attrs(NO_SYS_ADMIN, None, "plain");
    let (_, filter, ours_shown) = attrs(NO_SYS_ADMIN, Some(&[]), "plain");
    assert_eq!(ours_shown, shown);
    assert!(shown.contains("caller_seccomp=0 caller_nnp=0"), "{shown}");
    assert_eq!(control_filter, "NoNewPrivs:\t0 Seccomp:\t0");
    assert_eq!(filter, "NoNewPrivs:\t1 Seccomp:\t2");
    // No room for the child's stack (the address space capped): the
    // child goes unfiltered, said under -v, and otherwise as without.
    let (control, control_filter, shown) = attrs(&["env"], None, "no-room");
    let (said, filter, ours_shown) = attrs(&["env"], Some(&["-v"]), "no-room");
    assert_eq!(control.output.status.code(), Some(0), "{shown}");
    assert_eq!((ours_shown, filter), (shown, control_filter));
    assert!(
        said.stderr().contains("no stack could be mapped"),
        "{}",
        said.stderr()
    );
    // A file action that fails in the child fails the call, as without.
    for case in [
        "ENOENT-chdir",
        "ENOENT-open",
        "ENOTTY-tcsetpgrp",
        "EBADF-close",
    ] {
        let (control, _, shown) = attrs(&["env"], None, case);
        let error = case.split('-').next().unwrap();
        assert_eq!(shown, format!("posix_spawn: {error}"), "{case}");
        let (said, _, ours_shown) = attrs(&["env"], Some(&["-v"]), case);
        assert_eq!(ours_shown, shown, "{case}");
        assert_eq!(said.output.status.code(), control.output.status.code());
        let routed = said.stderr().contains("runs without the library");
        assert!(routed, "{case}: {}", said.stderr());
    }
}

/// `spawn_attrs CASE PROGRAM`, the caller built for `libc`, under
/// eatmydata or without.
fn spawning(libc: Libc, eatmydata: bool, case: &str) -> Outcome {
    let fixed = probe("spawn_attrs", &["-static"]);
    let mut run = match eatmydata {
        true => Run::new(command()),
        false => Run::new("env"),
    };
    run = run.arg(probe_for(libc, "spawn_attrs", &[]));
    run.args([case, fixed.to_str().unwrap()]).run()
}

/// Four threads spawning at once (100 children), in a glibc program and
/// in a musl one: every child runs under the filter, and no thread is
/// left once the children have ended (musl's calls each had one).
#[test]
fn threads_spawning_at_once_each_have_their_children_filtered() {
    library();
    for libc in [Libc::Glibc, Libc::Musl] {
        let counted = |filtered| {
            let out = format!("filtered {filtered} of 100\nThreads:\t1\n");
            (Some(0), out, String::new())
        };
        let control = spawning(libc, false, "concurrent");
        assert_eq!(shown(&control), counted(0), "{libc:?}");
        let ours = spawning(libc, true, "concurrent");
        assert_eq!(shown(&ours), counted(100), "{libc:?}");
    }
}

/// A child that asks for a signal at its parent's end (tini -p does, at
/// its start) is not sent it: in a glibc program its parent is the
/// calling thread, as without eatmydata; in a musl one the thread made
/// for the call, the child's parent as the kernel records it, stays
/// until the child has ended (ending with the call, it killed 43% of
/// them on a loaded machine).
#[test]
fn a_child_asking_for_a_signal_at_its_parent_s_end_lives() {
    library();
    for libc in [Libc::Glibc, Libc::Musl] {
        let control = spawning(libc, false, "pdeathsig");
        let killed = (Some(0), "killed 0 of 25\n".into(), String::new());
        assert_eq!(shown(&control), killed, "{libc:?}");
        assert_eq!(
            shown(&spawning(libc, true, "pdeathsig")),
            killed,
            "{libc:?}"
        );
    }
}

/// While the child runs: in a glibc program, the hook made it as glibc
/// does, so the process has no thread more than without eatmydata, and
/// the calling thread's own wait (`__WNOTHREAD`) finds it. In a musl
/// one, the thread made for the call is there until the child ends, and
/// is its parent: the two differences docs/seccomp.md lists.
#[test]
fn a_glibc_program_s_child_is_the_calling_thread_s_own() {
    library();
    let control = spawning(Libc::Glibc, false, "running");
    let expected = "Threads:\t1\nown wait: running\nstatus=0\n";
    assert_eq!(shown(&control), (Some(0), expected.into(), String::new()));
    assert_eq!(
        shown(&spawning(Libc::Glibc, true, "running")),
        shown(&control)
    );
    let control = spawning(Libc::Musl, false, "running");
    assert_eq!(shown(&control), (Some(0), expected.into(), String::new()));
    let threaded = "Threads:\t2\nown wait: 10\nstatus=0\n";
    let ours = spawning(Libc::Musl, true, "running");
    assert_eq!(shown(&ours), (Some(0), threaded.into(), String::new()));
}

/// A spawn with more arguments than a frame holds pointers for is
/// filtered as any other (the arguments are libc's to lay out).
#[test]
fn a_spawn_with_many_arguments_is_filtered_too() {
    library();
    let fixed = probe("spawn_attrs", &["-static"]);
    let many: Vec<String> = (0..9000).map(|n| n.to_string()).collect();
    let program = fixed.to_str().unwrap();
    let argv: Vec<&str> = [program, "state", "--state", "1"]
        .into_iter()
        .chain(many.iter().map(String::as_str))
        .collect();
    let control = spawned(None, &["spawn", "-"], &argv);
    let ours = spawned(Some(&[]), &["spawn", "-"], &argv);
    assert!(
        control.stdout().contains("Seccomp:\t0\n"),
        "{}",
        control.stdout()
    );
    assert_eq!(
        ours.stdout(),
        control.stdout().replace("Seccomp:\t0\n", "Seccomp:\t2\n")
    );
}
