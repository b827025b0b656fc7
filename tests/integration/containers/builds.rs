//! Builds reach the runtime: a Dockerfile whose RUN step fsyncs a file
//! `SYNCS` times, built on a plain engine and on one where eatmydata is
//! the default runtime, the flushes counted on a loop device, and the
//! images' files compared. Docker 26 (`docker26.rs`): BuildKit, which
//! takes `DOCKER_BUILDKIT_RUNC_COMMAND`, and the legacy builder, which
//! takes `default-runtime`, their loop device holding dockerd's data root
//! (a floor, the same build with no sync, subtracted); podman build, which
//! takes containers.conf's runtime (or `eatmydata podman build`'s), with
//! the step's volume on the device, and an arm64 step under qemu-user.
//! And what `eatmydata docker build` and `compose` say on each daemon.
//! The base image is made from the host's own files: the probe and the
//! libraries it loads.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::at_home::{installed_command, podman_at_home};
use super::docker26::{Docker26, Runtime};
use super::engine::register_default;
use super::{Image, conf, data_volume, podman};
use crate::common::{Flushes, TempDir, floor_writing, probe};
use crate::loopfs::LoopFs;

/// The fsyncs of the RUN step: some 800 flushes above the floor.
const SYNCS: u32 = 500;
/// The base image's name in docker, and in podman (which would look a
/// name without a registry up in registries).
const BASE: &str = "eatmydata-test/build-base";
const PODMAN_BASE: &str = "localhost/eatmydata-test/build-base";

/// A base image's tree, and one build context per RUN step.
struct Sources {
    dir: TempDir,
}

