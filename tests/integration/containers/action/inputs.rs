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
use crate::containers::account::Accounted;
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
    // The post step after it, given nothing: one line says so.
    let post = Command::new("/usr/bin/node")
        .arg(action.join("action/post.js"))
        .current_dir("/")
        .env_clear()
        .envs(&runner.env)
        .output()
        .unwrap();
    assert!(post.status.success(), "{}", said(&post));
    let stdout = String::from_utf8_lossy(&post.stdout);
    assert!(stdout.contains("nothing to take back"), "{}", said(&post));

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
    let temp = runner.dir.join("temp");
    assert_eq!(
        work_dirs(&temp),
        0,
        "the refused file was kept in {}",
        temp.display()
    );

    // The control: the same runner and tree, the file as released.
    let host = ReleaseHost::serve(&runner.dir.join("host2"), &released);
    runner.input("release-url", &host.url());
    let output = main(&runner, &action, None);
    assert!(output.status.success(), "{}", said(&output));
    let installed = fs::read(Path::new(&prefix(&dir)).join("bin/eatmydata")).unwrap();
    assert!(installed == released, "installed another file");
}

/// The folders main made for its download in `folder` and left there.
fn work_dirs(folder: &Path) -> usize {
    let entries = fs::read_dir(folder).unwrap();
    entries
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("eatmydata-action"))
        .count()
}

/// Removes a folder when dropped, also when the test fails.
struct Removed<'a>(&'a Path);

impl Drop for Removed<'_> {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(self.0);
    }
}

/// Without `RUNNER_TEMP`, main downloads into a folder of its own
/// (`mkdtemp`: mode 0700, its user's, a fresh name) in the system's
/// temporary folder, never into `/tmp/eatmydata-action`, which another
/// local user may have made first to swap the file in before root copies
/// it (security review 3, issue 45). Nobody's folder there stays empty,
/// the file as released is installed, and main leaves no folder behind.
#[test]
fn without_runner_temp_the_download_folder_is_main_s_own() {
    let planted = Path::new("/tmp/eatmydata-action");
    assert!(
        planted.symlink_metadata().is_err(),
        "{} is there already: remove it (a test's or an Action's left behind)",
        planted.display()
    );
    fs::create_dir(planted).unwrap();
    let _removed = Removed(planted);
    fs::set_permissions(planted, fs::Permissions::from_mode(0o777)).unwrap();
    chown(planted, Some(65534), Some(65534)).unwrap();
    let dir = RunDir::new("action-no-temp");
    let mut runner = Runner::new("action-no-temp");
    runner.env.remove("RUNNER_TEMP");
    let released = fs::read(command()).unwrap();
    let action = checkout(runner.dir.path(), &released);
    let host = ReleaseHost::serve(&runner.dir.join("host"), &released);
    runner.input("prefix", &prefix(&dir));
    runner.input("docker", "false");
    runner.input("apt", "false");
    runner.input("release-url", &host.url());
    let before = work_dirs(Path::new("/tmp"));
    let output = main(&runner, &action, None);
    assert!(output.status.success(), "{}", said(&output));
    let installed = fs::read(Path::new(&prefix(&dir)).join("bin/eatmydata")).unwrap();
    assert!(installed == released, "installed another file");
    let written: Vec<_> = fs::read_dir(planted).unwrap().collect();
    assert!(
        written.is_empty(),
        "main wrote in another user's folder: {written:?}"
    );
    assert_eq!(
        work_dirs(Path::new("/tmp")),
        before,
        "a folder left in /tmp"
    );
}

/// Stands for `sudo -n`: appends to RECORD the program it was asked to
/// run as root and the environment that program would get (sudo resets
/// the caller's, unless `-E` keeps it; then `env -i NAME=VALUE...`), and
/// runs nothing (`sudo -n true` answers yes).
const SUDO: &str = r#"#!/usr/bin/python3
import os, sys
args = sys.argv[1:]
if args[:1] != ["-n"]:
    sys.exit(1)
args = args[1:]
if args == ["true"]:
    sys.exit(0)
env = {"PATH": "/usr/bin:/bin"}
if args[:1] == ["-E"]:
    env, args = dict(os.environ), args[1:]
if args[:1] == ["env"]:
    args = args[1:]
    if args[:1] == ["-i"]:
        env, args = {}, args[1:]
    while args and "=" in args[0]:
        name, value = args.pop(0).split("=", 1)
        env[name] = value
with open("RECORD", "a") as record:
    record.write(" ".join(args[:2]) + "\n")
    record.write("".join(f"{k}={v}\n" for k, v in sorted(env.items())) + "\n")
sys.exit(1)
"#;

