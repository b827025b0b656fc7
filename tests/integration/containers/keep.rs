//! Keep by mount in containers (`runtime/edit/keep.rs`): a container on
//! the tests' dockerd with two loop devices of the test's own mounted in
//! it, [`SYNCS`] fsyncs to a file on each, their flushes counted beside
//! the same container under plain runc. `-e EATMYDATA_KEEP=/keep`: the
//! syncs on `/keep` reach the disk (a flush for at least 95% of them),
//! those on `/data` are eaten (at most 5% of runc's flushes); a static program keeps both (the
//! seccomp rules cannot scope, so none are given). The runtime registered
//! `configure docker --keep-binds`, no variable: a bind of a host folder
//! is kept, a named volume (bound by Docker from its data root) eaten.

use super::cases::{DYNAMIC, STATIC};
use super::docker::Docker;
use super::engine::register_as;
use crate::common::registered_runtime;
use crate::loopfs::LoopFs;

/// The fsyncs to each file system.
const SYNCS: u32 = 100;

/// What a container did on each disk: flushes on `a` and on `b`.
fn flushes(a: &LoopFs, b: &LoopFs, run: impl FnOnce()) -> (u64, u64) {
    let mut on_b = 0;
    let on_a = a.flushes_during(|| on_b = b.flushes_during(run));
    (on_a, on_b)
}

/// Runs `docker run --rm --network=none ARGS IMAGE sh -c SCRIPT`.
fn run(docker: &Docker, args: &[String], script: &str) {
    let mut command = docker.docker();
    command.args(["run", "--rm", "--network=none"]).args(args);
    command
        .arg(super::engine::Engine::image(docker))
        .args(["sh", "-c", script]);
    let output = command.output().expect("run docker");
    assert!(
        output.status.success(),
        "docker run {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `program` fsyncing a file on `first` then one on `second`, SYNCS times.
fn script(program: &str, first: &str, second: &str) -> String {
    format!("{program} loop {first}/f {SYNCS} && {program} loop {second}/f {SYNCS}")
}

/// A kept fsync reaches the disk: at least one flush each. runc's own
/// count is no steadier a measure: an ext4 commit on a loop device makes
/// one or two flush requests (100 fsyncs made 124 to 166 here), so the
/// floor is 95% of the fsyncs, and the figures beside runc's are shown.
fn assert_kept(kept: u64, control: u64, what: &str) {
    assert!(
        kept * 100 >= u64::from(SYNCS) * 95,
        "{what}: {kept} flushes under the runtime for {SYNCS} fsyncs (runc: {control})"
    );
}

/// An eaten fsync does not: judged by `common::flushes`, against runc's
/// count and a floor (the loop's bytes written to a like disk, unsynced).
fn assert_eaten(eaten: u64, control: u64, what: &str) {
    let disk = LoopFs::new("keep-floor", 64);
    crate::common::Flushes {
        control,
        floor: crate::common::floor_writing(&disk, "floor", SYNCS as usize),
        eaten,
    }
    .assert_eaten(u64::from(SYNCS), what);
}

#[test]
fn a_container_keeps_the_mounts_it_names() {
    let docker = Docker::start();
    let (a, b) = (LoopFs::new("keep-data", 64), LoopFs::new("keep-keep", 64));
    let volumes = |runtime: &str| {
        vec![
            runtime.to_owned(),
            "-v".into(),
            format!("{}:/data", a.path().display()),
            "-v".into(),
            format!("{}:/keep", b.path().display()),
            "-e".into(),
            "EATMYDATA_KEEP=/keep".into(),
        ]
    };
    for (program, kind) in [(DYNAMIC, "dynamic"), (STATIC, "static")] {
        let script = script(program, "/data", "/keep");
        let plain = flushes(&a, &b, || run(&docker, &volumes("--runtime=runc"), &script));
        let ours = flushes(&a, &b, || {
            run(&docker, &volumes("--runtime=eatmydata"), &script)
        });
        eprintln!(
            "keep: docker, {kind}, EATMYDATA_KEEP=/keep: runc /data {} /keep {}, \
             eatmydata /data {} /keep {}",
            plain.0, plain.1, ours.0, ours.1
        );
        assert!(plain.1 >= u64::from(SYNCS), "runc on /keep: {}", plain.1);
        assert_kept(ours.1, plain.1, &format!("{kind}: /keep"));
        match kind {
            "dynamic" => assert_eaten(ours.0, plain.0, "dynamic: /data"),
            // The seccomp rules cannot tell mounts apart: none are given,
            // and a static program keeps every sync.
            _ => assert_kept(ours.0, plain.0, "static: /data"),
        }
    }
}

#[test]
fn keep_binds_keeps_a_host_folder_and_eats_a_named_volume() {
    let docker = Docker::start_registered(|config| {
        register_as("docker", config, &registered_runtime(), &["--keep-binds"]);
    });
    let (a, b) = (
        LoopFs::new("keepbinds-bind", 64),
        LoopFs::new("keepbinds-vol", 64),
    );
    let volume = format!("eatmydata-test-keep-{}", std::process::id());
    let device = format!("device={}", b.path().display());
    docker.ok(&[
        "volume",
        "create",
        "--driver",
        "local",
        "--opt",
        "type=none",
        "--opt",
        "o=bind",
        "--opt",
        &device,
        &volume,
    ]);
    let args = |runtime: &str| {
        vec![
            runtime.to_owned(),
            "-v".into(),
            format!("{}:/data", a.path().display()),
            "-v".into(),
            format!("{volume}:/vol"),
        ]
    };
    let script = script(DYNAMIC, "/data", "/vol");
    let plain = flushes(&a, &b, || run(&docker, &args("--runtime=runc"), &script));
    let ours = flushes(&a, &b, || {
        run(&docker, &args("--runtime=eatmydata"), &script)
    });
    let _ = docker
        .docker()
        .args(["volume", "rm", "-f", &volume])
        .output();
    eprintln!(
        "keep: docker --keep-binds: runc bind {} volume {}, eatmydata bind {} volume {}",
        plain.0, plain.1, ours.0, ours.1
    );
    assert!(plain.0 >= u64::from(SYNCS), "runc on the bind: {}", plain.0);
    assert_kept(ours.0, plain.0, "--keep-binds: a host folder's bind");
    assert_eaten(ours.1, plain.1, "--keep-binds: a named volume");
}