impl Sources {
    /// The tree: the fsyncing probe at `/probe`, its loader and libraries
    /// at their paths, an empty `/tmp`.
    fn new() -> Sources {
        let dir = TempDir::new("builds");
        probe_tree(&dir.join("base"), &probe("seccomp_sync", &[]), "probe");
        Sources { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.join("base")
    }

    /// The base tree as a tar archive.
    fn tar(&self) -> Vec<u8> {
        let output = Command::new("tar")
            .arg("-C")
            .arg(self.root())
            .args(["-c", "."])
            .output()
            .expect("run tar");
        assert!(output.status.success(), "tar of the base tree");
        output.stdout
    }

    /// A context whose Dockerfile's RUN step writes `file` and fsyncs it
    /// `syncs` times.
    fn context(&self, base: &str, file: &str, syncs: u32) -> PathBuf {
        let context = self.dir.join(format!("context-{syncs}"));
        fs::create_dir_all(&context).unwrap();
        let dockerfile =
            format!("FROM {base}\nRUN [\"/probe\", \"loop\", \"{file}\", \"{syncs}\"]\n");
        fs::write(context.join("Dockerfile"), dockerfile).unwrap();
        context
    }
}

/// Makes `root` a tree holding `program` at `/NAME`, its loader and
/// libraries at their paths, and an empty `/tmp`: a base image's.
pub fn probe_tree(root: &Path, program: &Path, name: &str) {
    fs::create_dir_all(root.join("tmp")).unwrap();
    fs::copy(program, root.join(name)).unwrap();
    let ldd = Command::new("ldd").arg(program).output().expect("run ldd");
    for library in String::from_utf8_lossy(&ldd.stdout)
        .split_whitespace()
        .filter(|word| word.starts_with('/'))
    {
        let to = root.join(&library[1..]);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(library, to).unwrap();
    }
}

/// A context whose RUN step runs an arm64 build of the probe under
/// qemu-user, as a multi-platform build does on this machine (binfmt_misc
/// finds qemu there; here the step names it, binfmt_misc being the whole
/// machine's): `file` fsynced `syncs` times by qemu's own system calls.
fn foreign_context(sources: &Sources, base: &str, file: &str, syncs: u32) -> PathBuf {
    let context = sources.dir.join("context-arm64");
    fs::create_dir_all(&context).unwrap();
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/probes/seccomp_sync.c");
    let status = Command::new("aarch64-linux-gnu-gcc")
        .args(["-static", "-O1", "-D_GNU_SOURCE", "-o"])
        .arg(context.join("probe-arm64"))
        .arg(source)
        .arg("-lpthread")
        .status()
        .expect("run aarch64-linux-gnu-gcc (scripts/setup-test-deps)");
    assert!(status.success(), "the arm64 probe");
    fs::copy(
        "/usr/bin/qemu-aarch64-static",
        context.join("qemu-aarch64-static"),
    )
    .expect("copy qemu-aarch64-static (qemu-user-static)");
    let dockerfile = format!(
        "FROM {base}\nCOPY qemu-aarch64-static probe-arm64 /\n\
         RUN [\"/qemu-aarch64-static\", \"/probe-arm64\", \"loop\", \"{file}\", \"{syncs}\"]\n"
    );
    fs::write(context.join("Dockerfile"), dockerfile).unwrap();
    context
}

/// Runs `command` with `input` on its stdin, asserting success; stdout.
fn fed(mut command: Command, input: &[u8]) -> Vec<u8> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a command");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().expect("wait for a command");
    writer.join().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// The names in a tar archive (an exported container: the image's files
/// and the engine's own mount points, the same for both runtimes), sorted.
fn names(archive: &[u8]) -> Vec<String> {
    let mut tar = Command::new("tar");
    tar.arg("-t");
    let listing = fed(tar, archive);
    let mut names: Vec<String> = String::from_utf8_lossy(&listing)
        .lines()
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

/// Asserts that the image made under eatmydata lists the plain one's
/// files: the library's mount point is in the container's `/dev`, which
/// no layer holds.
fn assert_same_files(eaten: &[String], plain: &[String], what: &str) {
    assert_eq!(
        eaten, plain,
        "{what}: the image made under eatmydata lists other files"
    );
}

/// Docker's builders.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Builder {
    BuildKit,
    Legacy,
}

/// What one builder's two builds made on one daemon.
struct Built {
    floor: u64,
    synced: u64,
    files: Vec<String>,
}

impl Built {
    /// The flushes of the RUN step's syncs: above the floor.
    fn syncs(&self) -> u64 {
        self.synced.saturating_sub(self.floor)
    }
}

/// Builds `context` as `tag` with `builder`, the cache unused, no network.
fn docker_build(docker: &Docker26, builder: Builder, context: &Path, tag: &str) {
    let mut build = docker.docker();
    // Each builder as docker's client picks it with DOCKER_BUILDKIT unset:
    // BuildKit with its buildx component, the legacy builder without.
    let none = TempDir::new("builds-no-buildx");
    if builder == Builder::Legacy {
        build.env("DOCKER_CONFIG", none.path());
    }
    build
        .env_remove("DOCKER_BUILDKIT")
        .args([
            "build",
            "--quiet",
            "--no-cache",
            "--network=none",
            "-t",
            tag,
        ])
        .arg(context);
    let output = build.output().expect("run docker build");
    assert!(
        output.status.success(),
        "docker build ({builder:?}): {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        docker.log()
    );
}

/// The files of `image` on `docker`: a container made of it, exported.
fn docker_files(docker: &Docker26, image: &str) -> Vec<String> {
    let id = docker.ok(&["create", "--network=none", image, "/probe"]);
    let id = id.trim();
    let archive = docker
        .docker()
        .args(["export", id])
        .output()
        .expect("run docker export");
    docker.ok(&["rm", id]);
    assert!(archive.status.success(), "docker export");
    names(&archive.stdout)
}

/// The note `eatmydata` said first on stderr, if it did.
fn note(output: &std::process::Output) -> Option<String> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let first = stderr.lines().next()?;
    first.starts_with("eatmydata:").then(|| first.to_owned())
}

