//! What a `posix_spawn` child that gets the filter from a thread made
//! for the call (`src/preload/c/spawn.c`) starts with, by the attributes
//! and file actions libc applies, and what the caller is left with,
//! against a control without eatmydata: `probes/spawn_attrs.c`.

use std::path::Path;

use super::filter::{NO_SYS_ADMIN, shown};
use super::spawn::spawned;
use crate::common::{Outcome, Run, TempDir, command, library, probe};

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
    // Without CAP_SYS_ADMIN: no_new_privs too, on the child alone.
    let (_, control_filter, shown) = attrs(NO_SYS_ADMIN, None, "plain");
    let (_, filter, ours_shown) = attrs(NO_SYS_ADMIN, Some(&[]), "plain");
    assert_eq!(ours_shown, shown);
    assert!(shown.contains("caller_seccomp=0 caller_nnp=0"), "{shown}");
    assert_eq!(control_filter, "NoNewPrivs:\t0 Seccomp:\t0");
    assert_eq!(filter, "NoNewPrivs:\t1 Seccomp:\t2");
    // No room for the thread's stack (the address space capped): the
    // child goes unfiltered, said under -v, and otherwise as without.
    let (control, control_filter, shown) = attrs(&["env"], None, "no-room");
    let (said, filter, ours_shown) = attrs(&["env"], Some(&["-v"]), "no-room");
    assert_eq!(control.output.status.code(), Some(0), "{shown}");
    assert_eq!((ours_shown, filter), (shown, control_filter));
    assert!(
        said.stderr().contains("no thread could be made"),
        "{}",
        said.stderr()
    );
    // A file action that fails in the child fails the call, as without.
    for case in ["ENOENT-chdir", "ENOENT-open"] {
        let (control, _, shown) = attrs(&["env"], None, case);
        assert_eq!(shown, "posix_spawn: ENOENT", "{case}");
        let (said, _, ours_shown) = attrs(&["env"], Some(&["-v"]), case);
        assert_eq!(ours_shown, shown, "{case}");
        assert_eq!(said.output.status.code(), control.output.status.code());
        let routed = said.stderr().contains("runs without the library");
        assert!(routed, "{case}: {}", said.stderr());
    }
}

/// Four threads spawning at once (100 children): each call has a thread
/// (and a stack) of its own, every child runs under the filter, and
/// none of the threads made for the calls is left once the children
/// have ended.
#[test]
fn threads_spawning_at_once_each_have_their_children_filtered() {
    library();
    let fixed = probe("spawn_attrs", &["-static"]);
    let run = |eatmydata: Option<&[&str]>| {
        let mut run = match eatmydata {
            Some(options) => Run::new(command()).args(options),
            None => Run::new("env"),
        };
        run = run.arg(probe("spawn_attrs", &[]));
        run.args(["concurrent", fixed.to_str().unwrap()]).run()
    };
    let control = run(None);
    assert_eq!(
        shown(&control),
        (
            Some(0),
            "filtered 0 of 100\nThreads:\t1\n".into(),
            String::new()
        )
    );
    let ours = run(Some(&[]));
    assert_eq!(
        shown(&ours),
        (
            Some(0),
            "filtered 100 of 100\nThreads:\t1\n".into(),
            String::new()
        )
    );
}

/// A child that asks for a signal at its parent's end (tini -p does, at
/// its start) is not sent it when the thread made for the call ends: the
/// thread, the child's parent as the kernel records it, stays until the
/// child has ended. Ending with the call, it killed 43% of them on a
/// loaded machine.
#[test]
fn a_child_asking_for_a_signal_at_its_parent_s_end_lives() {
    library();
    let fixed = probe("spawn_attrs", &["-static"]);
    let args = ["pdeathsig", fixed.to_str().unwrap()];
    let control = Run::new(probe("spawn_attrs", &[])).args(args).run();
    assert_eq!(
        shown(&control),
        (Some(0), "killed 0 of 25\n".into(), String::new())
    );
    let ours = Run::new(command())
        .arg(probe("spawn_attrs", &[]))
        .args(args)
        .run();
    assert_eq!(shown(&ours), shown(&control));
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
