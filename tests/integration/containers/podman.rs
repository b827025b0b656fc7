//! podman with the runtime given as `podman --runtime PATH` (podman has no
//! daemon: each run starts its own conmon and runtime), the control with
//! the runc of the tests' containers.conf.

use super::cases::{self, STATIC};
use super::engine::{Engine, Job, Ran, runtime};
use super::image::test_image;
use super::podman;
use crate::loopfs::LoopFs;

struct Podman {
    image: String,
}

impl Podman {
    fn start() -> Podman {
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
        if job.eaten {
            podman.arg("--runtime").arg(runtime());
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
fn a_mariadb_container_under_podman_with_the_runtime() {
    cases::server(&Podman::start(), "mariadb");
}

#[test]
fn static_and_disabled_containers_under_podman_with_the_runtime() {
    let podman = Podman::start();
    cases::program(&podman, "static C", STATIC);
    cases::disabled(&podman);
}
