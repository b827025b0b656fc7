use super::*;
use std::ffi::OsStr;

fn strings(line: &str) -> Vec<OsString> {
    line.split_whitespace().map(OsString::from).collect()
}

fn call(command: &str, line: &str) -> Option<Call> {
    read(OsStr::new(command), &strings(line))
}

/// Where a start's verb is.
fn started_at(verb: &Verb) -> Option<usize> {
    match verb {
        Verb::Start { at, .. } => Some(*at),
        _ => None,
    }
}

#[test]
fn the_verb_is_found_past_global_options() {
    let read = call(
        "/usr/bin/docker",
        "-H unix:///s --context c run --rm -v a:b img",
    )
    .unwrap();
    assert_eq!(read.client, Client::Docker);
    assert_eq!(started_at(&read.verb), Some(4));
    assert_eq!(read.globals, strings("-H unix:///s --context c"));
    let nested = call("docker", "container create img").unwrap();
    assert_eq!(started_at(&nested.verb), Some(1));
    let podman = call("podman", "--root /r --log-level=debug run img").unwrap();
    assert_eq!(started_at(&podman.verb), Some(3));
    let nerdctl = call("nerdctl", "-n k8s.io run img").unwrap();
    assert_eq!(started_at(&nerdctl.verb), Some(2));
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
        Verb::Start { options, .. } => options.runtime,
        other => panic!("{other:?}"),
    };
    assert_eq!(given("run --runtime runsc img"), Some("runsc".into()));
    assert_eq!(
        given("run --runtime=eatmydata img"),
        Some("eatmydata".into())
    );
    assert_eq!(given("--runtime /x run img"), Some("/x".into()));
    assert_eq!(given("run --runtimex img"), None);
    // The container's own command is not read.
    assert_eq!(given("run img sh --runtime=x"), None);
}

fn decided(command: &str, line: &str, facts: Facts) -> Outcome {
    let args = strings(line);
    decide(&read(OsStr::new(command), &args).unwrap(), &args, &facts)
}

