//! `eatmydata docker|podman run` where the engine has no eatmydata
//! runtime: the client sends eatmydata's seccomp profile with the request
//! and says so, in one line naming what that way leaves out. Proven with
//! each real client and engine, beside the same container run plainly, by
//! the volume's flush counter: Debian 13's Docker 26 in a mount namespace
//! of its own that holds no file of ours and registers no runtime (what
//! Docker Desktop's VM is to the command), Debian 12's Docker 20.10, and
//! podman with runc. Where the profile would not do what it says (a keep
//! asked, `--privileged`, a default runtime named `runsc`), the container
//! runs exactly as plain `docker run` runs it, and one line says why.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::cases;
use super::daemon::{Dockerd, RunDir, StoreLock};
use super::docker26::{Docker26, Runtime};
use super::engine::{CACHE, Engine, Job, Ran};
use super::image::test_image;
use super::{Image, podman};
use crate::common::{Flushes, TempDir, command, nosync_into, probe};
use crate::loopfs::LoopFs;

/// fsyncs each container makes.
const SYNCS: u32 = 200;

/// How a container is started in a case: its client's line up to the
/// image, plainly or under eatmydata.
struct Client {
    /// `docker -H ...` or `podman`, with their settings.
    plain: Box<dyn Fn() -> Command>,
    /// The same under eatmydata.
    eatmydata: Box<dyn Fn() -> Command>,
    image: String,
    /// The probe's path in the image.
    program: String,
    /// Options every run of this client is given.
    always: Vec<String>,
}

impl Client {
    /// Runs `program loop /data/FILE SYNCS` in a container of the image
    /// with `disk` at `/data` (`volume`, as the engine sees the folder),
    /// `options` before the image; under eatmydata if asked, under
    /// `nosync` for the floor.
    fn run(&self, volume: &Path, eatmydata: bool, options: &[&str], file: &str) -> Output {
        let mut client = if eatmydata {
            (self.eatmydata)()
        } else {
            (self.plain)()
        };
        client
            .args(["run", "--rm", "--network=none", "-v"])
            .arg(format!("{}:/data", volume.display()))
            .args(&self.always)
            .args(options)
            .arg(&self.image);
        if file == "floor" {
            client.arg("/data/nosync");
        }
        let syncs = SYNCS.to_string();
        let file = format!("/data/{file}");
        client.args([self.program.as_str(), "loop", &file, &syncs]);
        client
            .stdin(Stdio::null())
            .output()
            .expect("run the client")
    }
}

