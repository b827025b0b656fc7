//! The barrier at the end of each build step (`runtime/barrier.rs`): a
//! Dockerfile of [`STEPS`] RUN steps, each writing [`FILES`] files with or
//! without an fsync each (`probes/step_files.c`, which prints when it
//! started and when its last file was closed), built through the runtime.
//! Each step must end with one syncfs per file system it wrote to: the
//! runtime runs under `strace -ttt -e trace=syncfs,wait4` (the wall clock
//! the probe prints too), and each step's syncfs must come after its last
//! write and before the next step started. `podman build` with the steps
//! writing to a volume on a loop device of the test's own (nothing else
//! writes there): the barrier costs at most 2 flushes per step above the
//! same build without syncs, where plain runc flushes each file. Docker
//! 26's BuildKit (`docker26.rs`): its data root holds BuildKit's own
//! overlays, whose every unmount the kernel syncs (hundreds of flushes per
//! build, varying), so there the flushes are shown, and the order proved.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::at_home::runtime_at_home;
use super::builds::probe_tree;
use super::docker26::{Docker26, Runtime};
use super::{Image, podman};
use crate::common::{TempDir, probe};
use crate::loopfs::LoopFs;

/// The RUN steps of the Dockerfile, and the files each one writes.
const STEPS: usize = 3;
const FILES: u32 = 100;

/// A base tree with the probe at `/step_files` and what it loads.
fn base(dir: &TempDir) -> PathBuf {
    let root = dir.join("base");
    probe_tree(&root, &probe("step_files", &[]), "step_files");
    root
}

/// A context whose steps write under `under` (`/data`: the volume), with
/// an fsync per file when `sync`.
fn context(dir: &TempDir, base: &str, under: &str, sync: bool) -> PathBuf {
    let mode = if sync { "sync" } else { "nosync" };
    let context = dir.join(format!("context-{mode}"));
    fs::create_dir_all(&context).unwrap();
    let mut dockerfile = format!("FROM {base}\n");
    for step in 1..=STEPS {
        dockerfile +=
            &format!("RUN [\"/step_files\", \"{under}/s{step}\", \"{FILES}\", \"{mode}\"]\n");
    }
    fs::write(context.join("Dockerfile"), dockerfile).unwrap();
    context
}

/// A program that runs the runtime under strace, each call's trace in
/// `traces`: `trace.PID`.
fn traced_runtime(dir: &TempDir, traces: &Path, runtime: &Path) -> PathBuf {
    fs::create_dir_all(traces).unwrap();
    let wrapper = dir.join("traced-runtime");
    let script = format!(
        "#!/bin/sh\nexec strace -ttt -e trace=syncfs,wait4 -o {}/trace.$$ {} \"$@\"\n",
        traces.display(),
        runtime.display()
    );
    fs::write(&wrapper, script).unwrap();
    let status = Command::new("chmod").arg("755").arg(&wrapper).status();
    assert!(status.unwrap().success());
    wrapper
}

/// The steps' (start, end) times in seconds, from the build's output, in
/// the order the lines came.
fn steps(output: &str) -> Vec<(f64, f64)> {
    let value = |line: &str, key: &str| {
        let at = line.find(key)? + key.len();
        let digits: String = line[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        Some(digits.parse::<f64>().ok()? / 1e9)
    };
    let starts: Vec<f64> = output
        .lines()
        .filter_map(|l| value(l, "step_start="))
        .collect();
    let ends: Vec<f64> = output
        .lines()
        .filter_map(|l| value(l, "step_end="))
        .collect();
    starts.into_iter().zip(ends).collect()
}

/// Each syncfs the runtime made (its time, and its answer), and the time
/// of the last wait4 before it that reaped a child, per traced call.
fn syncfs_calls(traces: &Path) -> Vec<(f64, String)> {
    let mut calls = vec![];
    for entry in fs::read_dir(traces).unwrap().flatten() {
        let text = fs::read_to_string(entry.path()).unwrap_or_default();
        for line in text.lines() {
            let mut words = line.splitn(2, ' ');
            let (Some(time), Some(call)) = (words.next(), words.next()) else {
                continue;
            };
            if call.starts_with("syncfs(") {
                calls.push((time.parse::<f64>().unwrap(), call.to_owned()));
            }
        }
    }
    calls.sort_by(|a, b| a.0.total_cmp(&b.0));
    calls
}

/// Asserts that each step's syncfs came after its last write and before
/// the next step started, at most `per_step` of them, each answered 0.
fn assert_ordered(build: &str, output: &str, traces: &Path, per_step: usize) {
    let steps = steps(output);
    let calls = syncfs_calls(traces);
    eprintln!("barrier: {build}: steps {steps:?}, syncfs {calls:?}");
    assert_eq!(
        steps.len(),
        STEPS,
        "{build}: the steps' times in:\n{output}"
    );
    for (at, (start, end)) in steps.iter().enumerate() {
        let next = steps.get(at + 1).map_or(f64::INFINITY, |s| s.0);
        assert!(start < end, "{build}: step {at}");
        let between: Vec<&(f64, String)> = calls
            .iter()
            .filter(|(time, _)| time > end && *time < next)
            .collect();
        assert!(
            !between.is_empty() && between.len() <= per_step,
            "{build}: step {at} ended at {end}, the next began at {next}: syncfs calls then: \
             {between:?} (all: {calls:?})"
        );
        assert!(
            between.iter().all(|(_, call)| call.ends_with("= 0")),
            "{between:?}"
        );
    }
    assert!(
        calls.iter().all(|(time, _)| *time > steps[0].1),
        "{build}: a syncfs before the first step ended: {calls:?}"
    );
}

/// Runs `podman build` of `context` with `runtime`, `volume` at `/data`;
/// its output.
fn podman_build(runtime: &Path, volume: &str, context: &Path, tag: &str) -> String {
    let output = podman()
        .args(["build", "--no-cache", "--network=none", "--runtime"])
        .arg(runtime)
        .args(["-v", volume, "-t", tag])
        .arg(context)
        .stdin(Stdio::null())
        .output()
        .expect("run podman build");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "podman build: {text}");
    text
}

