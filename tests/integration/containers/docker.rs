//! Docker: a dockerd of the test's own (no bridge, no iptables, its own
//! data root, exec root, pid file and socket; on a containerd of the
//! test's own), the runtime registered as `eatmydata` in its daemon.json
//! by `eatmydata-runtime configure docker`, containers run
//! `--network=none`, each case beside the same container with `runc`.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::RUNTIME_MOUNTED;
use super::cases::{self, DYNAMIC, GO, STATIC, SYNCS};
use super::containerd::Containerd;
use super::daemon::{Dockerd, RunDir, StoreLock, Unmounted};
use super::engine::{
    CACHE, Engine, Job, Ran, assert_eaten, assert_flushes_eaten, floor_args, measure, measure_with,
    register,
};
use super::image::{OWN_PRELOAD, test_image};
use crate::loopfs::LoopFs;

#[path = "docker_anywhere.rs"]
mod anywhere; // configure docker --default run from /tmp: a copy of root's registered, every container eaten
#[path = "docker_static_shell.rs"]
mod static_shell; // busybox-static as the entry point starting dynamic and 32-bit programs, and a chroot

/// The storage driver: overlay2 works on this machine's ext4 root (and is
/// dockerd's own first choice there).
const STORAGE_DRIVER: &str = "overlay2";

pub struct Docker {
    // Dropped in this order: dockerd, its containerd, the mounts left in
    // the data root, their folder, the lock.
    dockerd: Dockerd,
    _containerd: Containerd,
    _mounts: Unmounted,
    _dir: RunDir,
    image: String,
    preload: String,
    _lock: StoreLock,
}

impl Docker {
    pub fn start() -> Docker {
        Docker::start_registered(|config| register("docker", config))
    }

    /// The same, the runtime registered in its daemon.json (given, with a
    /// key of the test's own) by `configure`, as the test does it.
    pub fn start_registered(configure: impl FnOnce(&Path)) -> Docker {
        let image = test_image();
        let lock = StoreLock::take("docker");
        let data_root = Path::new(CACHE).join("docker");
        let containerd = Containerd::start(
            "docker-containerd",
            &Path::new(CACHE).join("docker-containerd"),
        );
        let dir = RunDir::new("docker");
        // A daemon.json with a key of our own, which registration keeps.
        let config = dir.join("daemon.json");
        let json = format!("{{\n  \"storage-driver\": \"{STORAGE_DRIVER}\"\n}}\n");
        fs::write(&config, json).expect("write daemon.json");
        configure(&config);
        let dockerd = Dockerd::start(
            dir.path(),
            &config,
            &data_root,
            &dir.join("exec"),
            Some(&containerd.socket),
        );
        let docker = Docker {
            dockerd,
            _containerd: containerd,
            _mounts: Unmounted(data_root),
            _dir: dir,
            image: image.plain.clone(),
            preload: image.preload.clone(),
            _lock: lock,
        };
        let client = format!("docker -H unix://{}", docker.dockerd.socket.display());
        // What a failed run left: its containers are stopped, not removed.
        docker.ok(&["container", "prune", "--force"]);
        image.load_unless(
            &format!(
                "{client} image inspect '{}' '{}'",
                image.plain, image.preload
            ),
            &format!("{client} images --quiet --filter reference='eatmydata-test/*'"),
            &format!("{client} rmi --force"),
            &format!("{client} load --quiet"),
            &[],
        );
        docker
    }

    /// The daemon's socket, for clients of the Docker API (Testcontainers).
    pub fn socket(&self) -> std::path::PathBuf {
        self.dockerd.socket.clone()
    }

    pub fn docker(&self) -> Command {
        self.dockerd.docker()
    }

    /// `docker args`, asserting success; its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        self.dockerd.ok(args)
    }

    fn runtime_option(eaten: bool) -> &'static str {
        if eaten {
            "--runtime=eatmydata"
        } else {
            "--runtime=runc"
        }
    }
}

impl Engine for Docker {
    fn name(&self) -> &'static str {
        "docker"
    }

    fn image(&self) -> &str {
        &self.image
    }

    fn run(&self, disk: &LoopFs, job: &Job) -> Ran {
        let mut docker = self.docker();
        docker.args([
            "run",
            "--rm",
            "--network=none",
            Docker::runtime_option(job.eaten),
        ]);
        docker
            .arg("-v")
            .arg(format!("{}:/data", disk.path().display()));
        for env in job.env {
            docker.args(["-e", env]);
        }
        docker.arg(job.image).args(job.args);
        docker.output().expect("run docker").into()
    }
}

