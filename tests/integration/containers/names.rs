//! The report names each container by its name and image, from what each
//! engine gives the runtime at `create` (`account/names.rs`): dockerd's
//! config of the container (`--name`, the image as asked), podman's
//! storage (its name, the image's name), containerd's CRI annotations (the
//! pod's and the container's names, the image's), each beside a container
//! under plain runc, which gets no record. And when a container is counted:
//! each time its process ends and the engine deletes it from the runtime
//! (`docker stop`, or its command's end), not at `docker rm`; started
//! again, it is counted again, under the same id and name.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::account::{Accounted, IMAGE, tiny_image};
use super::at_home::naming_home;
use super::cases::DYNAMIC;
use super::containerd::{Containerd, load, runc_root};
use super::cri::{pod, section};
use super::daemon::RunDir;
use super::daemon::StoreLock;
use super::engine::runtime;
use super::engine::{CACHE, Job};
use super::podman;
use crate::common::home::RootHome;
use crate::common::{TempDir, registered_runtime};
use crate::loopfs::LoopFs;

/// The records of `report` with `id`.
fn with_id<'a>(report: &'a Value, id: &str) -> Vec<&'a Value> {
    report["containers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] == id)
        .collect()
}

/// Waits up to a minute for `count` records of `id` in `docker`'s account.
fn wait_for(docker: &Accounted, id: &str, count: usize) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let report = docker.report(&[]);
        if with_id(&report, id).len() >= count {
            return report;
        }
        assert!(
            Instant::now() < deadline,
            "{count} records of {id}: {report:#}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn docker_containers_are_named_and_counted_each_time_they_stop() {
    let docker = Accounted::start("names-docker");
    let id = docker.ok(&[
        "run",
        "-d",
        "--network=none",
        "--runtime",
        "eatmydata",
        "--name",
        "named-db",
        IMAGE,
        "/bin/sync",
        "loop",
        "/tmp/f",
        "3",
    ]);
    docker.ok(&["wait", &id]);
    // Counted once its process ended, with no `docker rm`.
    let report = wait_for(&docker, &id, 1);
    let record = with_id(&report, &id)[0];
    assert_eq!(record["name"], "named-db", "{record:#}");
    assert_eq!(record["image"], IMAGE, "{record:#}");
    assert_eq!(record["skips"]["fsync"], 3, "{record:#}");
    // Started again: counted again, same id and name.
    docker.ok(&["start", "-a", &id]);
    let report = wait_for(&docker, &id, 2);
    let again = with_id(&report, &id);
    assert!(again.iter().all(|r| r["name"] == "named-db"), "{report:#}");
    // Stopped while it runs (`docker stop`): counted at the stop.
    let held = docker.ok(&[
        "run",
        "-d",
        "-i",
        "--network=none",
        "--runtime",
        "eatmydata",
        "--name",
        "held",
        IMAGE,
        "/bin/hold",
    ]);
    docker.ok(&["exec", &held, "/bin/sync", "loop", "/tmp/f", "4"]);
    docker.ok(&["stop", "--time", "1", &held]);
    let report = wait_for(&docker, &held, 1);
    let record = with_id(&report, &held)[0];
    assert_eq!(record["name"], "held", "{record:#}");
    assert_eq!(record["skips"]["fsync"], 4, "{record:#}");
    docker.ok(&["rm", &held, &id]);
    // The control: under runc, no record at all.
    let plain = docker.ok(&[
        "run",
        "-d",
        "--network=none",
        "--runtime",
        "runc",
        "--name",
        "plain",
        IMAGE,
        "/bin/sync",
        "loop",
        "/tmp/f",
        "3",
    ]);
    docker.ok(&["wait", &plain]);
    std::thread::sleep(Duration::from_secs(1));
    assert!(with_id(&docker.report(&[]), &plain).is_empty());
    // The table a CI job's summary shows names each one.
    let output = Command::new(runtime())
        .args(["report", "--markdown"])
        .env("EATMYDATA_HOME", &docker.account)
        .output()
        .unwrap();
    let markdown = String::from_utf8_lossy(&output.stdout);
    assert!(
        markdown.contains(&format!("| `named-db` | `{IMAGE}` |")),
        "{markdown}"
    );
    assert!(
        markdown.contains(&format!("| `held` | `{IMAGE}` |")),
        "{markdown}"
    );
    eprintln!("names: {markdown}");
    // And the text a person reads at a terminal.
    let text = docker.report_text();
    assert!(text.contains(&format!("    named-db  {IMAGE}  ")), "{text}");
    assert!(text.contains(&format!("    held  {IMAGE}  ")), "{text}");
}