/// Flushes during `run`, and what it gave.
fn counted(disk: &LoopFs, run: impl FnOnce() -> Output) -> (u64, Output) {
    let mut output = None;
    let flushes = disk.flushes_during(|| output = Some(run()));
    (flushes, output.unwrap())
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The control, the floor and the run under eatmydata (with `options`):
/// the syncs eaten, at most 5% of the control's flushes, the container's
/// output and status those of the control, the way said in one line.
fn eaten_through_the_profile(what: &str, client: &Client, disk: &LoopFs, volume: &Path) {
    nosync_into(disk.path());
    let (control, plain) = counted(disk, || client.run(volume, false, &[], "control"));
    assert!(plain.status.success(), "{what}, plain: {}", stderr(&plain));
    let (floor, _) = counted(disk, || client.run(volume, false, &[], "floor"));
    let (eaten, ours) = counted(disk, || client.run(volume, true, &[], "eaten"));
    let said = stderr(&ours);
    eprintln!("{what}: {said}");
    assert_eq!(
        (ours.status.code(), &ours.stdout),
        (plain.status.code(), &plain.stdout),
        "{what}: {said}"
    );
    let line = said.lines().next().unwrap_or_default();
    assert!(
        line.starts_with("eatmydata: ") && line.contains("seccomp profile"),
        "{what}: {said}"
    );
    for left_out in ["O_SYNC", "io_uring", "no report"] {
        assert!(line.contains(left_out), "{what}: {line}");
    }
    assert_eq!(said.lines().count(), 1, "{what}: one line: {said}");
    Flushes {
        control,
        floor,
        eaten,
    }
    .assert_eaten(u64::from(SYNCS), what);
    assert!(
        eaten * 20 <= control,
        "{what}: {eaten} flushes through the profile, more than 5% of plain's {control}"
    );
}

/// The run under eatmydata with `options` is left as plain `docker run`
/// with them leaves it: one line saying `why`, the rest of stderr, the
/// output, the status and the flushes (when it runs) those of plain.
fn left_as_plain(
    what: &str,
    client: &Client,
    disk: &LoopFs,
    volume: &Path,
    options: &[&str],
    why: &str,
) {
    let (control, plain) = counted(disk, || client.run(volume, false, options, "kept-plain"));
    let (kept, ours) = counted(disk, || client.run(volume, true, options, "kept-ours"));
    let said = stderr(&ours);
    eprintln!("{what}: control {control} flushes, ours {kept}: {said}");
    let (line, rest) = said.split_once('\n').unwrap_or((&said, ""));
    assert!(
        line.starts_with("eatmydata: ") && line.contains(why),
        "{what}: {said}"
    );
    assert!(line.contains("runs as asked"), "{what}: {line}");
    assert_eq!(
        rest,
        stderr(&plain),
        "{what}: the client's own words, unchanged"
    );
    assert_eq!(
        (ours.status.code(), &ours.stdout),
        (plain.status.code(), &plain.stdout),
        "{what}"
    );
    if plain.status.success() {
        // Each fsync flushes once or twice; none is eaten.
        assert!(
            kept >= u64::from(SYNCS) && kept * 2 >= control,
            "{what}: {kept} flushes, plain {control}"
        );
    }
}

/// A folder holding the static sync probe alone, as an image's root.
fn probe_root() -> TempDir {
    let dir = TempDir::new("profile-image");
    std::fs::copy(probe("seccomp_sync", &["-static"]), dir.join("probe")).expect("copy the probe");
    dir
}

/// `docker import`s the probe's root through `docker`, with `changes` to
/// its config (`ENV X=1`); the image's name.
fn import(docker: &mut Command, name: &str, changes: &[&str]) -> String {
    let root = probe_root();
    let tar = root.path().with_extension("tar");
    let status = Command::new("tar")
        .arg("-C")
        .arg(root.path())
        .arg("-cf")
        .arg(&tar)
        .arg(".")
        .status()
        .expect("run tar");
    assert!(status.success(), "tar of the probe's root");
    docker.arg("import");
    for change in changes {
        docker.args(["--change", change]);
    }
    let output = docker
        .arg(&tar)
        .arg(name)
        .output()
        .expect("run docker import");
    let _ = std::fs::remove_file(&tar);
    assert!(
        output.status.success(),
        "docker import: {}",
        stderr(&output)
    );
    name.to_owned()
}

/// `eatmydata` as a user without the runtime has it: the command alone in
/// a folder, no `eatmydata-runtime` beside it or in `PATH`.
fn command_alone() -> (TempDir, PathBuf) {
    let dir = TempDir::new("profile-command");
    let alone = dir.join("eatmydata");
    std::fs::copy(command(), &alone).expect("copy the command");
    (dir, alone)
}

const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

#[test]
fn docker26_with_nothing_of_ours_gets_the_profile() {
    let disk = LoopFs::new("profile-docker26-disk", 128);
    let data = TempDir::new("profile-docker26-data");
    let docker =
        Docker26::start_with_volume("profile26", data.path(), Runtime::Absent, Some(disk.path()));
    // dockerd's root holds none of our build, and it lists no runtime of
    // ours.
    let seen = |path: &Path| {
        PathBuf::from(format!("/proc/{}/root{}", docker.pid(), path.display())).exists()
    };
    assert!(
        seen(Path::new("/usr/sbin/dockerd")),
        "dockerd's root is not read"
    );
    for ours in [
        command(),
        super::engine::runtime(),
        crate::common::library(),
    ] {
        assert!(!seen(&ours), "dockerd sees {}", ours.display());
    }
    let runtimes = docker.ok(&["info", "--format", "{{json .Runtimes}}"]);
    assert!(!runtimes.contains("eatmydata"), "{runtimes}");
    let socket = format!("unix://{}", docker.socket().display());
    let plain_socket = socket.clone();
    let (_alone, alone) = command_alone();
    let client = Client {
        plain: Box::new(move || {
            let mut docker = Command::new("docker");
            docker.args(["-H", &plain_socket]);
            docker
        }),
        eatmydata: Box::new(move || {
            let mut docker = Command::new(&alone);
            docker.args(["docker", "-H", &socket]).env("PATH", PATH);
            docker
        }),
        image: import(&mut docker.docker(), "eatmydata-test/profile-probe:26", &[]),
        program: "/probe".to_owned(),
        always: vec![],
    };
    let volume = docker.volume();
    eaten_through_the_profile("Docker 26 with nothing of ours", &client, &disk, &volume);
    // Any keep asked: the profile is not sent, and the kept volume
    // flushes as plain's.
    for (options, why) in [
        (
            &["-e", "EATMYDATA_KEEP=/data"][..],
            "EATMYDATA_KEEP in the container's environment",
        ),
        (
            &["--annotation", "io.eatmydata.keep=/data"],
            "the annotation io.eatmydata.keep",
        ),
        (&["--privileged"], "--privileged was given"),
    ] {
        left_as_plain("Docker 26, a keep", &client, &disk, &volume, options, why);
    }
    // The image's own environment asks it.
    let mut client = client;
    let change = "ENV EATMYDATA_KEEP=/data";
    client.image = import(
        &mut docker.docker(),
        "eatmydata-test/profile-kept:26",
        &[change],
    );
    let why = "EATMYDATA_KEEP in the image's environment";
    left_as_plain(
        "Docker 26, the image keeps",
        &client,
        &disk,
        &volume,
        &[],
        why,
    );
}

#[test]
fn docker20_gets_the_profile_and_a_runsc_default_is_left_alone() {
    let disk = LoopFs::new("profile-docker20-disk", 128);
    let dir = RunDir::new("profile20");
    // runsc, as registered on a gVisor host: here a stand-in for runc.
    let runsc = dir.join("runsc");
    std::fs::write(&runsc, "#!/bin/sh\nexec runc \"$@\"\n").expect("write runsc");
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&runsc, mode).expect("make runsc runnable");
    let config = dir.join("daemon.json");
    let json = serde_json::json!({
        "runtimes": { "runsc": { "path": runsc } },
        "default-runtime": "runsc",
    });
    std::fs::write(&config, json.to_string()).expect("write daemon.json");
    let dockerd = Dockerd::start(
        dir.path(),
        &config,
        &dir.join("data"),
        &dir.join("exec"),
        None,
    );
    let socket = format!("unix://{}", dockerd.socket.display());
    let (_alone, alone) = command_alone();
    let image = import(
        &mut dockerd.docker(),
        "eatmydata-test/profile-probe:20",
        &[],
    );
    let client = |always: &[&str]| {
        let always = always.iter().map(|o| o.to_string()).collect();
        let (plain_socket, socket, alone) = (socket.clone(), socket.clone(), alone.clone());
        Client {
            plain: Box::new(move || {
                let mut docker = Command::new("/usr/bin/docker");
                docker.args(["-H", &plain_socket]);
                docker
            }),
            eatmydata: Box::new(move || {
                let mut docker = Command::new(&alone);
                docker
                    .args(["/usr/bin/docker", "-H", &socket])
                    .env("PATH", PATH);
                docker
            }),
            image: image.clone(),
            program: "/probe".to_owned(),
            always,
        }
    };
    // runc asked for on the line: the profile goes with it.
    let runc = client(&["--runtime=runc"]);
    eaten_through_the_profile("Docker 20.10, --runtime=runc", &runc, &disk, disk.path());
    // The user's own profile: merged with, the syncs eaten all the same.
    let dir_path = dir.path().display().to_string();
    let own = format!("{dir_path}/own.json");
    let allow_all = r#"{"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["fsync"],"action":"SCMP_ACT_ALLOW"}]}"#;
    std::fs::write(&own, allow_all).expect("write the user's profile");
    let seccomp = format!("seccomp={own}");
    let merged = client(&["--runtime=runc", "--security-opt", &seccomp]);
    eaten_through_the_profile(
        "Docker 20.10, the user's profile",
        &merged,
        &disk,
        disk.path(),
    );
    // One that is no profile: left to docker, which refuses it itself.
    let bad = format!("{dir_path}/bad.json");
    std::fs::write(&bad, "{not json").expect("write the bad profile");
    left_as_plain(
        "Docker 20.10, a malformed profile",
        &client(&["--runtime=runc"]),
        &disk,
        disk.path(),
        &["--security-opt", &format!("seccomp={bad}")],
        "is not JSON",
    );
    // The default, runsc: refused, the container run as plain runs it.
    let default = client(&[]);
    left_as_plain(
        "Docker 20.10, runsc the default",
        &default,
        &disk,
        disk.path(),
        &[],
        "gVisor's runsc",
    );
}

