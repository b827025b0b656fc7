//! podman with the runtime, both ways a user gives it: `podman --runtime
//! PATH`, and by name (`--runtime eatmydata`) once `eatmydata-runtime
//! configure podman` registered it in a copy of the tests' containers.conf.
//! podman has no daemon: each run starts its own conmon and runtime. The
//! control runs with the runc of the tests' containers.conf. podman hands
//! the runtime no environment, so what it is given, by path or by name, is
//! the script that names the test's root home (`at_home.rs`).

use std::fs;

use super::at_home::{podman_at_home, runtime_at_home, wait_for_a_record_at_home};
use super::cases::{self, STATIC};
use super::engine::{Engine, Job, Ran, register};
use super::image::test_image;
use super::podman;
use crate::common::TempDir;
use crate::loopfs::LoopFs;

pub(super) struct Podman {
    pub(super) image: String,
    /// With the runtime registered by name: the folder of the conf.
    registered: Option<TempDir>,
}

impl Podman {
    /// podman, given the runtime by its path.
    pub(super) fn by_path() -> Podman {
        let image = test_image();
        let conf = super::conf();
        let conf = conf.to_str().unwrap();
        image.load_unless(
            &format!(
                "podman image exists '{0}' && podman image exists '{1}'",
                image.plain, image.preload
            ),
            "podman images --quiet --filter reference='*/eatmydata-test/engines*'",
            "podman rmi --force",
            "podman load --quiet",
            &[("CONTAINERS_CONF", conf)],
        );
        Podman {
            image: image.plain.clone(),
            registered: None,
        }
    }

    /// podman, given the runtime by the name registration gave it.
    fn by_name() -> Podman {
        let dir = TempDir::new("podman-conf");
        let conf = dir.join("containers.conf");
        fs::copy(super::conf(), &conf).expect("copy containers.conf");
        register("podman", &conf);
        podman_at_home(&conf);
        Podman {
            registered: Some(dir),
            ..Podman::by_path()
        }
    }
}

impl Engine for Podman {
    fn name(&self) -> &'static str {
        "podman"
    }

    fn image(&self) -> &str {
        &self.image
    }

    fn run(&self, disk: &LoopFs, job: &Job) -> Ran {
        let mut podman = podman();
        match (&self.registered, job.eaten) {
            (_, false) => {}
            (None, true) => {
                podman.arg("--runtime").arg(runtime_at_home());
            }
            (Some(dir), true) => {
                podman.env("CONTAINERS_CONF", dir.join("containers.conf"));
                podman.args(["--runtime", "eatmydata"]);
            }
        }
        podman.args(["run", "--rm", "--network=none"]);
        podman
            .arg("-v")
            .arg(format!("{}:/data", disk.path().display()));
        for env in job.env {
            podman.args(["-e", env]);
        }
        podman.arg(job.image).args(job.args);
        podman
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run podman")
            .into()
    }
}

#[test]
fn a_mariadb_container_under_podman_with_the_runtime_by_path() {
    cases::server(&Podman::by_path(), "mariadb");
    wait_for_a_record_at_home();
}

#[test]
fn static_and_disabled_containers_under_podman_with_the_runtime_by_name() {
    let podman = Podman::by_name();
    cases::program(&podman, "static C", STATIC);
    cases::disabled(&podman);
    wait_for_a_record_at_home();
}
