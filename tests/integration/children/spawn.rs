//! A program that goes without the library, started by `posix_spawn`
//! (as GNU make and Python start one), gets the plain filter where the
//! hook makes the child (`src/preload/spawn.rs`, `c/spawn.c`): its
//! syncs are eaten, where before they reached the disk, and the caller
//! sees what it would without eatmydata: the same status, output,
//! arguments, name, `PATH` search and errors (its attributes and file
//! actions: `attributes.rs`).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::filter::{
    FSYNCS, NO_SYS_ADMIN, eaten_in_a_child, setuid_probe, shown, state, whoami_probes,
};
use crate::common::{Outcome, Run, TempDir, command, library, probe};

/// `spawn_child`, built dynamic: the parent that spawns.
fn spawner() -> PathBuf {
    probe("spawn_child", &[])
}

/// `spawner HOW OUT PROGRAM ARGV...`, with the command (and `options`)
/// or without.
pub(super) fn spawned(eatmydata: Option<&[&str]>, how: &[&str], argv: &[&str]) -> Outcome {
    let mut run = match eatmydata {
        Some(options) => Run::new(command()).args(options).arg(spawner()),
        None => Run::new(spawner()),
    };
    run = run.args(how).args(argv);
    run.run()
}

#[test]
fn a_static_child_of_posix_spawn_has_its_syncs_eaten() {
    library();
    let program = probe("container_parity", &["-static"]);
    let args = |file: &Path| {
        let (program, file) = (program.to_str().unwrap(), file.to_str().unwrap());
        let count = FSYNCS.to_string();
        let spawner = spawner();
        let args = [spawner.to_str().unwrap(), "spawn", "-", program, "parity"];
        let args = args.into_iter().chain(["loop", file, &count]);
        args.map(str::to_owned).collect()
    };
    let printed = format!("synced {FSYNCS}\nstatus 0\n");
    eaten_in_a_child("posix_spawn", args, &printed);
}

#[test]
fn the_spawned_program_sees_what_it_would_without_eatmydata() {
    library();
    let dir = TempDir::new("children-spawn-parity");
    let fixed = probe("spawn_child", &["-static"]);
    let shown_by = |how: &[&str], argv: &[&str]| {
        let control = spawned(None, how, argv);
        let ours = spawned(Some(&[]), how, argv);
        assert_eq!(shown(&ours), shown(&control), "{how:?} {argv:?}");
        control
    };
    // Its arguments (argv[0] its own, an empty one), /proc/PID/comm, its
    // stderr and exit status.
    let fixed_path = fixed.to_str().unwrap();
    let control = shown_by(&["spawn", "-"], &[fixed_path, "zero", "--show", "", "c"]);
    // comm: the file's name (spawn_child-static), cut at 15 bytes.
    assert_eq!(
        control.stdout(),
        "argv[0]=zero\nargv[1]=--show\nargv[2]=\nargv[3]=c\ncomm=spawn_child-sta\nstatus 3\n"
    );
    assert_eq!(control.stderr(), "to stderr\n");
    // posix_spawnp's PATH search, and a file action: stdout a file.
    let out = dir.join("out");
    let path = format!(
        "{}:{}",
        fixed.parent().unwrap().display(),
        std::env::var("PATH").unwrap()
    );
    for eatmydata in [None, Some(&[] as &[&str])] {
        let _ = fs::remove_file(&out);
        let mut run = match eatmydata {
            Some(options) => Run::new(command()).args(options).arg(spawner()),
            None => Run::new(spawner()),
        };
        run = run.env("PATH", &path).args([
            "spawnp",
            out.to_str().unwrap(),
            "spawn_child-static",
            "named",
            "--show",
        ]);
        let outcome = run.run();
        assert_eq!(outcome.stdout(), "status 3\n", "{eatmydata:?}");
        assert_eq!(
            fs::read_to_string(&out).unwrap(),
            "argv[0]=named\nargv[1]=--show\ncomm=spawn_child-sta\n",
            "{eatmydata:?}"
        );
    }
    // Errors come back from posix_spawn as before: a missing program, a
    // name PATH does not give; and from the exec in the child libc made
    // on the filtered thread (said under -v): a static program without an
    // execute bit, one built for no machine.
    let unrunnable = dir.join("unrunnable");
    fs::copy(&fixed, &unrunnable).unwrap();
    fs::set_permissions(&unrunnable, fs::Permissions::from_mode(0o644)).unwrap();
    let foreign = dir.join("foreign");
    let mut elf = fs::read(&fixed).unwrap();
    // e_machine: a number no architecture has, which no binfmt_misc
    // handler (qemu-user's, say) takes either.
    elf[18..20].copy_from_slice(&0x1234u16.to_le_bytes());
    fs::write(&foreign, elf).unwrap();
    fs::set_permissions(&foreign, fs::Permissions::from_mode(0o755)).unwrap();
    let missing = dir.join("missing");
    for (how, program, error, routed) in [
        ("spawn", missing.to_str().unwrap(), "ENOENT", false),
        ("spawnp", "eatmydata-no-such-program", "ENOENT", false),
        ("spawn", unrunnable.to_str().unwrap(), "EACCES", true),
        ("spawn", foreign.to_str().unwrap(), "ENOEXEC", true),
    ] {
        let control = shown_by(&[how, "-"], &[program, "x"]);
        assert_eq!(control.stdout(), format!("posix_spawn: {error}\n"));
        let said = spawned(Some(&["-v"]), &[how, "-"], &[program, "x"]);
        assert_eq!(said.stdout(), control.stdout());
        assert_eq!(
            said.stderr().contains("runs without the library"),
            routed,
            "{program}: {}",
            said.stderr()
        );
    }
}

