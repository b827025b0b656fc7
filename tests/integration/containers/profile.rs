//! `eatmydata profile`'s file given to engines that have nothing of ours
//! registered: `docker run --security-opt seccomp=FILE` on Debian 12's
//! Docker 20.10 and on Debian 13's Docker 26 (in a mount namespace that
//! cannot see our files), `podman --runtime runc run --security-opt
//! seccomp=FILE`. For each: the file made by the command, which asks the
//! engine its version; a container's fsyncs on a loop device's volume,
//! beside the same container under the engine's default and its floor;
//! the kernel's answers kept where a sync cannot flush (a negative
//! descriptor: `EBADF`); and on Docker, every call the default's lists
//! name, tried under the default and under the profile: the same answer
//! for each, the sync family aside (the table in docs/profile.md).
//!
//! The containers run a small image of static probes, imported from a
//! tar: nothing else needs to reach the engine.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::daemon::{Dockerd, RunDir, Unmounted};
use super::docker26::{Docker26, Runtime};
use super::engine::{Engine, Job, Ran, assert_eaten, floor_args, measure};
use crate::common::{TempDir, command, nosync, probe};
use crate::loopfs::LoopFs;

/// fsyncs a container makes.
const SYNCS: u32 = 200;

/// The probes' paths in the image.
const SYNC: &str = "/sync-static";
const EVERY: &str = "/every_call";

/// The probes, in a tar an engine imports as an image.
fn probes_tar(dir: &TempDir) -> PathBuf {
    let tree = dir.join("tree");
    fs::create_dir_all(&tree).unwrap();
    for (from, to) in [
        (probe("seccomp_sync", &["-static"]), SYNC),
        (probe("every_call", &["-static"]), EVERY),
        (nosync(), "/nosync"),
    ] {
        fs::copy(from, tree.join(&to[1..])).expect("copy a probe");
    }
    let tar = dir.join("probes.tar");
    let status = Command::new("tar")
        .arg("-C")
        .arg(&tree)
        .arg("-cf")
        .arg(&tar)
        .arg(".")
        .status()
        .unwrap();
    assert!(status.success());
    tar
}

/// `command` run with the tar on its stdin, asserting success.
fn import(mut command: Command, tar: &Path) {
    let output = command
        .stdin(fs::File::open(tar).unwrap())
        .output()
        .expect("import the probes");
    assert!(output.status.success(), "{}", text(&output.into()));
}

fn text(ran: &Ran) -> String {
    format!("{:?}: {}{}", ran.status, ran.stdout, ran.stderr)
}

/// `eatmydata profile ENGINE --output FILE` with `env` (the engine's
/// socket): the file, and what it said on stderr.
fn make_profile(engine: &str, env: &[(&str, &str)], file: &Path) -> String {
    let output = Command::new(command())
        .args(["profile", engine, "--output"])
        .arg(file)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run eatmydata profile");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    assert!(output.stdout.is_empty(), "the JSON went to the file");
    let json: serde_json::Value = serde_json::from_slice(&fs::read(file).unwrap()).unwrap();
    assert!(json["syscalls"].as_array().is_some_and(|r| r.len() > 10));
    stderr
}

/// An engine whose containers get the profile when "eaten", and its own
/// default otherwise: plain runc either way.
struct Profiled {
    name: &'static str,
    client: Box<dyn Fn() -> Command>,
    /// What `-v` gives the engine for the test's disk.
    volume: PathBuf,
    profile: PathBuf,
}

impl Engine for Profiled {
    fn name(&self) -> &'static str {
        self.name
    }

    fn image(&self) -> &str {
        "eatmydata-test/profile-probes"
    }

    /// `/data` is always `self.volume`: `disk`'s file system as the
    /// engine sees it.
    fn run(&self, _disk: &LoopFs, job: &Job) -> Ran {
        let mut client = (self.client)();
        client.args(["run", "--rm", "--network=none"]);
        if job.eaten {
            let option = format!("seccomp={}", self.profile.display());
            client.args(["--security-opt", &option]);
        }
        client
            .arg("-v")
            .arg(format!("{}:/data", self.volume.display()));
        client.arg(job.image).args(job.args);
        client.stdin(Stdio::null());
        client.output().expect("run a container").into()
    }
}