#[test]
fn a_mariadb_container_under_the_runtime() {
    cases::server(&Docker::start(), "mariadb");
}

#[test]
fn a_postgresql_container_under_the_runtime() {
    cases::server(&Docker::start(), "postgres");
}

#[test]
fn static_and_go_containers_under_the_runtime() {
    let docker = Docker::start();
    cases::program(&docker, "static C", STATIC);
    cases::program(&docker, "Go", GO);
}

/// A static shell as the entry point, starting coreutils' `dd
/// oflag=sync` (its flushes eaten), a 32-bit program and a chroot into
/// a bound root (as under runc).
#[test]
fn a_static_shell_entry_point_under_the_runtime() {
    let docker = Docker::start();
    static_shell::starts_a_dynamic_o_sync_writer(&docker);
    static_shell::starts_a_32_bit_program(&docker);
    static_shell::enters_a_bound_root(&docker);
}

#[test]
fn own_preload_disabled_and_exec_under_the_runtime() {
    let docker = Docker::start();
    own_preload(&docker);
    cases::disabled(&docker);
    exec(&docker);
}

/// `docker exec` into a running container: the exec'd process (given to
/// the runtime as `exec --process FILE`) gets what the container got.
fn exec(docker: &Docker) {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let disk = LoopFs::new("docker-exec", 64);
    let syncs = SYNCS.to_string();
    for program in [DYNAMIC, STATIC] {
        // The control, the floor (under nosync, in the volume), ours.
        let runs: Vec<_> = [(false, false), (false, true), (true, false)]
            .into_iter()
            .map(|(eaten, floor)| {
                let name = format!(
                    "exec-{}-{}",
                    std::process::id(),
                    COUNT.fetch_add(1, Ordering::Relaxed)
                );
                let volume = format!("{}:/data", disk.path().display());
                docker.ok(&[
                    "run",
                    "-d",
                    "--name",
                    &name,
                    "--network=none",
                    Docker::runtime_option(eaten),
                    "-v",
                    &volume,
                    &docker.image,
                    "sleep",
                    "600",
                ]);
                let _removed = Removed(docker, name.clone());
                let file = format!("/data/{name}");
                let job = [program, "loop", &file, &syncs];
                let job = if floor {
                    floor_args(&disk, &job)
                } else {
                    job.to_vec()
                };
                measure_with(&disk, || {
                    let args = [&["exec", &name][..], &job].concat();
                    docker
                        .docker()
                        .args(args)
                        .output()
                        .expect("run docker")
                        .into()
                })
            })
            .collect();
        assert_eaten(
            "docker",
            &format!("exec {program}"),
            [&runs[0], &runs[1], &runs[2]],
            u64::from(SYNCS),
        );
    }
}

/// A container removed (`docker rm -f`) when dropped.
struct Removed<'a>(&'a Docker, String);

impl Drop for Removed<'_> {
    fn drop(&mut self) {
        let _ = self.0.docker().args(["rm", "-f", &self.1]).output();
    }
}

/// An image whose own config sets `LD_PRELOAD`: kept, the runtime's
/// library first, both loaded (the own library says so on stderr).
fn own_preload(docker: &Docker) {
    let disk = LoopFs::new("docker-preload", 64);
    let line = format!("echo \"preload=$LD_PRELOAD\"; exec {DYNAMIC} loop \"$0\" {SYNCS}");
    let run = |eaten: bool, file: &str, floor: bool| {
        let args = ["sh", "-c", &line, file];
        let args = if floor {
            floor_args(&disk, &args)
        } else {
            args.to_vec()
        };
        measure(
            docker,
            &disk,
            &Job {
                eaten,
                image: &docker.preload,
                env: &[],
                args: &args,
            },
        )
    };
    let control = run(false, "/data/control", false);
    let floor = run(false, "/data/floor", true);
    let eaten = run(true, "/data/eaten", false);
    assert_flushes_eaten(
        "docker",
        "image's own LD_PRELOAD",
        [&control, &floor, &eaten],
        u64::from(SYNCS),
    );
    let synced = format!("synced {SYNCS}\n");
    assert_eq!(
        control.ran.stdout,
        format!("preload={OWN_PRELOAD}\n{synced}")
    );
    let ours_first =
        [':', ' '].map(|sep| format!("preload={RUNTIME_MOUNTED}{sep}{OWN_PRELOAD}\n{synced}"));
    assert!(ours_first.contains(&eaten.ran.stdout), "{:?}", eaten.ran);
    for ran in [&control.ran, &eaten.ran] {
        assert!(ran.stderr.contains("own_preload: loaded"), "{ran:?}");
    }
}
