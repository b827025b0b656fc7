//! A static shell as the container's entry point (`--entrypoint busybox`,
//! Debian's busybox-static, with `sh -c`) starting a dynamic program that
//! writes with `O_SYNC` (coreutils' `dd oflag=sync`, named by its path so
//! that busybox runs it rather than its own applet): no seccomp rule can
//! drop an open flag, so only the library in `dd` eats those flushes,
//! which it has when the runtime found only this machine's loader in the
//! rootfs (issue 45). Beside it, the attacks: the same shell starting a
//! 32-bit program, its loader bound in, and entering a root of its own
//! bound in with its `chroot` applet, each of which must run as under
//! runc, without the loader's "cannot be preloaded" on its stderr.

use std::fs;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Docker;
use crate::common::{TempDir, probe};
use crate::containers::engine::{Measured, Ran, assert_eaten, measure_with, runtime};
use crate::loopfs::LoopFs;

/// Where the image has busybox-static's program (`image.rs`).
const BUSYBOX: &str = "/opt/probes/busybox";
/// The blocks `dd` writes, each with `O_SYNC`: one flush or more each.
const BLOCKS: u64 = 100;

/// `docker run --entrypoint BUSYBOX ... IMAGE sh -c LINE` under runc or
/// the runtime, `/data` on `disk`, with `options` besides.
fn shell(docker: &Docker, eaten: bool, disk: &LoopFs, options: &[&str], line: &str) -> Ran {
    let mut run = docker.docker();
    run.args([
        "run",
        "--rm",
        "--network=none",
        Docker::runtime_option(eaten),
    ])
    .args(["--entrypoint", BUSYBOX, "-v"])
    .arg(format!("{}:/data", disk.path().display()))
    .args(options)
    .arg(&docker.image)
    .args(["sh", "-c", line]);
    run.output().expect("run docker").into()
}

/// The flushes and outcome of [`shell`], with `options`.
fn measured(docker: &Docker, eaten: bool, disk: &LoopFs, options: &[&str], line: &str) -> Measured {
    measure_with(disk, || shell(docker, eaten, disk, options, line))
}

/// What the shell runs: `dd` writing `BLOCKS` blocks to `file` with
/// `flags`, then `dd`'s own name, to show which `dd` ran.
fn dd(file: &str, flags: &str) -> String {
    format!(
        "/bin/dd if=/dev/zero of=/data/{file} bs=4096 count={BLOCKS} {flags} status=none \
         && /bin/dd --version | head -n 1 && wc -c < /data/{file}"
    )
}

pub fn starts_a_dynamic_o_sync_writer(docker: &Docker) {
    assert!(
        fs::metadata("/bin/busybox").is_ok(),
        "/bin/busybox (apt-get install busybox-static)"
    );
    let disk = LoopFs::new("docker-static-shell", 64);
    let control = measured(docker, false, &disk, &[], &dd("control", "oflag=sync"));
    let floor = measured(docker, false, &disk, &[], &dd("floor", ""));
    let ids = TempDir::new("static-shell-cid");
    let cid = ids.join("eaten");
    let cidfile = ["--cidfile", cid.to_str().unwrap()];
    let eaten = measured(docker, true, &disk, &cidfile, &dd("eaten", "oflag=sync"));
    let stdout = &control.ran.stdout;
    assert!(
        stdout.starts_with("dd (coreutils) ") && stdout.ends_with("\n409600\n"),
        "the control ran coreutils' dd: {:?}",
        control.ran
    );
    assert_eq!(
        eaten.ran.stderr, control.ran.stderr,
        "stderr under the runtime"
    );
    assert_eaten(
        "docker",
        "busybox sh -c 'dd oflag=sync'",
        [&control, &floor, &eaten],
        BLOCKS,
    );
    assert!(
        eaten.flushes * 20 <= control.flushes,
        "at most 5% of runc's flushes: {} of {}",
        eaten.flushes,
        control.flushes
    );
    let id = fs::read_to_string(&cid).unwrap();
    // The account: the two coreutils dd that had the library (busybox
    // and its applets never load it), one O_SYNC open made plain.
    let record = record(id.trim());
    assert_eq!(
        (&record["processes"], &record["skips"]["open"]),
        (&Value::from(2), &Value::from(1)),
        "the account's record: {record:#}"
    );
}

/// The account's record of the container `id` (`eatmydata-runtime report
/// --json`, on this test process's home), once its `delete` wrote it.
fn record(id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let output = Command::new(runtime())
            .args(["report", "--json"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        let containers = report["containers"].as_array().cloned().unwrap_or_default();
        if let Some(record) = containers.into_iter().find(|r| r["id"] == id) {
            return record;
        }
        assert!(Instant::now() < deadline, "no record of {id}: {report:#}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The same shell starting a 32-bit program whose loader and libc are
/// bound in from the host: the runtime reads the bound loader, keeps the
/// library out, and the program runs as under runc.
pub fn starts_a_32_bit_program(docker: &Docker) {
    let dir = TempDir::new("static-shell-i386");
    fs::copy(probe("container_parity", &["-m32"]), dir.join("probe32")).unwrap();
    let volume = format!("{}:/vol:ro", dir.path().display());
    let options = [
        "-v",
        &volume,
        "-v",
        "/lib32/ld-linux.so.2:/lib/ld-linux.so.2:ro",
        "-v",
        "/usr/lib32:/usr/lib32:ro",
    ];
    let disk = LoopFs::new("docker-static-shell-i386", 64);
    let line = "/vol/probe32 mapped";
    let runc = shell(docker, false, &disk, &options, line);
    let eaten = shell(docker, true, &disk, &options, line);
    assert_eq!(
        (runc.status, runc.stdout.as_str(), runc.stderr.as_str()),
        (Some(0), "mapped=\n", ""),
        "the control: {runc:?}"
    );
    assert_eq!(
        (eaten.status, &eaten.stdout, &eaten.stderr),
        (runc.status, &runc.stdout, &runc.stderr),
        "under the runtime"
    );
}

/// The same shell entering a root of its own bound in (debootstrap's
/// tree, as `scripts/debian-rootfs` keeps it) with busybox's `chroot`
/// applet: its programs there cannot reach the library's path, so the
/// runtime keeps the library out, and they run as under runc, without
/// the loader's "cannot open shared object file".
pub fn enters_a_bound_root(docker: &Docker) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/debian-rootfs");
    let tree = Command::new(script).arg("none").output().unwrap();
    assert!(tree.status.success(), "debian-rootfs: {tree:?}");
    let tree = String::from_utf8_lossy(&tree.stdout).trim().to_owned();
    let mount = format!("{tree}:/target:ro");
    let disk = LoopFs::new("docker-static-shell-chroot", 64);
    let line = "chroot /target /bin/sh -c 'echo in the chroot; /bin/true'";
    let runc = shell(docker, false, &disk, &["-v", &mount], line);
    let eaten = shell(docker, true, &disk, &["-v", &mount], line);
    assert_eq!(
        (runc.status, runc.stdout.as_str(), runc.stderr.as_str()),
        (Some(0), "in the chroot\n", ""),
        "the control: {runc:?}"
    );
    assert_eq!(
        (eaten.status, &eaten.stdout, &eaten.stderr),
        (runc.status, &runc.stdout, &runc.stderr),
        "under the runtime"
    );
}