#[test]
fn podman_build_steps_end_with_one_flush_of_what_they_wrote() {
    let dir = TempDir::new("barrier-podman");
    let name = format!(
        "localhost/eatmydata-test/barrier-base-{}",
        std::process::id()
    );
    let _base = Image::import(&base(&dir), &name);
    let disk = LoopFs::new("barrier-podman-disk", 64);
    let volume = format!("{}:/data", disk.path().display());
    let traces = dir.join("traces");
    // The runtime as podman is given it: through the script that names
    // the test's root home (`at_home.rs`).
    let traced = traced_runtime(&dir, &traces, &runtime_at_home());
    let runc = PathBuf::from("/usr/sbin/runc");
    let tag = Image(format!(
        "localhost/eatmydata-test/barrier-built-{}",
        std::process::id()
    ));
    let (synced, unsynced) = (
        context(&dir, &name, "/data", true),
        context(&dir, &name, "/data", false),
    );
    let build = |runtime: &Path, context: &Path| {
        let mut output = String::new();
        let flushes =
            disk.flushes_during(|| output = podman_build(runtime, &volume, context, &tag.0));
        (flushes, output)
    };
    let (plain, _) = build(&runc, &synced);
    let (floor, _) = build(&runc, &unsynced);
    let _ = fs::remove_dir_all(&traces);
    fs::create_dir_all(&traces).unwrap();
    let (eaten, output) = build(&traced, &synced);
    eprintln!(
        "barrier: podman build, {STEPS} steps of {FILES} fsynced files: plain runc {plain} \
         flushes, without syncs {floor}, eatmydata {eaten}"
    );
    assert!(plain >= u64::from(FILES) * STEPS as u64, "plain: {plain}");
    // The volume and the step's rootfs, each once.
    assert_ordered("podman build", &output, &traces, 2);
    // What one fsync costs on this device (a journal commit: its flush
    // and, a loop device having no FUA, a second one for its commit
    // block): the unit a step's barrier is counted in.
    let per_fsync = (plain as f64 / f64::from(FILES * STEPS as u32)).max(1.0);
    let per_step = eaten.saturating_sub(floor) as f64 / per_fsync / STEPS as f64;
    eprintln!("barrier: podman build: {per_step:.2} fsyncs' worth of flushes per step");
    assert!(
        per_step <= 2.0,
        "eatmydata: {eaten} flushes, more than 2 fsyncs' worth ({per_fsync}) per step above {floor}"
    );
    assert!(
        eaten >= STEPS as u64,
        "eatmydata: {eaten}: no barrier flushed the volume"
    );
}

#[test]
fn buildkit_steps_on_docker_26_end_with_a_syncfs_after_their_last_write() {
    let dir = TempDir::new("barrier-docker26");
    let root = base(&dir);
    let tar = Command::new("tar")
        .arg("-C")
        .arg(&root)
        .args(["-c", "."])
        .output()
        .expect("run tar");
    assert!(tar.status.success(), "tar of the base tree");
    let disk = LoopFs::new("barrier-docker26-disk", 256);
    let mut flushes = vec![];
    for (what, runtime, sync) in [
        ("without syncs", Runtime::Plain, false),
        ("plain runc", Runtime::Plain, true),
        ("eatmydata", Runtime::Traced, true),
    ] {
        let docker = Docker26::start("barrier", disk.path(), runtime);
        let mut import = docker.docker();
        import
            .args(["import", "-", "eatmydata-test/barrier-base"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null());
        let mut child = import.spawn().expect("run docker import");
        std::io::Write::write_all(child.stdin.as_mut().unwrap(), &tar.stdout).unwrap();
        drop(child.stdin.take());
        assert!(child.wait().unwrap().success(), "docker import");
        let context = context(&dir, "eatmydata-test/barrier-base", "", sync);
        let mut built = None;
        let count = disk.flushes_during(|| {
            let mut build = docker.docker();
            build
                .env("DOCKER_BUILDKIT", "1")
                .args(["build", "--progress=plain", "--no-cache", "--network=none"])
                .args(["-t", "eatmydata-test/barrier-built"])
                .arg(&context);
            built = Some(build.output().expect("run docker build"));
        });
        let built = built.unwrap();
        let output = String::from_utf8_lossy(&built.stderr).into_owned();
        assert!(
            built.status.success(),
            "docker build ({what}): {output}\n{}",
            docker.log()
        );
        flushes.push((what, count));
        if runtime == Runtime::Traced {
            // The step's rootfs (its overlay's upper folder, on the data
            // root) and the files BuildKit binds in from its executor.
            assert_ordered("docker 26 BuildKit", &output, &docker.traces(), 2);
        }
    }
    eprintln!("barrier: docker 26 BuildKit, {STEPS} steps of {FILES} files: {flushes:?}");
}