impl Profiled {
    /// `args` in a container, under the profile or the default.
    fn ran(&self, disk: &LoopFs, profiled: bool, args: &[&str]) -> Ran {
        let job = Job {
            eaten: profiled,
            image: self.image(),
            env: &[],
            args,
        };
        let ran = self.run(disk, &job);
        assert_eq!(ran.status, Some(0), "{}: {}", self.name, text(&ran));
        ran
    }

    /// [`SYNCS`] fsyncs on the volume eaten: the run under the default
    /// (the control), the same files written under `nosync` (the floor),
    /// the run under the profile, which may flush the floor and 5% of
    /// the control's syncs (`common::flushes`); the kernel's answers kept
    /// for calls that cannot flush: `EBADF` for a negative descriptor
    /// under both, the pipe's `EINVAL` answered 0 by the profile alone.
    fn eats_syncs_and_keeps_ebadf(&self, disk: &LoopFs) {
        let syncs = SYNCS.to_string();
        let run = |profiled: bool, file: &str, floor: bool| {
            let args = [SYNC, "loop", file, &syncs];
            let args = match floor {
                true => floor_args(disk, &args),
                false => args.to_vec(),
            };
            let job = Job {
                eaten: profiled,
                image: self.image(),
                env: &[],
                args: &args,
            };
            measure(self, disk, &job)
        };
        let control = run(false, "/data/control", false);
        let floor = run(false, "/data/floor", true);
        let eaten = run(true, "/data/eaten", false);
        assert_eaten(
            self.name,
            "fsyncs under the profile",
            [&control, &floor, &eaten],
            u64::from(SYNCS),
        );
        eprintln!(
            "profile: {}: {SYNCS} fsyncs made {} flushes under the default, {} under the profile ({:.1}%), the floor {}",
            self.name,
            control.flushes,
            eaten.flushes,
            100.0 * eaten.flushes as f64 / control.flushes.max(1) as f64,
            floor.flushes
        );
        let lines = |profiled| -> BTreeMap<String, String> {
            let ran = self.ran(disk, profiled, &[SYNC, "calls"]);
            let pairs = ran.stdout.lines().filter_map(|l| l.split_once('='));
            pairs.map(|(k, v)| (k.to_owned(), v.to_owned())).collect()
        };
        let (default, profiled) = (lines(false), lines(true));
        for bad in ["fsync_badfd", "syncfs_badfd"] {
            assert_eq!(default[bad], "EBADF", "{}: {default:?}", self.name);
            assert_eq!(profiled[bad], "EBADF", "{}: {profiled:?}", self.name);
        }
        for pipe in [
            "fsync_pipe",
            "fdatasync_pipe",
            "raw_fsync_pipe",
            "i386_fsync_pipe",
        ] {
            assert_eq!(default[pipe], "EINVAL", "{}: {default:?}", self.name);
            assert_eq!(profiled[pipe], "0", "{}: {profiled:?}", self.name);
        }
        assert_eq!(default["write_pipe"], "0");
        assert_eq!(profiled["write_pipe"], "0");
    }