/// posix_spawnp's search goes on past a file it may not execute, to the
/// next folder's, and fails EACCES where that was all: as without
/// eatmydata, where the hook searches `PATH` itself (`c/spawn_here.c`).
#[test]
fn posix_spawnp_goes_past_a_file_it_may_not_execute() {
    library();
    let (_, fixed) = whoami_probes();
    let dir = TempDir::new("children-spawnp-eacces");
    let (denied, allowed) = (dir.join("denied"), dir.join("allowed"));
    for (folder, mode) in [(&denied, 0o644), (&allowed, 0o755)] {
        fs::create_dir(folder).unwrap();
        fs::copy(&fixed, folder.join("eatmydata-probe")).unwrap();
        let file = folder.join("eatmydata-probe");
        fs::set_permissions(file, fs::Permissions::from_mode(mode)).unwrap();
    }
    let both = format!("{}:{}", denied.display(), allowed.display());
    let argv = ["spawnp", "-", "eatmydata-probe", "whoami", "whoami"];
    let run = |eatmydata: bool, path: &str| {
        let run = match eatmydata {
            true => Run::new(command()).arg(spawner()),
            false => Run::new(spawner()),
        };
        shown(&run.args(argv).env("PATH", path).run())
    };
    let ran = |seccomp| {
        (
            Some(0),
            format!("{}status 0\n", state(0, 0, seccomp)),
            String::new(),
        )
    };
    assert_eq!(run(false, &both), ran(0));
    assert_eq!(run(true, &both), ran(2));
    let refused = run(false, denied.to_str().unwrap());
    assert_eq!(refused.1, "posix_spawn: EACCES\n");
    assert_eq!(run(true, denied.to_str().unwrap()), refused);
}

#[test]
fn only_a_spawned_child_that_goes_without_the_library_is_filtered() {
    library();
    let (dynamic, fixed) = whoami_probes();
    let whoami = |eatmydata: Option<&[&str]>, program: &Path| {
        let program = program.to_str().unwrap();
        spawned(eatmydata, &["spawn", "-"], &[program, "whoami", "whoami"])
    };
    let status = |seccomp| format!("{}status 0\n", state(0, 0, seccomp));
    for program in [&dynamic, &fixed] {
        assert_eq!(whoami(None, program).stdout(), status(0));
    }
    assert_eq!(
        shown(&whoami(Some(&[]), &dynamic)),
        (Some(0), status(0), String::new())
    );
    assert_eq!(
        shown(&whoami(Some(&[]), &fixed)),
        (Some(0), status(2), String::new())
    );
    assert_eq!(whoami(Some(&["--no-seccomp"]), &fixed).stdout(), status(0));
    // The environment is the one the decision made: the parent's without
    // the library's LD_PRELOAD entry (here, the whole variable).
    let env = |program: &Path| {
        let program = program.to_str().unwrap();
        let outcome = spawned(Some(&[]), &["spawn", "-"], &[program, "env", "env"]);
        let mut lines: Vec<String> = outcome.stdout().lines().map(str::to_owned).collect();
        lines.retain(|line| !line.starts_with("status "));
        lines.sort();
        lines
    };
    let mut parents = env(Path::new("/usr/bin/env"));
    assert!(parents.iter().any(|line| line.starts_with("LD_PRELOAD=")));
    parents.retain(|line| !line.starts_with("LD_PRELOAD="));
    assert_eq!(env(&probe("container_parity", &["-static"])), parents);
}

