//! `eatmydata profile` as a command: the JSON alone on stdout, the engine's
//! default rule for rule with the sync rules after, which default and
//! whence on stderr, bad input refused with status 2 and nothing printed.
//! The engine's answers come from a stand-in `docker` first in `PATH`;
//! the real engines are asked in `containers/profile.rs`.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::{TempDir, command};

/// The sync family: the names the profile's own rules answer.
const FAMILY: &[&str] = &[
    "fsync",
    "fdatasync",
    "sync_file_range",
    "sync_file_range2",
    "arm_sync_file_range",
    "syncfs",
    "sync",
    "msync",
];

/// A `docker` that answers `version` with `$FAKE_VERSION` and `info` with
/// `$FAKE_RUNTIME`, and fails when either is unset, as docker does when
/// no daemon answers.
const FAKE_DOCKER: &str = r#"#!/bin/sh
case "$1 $2 $3" in
  "version --format {{.Server.Version}}") [ -n "$FAKE_VERSION" ] && echo "$FAKE_VERSION" ;;
  "info --format {{.DefaultRuntime}}") [ -n "$FAKE_RUNTIME" ] && echo "$FAKE_RUNTIME" ;;
  *) exit 1 ;;
esac
"#;

fn profile(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap());
    Command::new(command())
        .arg("profile")
        .args(args)
        .env("PATH", path)
        .env_remove("FAKE_VERSION")
        .env_remove("FAKE_RUNTIME")
        .envs(env.iter().copied())
        .output()
        .expect("run eatmydata profile")
}

fn stand_in() -> TempDir {
    let dir = TempDir::new("profile-docker");
    let docker = dir.join("docker");
    fs::write(&docker, FAKE_DOCKER).unwrap();
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    fs::set_permissions(&docker, mode).unwrap();
    dir
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Each rule's action by the names it gives it, the family's left out.
fn actions(profile: &Value) -> BTreeMap<String, Vec<String>> {
    let mut actions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for rule in profile["syscalls"].as_array().unwrap() {
        for name in rule["names"].as_array().unwrap() {
            let name = name.as_str().unwrap();
            if !FAMILY.contains(&name) {
                let what = format!("{} {} {}", rule["action"], rule["args"], rule["includes"]);
                actions.entry(name.to_owned()).or_default().push(what);
            }
        }
    }
    actions
}

#[test]
fn each_carried_default_comes_out_rule_for_rule_with_the_sync_rules() {
    let dir = stand_in();
    let list = profile(dir.path(), &["--list"], &[]);
    assert!(list.status.success());
    let list = String::from_utf8(list.stdout).unwrap();
    assert_eq!(list.lines().count(), 4, "{list}");
    for line in list.lines() {
        let [engine, version, file] = line.split(' ').collect::<Vec<_>>()[..] else {
            panic!("{line}")
        };
        assert_eq!(file, format!("eatmydata-{engine}-{version}.json"));
        let output = profile(dir.path(), &[engine, "--engine-version", version], &[]);
        assert!(output.status.success(), "{}", stderr(&output));
        let made: Value = serde_json::from_slice(&output.stdout).unwrap();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "src/wrapper/profile/defaults/{engine}-{version}.json"
        ));
        let default: Value = serde_json::from_slice(&fs::read(source).unwrap()).unwrap();
        // Everything but the family's rules is the default's, in order.
        assert_eq!(actions(&made), actions(&default), "{line}");
        for key in ["defaultAction", "defaultErrnoRet", "archMap"] {
            assert_eq!(made.get(key), default.get(key), "{line} {key}");
        }
        let zero = made["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["errnoRet"] == 0)
            .flat_map(|r| r["names"].as_array().unwrap().iter())
            .filter_map(Value::as_str)
            .collect::<Vec<_>>();
        for call in FAMILY {
            assert!(zero.contains(call), "{line}: {call} not answered 0");
        }
        let title = if engine == "docker" {
            "Docker"
        } else {
            "podman"
        };
        assert_eq!(
            stderr(&output),
            format!(
                "eatmydata: profile: {title} {version}'s default, for {title} {version} (--engine-version)\n"
            )
        );
    }
}

