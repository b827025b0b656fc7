use super::*;

fn line(args: &str) -> Line {
    let args: Vec<OsString> = args.split_whitespace().map(OsString::from).collect();
    parse(&args)
}

fn create(bundle: &str, id: &str) -> Verb {
    Verb::Create {
        bundle: bundle.into(),
        config: None,
        id: id.into(),
        waits: false,
    }
}

/// A `run` that waits for its container: BuildKit's steps.
fn run(bundle: &str, id: &str) -> Verb {
    Verb::Create {
        bundle: bundle.into(),
        config: None,
        id: id.into(),
        waits: true,
    }
}

fn exec(path: &str, at: usize, prefix: &str, id: &str) -> Verb {
    Verb::Exec {
        process: Some(ProcessFile {
            path: path.into(),
            at,
            prefix: prefix.as_bytes().to_vec(),
        }),
        id: id.into(),
    }
}

/// dockerd's and containerd's runc shim, as recorded here from docker.io
/// 20.10 with `--add-runtime`, and go-runc's options for them.
#[test]
fn the_shims_lines() {
    let shim = "--root /run/docker/runtime-runc/moby --log /run/t/log.json --log-format json";
    let read = line(&format!(
        "{shim} create --bundle /run/t/b --pid-file /run/t/init.pid ID"
    ));
    assert_eq!(
        read.root,
        Some(PathBuf::from("/run/docker/runtime-runc/moby"))
    );
    assert_eq!(
        read.log,
        Log {
            file: Some("/run/t/log.json".into()),
            json: true
        }
    );
    assert_eq!(read.verb, create("/run/t/b", "ID"));
    for options in [
        "--console-socket /s",
        "--pidfd-socket /s",
        "--no-pivot --no-new-keyring --preserve-fds 2",
        "--detach",
    ] {
        let console = line(&format!(
            "{shim} create --bundle /b --pid-file /p {options} ID"
        ));
        assert_eq!(console.verb, create("/b", "ID"), "{options}");
    }
    assert_eq!(
        line(&format!(
            "{shim} exec --process /tmp/runc-process1 --detach --pid-file /p ID"
        ))
        .verb,
        exec("/tmp/runc-process1", 8, "", "ID")
    );
    assert_eq!(
        line(&format!(
            "{shim} exec --process /p.json --pidfd-socket /s --console-socket /c ID"
        ))
        .verb,
        exec("/p.json", 8, "", "ID")
    );
    for other in ["start ID", "kill ID 9", "state ID", "--debug ps ID"] {
        assert_eq!(
            line(&format!("{shim} {other}")).verb,
            Verb::Other,
            "{other}"
        );
    }
    for delete in ["delete ID", "delete --force ID", "delete -f ID"] {
        assert_eq!(
            line(&format!("{shim} {delete}")).verb,
            Verb::Delete { id: "ID".into() },
            "{delete}"
        );
    }
}

/// BuildKit's runc executor (go-runc, a JSON log, `--keep` as an extra
/// argument), then `delete ID`: every flag read as a flag.
#[test]
fn buildkits_lines() {
    let globals = "--log /var/lib/buildkit/runc-overlayfs/executor/runc-log.json --log-format json";
    let keep = line(&format!("{globals} run --bundle /b --keep ID"));
    assert_eq!(keep.verb, run("/b", "ID"));
    assert!(keep.log.json);
    for (flags, waits) in [
        ("--keep --no-pivot", true),
        ("--no-pivot --keep", true),
        ("-d --keep", false),
        ("--detach --no-subreaper --no-new-keyring", false),
        ("--keep=true -d=false", true),
    ] {
        let verb = if waits {
            run("/b", "ID")
        } else {
            create("/b", "ID")
        };
        assert_eq!(
            line(&format!("{globals} run --bundle /b {flags} ID")).verb,
            verb,
            "{flags}"
        );
        assert_eq!(
            line(&format!("{globals} run {flags} --bundle /b ID")).verb,
            verb,
            "{flags}"
        );
    }
    assert_eq!(
        line(&format!("{globals} delete ID")).verb,
        Verb::Delete { id: "ID".into() }
    );
}

/// podman's conmon with crun or runc, and the systemd cgroup flag.
#[test]
fn podmans_lines() {
    let read = line("--systemd-cgroup create --bundle /u --pid-file /u/pidfile ID");
    assert_eq!(read.verb, create("/u", "ID"));
    assert_eq!(read.log, Log::default());
    let conmon = "--root /run/runc --systemd-cgroup --log-format=json --log=/u/oci-log";
    assert_eq!(
        line(&format!(
            "{conmon} create --bundle /u --pid-file /u/pidfile --no-pivot --no-new-keyring \
             --console-socket /s ID"
        ))
        .verb,
        create("/u", "ID")
    );
    assert_eq!(
        line(&format!(
            "{conmon} exec --pid-file /p --process /e/exec-process-x --detach --preserve-fds=1 ID"
        ))
        .verb,
        exec("/e/exec-process-x", 9, "", "ID")
    );
    let crun = line("--cgroup-manager=systemd --root=/run/crun create --bundle=/u ID");
    assert_eq!(crun.root, Some(PathBuf::from("/run/crun")));
    assert_eq!(crun.verb, create("/u", "ID"));
    assert_eq!(
        line("--debug --log-level debug --log /l create -b /u --no-pivot ID").verb,
        create("/u", "ID")
    );
}

