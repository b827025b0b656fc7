use std::ffi::{OsStr, OsString};

use super::super::info::{DockerRuntimes, PodmanInfo};
use super::super::{Facts, read};
use super::*;

fn strings(line: &str) -> Vec<OsString> {
    line.split_whitespace().map(OsString::from).collect()
}

/// A docker daemon without the runtime, its default runc and profile
/// docker's own.
fn bare() -> Facts {
    Facts {
        docker: DockerRuntimes {
            answered: true,
            default_name: "runc".into(),
            runtimes: vec![("runc".into(), "runc".into())],
            seccomp: Some("builtin".into()),
            version: "26.1.5+dfsg1".into(),
            ..DockerRuntimes::default()
        },
        ..Facts::default()
    }
}

fn chosen(command: &str, line: &str, facts: &Facts) -> Way {
    let args = strings(line);
    let call = read(OsStr::new(command), &args).unwrap();
    let super::super::Verb::Start { options, .. } = &call.verb else {
        panic!("{line}: not a start");
    };
    choose(&call, options, facts)
}

/// The note of a way that sends nothing.
fn refused(command: &str, line: &str, facts: &Facts) -> String {
    match chosen(command, line, facts) {
        Way::Nothing(Some(note)) => note,
        other => panic!("{line}: {other:?}"),
    }
}

fn profile(command: &str, line: &str, facts: &Facts) -> Profile {
    match chosen(command, line, facts) {
        Way::Profile(profile) => profile,
        other => panic!("{line}: {other:?}"),
    }
}

#[test]
fn any_keep_asked_refuses_the_profile() {
    for (line, why) in [
        (
            "run -e EATMYDATA_KEEP=/data img",
            "EATMYDATA_KEEP in the container's",
        ),
        ("run --env=EATMYDATA_ONLY=/x img", "EATMYDATA_ONLY"),
        ("run -ite EATMYDATA_KEEP img", "EATMYDATA_KEEP"),
        ("run -eEATMYDATA_KEEP img", "EATMYDATA_KEEP"),
        ("run --env EATMYDATA_DISABLE=1 img", "EATMYDATA_DISABLE"),
        (
            "run -l io.eatmydata.keep=/data img",
            "the label io.eatmydata.keep",
        ),
        (
            "run --annotation io.eatmydata.keep=/d img",
            "the annotation io.eatmydata.keep",
        ),
        (
            "run --annotation=io.eatmydata.disable=1 img",
            "io.eatmydata.disable",
        ),
    ] {
        let note = refused("docker", line, &bare());
        assert!(note.contains(why), "{line}: {note}");
        assert!(note.contains("asks to keep syncs"), "{note}");
        assert!(note.ends_with("without eatmydata."), "{note}");
    }
    // Switched off is not asked; another variable is nothing.
    profile("docker", "run -e EATMYDATA_DISABLE=0 -e X=1 img", &bare());
    let mut here = bare();
    here.asked_here = Some("eatmydata's --keep".into());
    let note = refused("docker", "run img", &here);
    assert!(
        note.starts_with("eatmydata's --keep asks to keep syncs"),
        "{note}"
    );
    // The runtime, where there, keeps by mount itself: it is used.
    here.docker.registered = true;
    assert_eq!(
        chosen("docker", "run -e EATMYDATA_KEEP=/d img", &here),
        Way::Runtime("--runtime=eatmydata".into())
    );
}

#[test]
fn no_seccomp_for_the_container_refuses_the_profile() {
    for (line, why) in [
        ("run --privileged img", "--privileged was given"),
        ("run --privileged=true img", "--privileged was given"),
        (
            "run --security-opt seccomp=unconfined img",
            "--security-opt seccomp=unconfined",
        ),
        (
            "run --security-opt=seccomp:unconfined img",
            "--security-opt seccomp=unconfined",
        ),
    ] {
        let note = refused("docker", line, &bare());
        assert!(note.starts_with(why), "{line}: {note}");
        assert!(
            note.contains("(the daemon has no eatmydata runtime)"),
            "{note}"
        );
    }
    profile("docker", "run --privileged=false img", &bare());
    // In the container's own command, past the image, it is not ours.
    profile(
        "docker",
        "run -v /a:/b img sh --privileged -e EATMYDATA_KEEP=/",
        &bare(),
    );
    // Past an option not known, every word counts: safe.
    let note = refused("docker", "run --new-thing x img sh --privileged", &bare());
    assert!(note.starts_with("--privileged"), "{note}");
    let mut daemon = bare();
    for (seccomp, why) in [
        (None, "dockerd applies no seccomp profile here"),
        (
            Some("unconfined"),
            "dockerd runs every container unconfined",
        ),
        (
            Some("/etc/docker/seccomp.json"),
            "dockerd's default profile is its own",
        ),
    ] {
        daemon.docker.seccomp = seccomp.map(Into::into);
        let note = refused("docker", "run img", &daemon);
        assert!(note.starts_with(why), "{note}");
    }
    // A daemon of 20.10 names its default so.
    daemon.docker.seccomp = Some("default".into());
    profile("docker", "run img", &daemon);
}

