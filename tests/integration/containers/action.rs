//! The GitHub Action (`action.yml`, `action/`) as GitHub runs it: main
//! and post through GitHub's own local runner for JavaScript actions (npm
//! `@github/local-action`, installed by scripts/setup-test-deps), with
//! what the runner gives a step (the `INPUT_*` variables, the
//! `GITHUB_STATE` and `GITHUB_STEP_SUMMARY` files, `STATE_*` for post).
//! The command comes from a release: a local HTTP server (127.0.0.1)
//! stands for the release host, and the action's tree, copied, carries
//! the hash as scripts/release writes it. A dockerd of the test's own
//! stands for the runner's Docker (`DOCKER_HOST`), with a container
//! started before the action (a job's `services:`), which must still be
//! running after it. apt's half runs in a Debian tree of its own
//! (`chroot`). `lint.rs`: actionlint and YAML parsers; `inputs.rs`: what
//! main refuses; `release.rs`: scripts/release; `services.rs`: a job's
//! `services:` made as the runner makes them, recreated; `runner.rs`: what
//! the runner gives a step, and main and post in one local-action run as
//! docs/ci.md has them typed by hand.

mod apt;
mod inputs;
mod lint;
mod release;
mod runner;
mod services;

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use super::account::{Accounted, IMAGE};
use super::engine::{Ran, assert_flushes_eaten, floor_args, measure_with};
use crate::common::command;
use crate::loopfs::LoopFs;
use runner::{Runner, said};

/// fsyncs the container after the action makes.
const SYNCS: u32 = 200;

/// Where scripts/setup-test-deps installs the npm tools.
const NODE_TOOLS: &str = "/var/tmp/eatmydata-node";

/// A release tag the served files stand for.
const TAG: &str = "v0.0.0-test";

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The SHA-256 of `bytes`, in hex, as sha256sum(1) says it.
fn sha256(bytes: &[u8]) -> String {
    use std::io::Write;
    let mut sum = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    sum.stdin.take().unwrap().write_all(bytes).unwrap();
    let output = sum.wait_with_output().unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout)[..64].to_owned()
}

/// The release file's name for this machine, as action/release.js names it.
fn release_name() -> &'static str {
    match std::env::consts::ARCH {
        "aarch64" => "eatmydata-aarch64",
        _ => "eatmydata-x86_64",
    }
}

/// The action's own tree as GitHub checks it out for `uses:` (action.yml,
/// action/, package.json), with `action/release/` written for [`TAG`],
/// whose hash of the release file is that of `released`.
fn checkout(dir: &Path, released: &[u8]) -> PathBuf {
    let tree = dir.join("checkout");
    fs::create_dir_all(tree.join("action/release")).unwrap();
    for file in ["action.yml", "package.json"] {
        fs::copy(repository().join(file), tree.join(file)).unwrap();
    }
    for entry in fs::read_dir(repository().join("action")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            fs::copy(entry.path(), tree.join("action").join(entry.file_name())).unwrap();
        }
    }
    let sums = format!("{}  {}\n", sha256(released), release_name());
    fs::write(tree.join("action/release/SHA256SUMS"), sums).unwrap();
    fs::write(tree.join("action/release/VERSION"), format!("{TAG}\n")).unwrap();
    tree
}

/// A local HTTP server standing for the release host: `DIR/TAG/NAME`
/// served at `url()/TAG/NAME`; stopped by its pid.
struct ReleaseHost {
    child: Child,
    port: u16,
}

