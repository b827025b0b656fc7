//! Compose in the reach test: the files of contrib/compose/ as a user
//! has them (beside the profile, in the folder Compose runs in), run by
//! Debian 12's docker-compose 1.29 and Debian 13's Compose v2, each
//! service's data folder bound from the loop device by the test's own
//! `compose.data.yaml`; the control is the same file without eatmydata's
//! lines.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::super::docker26::trixie_root;
use super::super::engine::{Measured, Ran};
use super::{Private, ROWS, TABLE, measure};
use crate::loopfs::LoopFs;

/// The Compose clients: Debian 12's docker-compose 1.29, and Debian 13's
/// Compose v2 from the trixie root.
#[derive(Clone, Copy, Debug)]
pub enum Compose {
    V1,
    V2,
}

impl Compose {
    fn command(self, private: &Private) -> Command {
        let program = match self {
            Compose::V1 => PathBuf::from("docker-compose"),
            Compose::V2 => trixie_root().join("usr/libexec/docker/cli-plugins/docker-compose"),
        };
        let mut command = private.client(program);
        command.env("COMPOSE_PROJECT_NAME", "reach");
        command
    }
}

/// The files of contrib/compose/, and the test's own that binds each
/// service's data folder from the loop device.
pub fn compose_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("contrib/compose")
        .join(name)
}

/// `text` without eatmydata's lines: the control of a Compose file.
pub fn without_eatmydata(text: &str) -> String {
    let plain: String = text
        .lines()
        .filter(|line| !line.contains("eatmydata") && line.trim() != "security_opt:")
        .map(|line| format!("{line}\n"))
        .collect();
    assert_ne!(plain, text, "no line of eatmydata's to take out");
    plain
}

/// A Compose run of `file` (its text written into the work folder under
/// its own name, as a user has it beside the profile): up, each service's
/// inserts through `compose exec`, its table, down.
pub fn compose(
    private: &Private,
    disk: &LoopFs,
    compose: Compose,
    name: &str,
    text: &str,
) -> Measured {
    fs::write(private.work.join(name), text).expect("write the Compose file");
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/containers");
    measure(disk, &format!("compose-{compose:?}-{name}"), |data| {
        for service in ["postgres", "mariadb"] {
            fs::create_dir(data.join(service)).expect("make a service's data folder");
        }
        let run = |args: &[&str]| {
            compose
                .command(private)
                .args(["-f", name, "-f"])
                .arg(here.join("compose.data.yaml"))
                .env("EATMYDATA_TEST_DATA", data)
                .args(args)
                .output()
                .expect("run Compose")
        };
        let up = run(&["up", "-d"]);
        let mut ran = Ran::from(up);
        if ran.status == Some(0) {
            ran = compose_workload(private, &run);
        }
        let down = run(&["down", "--volumes"]);
        ran.stderr.push_str(&String::from_utf8_lossy(&down.stderr));
        ran
    })
}

/// After `up`: each service waited for, its inserts made, its table and
/// the way its container was created (from the daemon's record) reported.
fn compose_workload(private: &Private, run: &dyn Fn(&[&str]) -> std::process::Output) -> Ran {
    let mut ran = Ran {
        status: Some(0),
        stdout: String::new(),
        stderr: String::new(),
    };
    for (service, ready, client) in [
        (
            "postgres",
            "pg_isready -q -h localhost",
            "psql -X -q -A -t -v ON_ERROR_STOP=1 -U postgres",
        ),
        (
            "mariadb",
            "mariadb-admin -uroot -ptest -h 127.0.0.1 ping",
            "mariadb -N -B -uroot -ptest test",
        ),
    ] {
        let id = String::from_utf8_lossy(&run(&["ps", "-q", service]).stdout)
            .trim()
            .to_owned();
        // Waited for through docker's own client, which starts faster
        // than Compose 1.29's.
        let deadline = Instant::now() + Duration::from_secs(120);
        let answers = || {
            let mut exec = private.dockerd.docker();
            exec.args(["exec", &id, "sh", "-c", ready]);
            exec.output().is_ok_and(|output| output.status.success())
        };
        while !answers() {
            if Instant::now() > deadline {
                ran.status = Some(1);
                ran.stderr
                    .push_str(&format!("{service} not ready within 120 s\n"));
                return ran;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        let script = format!(
            "echo 'create table t (x int primary key);' | {client} && \
             i=0; while [ \"$i\" -lt {ROWS} ]; do echo \"insert into t values($i);\"; i=$((i+1)); done | {client} && \
             echo \"select concat(count(*), '|', sum(x)) from t;\" | {client}"
        );
        let output = run(&["exec", "-T", service, "sh", "-c", &script]);
        let table = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if !output.status.success() || table != TABLE {
            ran.status = Some(1);
            ran.stderr.push_str(&format!(
                "{service}: {table:?}, {}\n",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let host = private.ok(&[
            "inspect",
            "--format",
            "{{.HostConfig.Runtime}} {{json .HostConfig.SecurityOpt}}",
            &id,
        ]);
        ran.stdout = table;
        ran.stderr.push_str(&format!("way: {}\n", way_of(&host)));
    }
    ran
}

/// The way a container was created, from `{{.HostConfig.Runtime}} {{json
/// .HostConfig.SecurityOpt}}`: a profile only if the daemon got its JSON
/// text (the client read the file).
fn way_of(host: &str) -> &'static str {
    if host.starts_with("eatmydata ") {
        "runtime"
    } else if host.contains("\"seccomp={") {
        "profile"
    } else {
        "plain"
    }
}
