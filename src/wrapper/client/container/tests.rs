use super::*;
use std::ffi::OsStr;

fn strings(line: &str) -> Vec<OsString> {
    line.split_whitespace().map(OsString::from).collect()
}

fn call(command: &str, line: &str) -> Option<Call> {
    read(OsStr::new(command), &strings(line))
}

#[test]
fn the_verb_is_found_past_global_options() {
    let read = call(
        "/usr/bin/docker",
        "-H unix:///s --context c run --rm -v a:b img",
    )
    .unwrap();
    assert_eq!(read.client, Client::Docker);
    assert_eq!(
        read.verb,
        Verb::Start {
            at: 4,
            runtime: None
        }
    );
    assert_eq!(read.globals, strings("-H unix:///s --context c"));
    let nested = call("docker", "container create img").unwrap();
    assert_eq!(
        nested.verb,
        Verb::Start {
            at: 1,
            runtime: None
        }
    );
    let podman = call("podman", "--root /r --log-level=debug run img").unwrap();
    assert_eq!(
        podman.verb,
        Verb::Start {
            at: 3,
            runtime: None
        }
    );
    let nerdctl = call("nerdctl", "-n k8s.io run img").unwrap();
    assert_eq!(
        nerdctl.verb,
        Verb::Start {
            at: 2,
            runtime: None
        }
    );
    assert_eq!(call("docker", "compose up").unwrap().verb, Verb::Compose);
    assert_eq!(call("docker-compose", "up -d").unwrap().verb, Verb::Compose);
    let build = Verb::Build { buildx: false };
    assert_eq!(call("podman", "build -t x .").unwrap().verb, build);
    assert_eq!(call("docker", "image build .").unwrap().verb, build);
    assert_eq!(
        call("docker", "buildx build .").unwrap().verb,
        Verb::Build { buildx: true }
    );
    assert_eq!(
        call("docker", "exec c sh").unwrap().verb,
        Verb::Other("exec".into())
    );
    assert_eq!(call("docker", "").unwrap().verb, Verb::Other("".into()));
    assert!(call("dockerd", "run").is_none());
    assert!(call("mysql", "run").is_none());
}

#[test]
fn a_runtime_the_user_gave_is_seen() {
    let given = |line| match call("docker", line).unwrap().verb {
        Verb::Start { runtime, .. } => runtime,
        other => panic!("{other:?}"),
    };
    assert_eq!(given("run --runtime runsc img"), Some("runsc".into()));
    assert_eq!(
        given("run --runtime=eatmydata img"),
        Some("eatmydata".into())
    );
    assert_eq!(given("--runtime /x run img"), Some("/x".into()));
    assert_eq!(given("run --runtimex img"), None);
}

fn decided(command: &str, line: &str, facts: Facts) -> Outcome {
    let args = strings(line);
    decide(&read(OsStr::new(command), &args).unwrap(), &args, &facts)
}

#[test]
fn docker_gets_the_registered_runtime_or_a_note() {
    let registered = Facts {
        docker: DockerRuntimes {
            registered: true,
            default: false,
        },
        ..Facts::default()
    };
    let outcome = decided("docker", "-H unix:///s run --rm img", registered);
    assert_eq!(
        outcome.args,
        strings("-H unix:///s run --runtime=eatmydata --rm img")
    );
    assert_eq!(outcome.notice, None);
    let bare = decided("docker", "run --rm img", Facts::default());
    assert_eq!(bare.args, strings("run --rm img"));
    let notice = bare.notice.unwrap();
    assert!(
        notice.contains("sudo eatmydata --runtime configure docker"),
        "no eatmydata-runtime link, so through the command: {notice}"
    );
    assert!(notice.ends_with("without eatmydata."), "{notice}");
    let linked = Facts {
        runtime: Some("/usr/bin/eatmydata-runtime".into()),
        ..Facts::default()
    };
    let notice = decided("docker", "run --rm img", linked).notice.unwrap();
    assert!(
        notice.contains("sudo eatmydata-runtime configure docker"),
        "{notice}"
    );
}

#[test]
fn podman_and_nerdctl_get_the_runtimes_path() {
    let facts = || Facts {
        runtime: Some("/usr/bin/eatmydata-runtime".into()),
        ..Facts::default()
    };
    let podman = decided("podman", "run --rm img", facts());
    assert_eq!(
        podman.args,
        strings("run --runtime=/usr/bin/eatmydata-runtime --rm img")
    );
    let nerdctl = decided("nerdctl", "-n x create img", facts());
    assert_eq!(
        nerdctl.args,
        strings("-n x create --runtime=/usr/bin/eatmydata-runtime img")
    );
    let remote = decided("podman", "--remote run img", facts());
    assert_eq!(remote.args, strings("--remote run img"));
    assert!(remote.notice.is_some());
    let missing = decided("podman", "run img", Facts::default());
    assert!(missing.notice.unwrap().contains("eatmydata-runtime"));
}

