//! The container recipes of docs/containers.md, run with a real container runtime
//! (podman, daemonless; the settings this machine needs are in
//! `containers/containers.conf`, so the commands stay the plain ones):
//! a library mounted read-only with `LD_PRELOAD` set, the static command
//! copied in by a Dockerfile, and the loop device's flush counter as the
//! oracle, each beside a control run without eatmydata. And the engines
//! with eatmydata-runtime (`engine.rs` and one file per engine: docker,
//! containerd, its CRI plugin, podman), started by the tests themselves.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{TempDir, musl_root};
use crate::loopfs::LoopFs;

mod account; // the account of what the runtime saved: many containers, garbage, a torn record
mod action; // the GitHub Action: main and post with node, a runner's Docker, apt in a tree
pub mod at_home; // the runtime podman runs: a script naming the test's root home (podman passes no environment)
mod barrier; // one syncfs at the end of each build step, after its last write, before the next: podman build, BuildKit
mod builds; // Dockerfiles whose RUN steps sync, built by BuildKit, the legacy builder and podman
mod cases; // what every engine runs: servers, programs, the off switch, beside runc
mod client; // eatmydata podman run and eatmydata docker run, as typed
mod client_profile; // eatmydata docker|podman run through the profile: Docker 26 with nothing of ours, 20.10, podman, runsc, keeps
mod containerd; // containerd of the tests' own, the runtime as the shim's BinaryName (ctr run)
mod cri; // containerd's CRI plugin: the runtime as a RuntimeClass handler, pods run by cri.py
pub mod daemon; // dockerd and containerd stopped by pid, their folders under /run, store locks
mod docker; // dockerd of the tests' own, the runtime registered as eatmydata
mod docker26; // Docker 26 from a Debian 13 root, dockerd chrooted in a mount namespace of its own
mod dockerfile; // the Dockerfile recipe: the static command copied in, dpkg's syncs eaten
mod engine; // the runtime under test and its registration, the engine interface, the flush oracle
mod image; // the engines' Debian image with servers and probes, made offline once
pub mod install; // eatmydata-runtime install and uninstall on a node of a folder, its containerd restarted
mod keep; // keep by mount: EATMYDATA_KEEP in a container, configure docker --keep-binds; beside runc
mod mariadb; // a MariaDB image with the library mounted keeps its data
mod musl; // musl images: the library mounted read-only, the static command, root
mod names; // the report names each container: Docker's and podman's, and when one is counted
mod parity; // one corpus under runc and under the runtime on one dockerd: same output, no trace
mod podman; // podman with the runtime, by path and by its registered name
mod profile; // eatmydata profile's file on Docker 20.10 and 26 and podman with nothing of ours registered
mod reach; // the profile sent by the clients users have (Testcontainers Python and Node, Compose) to a dockerd without the runtime
mod standin; // stand-ins for the official postgres and mariadb images, from Debian's packages
mod testcontainers; // Testcontainers for Python with the library

/// Where the library is mounted in the recipes.
pub const MOUNTED: &str = "/opt/eatmydata/libeatmydata.so";
/// Where the runtime mounts it (`runtime/edit/library.rs`), inside the
/// container's `/dev` tmpfs.
pub const RUNTIME_MOUNTED: &str = "/dev/.eatmydata/libeatmydata.so";
/// The annotation that turns the runtime off for one container.
pub const DISABLE: &str = "io.eatmydata.disable";

/// A `podman` call with the tests' settings.
pub fn podman() -> Command {
    let mut command = Command::new("podman");
    command.env("CONTAINERS_CONF", conf());
    command
}

/// The tests' `containers.conf`.
pub fn conf() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/containers/containers.conf")
}

/// Runs `podman args`, asserting success; its stdout.
pub fn podman_ok(args: &[&str]) -> String {
    let output = podman()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run podman");
    assert!(
        output.status.success(),
        "podman {args:?}: {}\n{}",
        output.status,
        text(&output)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// An image of ours, removed when dropped.
pub struct Image(pub String);

impl Image {
    /// Imports the tree at `root` (`podman import`, as made offline).
    pub fn import(root: &Path, name: &str) -> Image {
        let tar = root.with_extension("tar");
        let status = Command::new("tar")
            .arg("-C")
            .arg(root)
            .arg("-cf")
            .arg(&tar)
            .arg(".")
            .status()
            .expect("run tar");
        assert!(status.success(), "tar of {}", root.display());
        podman_ok(&["import", "--quiet", tar.to_str().unwrap(), name]);
        let _ = fs::remove_file(&tar);
        Image(name.to_owned())
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        let _ = podman()
            .args(["rmi", "--force", &self.0])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A Debian 12 image from `scripts/debian-rootfs` with `packages`, imported
/// once and kept (as the tree is) under a name that says what it holds.
pub fn debian_image(packages: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/debian-rootfs");
    let mut name = String::from("localhost/eatmydata-test/bookworm");
    let mut rootfs = Command::new(&script);
    if !packages.is_empty() {
        rootfs.arg("--include").arg(packages.join(","));
        name.push('-');
        name.push_str(&packages.join("-"));
    }
    let output = rootfs.arg("none").output().expect("run debian-rootfs");
    assert!(output.status.success(), "debian-rootfs: {}", text(&output));
    let tree = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    // One import at a time across test processes; later ones find it made.
    let import = format!(
        "podman image exists {name} || tar -C '{tree}' --exclude=./.eatmydata-complete -c . \
         | podman import --quiet - {name} >/dev/null"
    );
    let status = Command::new("flock")
        .arg(format!("{tree}.lock"))
        .args(["sh", "-c", &import])
        .env("CONTAINERS_CONF", conf())
        .status()
        .expect("run flock");
    assert!(status.success(), "import of {tree} as {name}");
    name
}

/// The volume option that puts the loop file system at `/data`.
fn data_volume(disk: &LoopFs) -> String {
    format!("{}:/data", disk.path().display())
}

/// An image of a musl root (see `musl_root`) holding `program`, with the
/// static pair in `/bin` or without it, and the program's path inside.
struct MuslImage {
    image: Image,
    program: String,
    _dir: TempDir,
}

impl MuslImage {
    fn new(label: &str, program: &Path, with_command: bool) -> MuslImage {
        let dir = TempDir::new(label);
        let root = dir.join("root");
        musl_root(&root, &[program]);
        if !with_command {
            // Only musl and the program: the library comes from the host.
            fs::remove_file(root.join("bin/eatmydata")).unwrap();
        }
        let image = Image::import(
            &root,
            &format!("eatmydata-test-{label}-{}", std::process::id()),
        );
        let name = program.file_name().unwrap().to_string_lossy();
        MuslImage {
            image,
            program: format!("/bin/{name}"),
            _dir: dir,
        }
    }
}

/// How many containers a count of `sync_calls` runs: six sync calls are
/// too few flushes alone for the judge (`common::flushes`) to tell.
const ROUNDS: usize = 4;

/// Runs `run` [`ROUNDS`] times, on `/data/NAME0`, `/data/NAME1`...;
/// returns what the last gave.
fn rounds<T>(name: &str, mut run: impl FnMut(&str) -> T) -> T {
    let mut last = None;
    for round in 0..ROUNDS {
        last = Some(run(&format!("/data/{name}{round}")));
    }
    last.expect("at least one round")
}

/// Where the floor's `nosync` is inside a container whose `/data` is
/// `disk` (see [`data_volume`]): copied there by this call.
fn floor_program(disk: &LoopFs) -> &'static str {
    crate::common::nosync_into(disk.path());
    "/data/nosync"
}
