//! What main refuses, before it changes anything: each case one
//! `::error::` line on stdout that says what to do, nothing else there,
//! exit 1, nothing installed and nothing saved for post. Run with node as
//! the runner runs it (`node action/main.js`), with a control beside the
//! refusals: the same runner with the input fixed gets past the check.

use std::fs;
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::Path;
use std::process::{Command, Output};

use super::{ReleaseHost, Runner, checkout, said};
use crate::common::command;
use crate::containers::daemon::RunDir;

/// A prefix under a root-owned folder of the test's own (passes the rule).
fn prefix(dir: &RunDir) -> String {
    dir.join("prefix").to_str().unwrap().to_owned()
}

/// `node ACTION/action/main.js`, optionally as `uid` (no groups).
fn main(runner: &Runner, action: &Path, uid: Option<u32>) -> Output {
    let script = action.join("action/main.js");
    let mut node = match uid {
        Some(uid) => {
            let mut node = Command::new("setpriv");
            node.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={uid}"))
                .args(["--clear-groups", "/usr/bin/node"]);
            node
        }
        None => Command::new("/usr/bin/node"),
    };
    node.arg(script)
        .current_dir("/")
        .env_clear()
        .envs(&runner.env)
        .output()
        .unwrap()
}

/// A refusal: exit 1, stdout a single `::error::` line holding `says`,
/// nothing installed under `prefix` and nothing saved.
fn refused(output: &Output, runner: &Runner, prefix: &str, says: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{}", said(output));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "not one line: {}", said(output));
    assert!(lines[0].starts_with("::error::eatmydata: "), "{stdout}");
    assert!(lines[0].contains(says), "{stdout}");
    assert!(output.stderr.is_empty(), "{}", said(output));
    assert!(
        !Path::new(prefix).join("bin").exists(),
        "installed: {stdout}"
    );
    let state = fs::read_to_string(&runner.env["GITHUB_STATE"]).unwrap();
    assert_eq!(state, "", "saved for post: {stdout}");
}

/// No docker on the PATH, docker not turned off: the answer is to set
/// `docker: false`; with it set, main gets past the check (the control).
#[test]
fn no_docker_says_set_docker_false() {
    let dir = RunDir::new("action-nodocker");
    let mut runner = Runner::new("action-nodocker");
    let released = fs::read(command()).unwrap();
    let host = ReleaseHost::serve(&runner.dir.join("host"), &released);
    let action = checkout(runner.dir.path(), &released);
    runner.input("prefix", &prefix(&dir));
    runner.input("apt", "false");
    runner.input("release-url", &host.url());
    let empty = runner.dir.join("empty-bin");
    fs::create_dir_all(&empty).unwrap();
    runner
        .env
        .insert("PATH".into(), empty.to_str().unwrap().into());
    refused(
        &main(&runner, &action, None),
        &runner,
        &prefix(&dir),
        "set `docker: false`",
    );

    runner.input("docker", "false");
    // The control needs sh and install, as any runner has; it installs
    // a built command given as `path`, not the release's.
    runner
        .env
        .insert("PATH".into(), "/usr/sbin:/usr/bin:/sbin:/bin".into());
    runner.input("path", command().to_str().unwrap());
    drop(host);
    let control = main(&runner, &action, None);
    assert!(control.status.success(), "{}", said(&control));
    let installed = fs::read(Path::new(&prefix(&dir)).join("bin/eatmydata")).unwrap();
    assert!(installed == released, "installed another file");
}

/// Neither root nor passwordless sudo: said so, with what to do.
#[test]
fn not_root_without_sudo_is_refused() {
    let dir = RunDir::new("action-notroot");
    let mut runner = Runner::new("action-notroot");
    // Under /run, where that user can read it.
    let action = checkout(dir.path(), b"");
    runner.input("prefix", &prefix(&dir));
    runner.input("docker", "false");
    runner.input("apt", "false");
    // The runner's files, as the runner's user has them.
    fs::set_permissions(runner.dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    for file in ["GITHUB_STATE", "GITHUB_STEP_SUMMARY"] {
        chown(&runner.env[file], Some(65534), Some(65534)).unwrap();
    }
    chown(runner.dir.join("temp"), Some(65534), Some(65534)).unwrap();
    let output = main(&runner, &action, Some(65534));
    refused(&output, &runner, &prefix(&dir), "no passwordless sudo");
}

/// A prefix another user can change: refused, naming the folder.
#[test]
fn a_prefix_not_roots_is_refused() {
    let dir = RunDir::new("action-prefix");
    let users = dir.join("users");
    fs::create_dir_all(&users).unwrap();
    chown(&users, Some(65534), Some(65534)).unwrap();
    let theirs = users.join("prefix").to_str().unwrap().to_owned();
    let mut runner = Runner::new("action-prefix");
    let action = checkout(runner.dir.path(), b"");
    runner.input("prefix", &theirs);
    runner.input("docker", "false");
    runner.input("apt", "false");
    let output = main(&runner, &action, None);
    refused(&output, &runner, &theirs, "is owned by uid 65534");
    assert!(said(&output).contains("is not root's"), "{}", said(&output));
}

/// An input holding a newline could add lines to `GITHUB_STATE` (a
/// forged `since=`, or a `docker_config` post would act on): refused
/// whole, and the state file is left empty.
#[test]
fn an_input_with_a_newline_adds_no_state() {
    let dir = RunDir::new("action-newline");
    let mut runner = Runner::new("action-newline");
    let action = checkout(runner.dir.path(), b"");
    runner.input("prefix", &format!("{}\nkeep=true", prefix(&dir)));
    runner.input("docker", "false");
    runner.input("apt", "false");
    let output = main(&runner, &action, None);
    refused(&output, &runner, &prefix(&dir), "control character");
    runner.input("prefix", &prefix(&dir));
    runner.input("apt", "yes");
    let output = main(&runner, &action, None);
    refused(&output, &runner, &prefix(&dir), "give true or false");
}

/// A release file whose hash is not the tree's: refused with both
/// hashes, nothing installed, the downloaded bytes not left behind.
#[test]
fn a_tampered_release_file_is_refused() {
    let dir = RunDir::new("action-tampered");
    let mut runner = Runner::new("action-tampered");
    let released = fs::read(command()).unwrap();
    let action = checkout(runner.dir.path(), &released);
    let mut tampered = released.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 1;
    let host = ReleaseHost::serve(&runner.dir.join("host"), &tampered);
    runner.input("prefix", &prefix(&dir));
    runner.input("docker", "false");
    runner.input("apt", "false");
    runner.input("release-url", &host.url());
    let output = main(&runner, &action, None);
    refused(&output, &runner, &prefix(&dir), "nothing was installed");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(&super::sha256(&tampered)), "{stdout}");
    assert!(stdout.contains(&super::sha256(&released)), "{stdout}");
    let kept = runner.dir.join("temp/eatmydata-action");
    let left = fs::read_dir(&kept).map(|d| d.count()).unwrap_or(0);
    assert_eq!(left, 0, "the refused file was kept in {}", kept.display());

    // The control: the same runner and tree, the file as released.
    let host = ReleaseHost::serve(&runner.dir.join("host2"), &released);
    runner.input("release-url", &host.url());
    let output = main(&runner, &action, None);
    assert!(output.status.success(), "{}", said(&output));
    let installed = fs::read(Path::new(&prefix(&dir)).join("bin/eatmydata")).unwrap();
    assert!(installed == released, "installed another file");
}