#[test]
fn gvisor_refuses_the_profile_by_name_path_or_shim() {
    let runsc = |name: &str, program: &str| {
        let mut facts = bare();
        facts.docker.default_name = name.into();
        facts.docker.runtimes.push((name.into(), program.into()));
        facts
    };
    for facts in [
        runsc("runsc", "/usr/local/bin/runsc"),
        runsc("gvisor", "/opt/gvisor/runsc"),
        runsc("sandboxed", "io.containerd.runsc.v1"),
    ] {
        let note = refused("docker", "run img", &facts);
        assert!(note.contains("gVisor's runsc"), "{note}");
        assert!(note.contains("EPERM"), "{note}");
    }
    // Asked for on the line, by a daemon that has ours too.
    let mut both = runsc("runsc", "runsc");
    both.docker.default_name = "runc".into();
    both.docker.registered = true;
    assert!(refused("docker", "run --runtime=runsc img", &both).contains("runsc"));
    // Another runtime asked there: the profile goes with it.
    let asked = profile("docker", "run --runtime runc img", &both);
    assert_eq!(asked.instead, "--runtime=runc was asked");
}

#[test]
fn the_users_profile_is_merged_with_and_builtin_is_none() {
    let given = profile(
        "docker",
        "-H unix:///s run --rm --security-opt seccomp=/p.json img",
        &bare(),
    );
    let user = given.user.unwrap();
    assert_eq!(
        (user.word, user.prefix, user.value),
        (5, 8, "/p.json".into())
    );
    let joined = profile("docker", "run --security-opt=seccomp:/p.json img", &bare());
    let user = joined.user.unwrap();
    assert_eq!((user.word, user.prefix), (1, 23));
    let builtin = profile("docker", "run --security-opt seccomp=builtin img", &bare());
    assert_eq!(builtin.user, None);
    // Another security option is not the profile.
    let other = profile(
        "docker",
        "run --security-opt no-new-privileges img",
        &bare(),
    );
    assert_eq!(other.user, None);
}

#[test]
fn the_line_names_the_profile_where_docker_reads_it() {
    let args = strings("-H unix:///s run --rm img sh");
    assert_eq!(
        with_profile(&args, 2, None, "/proc/self/fd/3"),
        strings("-H unix:///s run --security-opt seccomp=/proc/self/fd/3 --rm img sh")
    );
    let args = strings("run --security-opt=seccomp:/p.json img");
    let user = SeccompOption {
        word: 1,
        prefix: 23,
        value: "/p.json".into(),
    };
    assert_eq!(
        with_profile(&args, 0, Some(&user), "/proc/self/fd/4"),
        strings("run --security-opt=seccomp:/proc/self/fd/4 img")
    );
}

#[test]
fn podman_without_the_runtime_sends_the_profile() {
    let podman = |runtime: &str| Facts {
        podman: PodmanInfo {
            answered: true,
            runtime: (runtime.into(), format!("/usr/bin/{runtime}")),
            seccomp: Some("/usr/share/containers/seccomp.json".into()),
            version: "4.3.1".into(),
        },
        ..Facts::default()
    };
    let sent = profile("podman", "run --rm img", &podman("runc"));
    assert_eq!(sent.engine, Engine::Podman);
    assert_eq!(sent.version.as_deref(), Some("4.3.1"));
    assert!(
        sent.instead
            .contains("neither beside eatmydata nor in PATH")
    );
    assert!(refused("podman", "run img", &podman("runsc")).contains("gVisor"));
    assert!(refused("podman", "run --runtime /opt/runsc img", &podman("runc")).contains("gVisor"));
    let remote = refused("podman", "--remote run img", &podman("runc"));
    assert!(remote.contains("sends a profile's path"), "{remote}");
    let mut off = podman("runc");
    off.podman.seccomp = None;
    assert!(refused("podman", "run img", &off).starts_with("podman applies no seccomp"));
    let silent = refused("podman", "run img", &Facts::default());
    assert!(silent.starts_with("podman info did not answer"), "{silent}");
}
