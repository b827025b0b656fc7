//! The container clients as typed: `eatmydata podman run ...` runs podman
//! with the runtime's path selected, so the container gets the library
//! (which alone drops the sync flags of `open`) and the seccomp rules; and
//! `eatmydata docker run ...` against a daemon that does not answer says
//! so and runs docker as asked, with docker's own status (against one
//! without the runtime: `client_profile.rs`).

use std::process::{Command, Stdio};

use super::at_home::{installed_command, wait_for_a_record_at_home};
use super::{MuslImage, ROUNDS, conf, data_volume, floor_program, podman_ok, rounds, text};
use crate::common::{Flushes, Libc, command, probe, probe_for};
use crate::loopfs::LoopFs;

/// `eatmydata podman ARGS`, with the tests' podman settings: the command
/// installed with the runtime beside it that keeps to the test's root
/// home (podman hands it no environment: `at_home.rs`).
fn eatmydata_podman(args: &[&str]) -> std::process::Output {
    let output = Command::new(installed_command())
        .arg("podman")
        .args(args)
        .env("CONTAINERS_CONF", conf())
        .stdin(Stdio::null())
        .output()
        .expect("run eatmydata podman");
    assert!(
        output.status.success(),
        "eatmydata podman {args:?}: {}",
        text(&output)
    );
    output
}

#[test]
fn eatmydata_podman_run_reaches_a_dynamic_program() {
    let program = probe_for(Libc::Musl, "open_flags", &[]);
    let musl = MuslImage::new("client-open", &program, false);
    let disk = LoopFs::new("client-open-disk", 16);
    let volume = data_volume(&disk);
    std::fs::create_dir_all(disk.join("a")).unwrap();
    std::fs::create_dir_all(disk.join("b")).unwrap();
    let run = ["run", "--rm", "-v", &volume, &musl.image.0, &musl.program];
    let control = podman_ok(&[&run[..], &["/data/a"]].concat());
    let ours = eatmydata_podman(&[&run[..], &["/data/b"]].concat());
    let ours = String::from_utf8(ours.stdout).unwrap();
    assert!(
        control.contains("open: sync=1 dsync=1 direct=1"),
        "{control}"
    );
    assert_eq!(control.lines().count(), ours.lines().count(), "{ours}");
    assert!(
        ours.lines().all(|l| l.contains("sync=0 dsync=0 direct=0")),
        "{ours}"
    );
    wait_for_a_record_at_home();
}

#[test]
fn eatmydata_podman_run_reaches_a_static_program() {
    let program = probe("sync_calls", &["-static"]);
    let musl = MuslImage::new("client-static", &program, false);
    let disk = LoopFs::new("client-static-disk", 64);
    let volume = data_volume(&disk);
    let run = ["run", "--rm", "-v", &volume, &musl.image.0, &musl.program];
    let control = disk.flushes_during_sync(|| {
        rounds("a", |file| podman_ok(&[&run[..], &[file]].concat()));
    });
    let nosync = floor_program(&disk);
    let floor = disk.flushes_during(|| {
        let run = ["run", "--rm", "-v", &volume, &musl.image.0, nosync];
        rounds("f", |file| {
            podman_ok(&[&run[..], &[musl.program.as_str(), file]].concat())
        });
    });
    let mut output = None;
    let eaten = disk.flushes_during(|| {
        output = Some(rounds("b", |file| {
            eatmydata_podman(&[&run[..], &[file]].concat())
        }))
    });
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(6 * ROUNDS as u64, "eatmydata podman run, a static program");
    // The client itself ran without the library or a filter: nothing said.
    let output = output.unwrap();
    assert!(output.stderr.is_empty(), "{}", text(&output));
    wait_for_a_record_at_home();
}

#[test]
fn eatmydata_docker_run_without_a_daemon_says_so() {
    let host = "unix:///nonexistent/eatmydata-test.sock";
    let run = |eatmydata: bool| {
        let mut command = if eatmydata {
            let mut command = Command::new(command());
            command.arg("docker");
            command
        } else {
            Command::new("docker")
        };
        command
            .args([
                "-H",
                host,
                "run",
                "--rm",
                "--network=none",
                "none:0",
                "/bin/true",
            ])
            .stdin(Stdio::null())
            .output()
            .expect("run docker")
    };
    let (control, ours) = (run(false), run(true));
    assert_eq!(ours.status.code(), control.status.code(), "{}", text(&ours));
    assert_eq!(ours.stdout, control.stdout);
    let stderr = String::from_utf8_lossy(&ours.stderr);
    let (note, rest) = stderr.split_once('\n').unwrap();
    assert!(
        note.starts_with("eatmydata: docker's daemon did not answer"),
        "{stderr}"
    );
    assert!(note.contains("runs as asked"), "{note}");
    assert_eq!(
        rest.as_bytes(),
        control.stderr,
        "docker said the rest, unchanged"
    );
    assert!(
        !stderr.contains("seccomp"),
        "the client was not filtered: {stderr}"
    );
}