/// Python's `os.posix_spawn`, and `subprocess.run` with `close_fds=False`
/// (which takes posix_spawn in Python 3.8 and later), start a static
/// program: filtered under eatmydata, and otherwise as without it.
#[test]
fn python_s_posix_spawn_children_are_filtered() {
    library();
    let (_, fixed) = whoami_probes();
    let script = "import os, subprocess, sys\n\
                  pid = os.posix_spawn(sys.argv[1], ['whoami', 'whoami'], os.environ)\n\
                  print('status', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)\n\
                  done = subprocess.run([sys.argv[1], 'whoami'], close_fds=False)\n\
                  print('status', done.returncode)\n";
    let python = ["/usr/bin/python3", "-c", script, fixed.to_str().unwrap()];
    let twice = |seccomp| {
        let one = format!("{}status 0\n", state(0, 0, seccomp));
        one.repeat(2)
    };
    let control = Run::new(python[0]).args(&python[1..]).run();
    assert_eq!(shown(&control), (Some(0), twice(0), String::new()));
    let ours = Run::new(command()).args(python).run();
    assert_eq!(shown(&ours), (Some(0), twice(2), String::new()));
}

/// Rust's `Command` (glibc's posix_spawnp, with file actions for its
/// pipe) starts a static program: filtered under eatmydata, and otherwise
/// as without it, the errors of a program not there too.
#[test]
fn rust_s_command_children_are_filtered() {
    library();
    let (_, fixed) = whoami_probes();
    let dir = TempDir::new("children-rust-command");
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/probes/spawn_command.rs");
    let program = dir.path().join("spawn_command");
    let built = Run::new("rustc")
        .args(["--edition=2024", "-o"])
        .arg(&program)
        .arg(&source)
        .run();
    assert_eq!(built.output.status.code(), Some(0), "{}", built.stderr());
    let errors = "/nonexistent/eatmydata: No such file or directory (os error 2)\n\
                  no-such-program-eatmydata: No such file or directory (os error 2)\n";
    let shown_for = |seccomp| format!("{}status Some(0)\n{errors}", state(0, 0, seccomp));
    let control = Run::new(&program).arg(&fixed).run();
    assert_eq!(shown(&control), (Some(0), shown_for(0), String::new()));
    let ours = Run::new(command()).arg(&program).arg(&fixed).run();
    assert_eq!(shown(&ours), (Some(0), shown_for(2), String::new()));
}

/// glibc's loader on this machine.
const LOADER: &str = if cfg!(target_arch = "aarch64") {
    "/lib/ld-linux-aarch64.so.1"
} else {
    "/lib64/ld-linux-x86-64.so.2"
};

/// The library run as a program by the loader says it is not one, and
/// ends with 127, with arguments or without.
#[test]
fn the_library_run_as_a_program_says_it_is_not_one() {
    let library = library();
    let not_a_program = "eatmydata: libeatmydata.so is a library for LD_PRELOAD, not a program\n";
    for args in [&[] as &[&str], &["--eatmydata-spawned", "0-", "/bin/true"]] {
        let refused = Run::new(LOADER).arg(&library).args(args).run();
        assert_eq!(refused.output.status.code(), Some(127));
        assert_eq!(refused.stderr(), not_a_program);
        assert_eq!(refused.stdout(), "");
    }
}

/// Without CAP_SYS_ADMIN the child sets no_new_privs for the filter, as
/// an exec does; a set-user-ID program keeps its privileges and goes
/// unfiltered, said under -v.
#[test]
fn without_cap_sys_admin_the_spawn_keeps_the_exec_rules() {
    library();
    let dir = TempDir::new("children-spawn-setuid");
    let (_, fixed) = whoami_probes();
    let setuid = setuid_probe(&dir);
    let whoami = |eatmydata: Option<&[&str]>, program: &Path| {
        let mut run = Run::new(NO_SYS_ADMIN[0]).args(&NO_SYS_ADMIN[1..]);
        if let Some(options) = eatmydata {
            run = run.arg(command()).args(options);
        }
        let program = program.to_str().unwrap();
        run.arg(spawner())
            .args(["spawn", "-", program, "whoami", "whoami"])
            .run()
    };
    let status = |euid, nnp, seccomp| format!("{}status 0\n", state(euid, nnp, seccomp));
    assert_eq!(whoami(None, &fixed).stdout(), status(0, 0, 0));
    assert_eq!(whoami(Some(&[]), &fixed).stdout(), status(0, 1, 2));
    assert_eq!(whoami(None, &setuid).stdout(), status(65534, 0, 0));
    let said = whoami(Some(&["-v"]), &setuid);
    assert_eq!(said.stdout(), status(65534, 0, 0));
    assert!(said.stderr().contains("set-user-ID"), "{}", said.stderr());
}
