//! The clients users have, sending eatmydata's seccomp profile to a
//! dockerd that has no eatmydata runtime (as Docker Desktop's, a remote
//! engine, docker-in-docker): Testcontainers for Python and for Node with
//! their PostgreSQL and MariaDB modules, running the recipes of
//! docs/containers.md, and the Compose files of contrib/compose/ run by
//! docker-compose 1.29 (Debian 12) and Compose v2 (Debian 13's, from the
//! trixie root). Then the runtime registered and the daemon reloaded: the
//! runtime's Compose file, and the recipes choosing the runtime.
//!
//! One daemon for every case: Debian 12's dockerd in a network namespace
//! of its own, where the clients publish and reach ports as on a laptop
//! (`Dockerd::start_netns`; `reach/private.rs`), the stand-in images
//! (`standin.rs`) in its store under the official names the docs use.
//! Each database's data folder is bound from a loop device whose flush
//! counter is the oracle; each case beside the same run without
//! eatmydata, whose flushes it may be at most 5% of.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::engine::{Measured, Ran, measure_with};
use crate::loopfs::LoopFs;

mod compose; // contrib/compose/'s files run by Compose 1.29 and v2
mod private; // the daemon without the runtime, in a network namespace of its own
mod testcontainers; // PyPI's and npm's Testcontainers running the docs' recipes
use compose::{Compose, compose, compose_file, without_eatmydata};
use private::Private;
use testcontainers::{Client, testcontainers};

/// The inserts each case makes, each its own transaction.
const ROWS: u32 = 200;
/// What the table holds after them: "rows|sum".
const TABLE: &str = "200|19900";
/// The official images the docs and contrib/compose/ name, as the
/// stand-ins are tagged in the daemon's store.
const POSTGRES: &str = "postgres:16";
const MARIADB: &str = "mariadb:11";
/// The profile's file name, as the recipes and Compose files read it.
const PROFILE: &str = "eatmydata-docker.json";

/// One case: a run without eatmydata and one with it, and the way the
/// daemon was asked to take.
struct Case {
    name: String,
    plain: Measured,
    eaten: Measured,
    way: &'static str,
}

impl Case {
    /// What is wrong with the case, if anything: the table not whole, the
    /// daemon not asked the way the case should, or the flushes above 5%
    /// of plain's (which must have made at least one per insert).
    fn faults(&self) -> Vec<String> {
        let mut faults = vec![];
        for (run, measured, way) in [
            ("plain", &self.plain, "plain"),
            ("eaten", &self.eaten, self.way),
        ] {
            let ran = &measured.ran;
            if ran.status != Some(0) || ran.stdout.trim() != TABLE {
                faults.push(format!(
                    "{}, {run}: not {TABLE} and status 0: {ran:?}",
                    self.name
                ));
            }
            let ways: Vec<&str> = ran
                .stderr
                .lines()
                .filter(|line| line.starts_with("way: "))
                .collect();
            if ways.is_empty() || ways.iter().any(|line| *line != format!("way: {way}")) {
                faults.push(format!(
                    "{}, {run}: not created the {way} way: {ran:?}",
                    self.name
                ));
            }
        }
        if self.plain.flushes < u64::from(ROWS) {
            faults.push(format!(
                "{}: plain made {} flushes, fewer than its {ROWS} commits: nothing to judge by",
                self.name, self.plain.flushes
            ));
        }
        if self.eaten.flushes * 20 > self.plain.flushes {
            faults.push(format!(
                "{}: {} flushes, more than 5% of plain's {}",
                self.name, self.eaten.flushes, self.plain.flushes
            ));
        }
        faults
    }
}

/// Runs `run` on a new data folder `folder` of `disk`, counting the
/// flushes it makes; removes the folder.
fn measure(disk: &LoopFs, folder: &str, run: impl FnOnce(&Path) -> Ran) -> Measured {
    let data = disk.join(folder);
    fs::create_dir(&data).expect("make a data folder");
    let measured = measure_with(disk, || run(&data));
    let _ = fs::remove_dir_all(&data);
    measured
}

/// Writes the profile `eatmydata profile docker` prints for the daemon
/// into the work folder, where the recipes and Compose files read it.
fn write_profile(private: &Private) {
    let output = Command::new(crate::common::command())
        .args(["profile", "docker"])
        .env("DOCKER_HOST", private.host())
        .output()
        .expect("run eatmydata profile docker");
    assert!(
        output.status.success(),
        "eatmydata profile docker: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    fs::write(private.work.join(PROFILE), &output.stdout).expect("write the profile");
}

#[test]
fn testcontainers_and_compose_eat_the_syncs_of_a_daemon_without_the_runtime() {
    let private = Private::start();
    write_profile(&private);
    let disk = LoopFs::new("reach-disk", 1024);
    let mut cases = vec![];
    for client in [Client::Python, Client::Node] {
        for kind in ["postgres", "mariadb"] {
            cases.push(Case {
                name: format!("Testcontainers {client:?} {kind}, the profile"),
                plain: testcontainers(&private, &disk, client, kind, "plain"),
                eaten: testcontainers(&private, &disk, client, kind, "recipe"),
                way: "profile",
            });
        }
    }
    let profile =
        fs::read_to_string(compose_file("profile.yaml")).expect("read the profile's file");
    let runtime =
        fs::read_to_string(compose_file("runtime.yaml")).expect("read the runtime's file");
    let plain = compose(
        &private,
        &disk,
        Compose::V1,
        "plain.yaml",
        &without_eatmydata(&profile),
    );
    for version in [Compose::V1, Compose::V2] {
        let eaten = compose(&private, &disk, version, "profile.yaml", &profile);
        cases.push(Case {
            name: format!("Compose {version:?}, the profile"),
            plain: plain.clone(),
            eaten,
            way: "profile",
        });
    }
    private.register();
    for version in [Compose::V1, Compose::V2] {
        let eaten = compose(&private, &disk, version, "runtime.yaml", &runtime);
        cases.push(Case {
            name: format!("Compose {version:?}, the runtime"),
            plain: plain.clone(),
            eaten,
            way: "runtime",
        });
    }
    for (client, kind) in [(Client::Python, "postgres"), (Client::Node, "mariadb")] {
        let at = cases
            .iter()
            .position(|case| case.name == format!("Testcontainers {client:?} {kind}, the profile"))
            .unwrap();
        cases.push(Case {
            name: format!("Testcontainers {client:?} {kind}, the runtime"),
            plain: cases[at].plain.clone(),
            eaten: testcontainers(&private, &disk, client, kind, "recipe"),
            way: "runtime",
        });
    }
    for case in &cases {
        eprintln!(
            "reach: {}: plain {} flushes ({:.1} s), eatmydata {} ({:.1} s)",
            case.name,
            case.plain.flushes,
            case.plain.took.as_secs_f64(),
            case.eaten.flushes,
            case.eaten.took.as_secs_f64()
        );
    }
    let faults: Vec<String> = cases.iter().flat_map(Case::faults).collect();
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}
