//! Testcontainers for Python starting a container with eatmydata: through
//! the Docker API of `podman system service` with the library mounted, and
//! through a dockerd of the tests' own with the runtime.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::cases::{DYNAMIC, SYNCS};
use super::docker::Docker;
use super::engine::{self, Engine, measure_with};
use super::{MuslImage, ROUNDS, floor_program, podman, rounds, text};
use crate::common::{Flushes, Libc, TempDir, probe_for, static_pair};
use crate::loopfs::LoopFs;

/// Where `scripts/setup-test-deps` installs PyPI's `testcontainers`.
const TESTCONTAINERS_VENV: &str = "/var/tmp/eatmydata-venv";

/// `podman system service`: the Docker API on a socket of ours, stopped
/// when dropped.
struct Service {
    child: std::process::Child,
    socket: PathBuf,
    _dir: TempDir,
}

impl Service {
    fn start() -> Service {
        let dir = TempDir::new("podman-service");
        let socket = dir.join("podman.sock");
        let child = podman()
            .args(["system", "service", "--time=0"])
            .arg(format!("unix://{}", socket.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("run podman system service");
        let service = Service {
            child,
            socket,
            _dir: dir,
        };
        let made = || service.socket.exists();
        crate::common::wait_until(
            "podman system service made its socket",
            std::time::Duration::from_secs(10),
            made,
        );
        service
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the recipe script with `args` against the Docker API at `socket`.
fn recipe(socket: &Path, args: &[&str]) -> std::process::Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/integration/containers/testcontainers_recipe.py");
    Command::new(Path::new(TESTCONTAINERS_VENV).join("bin/python"))
        .arg(script)
        .args(args)
        .env("DOCKER_HOST", format!("unix://{}", socket.display()))
        .env("TESTCONTAINERS_RYUK_DISABLED", "true")
        .stdin(Stdio::null())
        .output()
        .expect("run the Testcontainers recipe (scripts/setup-test-deps installs it)")
}

#[test]
fn testcontainers_python_runs_a_container_under_the_runtime() {
    let docker = Docker::start();
    let disk = LoopFs::new("docker-testcontainers-disk", 64);
    let syncs = SYNCS.to_string();
    let data = disk.path().to_str().unwrap();
    let run = |way: &str, file: &str, floor: bool| {
        let job = [DYNAMIC, "loop", file, &syncs];
        let job = if floor {
            engine::floor_args(&disk, &job)
        } else {
            job.to_vec()
        };
        measure_with(&disk, || {
            let args = [&[docker.image(), way, data][..], &job].concat();
            recipe(&docker.socket(), &args).into()
        })
    };
    let control = run("none", "/data/control", false);
    let floor = run("none", "/data/floor", true);
    let eaten = run("runtime", "/data/eaten", false);
    engine::assert_eaten(
        "docker",
        "Testcontainers",
        [&control, &floor, &eaten],
        u64::from(SYNCS),
    );
    assert!(disk.join("eaten").is_file());
}

#[test]
fn testcontainers_python_runs_a_container_with_the_library() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let musl = MuslImage::new("tc", &program, false);
    let (image, inside) = (&musl.image, &musl.program);
    let service = Service::start();
    let disk = LoopFs::new("podman-testcontainers-disk", 64);
    let library = static_pair().join("libeatmydata.so");
    let nosync = floor_program(&disk);
    let run = |library: &str, file: &str, floor: bool| {
        let data = disk.path().to_str().unwrap();
        let mut args = vec![image.0.as_str(), library, data];
        if floor {
            args.push(nosync);
        }
        args.extend([inside.as_str(), file]);
        let output = recipe(&service.socket, &args);
        assert!(output.status.success(), "{}", text(&output));
    };
    let control = disk.flushes_during_sync(|| rounds("a", |file| run("none", file, false)));
    let floor = disk.flushes_during(|| rounds("f", |file| run("none", file, true)));
    let library = library.to_str().unwrap();
    let eaten = disk.flushes_during(|| rounds("b", |file| run(library, file, false)));
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(6 * ROUNDS as u64, "Testcontainers, the library mounted");
    assert!(disk.join("b0").is_file());
}
