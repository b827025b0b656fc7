use super::*;

fn line(args: &str) -> Line {
    let args: Vec<OsString> = args.split_whitespace().map(OsString::from).collect();
    parse(&args)
}

fn create(bundle: &str, id: &str) -> Verb {
    Verb::Create {
        bundle: bundle.into(),
        config: None,
        id: Some(id.into()),
    }
}

/// dockerd's and containerd's runc shim, as recorded here from docker.io
/// 20.10 with `--add-runtime`.
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
    let console = line(&format!(
        "{shim} create --bundle /b --pid-file /p --console-socket /s ID"
    ));
    assert_eq!(console.verb, create("/b", "ID"));
    assert_eq!(
        line(&format!(
            "{shim} exec --process /tmp/runc-process1 --detach --pid-file /p ID"
        ))
        .verb,
        Verb::Exec {
            process: Some("/tmp/runc-process1".into()),
            id: Some("ID".into())
        }
    );
    for delete in ["delete ID", "delete --force ID", "delete -f ID"] {
        assert_eq!(
            line(&format!("{shim} {delete}")).verb,
            Verb::Delete {
                id: Some("ID".into())
            },
            "{delete}"
        );
    }
    for other in ["start ID", "kill ID 9", "state ID"] {
        assert_eq!(
            line(&format!("{shim} {other}")).verb,
            Verb::Other,
            "{other}"
        );
    }
}

/// podman's conmon with crun or runc, and the systemd cgroup flag.
#[test]
fn podmans_lines() {
    let read = line("--systemd-cgroup create --bundle /u --pid-file /u/pidfile ID");
    assert_eq!(read.verb, create("/u", "ID"));
    assert_eq!(read.log, Log::default());
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
    assert_eq!(line("run ID").verb, create(".", "ID"));
    assert_eq!(
        line("--log /l run -d --bundle /b --keep --preserve-fds 3 ID").verb,
        create("/b", "ID")
    );
    // runc's flag library takes one dash too.
    assert_eq!(line("-root /r run -bundle /b ID").root, Some("/r".into()));
    assert_eq!(line("-root /r run -bundle /b ID").verb, create("/b", "ID"));
    assert_eq!(
        line("create --config /c.json --bundle /b ID").verb,
        Verb::Create {
            bundle: "/b".into(),
            config: Some("/c.json".into()),
            id: Some("ID".into())
        }
    );
    assert!(!line("--log-format text run ID").log.json);
}

#[test]
fn exec_without_a_process_file() {
    assert_eq!(
        line("exec --env A=1 -e B=2 --tty --user 1000 ID /bin/sh -c true").verb,
        Verb::Exec {
            process: None,
            id: Some("ID".into())
        }
    );
    assert_eq!(
        line("exec -p /p.json ID").verb,
        Verb::Exec {
            process: Some("/p.json".into()),
            id: Some("ID".into())
        }
    );
}

#[test]
fn everything_else_passes() {
    for args in [
        "",
        "--version",
        "-v",
        "--help",
        "features",
        "--root /r list",
        "ps ID",
        "spec",
        "checkpoint ID",
        "update --memory 1 ID",
    ] {
        assert_eq!(line(args).verb, Verb::Other, "{args}");
    }
}
