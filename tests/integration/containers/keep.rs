//! Keep by mount in containers (`runtime/edit/keep.rs`): a container on
//! the tests' dockerd with two loop devices of the test's own mounted in
//! it, [`SYNCS`] fsyncs to a file on each, their flushes counted beside
//! the same container under plain runc. `-e EATMYDATA_KEEP=/keep`: the
//! syncs on `/keep` reach the disk (a flush for at least 95% of them),
//! those on `/data` are eaten (at most 5% of runc's flushes); a static program keeps both (the
//! seccomp rules cannot scope, so none are given). The runtime registered
//! `configure docker --keep-binds`, no variable: a bind of a host folder
//! is kept, a named volume (bound by Docker from its data root) eaten.
//! A list the container gives that cannot be read (relative, empty, no
//! mount inside) keeps every sync, and the account says which entry.

use super::account::{Accounted, keep_run};
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

/// A container whose keep list cannot be read keeps every sync (issue
/// 45): `-e EATMYDATA_KEEP=data` (relative), `=/nonexistent` (no mount
/// inside) and `=/data:` (an empty entry) each make the kept bind
/// `/data`, and the other bind `/keep` too, a flush for at least 95% of
/// their fsyncs, as under runc; the account names the entry and why,
/// under the container in `report --json` and in the text. The control
/// beside them, `EATMYDATA_KEEP=/data`, read: `/data` kept, `/keep`
/// eaten, no word. One daemon for all (its API, 1.41, takes no
/// `--annotation`: podman gives the annotation, below).
#[test]
fn a_container_whose_list_cannot_be_read_keeps_every_sync() {
    let docker = Accounted::start("keep-unread");
    let (a, b) = (
        LoopFs::new("unread-data", 64),
        LoopFs::new("unread-keep", 64),
    );
    let relative = "EATMYDATA_KEEP=data";
    let (_, plain_a, plain_b) = keep_run(&docker, "runc", &[relative], &a, &b);
    let cases = [
        (relative, r#"EATMYDATA_KEEP entry "data" is relative"#),
        (
            "EATMYDATA_KEEP=/nonexistent",
            r#"EATMYDATA_KEEP entry "/nonexistent" names no mount"#,
        ),
        (
            "EATMYDATA_KEEP=/data:",
            r#"EATMYDATA_KEEP entry "/data:" cannot be parsed"#,
        ),
        ("EATMYDATA_KEEP=/data", ""),
    ];
    let mut ids = vec![];
    for (env, told) in cases {
        let args = [env];
        let (id, on_a, on_b) = keep_run(&docker, "eatmydata", &args, &a, &b);
        eprintln!(
            "keep: docker {args:?}: runc /data {plain_a} /keep {plain_b}, \
             eatmydata /data {on_a} /keep {on_b}"
        );
        assert_kept(on_a, plain_a, &format!("{args:?}: /data"));
        match told.is_empty() {
            true => assert_eaten(on_b, plain_b, &format!("{args:?}: /keep")),
            false => assert_kept(on_b, plain_b, &format!("{args:?}: /keep")),
        }
        ids.push((id, told));
    }
    let just_ids: Vec<String> = ids.iter().map(|(id, _)| id.clone()).collect();
    let records = docker.records(&just_ids);
    let text = docker.report_text();
    for (id, told) in &ids {
        let record = &records[id];
        if told.is_empty() {
            assert!(record["unread"].is_null(), "{record:#}");
            continue;
        }
        let said = record["unread"].as_str().unwrap_or_default();
        assert!(said.starts_with(told), "{told}: {record:#}");
        assert!(said.ends_with("every sync is kept"), "{record:#}");
        let short: String = id.chars().take(12).collect();
        assert!(
            text.lines()
                .any(|line| line.contains("kept every sync") && line.contains(&short)),
            "{text}"
        );
    }
}

/// The annotation `io.eatmydata.keep=relative`, through podman (the
/// runtime by path, its account in the test's home): the kept bind
/// `/data` and the other bind `/other` each make a flush for at least 95%
/// of their fsyncs, as under podman's runc, and the container's record
/// names the annotation's entry and why.
#[test]
fn an_annotation_that_cannot_be_read_keeps_every_sync_under_podman() {
    // The test image, loaded as podman's own tests load it.
    let image = &super::podman::Podman::by_path().image;
    let (a, b) = (
        LoopFs::new("unread-pm-data", 64),
        LoopFs::new("unread-pm-other", 64),
    );
    let home = std::path::PathBuf::from(std::env::var_os(crate::common::home::HOME).unwrap());
    let cid = home.join("unread-cid");
    let run = |runtime: Option<&std::path::Path>| {
        let _ = std::fs::remove_file(&cid);
        let mut podman = super::podman();
        if let Some(runtime) = runtime {
            podman.arg("--runtime").arg(runtime);
        }
        podman
            .args(["run", "--rm", "--network=none", "--cidfile"])
            .arg(&cid)
            .args(["--annotation", "io.eatmydata.keep=relative"])
            .arg("-v")
            .arg(format!("{}:/data", a.path().display()))
            .arg("-v")
            .arg(format!("{}:/other", b.path().display()))
            .args([image, "sh", "-c", &script(DYNAMIC, "/data", "/other")])
            .stdin(std::process::Stdio::null());
        let on = flushes(&a, &b, || {
            let output = podman.output().expect("run podman");
            assert!(output.status.success(), "podman {runtime:?}: {output:?}");
        });
        (std::fs::read_to_string(&cid).unwrap(), on)
    };
    let (_, plain) = run(None);
    let (id, ours) = run(Some(&super::at_home::runtime_at_home()));
    eprintln!(
        "keep: podman, annotation io.eatmydata.keep=relative: runc /data {} /other {}, \
         eatmydata /data {} /other {}",
        plain.0, plain.1, ours.0, ours.1
    );
    assert_kept(ours.0, plain.0, "annotation relative: /data");
    assert_kept(ours.1, plain.1, "annotation relative: /other");
    let account = home.join("account.jsonl");
    let id = id.trim().to_owned();
    let mut record = serde_json::Value::Null;
    crate::common::wait_until(
        "the container's record",
        std::time::Duration::from_secs(60),
        || {
            let text = std::fs::read_to_string(&account).unwrap_or_default();
            let found = text
                .lines()
                .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
                .find(|one| one["id"] == id.as_str());
            found.map(|one| record = one).is_some()
        },
    );
    let said = record["unread"].as_str().unwrap_or_default();
    let told = r#"annotation io.eatmydata.keep entry "relative" is relative: every sync is kept"#;
    assert_eq!(said, told, "{record:#}");
}