/// podman on storage of the test's own (its run folder under /run:
/// podman takes no longer one), the runtime by its path, root's home (the
/// account, the containers' folders) the test's own: podman hands the
/// runtime none of its environment, so the runtime podman is given is a
/// script that names the home and executes `eatmydata-runtime`
/// (`at_home.rs`).
struct Podman {
    dir: TempDir,
    run: RunDir,
    home: RootHome,
}

impl Podman {
    fn command(&self) -> Command {
        let mut command = podman();
        command
            .arg("--root")
            .arg(self.dir.join("root"))
            .arg("--runroot")
            .arg(self.run.path())
            .args(["--storage-driver", "vfs"])
            .stdin(Stdio::null());
        command
    }

    fn ok(&self, args: &[&str]) -> String {
        let output = self.command().args(args).output().unwrap();
        assert!(
            output.status.success(),
            "podman {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }
}

#[test]
fn podman_containers_are_named_by_their_storage() {
    let podman = Podman {
        dir: TempDir::new("names-podman"),
        run: RunDir::new("names"),
        home: RootHome::new("names-podman"),
    };
    let tar = tiny_image(&podman.dir.join("image"));
    let image = "localhost/eatmydata-test/names:1";
    podman.ok(&["import", "--quiet", tar.to_str().unwrap(), image]);
    let script = podman.home.join("eatmydata-runtime");
    naming_home(&script, podman.home.path(), &registered_runtime());
    let run = |runtime: &Path, name: &str| {
        podman.ok(&[
            "--runtime",
            runtime.to_str().unwrap(),
            "run",
            "--network=none",
            "--name",
            name,
            image,
            "/bin/sync",
            "loop",
            "/tmp/f",
            "5",
        ]);
        podman.ok(&["inspect", "--format", "{{.Id}}", name])
    };
    let id = run(&script, "named-podman");
    let plain = run(Path::new("runc"), "plain-podman");
    // One record, the eaten container's: the one under runc has none.
    let report = account_with(podman.home.path(), 1);
    assert_eq!(report["total"]["containers"], 1, "{report:#}");
    let record = with_id(&report, &id)[0];
    assert_eq!(record["name"], "named-podman", "{record:#}");
    assert_eq!(record["image"], image, "{record:#}");
    assert_eq!(record["skips"]["fsync"], 5, "{record:#}");
    assert!(with_id(&report, &plain).is_empty(), "{report:#}");
    let _ = podman.command().args(["rm", "--all", "--force"]).output();
    let _ = fs::remove_file(&tar);
}

/// Reads the account in root's home `home`, through `eatmydata-runtime
/// report`, until it has a record of `count` containers (a minute at most).
fn account_with(home: &Path, count: u64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let output = Command::new(runtime())
            .args(["report", "--json"])
            .env("EATMYDATA_HOME", home)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        if report["total"]["containers"].as_u64() >= Some(count) {
            return report;
        }
        assert!(Instant::now() < deadline, "{count} records: {report:#}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn cri_pods_are_named_by_their_annotations() {
    let _lock = StoreLock::take("containerd");
    let home = RootHome::new("names-cri");
    let mut logs = std::path::PathBuf::new();
    let containerd = Containerd::start_with_env(
        "names-cri",
        &Path::new(CACHE).join("containerd"),
        &[("EATMYDATA_HOME", home.path())],
        |dir| {
            logs = dir.join("pods");
            Some(section(&dir.join("."), &runc_root(dir)))
        },
    );
    let image = load(&containerd);
    let disk = LoopFs::new("names-cri", 64);
    for handler in ["eatmydata", "runc"] {
        let job = Job {
            eaten: handler == "eatmydata",
            image: &image,
            env: &[],
            args: &[DYNAMIC, "loop", "/data/f", "6"],
        };
        let ran = pod(&containerd.socket, handler, &logs, &disk, &job, &[]);
        assert_eq!(ran.status, Some(0), "{}{}", ran.stdout, ran.stderr);
    }
    // The pod under the handler: its container and its sandbox (the pause
    // container, under the pod's handler too); the runc pod's: none.
    let report = account_with(home.path(), 2);
    assert_eq!(report["total"]["containers"], 2, "{report:#}");
    let records = report["containers"].as_array().unwrap();
    // cri.py names its pod p<pid>, the container job.
    let record = records
        .iter()
        .find(|r| r["name"].as_str().unwrap().ends_with("/job"))
        .unwrap_or_else(|| panic!("{report:#}"));
    let name = record["name"].as_str().unwrap();
    let pod_name = name.strip_suffix("/job").unwrap();
    assert!(pod_name.starts_with('p'), "{record:#}");
    let sandbox = format!("{pod_name} (sandbox)");
    assert!(
        records.iter().any(|r| r["name"] == sandbox.as_str()),
        "{report:#}"
    );
    assert!(
        record["image"].as_str().unwrap().ends_with(image.as_str()),
        "{record:#} {image}"
    );
    assert_eq!(record["skips"]["fsync"], 6, "{record:#}");
}
