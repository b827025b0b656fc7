use super::*;

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
    assert_eq!(call("podman", "build -t x .").unwrap().verb, Verb::Build);
    assert_eq!(call("docker", "image build .").unwrap().verb, Verb::Build);
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
        registered: true,
        runtime: None,
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
        registered: false,
        runtime: Some("/usr/bin/eatmydata-runtime".into()),
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
        registered: false,
        runtime: Some("/usr/bin/eatmydata-runtime".into()),
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