#[test]
fn podman_without_the_runtime_gets_the_profile() {
    let disk = LoopFs::new("profile-podman-disk", 128);
    let root = probe_root();
    let name = format!("eatmydata-test-profile-{}", std::process::id());
    let image = Image::import(root.path(), &name);
    let (_alone, alone) = command_alone();
    let client = Client {
        plain: Box::new(podman),
        eatmydata: Box::new(move || {
            let mut podman = Command::new(&alone);
            podman
                .arg("podman")
                .env("PATH", PATH)
                .env("CONTAINERS_CONF", super::conf());
            podman
        }),
        image: image.0.clone(),
        program: "/probe".to_owned(),
        always: vec![],
    };
    eaten_through_the_profile("podman with runc", &client, &disk, disk.path());
}

/// Docker 26 with nothing of ours as an engine of the shared cases: a
/// run under eatmydata is `eatmydata docker run`, which sends the
/// profile; the control is plain `docker run`. Its store, under the
/// engines' cache, keeps the test image between runs; its volume is the
/// disk given at its start.
struct Desktop {
    // Dropped in this order: dockerd, the command's copy, the lock.
    docker: Docker26,
    image: String,
    eatmydata: PathBuf,
    _alone: TempDir,
    _lock: StoreLock,
}

impl Desktop {
    fn start(disk: &LoopFs) -> Desktop {
        let image = test_image();
        let lock = StoreLock::take("docker26-profile");
        let data = Path::new(CACHE).join("docker26-profile");
        std::fs::create_dir_all(&data).expect("make the store's folder");
        let docker =
            Docker26::start_with_volume("desktop", &data, Runtime::Absent, Some(disk.path()));
        let client = format!("docker -H unix://{}", docker.socket().display());
        docker.ok(&["container", "prune", "--force"]);
        image.load_unless(
            &format!("{client} image inspect '{}'", image.plain),
            &format!("{client} images --quiet --filter reference='eatmydata-test/*'"),
            &format!("{client} rmi --force"),
            &format!("{client} load --quiet"),
            &[],
        );
        let (alone, eatmydata) = command_alone();
        Desktop {
            docker,
            image: image.plain.clone(),
            eatmydata,
            _alone: alone,
            _lock: lock,
        }
    }
}

impl Engine for Desktop {
    fn name(&self) -> &'static str {
        "Docker 26 with nothing of ours, through the profile"
    }

    fn image(&self) -> &str {
        &self.image
    }

    fn run(&self, _disk: &LoopFs, job: &Job) -> Ran {
        let mut client = if job.eaten {
            let mut client = Command::new(&self.eatmydata);
            let socket = format!("unix://{}", self.docker.socket().display());
            client.args(["docker", "-H", &socket]).env("PATH", PATH);
            client
        } else {
            self.docker.docker()
        };
        client
            .args(["run", "--rm", "--network=none", "-v"])
            .arg(format!("{}:/data", self.docker.volume().display()));
        for env in job.env {
            client.args(["-e", env]);
        }
        client.arg(job.image).args(job.args);
        client
            .stdin(Stdio::null())
            .output()
            .expect("run docker")
            .into()
    }
}

#[test]
fn a_mariadb_container_on_docker26_through_the_profile() {
    let disk = LoopFs::new("profile-mariadb-disk", 1024);
    let desktop = Desktop::start(&disk);
    cases::server_on(&desktop, "mariadb", &disk);
}