#[test]
fn the_daemons_version_picks_the_default_and_a_newer_one_the_nearest_older() {
    let dir = stand_in();
    let output = profile(
        dir.path(),
        &["docker"],
        &[("FAKE_VERSION", "28.0.1"), ("FAKE_RUNTIME", "runc")],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(serde_json::from_slice::<Value>(&output.stdout).is_ok());
    assert_eq!(
        stderr(&output),
        "eatmydata: profile: Docker 26.1's default, the nearest older one known: Docker 28.0.1's \
         is not carried by this command (version asked of the daemon)\n"
    );
    // No daemon: the newest, said so.
    let output = profile(dir.path(), &["docker"], &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("Docker 26.1's default, the newest known"));
    assert!(stderr(&output).contains("no docker daemon answered"));
}

#[test]
fn a_daemon_whose_runtime_drops_errno_ret_gets_no_profile() {
    let dir = stand_in();
    let runc = [("FAKE_VERSION", "20.10.24"), ("FAKE_RUNTIME", "runc")];
    let output = profile(dir.path(), &["docker"], &runc);
    assert!(output.status.success(), "control: {}", stderr(&output));
    let runsc = [("FAKE_VERSION", "20.10.24"), ("FAKE_RUNTIME", "runsc")];
    let output = profile(dir.path(), &["docker"], &runsc);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(
        stderr(&output).starts_with(
            "eatmydata: profile: the docker daemon's default runtime is runsc, which drops a rule's errnoRet"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn bad_input_is_said_with_status_2_and_nothing_printed() {
    let dir = stand_in();
    for args in [
        &["containerd"][..],
        &[][..],
        &["docker", "--engine-version", "19.03.15"][..],
        &["docker", "--engine-version", "latest"][..],
        &["podman", "--bogus"][..],
    ] {
        let output = profile(dir.path(), args, &[]);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(
            stderr(&output).starts_with("eatmydata: profile: "),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // An output file that cannot be written: 125, nothing left.
    let missing = dir.join("no/such/folder/p.json");
    let output = profile(
        dir.path(),
        &[
            "docker",
            "--engine-version",
            "26",
            "--output",
            missing.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(125), "{}", stderr(&output));
    assert!(!dir.join("no").exists());
}

/// A local podman's default is the file its containers.conf names.
#[test]
fn podmans_default_is_the_file_containers_conf_names() {
    let dir = TempDir::new("profile-podman-conf");
    let named = dir.join("mine.json");
    fs::write(&named, r#"{"defaultAction": "SCMP_ACT_ERRNO", "syscalls": [{"names": ["read", "fsync"], "action": "SCMP_ACT_ALLOW"}]}"#).unwrap();
    let conf = dir.join("containers.conf");
    fs::write(
        &conf,
        format!("[containers]\nseccomp_profile = \"{}\"\n", named.display()),
    )
    .unwrap();
    let output = Command::new(command())
        .args(["profile", "podman"])
        .env("CONTAINERS_CONF", &conf)
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let made: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(made["syscalls"][0]["names"], serde_json::json!(["read"]));
    assert!(
        stderr(&output).contains(&format!(
            "podman's default, {}, as {} names it",
            named.display(),
            conf.display()
        )),
        "{}",
        stderr(&output)
    );
    // unconfined: podman applies no filter; no profile made.
    fs::write(&conf, "[containers]\nseccomp_profile = \"unconfined\"\n").unwrap();
    let output = Command::new(command())
        .args(["profile", "podman"])
        .env("CONTAINERS_CONF", &conf)
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("unconfined"),
        "{}",
        stderr(&output)
    );
}