    /// Every call the default's lists name, by its x86_64 number, tried
    /// with bad arguments and with a pipe's descriptor first, under the
    /// default and under the profile: the same answer each, but for the
    /// sync family, whose answers are those the table in docs/profile.md
    /// gives. Returns the table's rows.
    fn answers_alike(&self, disk: &LoopFs, default_json: &str) -> Vec<String> {
        let numbers = x86_64_numbers();
        let default: serde_json::Value = serde_json::from_str(default_json).unwrap();
        let mut names: Vec<&str> = default["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|rule| rule["names"].as_array().unwrap())
            .filter_map(|n| n.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        // vfork's child would run on its parent's stack; clone's, with a
        // descriptor for flags, ends the probe's child with a signal
        // (flags 4: SIGILL) before it says what it got.
        let tried: Vec<(&str, u32)> = names
            .iter()
            .filter(|&&n| n != "vfork" && n != "clone")
            .filter_map(|&n| Some((n, *numbers.get(n)?)))
            .collect();
        assert!(tried.len() > 300, "{} calls known", tried.len());
        let nrs: Vec<String> = tried.iter().map(|(_, nr)| nr.to_string()).collect();
        let answers = |profiled: bool, mode: &str| -> BTreeMap<u32, String> {
            let args: Vec<&str> = [EVERY, mode]
                .into_iter()
                .chain(nrs.iter().map(String::as_str))
                .collect();
            let ran = self.ran(disk, profiled, &args);
            let lines = ran.stdout.lines().filter_map(|l| l.split_once(' '));
            lines
                .map(|(nr, a)| (nr.parse().unwrap(), a.to_owned()))
                .collect()
        };
        let family = [
            "fsync",
            "fdatasync",
            "sync_file_range",
            "syncfs",
            "sync",
            "msync",
        ];
        let mut rows = vec![];
        let mut same = 0;
        for mode in ["bad", "pipe"] {
            let (default, profiled) = (answers(false, mode), answers(true, mode));
            assert_eq!(default.len(), tried.len(), "{}: {default:?}", self.name);
            for &(name, nr) in &tried {
                let (d, p) = (&default[&nr], &profiled[&nr]);
                if family.contains(&name) {
                    rows.push(format!("| `{name}` | {mode} | {d} | {p} |"));
                    let eaten = match (name, mode) {
                        ("msync", "pipe") => "EINVAL",
                        (_, "bad") if name != "msync" && name != "sync" => "EBADF",
                        _ => "ok",
                    };
                    assert_eq!(p, eaten, "{} {name} {mode}: under the profile", self.name);
                } else {
                    assert_eq!(d, p, "{} {name} ({nr}) {mode}: default, profile", self.name);
                    same += 1;
                }
            }
        }
        rows.push(format!("{same} other answers, the same under both"));
        eprintln!("profile: {}:\n{}", self.name, rows.join("\n"));
        rows
    }
}

/// The x86_64 numbers of the calls, from the kernel's headers.
fn x86_64_numbers() -> BTreeMap<String, u32> {
    let header = fs::read_to_string("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
        .expect("the kernel's headers (linux-libc-dev)");
    header
        .lines()
        .filter_map(|line| {
            let mut words = line.strip_prefix("#define __NR_")?.split_whitespace();
            Some((words.next()?.to_owned(), words.next()?.parse().ok()?))
        })
        .collect()
}

/// Debian 12's Docker 20.10, a dockerd of the test's own (and its own
/// containerd), its data root on a loop device and the volume on another.
#[test]
fn docker_20_10_eats_the_syncs_under_the_profile() {
    let disk = LoopFs::new("profile-docker20", 64);
    let store = LoopFs::new("profile-docker20-store", 256);
    let dir = RunDir::new("profile-docker20");
    let config = dir.join("daemon.json");
    fs::write(&config, "{}\n").unwrap();
    let data_root = store.path().join("docker");
    let _mounts = Unmounted(data_root.clone());
    let dockerd = Dockerd::start(dir.path(), &config, &data_root, &dir.join("exec"), None);
    let scratch = TempDir::new("profile-docker20");
    let socket = format!("unix://{}", dockerd.socket.display());
    let mut importing = dockerd.docker();
    importing.args(["import", "-", "eatmydata-test/profile-probes"]);
    import(importing, &probes_tar(&scratch));
    let profile = scratch.join("eatmydata-docker.json");
    let said = make_profile("docker", &[("DOCKER_HOST", &socket)], &profile);
    assert!(
        said.contains("Docker 20.10's default, for Docker 20.10.24")
            && said.contains("(version asked of the daemon)"),
        "{said}"
    );
    let socket_path = dockerd.socket.clone();
    let engine = Profiled {
        name: "docker 20.10",
        client: Box::new(move || {
            let mut docker = Command::new("docker");
            docker
                .arg("-H")
                .arg(format!("unix://{}", socket_path.display()));
            docker
        }),
        volume: disk.path().to_owned(),
        profile,
    };
    engine.eats_syncs_and_keeps_ebadf(&disk);
    engine.answers_alike(
        &disk,
        include_str!("../../../src/wrapper/profile/defaults/docker-20.10.json"),
    );
    drop(dockerd);
}

/// Debian 13's Docker 26 in a mount namespace of its own, which sees the
/// trixie root and the test's folder only: nothing of ours.
#[test]
fn docker_26_eats_the_syncs_under_the_profile() {
    let disk = LoopFs::new("profile-docker26", 64);
    let store = LoopFs::new("profile-docker26-store", 256);
    let docker =
        Docker26::start_with_volume("profile26", store.path(), Runtime::Plain, Some(disk.path()));
    let scratch = TempDir::new("profile-docker26");
    let mut importing = docker.docker();
    importing.args(["import", "-", "eatmydata-test/profile-probes"]);
    import(importing, &probes_tar(&scratch));
    let profile = scratch.join("eatmydata-docker.json");
    // The client's -H and DOCKER_CONFIG, as docker26.rs gives them.
    let client = docker.docker();
    let env: Vec<(String, String)> = client
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
        .collect();
    let host = client
        .get_args()
        .skip_while(|a| *a != "-H")
        .nth(1)
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    env.push(("DOCKER_HOST", &host));
    let said = make_profile("docker", &env, &profile);
    assert!(
        said.contains("Docker 26.1's default, for Docker 26.1.5")
            && said.contains("(version asked of the daemon)"),
        "{said}"
    );
    let volume = docker.volume();
    let engine = Profiled {
        name: "docker 26",
        client: Box::new(move || {
            let mut docker = Command::new("docker");
            docker.arg("-H").arg(&host);
            docker
        }),
        volume,
        profile,
    };
    engine.eats_syncs_and_keeps_ebadf(&disk);
    engine.answers_alike(
        &disk,
        include_str!("../../../src/wrapper/profile/defaults/docker-26.1.json"),
    );
    drop(docker);
}

/// podman with runc (crun cannot run containers on this cgroup v1 host),
/// on a store of the test's own; its default is the file its
/// containers.conf points to, Debian's containers-common.
#[test]
fn podman_eats_the_syncs_under_the_profile() {
    let disk = LoopFs::new("profile-podman", 64);
    let scratch = TempDir::new("profile-podman");
    // podman takes a run root of at most 50 characters.
    let run = RunDir::new("profile-podman");
    let (root, runroot) = (scratch.join("root"), run.join("r"));
    let store = [
        "--root".to_owned(),
        root.display().to_string(),
        "--runroot".to_owned(),
        runroot.display().to_string(),
        "--storage-driver".to_owned(),
        "vfs".to_owned(),
    ];
    let podman = move || {
        let mut podman = super::podman();
        podman.args(&store);
        podman
    };
    let mut importing = podman();
    importing.args(["import", "-", "eatmydata-test/profile-probes"]);
    import(importing, &probes_tar(&scratch));
    let profile = scratch.join("eatmydata-podman.json");
    let conf = super::conf();
    let said = make_profile(
        "podman",
        &[("CONTAINERS_CONF", conf.to_str().unwrap())],
        &profile,
    );
    assert!(
        said.contains("podman's default, /usr/share/containers/seccomp.json"),
        "{said}"
    );
    let engine = Profiled {
        name: "podman",
        client: Box::new(podman),
        volume: disk.path().to_owned(),
        profile,
    };
    engine.eats_syncs_and_keeps_ebadf(&disk);
    // The store (vfs: plain folders, no mounts) goes with `scratch`.
}