#[test]
fn run_and_defaults() {
    assert_eq!(line("run ID").verb, run(".", "ID"));
    assert_eq!(
        line("--log /l run -d --bundle /b --keep --preserve-fds 3 ID").verb,
        create("/b", "ID")
    );
    assert_eq!(line("run --detach --bundle /b ID").verb, create("/b", "ID"));
    // BuildKit's runc executor (Docker 26), as recorded.
    assert_eq!(
        line("--log /d/executor/runc-log.json --log-format json run --bundle /d/executor/w4 --keep w4").verb,
        run("/d/executor/w4", "w4")
    );
    // runc's flag library takes one dash too.
    assert_eq!(line("-root /r run -bundle /b ID").root, Some("/r".into()));
    assert_eq!(line("-root /r run -bundle /b ID").verb, run("/b", "ID"));
    assert_eq!(
        line("create --config /c.json --bundle /b ID").verb,
        Verb::Create {
            bundle: "/b".into(),
            config: Some("/c.json".into()),
            id: "ID".into(),
            waits: false,
        }
    );
    assert!(!line("--log-format text run ID").log.json);
    // After `--`, the id.
    assert_eq!(line("run --bundle /b -- ID").verb, run("/b", "ID"));
}

#[test]
fn exec_and_its_process_file() {
    assert_eq!(
        line("exec --env A=1 -e B=2 --tty --user 1000 ID /bin/sh -c true").verb,
        Verb::Exec {
            process: None,
            id: "ID".into()
        }
    );
    assert_eq!(
        line("exec -p /p.json ID").verb,
        exec("/p.json", 2, "", "ID")
    );
    assert_eq!(
        line("--root /r exec -t --process=/dev/stdin ID").verb,
        exec("/dev/stdin", 4, "--process=", "ID")
    );
    assert_eq!(
        line("exec -p=/dev/fd/63 ID").verb,
        exec("/dev/fd/63", 1, "-p=", "ID")
    );
    // A `-p` after the id is the command's own.
    assert_eq!(
        line("exec ID /bin/ls -p /x").verb,
        Verb::Exec {
            process: None,
            id: "ID".into()
        }
    );
}

/// The argument that names the process file is replaced in its own form.
#[test]
fn a_process_file_is_renamed_in_place() {
    let file = ProcessFile {
        path: "/dev/stdin".into(),
        at: 1,
        prefix: b"--process=".to_vec(),
    };
    assert_eq!(
        file.renamed(OsStr::new("/proc/self/fd/5")),
        "--process=/proc/self/fd/5"
    );
}

/// Help, wherever it is asked for, and lines without their id: the real
/// runtime's to answer.
#[test]
fn help_and_incomplete_lines_pass() {
    for args in [
        "run -h",
        "run --help",
        "create --help",
        "create -help",
        "exec -h",
        "--root /r --log /l run --help",
        "run --bundle /b -h ID",
        "exec -p /p.json --help ID",
        "delete -h ID",
        "--help",
        "--root /r -h run ID",
        "run",
        "create --bundle /b",
        "run --bundle",
        "exec",
        "exec -p",
        "delete",
    ] {
        assert_eq!(line(args).verb, Verb::Other, "{args}");
    }
}

#[test]
fn unknown_options_pass_and_are_named() {
    for (args, option) in [
        ("run --frobnicate /b ID", "--frobnicate"),
        ("--no-such-global run ID", "--no-such-global"),
        ("exec --new-flag=1 -p /p ID", "--new-flag=1"),
        ("delete --all ID", "--all"),
        ("create -bDIR ID", "-bDIR"),
    ] {
        assert_eq!(
            line(args).verb,
            Verb::Unknown {
                option: option.into()
            },
            "{args}"
        );
    }
}

#[test]
fn everything_else_passes() {
    for args in [
        "",
        "--version",
        "-v",
        "features",
        "--root /r list",
        "ps ID",
        "spec",
        "checkpoint ID",
        "update --memory 1 ID",
        "help run",
    ] {
        assert_eq!(line(args).verb, Verb::Other, "{args}");
    }
}

#[test]
fn a_verb_neither_runtime_has_is_named() {
    for (args, verb) in [
        ("reprot", "reprot"),
        ("--root /r frobnicate ID", "frobnicate"),
        ("configure docker", "configure"),
    ] {
        assert_eq!(
            line(args).verb,
            Verb::Unheard { verb: verb.into() },
            "{args}"
        );
    }
    for known in super::KNOWN {
        assert_ne!(
            line(&format!("{known} ID")).verb,
            Verb::Unheard { verb: known.into() },
            "{known}"
        );
    }
}