/// What `eatmydata docker` says on `docker`: for `compose up`, and for a
/// build of `context` (which must succeed) with DOCKER_BUILDKIT unset, by
/// BuildKit (the client with buildx) and by the legacy builder (without).
fn client_notes(docker: &Docker26, context: &Path) -> [Option<String>; 3] {
    let compose = docker
        .eatmydata_docker()
        .args(["compose", "--file", "/nonexistent/compose.yaml", "up"])
        .output()
        .expect("run eatmydata docker compose");
    let none = TempDir::new("builds-client-no-buildx");
    let build = |buildx: bool| {
        let mut build = docker.eatmydata_docker();
        if !buildx {
            build.env("DOCKER_CONFIG", none.path());
        }
        let output = build
            .env_remove("DOCKER_BUILDKIT")
            .args(["build", "--quiet", "--network=none", "-t"])
            .arg("eatmydata-test/built-client")
            .arg(context)
            .output()
            .expect("run eatmydata docker build");
        assert!(
            output.status.success(),
            "eatmydata docker build: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        note(&output)
    };
    [note(&compose), build(true), build(false)]
}

/// Both builders' builds on a Docker 26 with `runtime`, its data root on a
/// loop device of its own; and what `eatmydata docker` says there.
fn on_docker26(
    sources: &Sources,
    runtime: Runtime,
) -> (Vec<(Builder, Built)>, [Option<String>; 3]) {
    let disk = LoopFs::new("builds-docker26-disk", 256);
    let docker = Docker26::start("docker26", disk.path(), runtime);
    let mut import = docker.docker();
    import.args(["import", "-", BASE]);
    fed(import, &sources.tar());
    let contexts = [0, SYNCS].map(|syncs| sources.context(BASE, "/synced", syncs));
    let built = [Builder::BuildKit, Builder::Legacy]
        .into_iter()
        .map(|builder| {
            let tag = format!("eatmydata-test/built-{builder:?}").to_lowercase();
            let floor = disk.flushes_during(|| docker_build(&docker, builder, &contexts[0], &tag));
            let synced = disk.flushes_during(|| docker_build(&docker, builder, &contexts[1], &tag));
            let files = docker_files(&docker, &tag);
            assert!(files.iter().any(|name| name == "synced"), "{files:?}");
            (
                builder,
                Built {
                    floor,
                    synced,
                    files,
                },
            )
        })
        .collect();
    (built, client_notes(&docker, &contexts[0]))
}

#[test]
fn builds_on_docker_26_reach_the_runtime_with_both_builders() {
    let sources = Sources::new();
    let (plain, plain_notes) = on_docker26(&sources, Runtime::Plain);
    let (eaten, eaten_notes) = on_docker26(&sources, Runtime::Default);
    // What the client says: where eatmydata is the daemon's default (and
    // BuildKit's runc, in dockerd's environment), nothing for Compose's
    // containers, BuildKit's steps or the legacy builder's; on the plain
    // daemon, which builder does not reach it, and why.
    assert_eq!(
        eaten_notes,
        [None, None, None],
        "on the daemon whose default is eatmydata"
    );
    let [compose, buildkit, legacy] = plain_notes.map(Option::unwrap_or_default);
    assert!(compose.contains("configure docker --default"), "{compose}");
    assert!(
        buildkit.contains("BuildKit runs RUN steps with its own runc (dockerd's environment has no DOCKER_BUILDKIT_RUNC_COMMAND)"),
        "{buildkit}"
    );
    assert!(
        legacy.contains("legacy builder here (docker has no buildx component)")
            && legacy.contains("dockerd's default runtime, runc, not eatmydata"),
        "{legacy}"
    );
    let pairs: Vec<_> = plain.iter().zip(&eaten).collect();
    for ((builder, plain), (_, eaten)) in &pairs {
        eprintln!(
            "builds: docker 26 {builder:?}: plain {} flushes ({} floor), eatmydata {} ({} floor)",
            plain.synced, plain.floor, eaten.synced, eaten.floor
        );
    }
    for ((builder, plain), (_, eaten)) in pairs {
        // Each daemon's build with no sync is its floor: the eaten build
        // is judged against its own, by what the plain one's syncs made.
        Flushes {
            control: eaten.floor + plain.syncs(),
            floor: eaten.floor,
            eaten: eaten.synced,
        }
        .assert_eaten(
            u64::from(SYNCS),
            &format!("docker 26 {builder:?}, the RUN step"),
        );
        assert_same_files(
            &eaten.files,
            &plain.files,
            &format!("docker 26 {builder:?}"),
        );
    }
}

/// The files of `image` in podman (with `conf`).
fn podman_files(conf: &Path, image: &str) -> Vec<String> {
    let run = |args: &[&str]| {
        let output = podman()
            .env("CONTAINERS_CONF", conf)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run podman");
        assert!(
            output.status.success(),
            "podman {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    };
    let id = String::from_utf8(run(&["create", "--network=none", image, "/probe"])).unwrap();
    let archive = run(&["export", id.trim()]);
    run(&["rm", id.trim()]);
    names(&archive)
}

#[test]
fn podman_builds_reach_the_default_runtime() {
    let sources = Sources::new();
    let _base = Image::import(&sources.root(), PODMAN_BASE);
    let context = sources.context(PODMAN_BASE, "/data/synced", SYNCS);
    let dir = TempDir::new("builds-podman-conf");
    let registered = dir.join("containers.conf");
    fs::copy(conf(), &registered).expect("copy containers.conf");
    register_default("podman", &registered);
    // podman hands the runtime no environment: it is given the script
    // that names the test's root home (`at_home.rs`), by name and typed.
    podman_at_home(&registered);
    let disk = LoopFs::new("builds-podman-disk", 64);
    let volume = data_volume(&disk);
    let foreign = foreign_context(&sources, PODMAN_BASE, "/data/synced", SYNCS);
    let mut files = vec![];
    let mut flushes = vec![];
    // Without eatmydata; with it as containers.conf's default; and as
    // typed, `eatmydata podman build` on the plain settings; then an arm64
    // step under qemu-user without and with eatmydata the default.
    for (conf, name, typed, context) in [
        (conf(), "plain", false, &context),
        (registered.clone(), "default", false, &context),
        (conf(), "typed", true, &context),
        (conf(), "arm64-plain", false, &foreign),
        (registered.clone(), "arm64-default", false, &foreign),
    ] {
        let image = Image(format!("eatmydata-test/built-podman-{name}"));
        let mut podman = if typed {
            let mut eatmydata = Command::new(installed_command());
            eatmydata.arg("podman");
            eatmydata
        } else {
            podman()
        };
        flushes.push(disk.flushes_during(|| {
            let output = podman
                .env("CONTAINERS_CONF", &conf)
                .args(["build", "--quiet", "--no-cache", "--network=none", "-v"])
                .arg(&volume)
                .args(["-t", &image.0])
                .arg(context)
                .stdin(Stdio::null())
                .output()
                .expect("run podman build");
            assert!(
                output.status.success(),
                "podman build ({name}): {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }));
        files.push(podman_files(&conf, &image.0));
    }
    eprintln!(
        "builds: podman build: plain {} flushes, eatmydata the default {}, eatmydata podman \
         build {}; arm64 under qemu-user: plain {}, eatmydata the default {}",
        flushes[0], flushes[1], flushes[2], flushes[3], flushes[4]
    );
    // The floor: the step's blocks written to the volume, unsynced.
    let floor = floor_writing(&disk, "floor", SYNCS as usize * 4096);
    let judge = |control: u64, eaten: u64, what: &str| {
        Flushes {
            control,
            floor,
            eaten,
        }
        .assert_eaten(u64::from(SYNCS), what)
    };
    judge(
        flushes[0],
        flushes[1],
        "podman build, eatmydata the default",
    );
    judge(flushes[0], flushes[2], "eatmydata podman build");
    assert_same_files(&files[1], &files[0], "podman build, eatmydata the default");
    assert_same_files(&files[2], &files[0], "eatmydata podman build");
    judge(flushes[3], flushes[4], "an arm64 step under qemu-user");
    assert_same_files(&files[4], &files[3], "podman build, an arm64 step");
}
