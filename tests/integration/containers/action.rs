//! The GitHub Action (`action.yml`, `action/`), its main and post steps
//! run with node as the runner runs them: the `INPUT_*` variables, the
//! `GITHUB_STATE` and `GITHUB_STEP_SUMMARY` files, and `STATE_*` for the
//! post step from what main saved. A dockerd of the test's own stands for
//! the runner's Docker (`DOCKER_HOST`), with a container started before
//! the action (a job's `services:`), which must still be running after
//! it. apt's half runs in a Debian tree of its own (`chroot`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::account::{Accounted, IMAGE};
use super::engine::{Ran, measure_with};
use crate::common::{TempDir, command};
use crate::loopfs::{LoopFs, assert_few_flushes};

/// fsyncs the container after the action makes.
const SYNCS: u32 = 200;

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The files and variables the runner gives a step.
struct Runner {
    dir: TempDir,
    env: BTreeMap<String, String>,
}

impl Runner {
    fn new(label: &str) -> Runner {
        let dir = TempDir::new(label);
        let mut env = BTreeMap::new();
        for (name, file) in [
            ("GITHUB_STATE", "state"),
            ("GITHUB_STEP_SUMMARY", "summary"),
            ("GITHUB_ENV", "env"),
            ("GITHUB_OUTPUT", "output"),
            ("GITHUB_PATH", "path"),
        ] {
            let path = dir.join(file);
            fs::write(&path, "").unwrap();
            env.insert(name.to_owned(), path.to_str().unwrap().to_owned());
        }
        fs::create_dir_all(dir.join("temp")).unwrap();
        let temp = dir.join("temp").to_str().unwrap().to_owned();
        env.insert("RUNNER_TEMP".into(), temp.clone());
        env.insert("GITHUB_WORKSPACE".into(), temp);
        env.insert("GITHUB_ACTIONS".into(), "true".into());
        env.insert("CI".into(), "true".into());
        Runner { dir, env }
    }

    fn input(&mut self, name: &str, value: &str) {
        self.env
            .insert(format!("INPUT_{}", name.to_uppercase()), value.to_owned());
    }