impl ReleaseHost {
    fn serve(dir: &Path, file: &[u8]) -> ReleaseHost {
        fs::create_dir_all(dir.join(TAG)).unwrap();
        fs::write(dir.join(TAG).join(release_name()), file).unwrap();
        let mut child = Command::new("/usr/bin/python3")
            .args(["-u", "-m", "http.server", "--bind", "127.0.0.1", "0"])
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // "Serving HTTP on 127.0.0.1 port N (http://127.0.0.1:N/) ..."
        let port = line
            .split(" port ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("the release host said {line:?}"));
        ReleaseHost { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for ReleaseHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The figures of the summary's first table row: containers served,
/// flushes skipped, time saved.
fn figures(summary: &str) -> (u64, u64, String) {
    let row = summary
        .lines()
        .skip_while(|line| !line.starts_with("| Containers served"))
        .nth(2)
        .unwrap_or_else(|| panic!("no figures in the summary:\n{summary}"));
    let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
    let number = |cell: &str| cell.replace(',', "").parse::<u64>().unwrap();
    (number(cells[0]), number(cells[1]), cells[2].to_owned())
}

/// One `uses:` line's worth, through `@github/local-action`: main
/// downloads the release file from the release host (no cargo on the
/// PATH), checks its hash against the tree's and installs it, in under
/// 10 s; registers the runtime as the default of a running dockerd by a
/// reload; the container started before keeps running, a container
/// started after makes at most 5% of a control's flushes. Post writes
/// figures that match the account and takes it all back: Docker's
/// default is runc again and daemon.json is byte for byte as before.
/// A runner whose action (returned, a checkout of this tree for [`TAG`])
/// installs the release file the host serves with `docker`'s dockerd as
/// the runner's Docker, its account the daemon's; apt left out, and
/// self-hosted (so that post says what it took back).
fn runner_on(docker: &Accounted, label: &str) -> (Runner, ReleaseHost, PathBuf) {
    let mut runner = Runner::new(label);
    let released = fs::read(command()).unwrap();
    let host = ReleaseHost::serve(&runner.dir.join("host"), &released);
    let action = checkout(runner.dir.path(), &released);
    let prefix = docker.dir().join("prefix");
    let config = docker.dir().join("daemon.json");
    runner.input("release-url", &host.url());
    runner.input("prefix", prefix.to_str().unwrap());
    runner.input("apt", "false");
    runner.input("docker-config", config.to_str().unwrap());
    let pidfile = docker.dir().join("dockerd.pid");
    runner.input("docker-pidfile", pidfile.to_str().unwrap());
    let socket = format!("unix://{}", docker.socket().display());
    runner.env.insert("DOCKER_HOST".into(), socket);
    let account = docker.account.to_str().unwrap().to_owned();
    runner.env.insert("EATMYDATA_ACCOUNT".into(), account);
    let home = docker.dir().join("home");
    fs::create_dir_all(&home).unwrap();
    let home = home.to_str().unwrap().to_owned();
    runner.env.insert("EATMYDATA_HOME".into(), home);
    runner
        .env
        .insert("RUNNER_ENVIRONMENT".into(), "self-hosted".into());
    (runner, host, action)
}

#[test]
fn the_action_from_its_release_on_a_runner_docker() {
    let docker = Accounted::start_unregistered("action", false);
    let service = docker.ok(&["run", "-d", "-i", "--network=none", IMAGE, "/bin/hold"]);
    let started = |id: &str| docker.ok(&["inspect", "--format", "{{.State.StartedAt}}", id]);
    let service_start = started(&service);
    let config = docker.dir().join("daemon.json");
    let config_before = fs::read(&config).unwrap();
    let (mut runner, _host, action) = runner_on(&docker, "action-runner");
    let prefix = docker.dir().join("prefix");
    let released = fs::read(command()).unwrap();

    let clock = Instant::now();
    let main = runner.local_action(&action, "main.js");
    let took = clock.elapsed();
    let log = said(&main);
    assert!(main.status.success(), "local-action main: {log}");
    // From the step's start (local-action's own start-up, tsx compiling
    // its TypeScript, comes before) to the command installed.
    let installed: f64 = log
        .split("the command installed ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|seconds| seconds.parse().ok())
        .unwrap_or_else(|| panic!("main did not say when it installed: {log}"));
    eprintln!("action main: installed after {installed} s; local-action ran {took:?}");
    assert!(
        installed < 10.0,
        "the release file installed after {installed} s: {log}"
    );
    assert!(log.contains("downloaded http://127.0.0.1"), "{log}");
    assert!(!log.contains("falling back to cargo"), "{log}");
    assert_eq!(fs::read(prefix.join("bin/eatmydata")).unwrap(), released);
    assert!(prefix.join("bin/eatmydata-runtime").exists());
    assert_eq!(
        docker.ok(&["info", "--format", "{{.DefaultRuntime}}"]),
        "eatmydata"
    );
    let running = docker.ok(&["inspect", "--format", "{{.State.Running}}", &service]);
    assert_eq!(running, "true", "the service container was stopped");
    assert_eq!(
        started(&service),
        service_start,
        "the service container restarted"
    );

    let disk = LoopFs::new("action", 64);
    let syncs = SYNCS.to_string();
    let run = |runtime: &str, file: &str, floor: bool| {
        let args = ["/bin/sync", "loop", file, &syncs];
        let args = if floor {
            floor_args(&disk, &args)
        } else {
            args.to_vec()
        };
        let (_, out) = docker.run(runtime, Some(&disk), &args);
        Ran {
            status: Some(0),
            stdout: out,
            stderr: String::new(),
        }
    };
    let control = measure_with(&disk, || run("runc", "/data/control", false));
    let floor = measure_with(&disk, || run("runc", "/data/floor", true));
    let eaten = measure_with(&disk, || run("", "/data/eaten", false));
    assert_flushes_eaten(
        "action",
        "a container after the action",
        [&control, &floor, &eaten],
        u64::from(SYNCS),
    );

    // `report` times its estimate on a file system it may write scratch
    // files to (TMPDIR among them), never elsewhere: on a runner TMPDIR is
    // the job's disk; here the containers wrote to the test's loop device.
    runner
        .env
        .insert("TMPDIR".into(), disk.path().to_str().unwrap().into());
    let post = runner.local_action(&action, "post.js");
    let log = said(&post);
    assert!(post.status.success(), "local-action post: {log}");
    assert!(
        log.contains("self-hosted runner is as before the job"),
        "{log}"
    );
    let summary = runner.summary();
    eprintln!("{summary}");
    let since = runner.saved()["since"].clone();
    let report = docker.report(&["--since", &since]);
    let (containers, flushes, saved) = figures(&summary);
    assert_eq!(Some(containers), report["total"]["containers"].as_u64());
    assert_eq!(Some(flushes), report["total"]["flushes_skipped"].as_u64());
    assert_eq!(containers, 1, "the control ran under runc: {summary}");
    assert!(flushes >= u64::from(SYNCS), "{summary}");
    assert!(saved.starts_with("about "), "{summary}");
    assert!(
        summary.contains("1 container(s) running before this action ran under runc"),
        "{summary}"
    );
    assert!(summary.contains("static and Go programs"), "{summary}");
    assert_ne!(
        docker.ok(&["info", "--format", "{{.DefaultRuntime}}"]),
        "eatmydata",
        "post left eatmydata as Docker's default: {log}"
    );
    assert_eq!(
        String::from_utf8_lossy(&fs::read(&config).unwrap()),
        String::from_utf8_lossy(&config_before),
        "daemon.json is not as before the job: {log}"
    );
    let mut beside: Vec<String> = fs::read_dir(docker.dir())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("daemon.json"))
        .collect();
    beside.sort();
    assert_eq!(beside, ["daemon.json"], "left beside daemon.json");
    docker.ok(&["rm", "-f", &service]);
}