#[test]
fn what_cannot_be_inserted_is_said() {
    for (command, line, words) in [
        ("docker", "compose up", "runtime: eatmydata"),
        ("podman-compose", "up", "configure podman"),
        ("docker", "build .", "RUN eatmydata"),
        (
            "nerdctl",
            "build .",
            "--oci-worker-binary=eatmydata-runtime",
        ),
        ("podman", "build .", "neither beside eatmydata nor in PATH"),
        (
            "docker",
            "exec c sh",
            "keeps the runtime it was created with",
        ),
        ("docker", "run --runtime=runsc img", "--runtime=runsc"),
    ] {
        let outcome = decided(command, line, Facts::default());
        assert_eq!(outcome.args, strings(line), "{line}");
        let notice = outcome.notice.unwrap_or_default();
        assert!(notice.contains(words), "{line}: {notice}");
    }
    // Asked for already: nothing to say.
    let ours = decided("docker", "run --runtime=eatmydata img", Facts::default());
    assert_eq!(
        (ours.notice, ours.args),
        (None, strings("run --runtime=eatmydata img"))
    );
}

/// Facts of a docker daemon whose default runtime is eatmydata (as
/// `configure docker --default` makes it), or only registered.
fn daemon(default: bool, legacy_builder: bool) -> Facts {
    Facts {
        docker: DockerRuntimes {
            registered: true,
            default,
        },
        legacy_builder,
        runtime: Some("/usr/bin/eatmydata-runtime".into()),
    }
}

#[test]
fn build_notes_say_what_reaches_the_runtime() {
    // Never that builds take no runtime: the legacy builder and podman's
    // take the default one, BuildKit its variable's.
    for (line, facts) in [
        ("build .", daemon(false, false)),
        ("build .", daemon(false, true)),
        ("build .", daemon(true, false)),
        ("buildx build .", daemon(true, true)),
    ] {
        let notice = decided("docker", line, facts).notice.unwrap();
        assert!(!notice.contains("no OCI runtime"), "{notice}");
        assert!(notice.contains("DOCKER_BUILDKIT_RUNC_COMMAND"), "{notice}");
        assert!(notice.contains("DOCKER_BUILDKIT=0"), "{notice}");
    }
    let unset = decided("docker", "build .", daemon(false, true)).notice;
    assert!(unset.unwrap().contains("docker --default sets both"));
    // The legacy builder on a daemon whose default is eatmydata: reached.
    let legacy = decided("docker", "-H unix:///s build -t x .", daemon(true, true));
    assert_eq!(legacy.notice, None);
    assert_eq!(legacy.args, strings("-H unix:///s build -t x ."));
    // BuildKit there: reached only through dockerd's environment.
    let buildkit = decided("docker", "build .", daemon(true, false)).notice;
    assert!(
        buildkit
            .unwrap()
            .starts_with("BuildKit runs RUN steps with its own runc")
    );
}

#[test]
fn podman_build_gets_the_runtimes_path_before_the_verb() {
    let facts = || daemon(false, false);
    let build = decided("podman", "--root /r build -t x .", facts());
    assert_eq!(
        build.args,
        strings("--root /r --runtime=/usr/bin/eatmydata-runtime build -t x .")
    );
    assert_eq!(build.notice, None);
    let image = decided("podman", "image build .", facts());
    assert_eq!(
        image.args,
        strings("--runtime=/usr/bin/eatmydata-runtime image build .")
    );
    let remote = decided("podman", "--remote build .", facts());
    assert_eq!(remote.args, strings("--remote build ."));
    assert!(remote.notice.unwrap().contains("podman --default there"));
}

#[test]
fn compose_on_a_daemon_whose_default_is_eatmydata_says_nothing() {
    for (command, line) in [("docker", "compose up"), ("docker-compose", "up -d")] {
        let outcome = decided(command, line, daemon(true, false));
        assert_eq!((outcome.notice, outcome.args), (None, strings(line)));
        let registered = decided(command, line, daemon(false, false));
        assert!(registered.notice.unwrap().contains("runtime: eatmydata"));
    }
    // podman-compose: docker's daemon says nothing of podman's runtime.
    let podman = decided("podman-compose", "up", daemon(true, false));
    assert!(podman.notice.is_some());
}

#[test]
fn docker_info_is_read_for_the_runtimes_and_the_default() {
    let info = br#"{"runtimes":{"eatmydata":{"path":"/usr/bin/eatmydata-runtime"},"runc":{"path":"runc"}},"default":"eatmydata"}"#;
    assert_eq!(
        read_runtimes(info),
        DockerRuntimes {
            registered: true,
            default: true
        }
    );
    let plain = br#"{"runtimes":{"runc":{"path":"runc"}},"default":"runc"}"#;
    assert_eq!(read_runtimes(plain), DockerRuntimes::default());
    let registered = br#"{"runtimes":{"eatmydata":{}},"default":"runc"}"#;
    assert!(read_runtimes(registered).registered);
    assert!(!read_runtimes(registered).default);
    for bad in [
        &b""[..],
        b"null",
        b"[]",
        b"{\"default\":1}",
        b"Cannot connect",
    ] {
        assert_eq!(read_runtimes(bad), DockerRuntimes::default());
    }
}

#[test]
fn docker_buildkit_is_read_as_docker_reads_it() {
    for off in ["0", "false", "FALSE", "False", "f", "F"] {
        assert!(legacy_builder(Some(OsStr::new(off))), "{off}");
    }
    for on in ["1", "true", "", "no", "off"] {
        assert!(!legacy_builder(Some(OsStr::new(on))), "{on}");
    }
    assert!(!legacy_builder(None));
}
