//! The reach test's daemon: Debian 12's dockerd with no eatmydata
//! runtime, in a network namespace of its own where the clients publish
//! and reach ports as on a laptop, the stand-in images tagged with the
//! official names the docs use; the runtime registered later by a reload.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use super::super::daemon::{Dockerd, RunDir, StoreLock, Unmounted};
use super::super::engine::{CACHE, register};
use super::super::standin::standins;
use super::{MARIADB, POSTGRES};
use crate::common::TempDir;

/// The daemon, its folder and the folder the clients work in (the
/// profile beside the Compose files).
pub(super) struct Private {
    // Dropped in this order: dockerd, the mounts left in its store, the
    // folders, the lock.
    pub(super) dockerd: Dockerd,
    _mounts: Unmounted,
    pub(super) dir: RunDir,
    pub(super) work: TempDir,
    _lock: StoreLock,
}

impl Private {
    pub(super) fn start() -> Private {
        let lock = StoreLock::take("reach");
        let data_root = Path::new(CACHE).join("reach");
        let dir = RunDir::new("reach");
        let config = dir.join("daemon.json");
        fs::write(&config, "{\n  \"storage-driver\": \"overlay2\"\n}\n")
            .expect("write daemon.json");
        let dockerd = Dockerd::start_netns(dir.path(), &config, &data_root, &dir.join("exec"));
        let private = Private {
            dockerd,
            _mounts: Unmounted(data_root),
            dir,
            work: TempDir::new("reach-work"),
            _lock: lock,
        };
        // What a failed run left.
        private.ok(&["container", "prune", "--force"]);
        let images = standins();
        images.load(|| private.dockerd.docker());
        private.ok(&["tag", &images.postgres, POSTGRES]);
        private.ok(&["tag", &images.mariadb, MARIADB]);
        private
    }

    pub(super) fn host(&self) -> String {
        format!("unix://{}", self.dockerd.socket.display())
    }

    /// `docker args` on the daemon, asserting success; its stdout.
    pub(super) fn ok(&self, args: &[&str]) -> String {
        self.dockerd.ok(args)
    }

    /// `program` in the daemon's network namespace, in the work folder,
    /// with the daemon as its `DOCKER_HOST`.
    pub(super) fn client(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = self.dockerd.in_netns(program);
        command
            .current_dir(self.work.path())
            .env("DOCKER_HOST", self.host())
            .env("TESTCONTAINERS_RYUK_DISABLED", "true");
        command
    }

    /// Registers the runtime in daemon.json and reloads the daemon
    /// (SIGHUP, which reloads `runtimes`), waiting until it lists it.
    pub(super) fn register(&self) {
        register("docker", &self.dir.join("daemon.json"));
        // SAFETY: a signal to the daemon this test started and has not
        // reaped.
        unsafe { libc::kill(self.dockerd.daemon.pid() as libc::pid_t, libc::SIGHUP) };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self
            .ok(&["info", "--format", "{{json .Runtimes}}"])
            .contains("\"eatmydata\"")
        {
            assert!(
                Instant::now() < deadline,
                "dockerd did not reload its runtimes within 30 s"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