    /// `node action/SCRIPT`, with what the runner gives: the post step
    /// gets `STATE_name` for each `name=value` main saved.
    fn node(&self, script: &str) -> Output {
        let mut node = Command::new("node");
        node.arg(repository().join("action").join(script))
            .current_dir(self.dir.join("temp"))
            .envs(&self.env);
        if script == "post.js" {
            let saved = fs::read_to_string(&self.env["GITHUB_STATE"]).unwrap();
            for line in saved.lines() {
                let (name, value) = line.split_once('=').unwrap();
                node.env(format!("STATE_{name}"), value);
            }
        }
        let output = node.output().unwrap();
        assert!(
            output.status.success(),
            "node {script}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    fn summary(&self) -> String {
        fs::read_to_string(&self.env["GITHUB_STEP_SUMMARY"]).unwrap()
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

/// One `uses:` line's worth: main registers the runtime as the default of
/// a running dockerd by a reload, the container started before keeps
/// running, a container started after makes at most 5% of a control's
/// flushes, and post writes figures that match the account.
#[test]
fn the_action_on_a_runner_docker() {
    let docker = Accounted::start_unregistered("action", false);
    let service = docker.ok(&["run", "-d", "-i", "--network=none", IMAGE, "/bin/hold"]);
    let started = |id: &str| docker.ok(&["inspect", "--format", "{{.State.StartedAt}}", id]);
    let service_start = started(&service);
    let mut runner = Runner::new("action-runner");
    let prefix = docker.dir().join("prefix");
    runner.input("path", command().to_str().unwrap());
    runner.input("prefix", prefix.to_str().unwrap());
    runner.input("apt", "false");
    runner.input(
        "docker-config",
        docker.dir().join("daemon.json").to_str().unwrap(),
    );
    runner.input(
        "docker-pidfile",
        docker.dir().join("dockerd.pid").to_str().unwrap(),
    );
    let host = format!("unix://{}", docker.socket().display());
    runner.env.insert("DOCKER_HOST".into(), host);
    let account = docker.account.to_str().unwrap().to_owned();
    runner.env.insert("EATMYDATA_ACCOUNT".into(), account);

    let main = runner.node("main.js");
    eprintln!("{}", String::from_utf8_lossy(&main.stderr));
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
    let run = |runtime: &str, file: &str| {
        let args = ["/bin/sync", "loop", file, &syncs];
        let (_, out) = docker.run(runtime, Some(&disk), &args);
        Ran {
            status: Some(0),
            stdout: out,
            stderr: String::new(),
        }
    };
    let control = measure_with(&disk, || run("runc", "/data/control"));
    let eaten = measure_with(&disk, || run("", "/data/eaten"));
    eprintln!(
        "action: control {} flushes, after the action {}",
        control.flushes, eaten.flushes
    );
    assert!(
        control.flushes >= u64::from(SYNCS),
        "control: {}",
        control.flushes
    );
    assert_few_flushes(
        eaten.flushes,
        control.flushes,
        "a container after the action",
    );

    runner.node("post.js");
    let summary = runner.summary();
    eprintln!("{summary}");
    let state = fs::read_to_string(&runner.env["GITHUB_STATE"]).unwrap();
    let since = state
        .lines()
        .find_map(|line| line.strip_prefix("since="))
        .unwrap();
    let report = docker.report(&["--since", since]);
    let (containers, flushes, saved) = figures(&summary);
    assert_eq!(Some(containers), report["total"]["containers"].as_u64());
    assert_eq!(Some(flushes), report["total"]["flushes_skipped"].as_u64());
    assert_eq!(containers, 1, "the control ran under runc: {summary}");
    assert!(flushes >= u64::from(SYNCS), "{summary}");
    assert!(saved.starts_with("about "), "{summary}");
    assert!(
        summary.contains("1 container(s) were running before this action"),
        "{summary}"
    );
    assert!(summary.contains("static and Go programs"), "{summary}");
    docker.ok(&["rm", "-f", &service]);
}

/// Flush requests the device completes for `apt-get install` of a local
/// package with 300 files in a Debian tree, synced afterwards.
fn apt_install(fs: &LoopFs, root: &Path) -> u64 {
    let sync = || {
        let status = Command::new("sync").arg("-f").arg(fs.path()).status();
        assert!(status.unwrap().success());
    };
    chroot(
        root,
        "dpkg -r eatmydata-action-test >/dev/null 2>&1 || true",
    );
    sync();
    let before = fs.flushes();
    let out = chroot(root, "apt-get install -y /tmp/eatmydata-action-test.deb");
    sync();
    assert!(out.contains("Setting up eatmydata-action-test"), "{out}");
    fs.flushes() - before
}

fn chroot(root: &Path, script: &str) -> String {
    let output = Command::new("chroot")
        .arg(root)
        .args(["/bin/sh", "-ec", script])
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .env("LC_ALL", "C")
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "in the tree, `{script}`: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The Action's apt step, as run by main.js's `apt.sh` in a Debian tree:
/// `apt-get install` of a local package makes at most 5% of the flushes
/// it made before the step.
#[test]
fn the_actions_apt_step_puts_dpkg_under_eatmydata() {
    let fs = LoopFs::new("action-apt", 1024);
    let root: PathBuf = fs.join("root");
    let script = repository().join("scripts/debian-rootfs");
    let made = Command::new(script).arg(&root).output().unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    fs::copy(command(), root.join("usr/local/bin/eatmydata")).unwrap();
    fs::copy(repository().join("action/apt.sh"), root.join("tmp/apt.sh")).unwrap();
    chroot(
        &root,
        "mkdir -p /tmp/pkg/DEBIAN /tmp/pkg/usr/share/eatmydata-action-test
         for n in $(seq 300); do echo $n > /tmp/pkg/usr/share/eatmydata-action-test/$n; done
         printf 'Package: eatmydata-action-test\\nVersion: 1\\nArchitecture: all\\nMaintainer: t <t@t>\\nDescription: t\\n' > /tmp/pkg/DEBIAN/control
         dpkg-deb --build /tmp/pkg /tmp/eatmydata-action-test.deb >/dev/null",
    );
    let control = apt_install(&fs, &root);
    let said = chroot(&root, "sh /tmp/apt.sh /usr/local '' 2>&1");
    assert!(said.contains("dpkg under eatmydata"), "{said}");
    let eaten = apt_install(&fs, &root);
    eprintln!("action apt: {control} flushes plain, {eaten} after apt.sh");
    assert!(control >= 100, "control: {control}");
    assert_few_flushes(
        eaten,
        control,
        "apt-get install after the action's apt step",
    );
    assert!(chroot(&root, "dpkg --verify eatmydata-action-test").is_empty());
}