/// A runner's user (not root) has main's steps run as root through
/// `sudo -n`, which gives root a PATH of the system's folders and the
/// variables naming the Docker daemon, never the job's whole environment
/// (security review 3, issue 45: `sudo -n -E`, whose PATH could name
/// folders the job's user writes).
#[test]
fn root_s_steps_get_only_what_they_need_of_the_job_s_environment() {
    let dir = RunDir::new("action-sudo");
    let mut runner = Runner::new("action-sudo");
    let action = checkout(dir.path(), b"");
    let stub = dir.join("stub");
    fs::create_dir(&stub).unwrap();
    let record = dir.join("record");
    fs::write(&record, "").unwrap();
    chown(&record, Some(65534), Some(65534)).unwrap();
    fs::write(
        stub.join("sudo"),
        SUDO.replace("RECORD", record.to_str().unwrap()),
    )
    .unwrap();
    fs::set_permissions(stub.join("sudo"), fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", stub.display());
    runner.env.insert("PATH".into(), path);
    runner.env.insert("JOB_SECRET".into(), "s3cr3t".into());
    runner
        .env
        .insert("DOCKER_HOST".into(), "unix:///run/elsewhere.sock".into());
    runner.input("prefix", &prefix(&dir));
    runner.input("docker", "false");
    runner.input("apt", "false");
    runner.input("path", command().to_str().unwrap());
    fs::set_permissions(runner.dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    for file in ["GITHUB_STATE", "GITHUB_STEP_SUMMARY"] {
        chown(&runner.env[file], Some(65534), Some(65534)).unwrap();
    }
    chown(runner.dir.join("temp"), Some(65534), Some(65534)).unwrap();
    let output = main(&runner, &action, Some(65534));
    let record = fs::read_to_string(&record).unwrap();
    assert!(
        record.starts_with("sh "),
        "no step asked root: {record}{}",
        said(&output)
    );
    assert!(record.contains("/action/install.sh\n"), "{record}");
    assert!(
        !record.contains("s3cr3t"),
        "root got the job's environment: {record}"
    );
    assert!(
        record.contains("\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"),
        "{record}"
    );
    assert!(
        record.contains("\nDOCKER_HOST=unix:///run/elsewhere.sock\n"),
        "{record}"
    );
}

/// `node -e` calling action/checks.js's `all()` and `command(FILE)` as
/// main does, with the runner's environment: the control of a refusal,
/// which gets past every check without installing anything.
fn checks_pass(runner: &Runner, action: &Path, file: &Path) -> Output {
    let script = format!(
        "const c = require({:?}); c.command({:?}, c.all());",
        action.join("action/checks.js").to_str().unwrap(),
        file.to_str().unwrap()
    );
    Command::new("/usr/bin/node")
        .args(["-e", &script])
        .current_dir("/")
        .env_clear()
        .envs(&runner.env)
        .output()
        .unwrap()
}

/// What the runner's Docker or the file given make impossible, found
/// before anything is installed, each reason in the `::error::` line: a
/// `path` that is not eatmydata, a `docker-config` the running dockerd
/// does not read, a daemon.json configure cannot edit. Before: installed,
/// then "action/docker.sh failed (exit 1); its reason is above" (or, for
/// the path, installed `true` as eatmydata). Each beside the control: the
/// same runner with that input right passes every check.
#[test]
fn what_docker_or_the_file_cannot_take_is_refused_before_anything_changes() {
    let dir = RunDir::new("action-precheck");
    let mut runner = Runner::new("action-precheck");
    let action = checkout(runner.dir.path(), b"");
    runner.input("prefix", &prefix(&dir));
    runner.input("apt", "false");
    runner.input("docker", "false");
    runner.input("path", "/bin/true");
    refused(
        &main(&runner, &action, None),
        &runner,
        &prefix(&dir),
        "/bin/true is not the eatmydata command",
    );
    let control = checks_pass(&runner, &action, &command());
    assert!(control.status.success(), "{}", said(&control));

    let docker = Accounted::start_unregistered("action-precheck", false);
    let config = docker.dir().join("daemon.json");
    let pidfile = docker.dir().join("dockerd.pid");
    let socket = format!("unix://{}", docker.socket().display());
    runner.env.insert("DOCKER_HOST".into(), socket);
    runner.input("docker", "true");
    runner.input("path", command().to_str().unwrap());
    runner.input("docker-pidfile", pidfile.to_str().unwrap());
    let elsewhere = dir.join("daemon.json");
    fs::write(&elsewhere, "{}\n").unwrap();
    runner.input("docker-config", elsewhere.to_str().unwrap());
    refused(
        &main(&runner, &action, None),
        &runner,
        &prefix(&dir),
        &format!("reads {}, not docker-config", config.display()),
    );
    runner.input("docker-config", config.to_str().unwrap());
    let control = checks_pass(&runner, &action, &command());
    assert!(control.status.success(), "{}", said(&control));

    let good = fs::read(&config).unwrap();
    fs::write(&config, "{\"log-driver\": ").unwrap();
    refused(
        &main(&runner, &action, None),
        &runner,
        &prefix(&dir),
        &format!("configure: cannot edit {}", config.display()),
    );
    assert_eq!(fs::read(&config).unwrap(), b"{\"log-driver\": ");
    fs::write(&config, good).unwrap();
    assert_eq!(
        docker.ok(&["info", "--format", "{{.DefaultRuntime}}"]),
        "runc"
    );
}