#[test]
fn docker_gets_the_registered_runtime_else_the_profile() {
    let registered = Facts {
        docker: DockerRuntimes {
            answered: true,
            registered: true,
            ..DockerRuntimes::default()
        },
        ..Facts::default()
    };
    let outcome = decided("docker", "-H unix:///s run --rm img", registered);
    assert_eq!(
        outcome.args,
        strings("-H unix:///s run --runtime=eatmydata --rm img")
    );
    assert_eq!((outcome.notice, outcome.profile), (None, None));
    let bare = Facts {
        docker: DockerRuntimes {
            answered: true,
            seccomp: Some("builtin".into()),
            version: "26.1.5+dfsg1".into(),
            ..DockerRuntimes::default()
        },
        ..Facts::default()
    };
    let outcome = decided("docker", "-H unix:///s run --rm img", bare);
    // The line as it was until send.rs puts the profile in.
    assert_eq!(outcome.args, strings("-H unix:///s run --rm img"));
    let (at, profile) = outcome.profile.unwrap();
    assert_eq!(at, 2);
    assert_eq!(profile.engine, Engine::Docker);
    assert_eq!(profile.version.as_deref(), Some("26.1.5+dfsg1"));
    // A daemon that does not answer: one line, the line as it was.
    let down = decided("docker", "run --rm img", Facts::default());
    assert_eq!((down.args, down.profile), (strings("run --rm img"), None));
    assert!(
        down.notice
            .unwrap()
            .starts_with("docker's daemon did not answer")
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
        ("docker", "compose up", "seccomp=FILE"),
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
/// `configure docker --default` makes it), or only registered; its
/// client's builder `builder`, BuildKit's runc not known.
fn daemon(default: bool, builder: Builder) -> Facts {
    Facts {
        docker: DockerRuntimes {
            answered: true,
            registered: true,
            default,
            default_name: if default { "eatmydata" } else { "runc" }.to_owned(),
            buildx: builder == Builder::BuildKit,
            ..DockerRuntimes::default()
        },
        builder,
        buildkit_runc: BuildkitRunc::Unknown,
        runtime: Some("/usr/bin/eatmydata-runtime".into()),
        ..Facts::default()
    }
}

const LEGACY: Builder = Builder::Legacy { asked: false };
const BUILDKIT: Builder = Builder::BuildKit;

#[test]
fn build_notes_are_silent_where_the_builder_reaches_the_runtime() {
    // The legacy builder on a daemon whose default is eatmydata: reached,
    // whether asked for or for want of buildx.
    for builder in [LEGACY, Builder::Legacy { asked: true }] {
        let legacy = decided("docker", "-H unix:///s build -t x .", daemon(true, builder));
        assert_eq!(legacy.notice, None);
        assert_eq!(legacy.args, strings("-H unix:///s build -t x ."));
    }
    // BuildKit whose runc dockerd's environment names as the runtime.
    let mut named = daemon(false, BUILDKIT);
    named.buildkit_runc = BuildkitRunc::Set("/usr/local/bin/eatmydata-runtime".into());
    assert_eq!(decided("docker", "build .", named).notice, None);
    // BuildKit asked for without buildx: docker refuses, and says why.
    assert_eq!(
        decided("docker", "build .", daemon(false, Builder::Refused)).notice,
        None
    );
}

#[test]
fn build_notes_name_the_builder_that_will_not_reach_it() {
    // The legacy builder, another default: that default named.
    let legacy = decided("docker", "build .", daemon(false, LEGACY))
        .notice
        .unwrap();
    assert!(
        legacy.starts_with("docker build runs the legacy builder here (docker has no buildx"),
        "{legacy}"
    );
    assert!(
        legacy.contains("default runtime, runc, not eatmydata"),
        "{legacy}"
    );
    assert!(legacy.contains("docker --default"), "{legacy}");
    let asked = decided(
        "docker",
        "build .",
        daemon(false, Builder::Legacy { asked: true }),
    );
    assert!(asked.notice.unwrap().contains("(DOCKER_BUILDKIT is false)"));
    // BuildKit, its runc known: unset, or another program.
    let mut unset = daemon(true, BUILDKIT);
    unset.buildkit_runc = BuildkitRunc::Unset;
    let said = decided("docker", "build .", unset).notice.unwrap();
    assert!(said.starts_with("BuildKit runs RUN steps with its own runc (dockerd's environment has no DOCKER_BUILDKIT_RUNC_COMMAND)"), "{said}");
    assert!(said.contains("or DOCKER_BUILDKIT=0"), "{said}");
    let mut other = daemon(false, BUILDKIT);
    other.buildkit_runc = BuildkitRunc::Set("/usr/sbin/runc".into());
    let said = decided("docker", "build .", other).notice.unwrap();
    assert!(
        said.starts_with("BuildKit runs RUN steps with /usr/sbin/runc"),
        "{said}"
    );
    assert!(!said.contains("DOCKER_BUILDKIT=0"), "{said}");
    // Not known: said as a condition. buildx build is BuildKit whatever
    // the client would pick for build.
    for (line, builder) in [("build .", BUILDKIT), ("buildx build .", LEGACY)] {
        let said = decided("docker", line, daemon(false, builder))
            .notice
            .unwrap();
        assert!(said.contains("cannot be read from here"), "{said}");
        assert!(!said.contains("no OCI runtime"), "{said}");
    }
}

#[test]
fn podman_build_gets_the_runtimes_path_before_the_verb() {
    let facts = || daemon(false, LEGACY);
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
        let outcome = decided(command, line, daemon(true, BUILDKIT));
        assert_eq!((outcome.notice, outcome.args), (None, strings(line)));
        let registered = decided(command, line, daemon(false, LEGACY));
        assert!(registered.notice.unwrap().contains("runtime: eatmydata"));
    }
    // podman-compose: docker's daemon says nothing of podman's runtime.
    let podman = decided("podman-compose", "up", daemon(true, BUILDKIT));
    assert!(podman.notice.is_some());
}

#[test]
fn docker_info_is_read_for_the_runtimes_the_default_and_buildx() {
    let info = br#"{"runtimes":{"eatmydata":{"path":"/usr/bin/eatmydata-runtime"},"runc":{"path":"runc"}},"default":"eatmydata","plugins":[{"Name":"buildx","Path":"/usr/libexec/docker/cli-plugins/docker-buildx"}]}"#;
    assert_eq!(
        read_runtimes(info),
        DockerRuntimes {
            registered: true,
            default: true,
            default_name: "eatmydata".into(),
            runtimes: vec![
                ("eatmydata".into(), "/usr/bin/eatmydata-runtime".into()),
                ("runc".into(), "runc".into())
            ],
            buildx: true,
            ..DockerRuntimes::default()
        }
    );
    let plain = br#"{"runtimes":{"runc":{"path":"runc"}},"default":"runc","plugins":[]}"#;
    let read = read_runtimes(plain);
    assert_eq!(
        (read.registered, read.default, read.buildx),
        (false, false, false)
    );
    assert_eq!(read.default_name, "runc");
    let registered = br#"{"runtimes":{"eatmydata":{}},"default":"runc"}"#;
    assert!(read_runtimes(registered).registered);
    assert!(!read_runtimes(registered).default);
    // What `configure docker --remove` leaves while containers made under
    // eatmydata exist is runc by another name: not the runtime.
    let alias = br#"{"runtimes":{"eatmydata":{"path":"runc"},"runc":{"path":"runc"}},"default":"eatmydata"}"#;
    let read = read_runtimes(alias);
    assert_eq!((read.registered, read.default), (false, false));
    // A daemon that does not answer: the client's plugins still said; a
    // plugin that failed to load is as missing.
    let down = br#"{"runtimes":null,"default":"","plugins":[{"Name":"buildx"}]}"#;
    assert!(read_runtimes(down).buildx);
    let broken = br#"{"plugins":[{"Name":"buildx","Err":"not executable"}]}"#;
    assert!(!read_runtimes(broken).buildx);
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
fn the_builder_is_picked_as_dockers_cli_picks_it() {
    let env = |v: &str| Some(OsStr::new(v).to_owned());
    for off in ["0", "false", "FALSE", "False", "f", "F"] {
        for buildx in [true, false] {
            let picked = builder(env(off).as_deref(), buildx);
            assert_eq!(picked, Builder::Legacy { asked: true }, "{off}");
        }
    }
    for on in ["1", "true", "TRUE", "t"] {
        assert_eq!(builder(env(on).as_deref(), true), Builder::BuildKit, "{on}");
        assert_eq!(builder(env(on).as_deref(), false), Builder::Refused, "{on}");
    }
    assert_eq!(builder(None, true), Builder::BuildKit);
    assert_eq!(builder(None, false), Builder::Legacy { asked: false });
}

#[test]
fn the_daemons_socket_and_environment_are_read_as_docker_names_them() {
    let words =
        |line: &str| -> Vec<OsString> { line.split_whitespace().map(OsString::from).collect() };
    let host = Some(OsStr::new("unix:///run/other.sock"));
    assert_eq!(
        docker_socket(&words("-H unix:///s"), host),
        Some("/s".into())
    );
    assert_eq!(
        docker_socket(&words("--host=unix:///t"), None),
        Some("/t".into())
    );
    assert_eq!(docker_socket(&[], host), Some("/run/other.sock".into()));
    assert_eq!(docker_socket(&words("-H tcp://h:2375"), None), None);
    assert_eq!(docker_socket(&words("--context ci"), host), None);
    // A context docker's config makes current, where nothing else names
    // the host: not known.
    let config =
        std::env::temp_dir().join(format!("eatmydata-docker-config-{}", std::process::id()));
    std::fs::create_dir_all(&config).unwrap();
    let given = format!("--config={}", config.display());
    for (current, known) in [("ci", false), ("default", true)] {
        let text = format!("{{\"currentContext\": \"{current}\"}}");
        std::fs::write(config.join("config.json"), text).unwrap();
        let socket = docker_socket(&words(&given), None);
        assert_eq!(socket.is_some(), known, "{current}");
        assert!(docker_socket(&words(&format!("{given} -H unix:///s")), None).is_some());
    }
    std::fs::remove_dir_all(&config).unwrap();
    let environ = b"PATH=/bin\0DOCKER_BUILDKIT_RUNC_COMMAND=/opt/eatmydata-runtime\0HOME=/\0";
    assert_eq!(
        runc_of(environ),
        BuildkitRunc::Set("/opt/eatmydata-runtime".into())
    );
    assert_eq!(
        runc_of(b"PATH=/bin\0X_DOCKER_BUILDKIT_RUNC_COMMAND=y\0"),
        BuildkitRunc::Unset
    );
}

#[test]
fn the_images_own_config_is_read_for_a_keep() {
    use super::info::read_image;
    let env = br#"["PATH=/bin","EATMYDATA_KEEP=/var/lib/db"]
null
"#;
    let said = read_image(env, "db:1").unwrap();
    assert_eq!(said, "EATMYDATA_KEEP in the image's environment (db:1)");
    let label = br#"["PATH=/bin"]
{"io.eatmydata.keep":"/data","x":"y"}
"#;
    assert!(
        read_image(label, "db:1")
            .unwrap()
            .contains("label io.eatmydata.keep")
    );
    let off = br#"["EATMYDATA_DISABLE=0"]
{"x":"y"}
"#;
    assert_eq!(read_image(off, "db:1"), None);
    // Not held by the engine: its error, nothing on stdout.
    assert_eq!(read_image(b"", "db:1"), None);
    assert_eq!(read_image(b"\n", "db:1"), None);
}

#[test]
fn the_image_is_where_the_options_end() {
    let image = |line| match call("docker", line).unwrap().verb {
        Verb::Start { options, .. } => options.image,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        image("run --rm -v a:b -e X=1 img sh -c x"),
        Some("img".into())
    );
    assert_eq!(image("run -it --name=n -- img"), Some("img".into()));
    assert_eq!(image("container create -p 80:80 img"), Some("img".into()));
    assert_eq!(image("run --rm"), None);
}
