//! The container recipes of the README, run with a real container runtime
//! (podman, daemonless; the settings this machine needs are in
//! `containers/containers.conf`, so the commands stay the plain ones):
//! a library mounted read-only with `LD_PRELOAD` set, the static command
//! copied in by a Dockerfile, and the loop device's flush counter as the
//! oracle, each beside a control run without eatmydata.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{Libc, TempDir, musl_root, probe_for, static_pair};
use crate::loopfs::LoopFs;

/// Where the library is mounted in the recipes.
pub const MOUNTED: &str = "/opt/eatmydata/libeatmydata.so";

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
    fn new(label: &str, program: &Path, with_pair: bool) -> MuslImage {
        let dir = TempDir::new(label);
        let root = dir.join("root");
        musl_root(&root, &[program]);
        if !with_pair {
            // Only musl and the program: the library comes from the host.
            fs::remove_file(root.join("bin/eatmydata")).unwrap();
            fs::remove_file(root.join("bin/libeatmydata.so")).unwrap();
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

/// Asserts that the control run's syncs reached the disk (`at_least`
/// flushes) and that none of the run under eatmydata did (the loop
/// device's journal commits only on a sync; two are allowed for one that
/// a machine-wide sync(2) elsewhere may force).
fn assert_eaten(control: u64, eaten: u64, at_least: u64) {
    assert!(control >= at_least, "control: {control} flushes");
    assert!(
        eaten <= 2,
        "{eaten} flushes under eatmydata ({control} without)"
    );
}

#[test]
fn a_musl_image_runs_with_the_library_mounted_read_only() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let musl = MuslImage::new("musl", &program, false);
    let (image, inside) = (&musl.image, &musl.program);
    let library = static_pair().join("libeatmydata.so");
    let disk = LoopFs::new("podman-musl-disk", 64);
    let volume = data_volume(&disk);

    let control = disk.flushes_during(|| {
        podman_ok(&["run", "--rm", "-v", &volume, &image.0, inside, "/data/a"]);
    });
    let mount = format!("{}:{MOUNTED}:ro", library.display());
    let preload = format!("LD_PRELOAD={MOUNTED}");
    let mut printed = String::new();
    let eaten = disk.flushes_during(|| {
        printed = podman_ok(&[
            "run", "--rm", "-v", &volume, "-v", &mount, "-e", &preload, &image.0, inside, "/data/b",
        ]);
    });
    assert_eaten(control, eaten, 6);
    assert!(disk.join("b").is_file(), "{printed}");
}

#[test]
fn the_static_command_runs_in_a_musl_image() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let musl = MuslImage::new("static", &program, true);
    let (image, inside) = (&musl.image, &musl.program);
    let disk = LoopFs::new("podman-static-disk", 64);
    let volume = data_volume(&disk);

    let control = disk.flushes_during(|| {
        podman_ok(&["run", "--rm", "-v", &volume, &image.0, inside, "/data/a"]);
    });
    let eaten = disk.flushes_during(|| {
        podman_ok(&[
            "run",
            "--rm",
            "-v",
            &volume,
            &image.0,
            "/bin/eatmydata",
            inside,
            "/data/b",
        ]);
    });
    assert_eaten(control, eaten, 6);
    let printed = podman_ok(&["run", "--rm", &image.0, "/bin/eatmydata", "--print-library"]);
    assert_eq!(printed, "/bin/libeatmydata.so\n");
}

#[test]
fn a_dockerfile_copies_the_static_command_in_and_uses_it() {
    let base = debian_image(&[]);
    let dockerfile = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/container/Dockerfile");
    let dir = TempDir::new("podman-dockerfile");
    // Each process under the library appends what it skipped here: the
    // oracle for the RUN step (only the test sets it).
    let report_dir = dir.join("report");
    fs::create_dir(&report_dir).unwrap();
    fs::write(report_dir.join("report"), "").unwrap();
    let image = Image(format!("eatmydata-test-dockerfile-{}", std::process::id()));
    podman_ok(&[
        "build",
        "--quiet",
        // A cached RUN layer would run nothing.
        "--no-cache",
        "--build-arg",
        &format!("BASE={base}"),
        "--env",
        "EATMYDATA_REPORT=/emd/report",
        "-v",
        &format!("{}:/emd", report_dir.display()),
        "-f",
        dockerfile.to_str().unwrap(),
        "-t",
        &image.0,
        static_pair().to_str().unwrap(),
    ]);
    let report = fs::read_to_string(report_dir.join("report")).unwrap();
    let dpkg_fsyncs: u64 = report
        .lines()
        .filter(|line| line.contains(" name=dpkg "))
        .filter_map(|line| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix("fsync="))
        })
        .map(|n| n.parse::<u64>().unwrap())
        .sum();
    assert!(dpkg_fsyncs >= 20, "dpkg's fsyncs were not eaten:\n{report}");

    // The ENTRYPOINT: what the container runs gets the library.
    let version = podman_ok(&["run", "--rm", &image.0]);
    assert!(version.starts_with("3."), "{version}");
    let disk = LoopFs::new("podman-dockerfile-disk", 64);
    let volume = data_volume(&disk);
    let mut sql = String::from("create table t(x);");
    for n in 0..40 {
        sql.push_str(&format!("insert into t values({n});"));
    }
    let control = disk.flushes_during(|| {
        podman_ok(&[
            "run",
            "--rm",
            "-v",
            &volume,
            "--entrypoint",
            "sqlite3",
            &image.0,
            "/data/a.db",
            &sql,
        ]);
    });
    let eaten = disk.flushes_during(|| {
        podman_ok(&[
            "run",
            "--rm",
            "-v",
            &volume,
            &image.0,
            "sqlite3",
            "/data/b.db",
            &sql,
        ]);
    });
    assert_eaten(control, eaten, 40);
    let count = podman_ok(&[
        "run",
        "--rm",
        "-v",
        &volume,
        "--entrypoint",
        "sqlite3",
        &image.0,
        "/data/b.db",
        "select count(*), sum(x) from t",
    ]);
    assert_eq!(count, "40|780\n");
}

/// The options that mount `tests/integration/containers/mariadb.sh` and
/// the loop file system, for a `podman run` of the MariaDB image.
fn mariadb_mounts(disk: &LoopFs) -> Vec<String> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/containers/mariadb.sh");
    vec![
        "-v".into(),
        data_volume(disk),
        "-v".into(),
        format!("{}:/mariadb.sh:ro", script.display()),
    ]
}

#[test]
fn a_database_image_runs_with_the_library_mounted_and_keeps_its_data() {
    let image = debian_image(&["mariadb-server"]);
    let disk = LoopFs::new("podman-mariadb-disk", 768);
    let mounts = mariadb_mounts(&disk);
    let library = format!(
        "{}:{MOUNTED}:ro",
        static_pair().join("libeatmydata.so").display()
    );
    let preload = format!("LD_PRELOAD={MOUNTED}");
    let run = |extra: &[&str], script: &[&str]| {
        let mut args: Vec<&str> = vec!["run", "--rm"];
        args.extend(mounts.iter().map(String::as_str));
        args.extend(extra);
        args.push(&image);
        args.extend(["sh", "/mariadb.sh"]);
        args.extend(script);
        podman_ok(&args)
    };
    let control = disk.flushes_during(|| {
        run(&[], &["write", "plain", "200"]);
    });
    let eaten = disk.flushes_during(|| {
        run(
            &["-v", &library, "-e", &preload],
            &["write", "eaten", "200"],
        );
    });
    assert!(control >= 200, "control: {control} flushes");
    assert!(
        eaten * 20 <= control,
        "{eaten} flushes with the library ({control} without)"
    );
    // After the clean shutdown, a server without the library has it all.
    for name in ["plain", "eaten"] {
        assert_eq!(run(&[], &["check", name]), "200|19900\n", "{name}");
    }
}

/// Where `scripts/setup-test-deps` installs PyPI's `testcontainers`.
const TESTCONTAINERS_VENV: &str = "/var/tmp/eatmydata-venv";

/// `podman system service`: the Docker API on a socket of ours, stopped
/// when dropped.
struct Service {
    child: std::process::Child,
    socket: PathBuf,
    _dir: TempDir,
}

impl Service {
    fn start() -> Service {
        let dir = TempDir::new("podman-service");
        let socket = dir.join("podman.sock");
        let child = podman()
            .args(["system", "service", "--time=0"])
            .arg(format!("unix://{}", socket.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("run podman system service");
        let service = Service {
            child,
            socket,
            _dir: dir,
        };
        for _ in 0..200 {
            if service.socket.exists() {
                return service;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("podman system service made no socket in 10 s");
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn testcontainers_python_runs_a_container_with_the_library() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let musl = MuslImage::new("tc", &program, false);
    let (image, inside) = (&musl.image, &musl.program);
    let service = Service::start();
    let disk = LoopFs::new("podman-testcontainers-disk", 64);
    let recipe = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/integration/containers/testcontainers_recipe.py");
    let library = static_pair().join("libeatmydata.so");
    let run = |library: &str, file: &str| {
        let output = Command::new(Path::new(TESTCONTAINERS_VENV).join("bin/python"))
            .arg(&recipe)
            .args([&image.0, library, disk.path().to_str().unwrap()])
            .args([inside.as_str(), file])
            .env(
                "DOCKER_HOST",
                format!("unix://{}", service.socket.display()),
            )
            .env("TESTCONTAINERS_RYUK_DISABLED", "true")
            .stdin(Stdio::null())
            .output()
            .expect("run the Testcontainers recipe (scripts/setup-test-deps installs it)");
        assert!(output.status.success(), "{}", text(&output));
    };
    let control = disk.flushes_during(|| run("none", "/data/a"));
    let eaten = disk.flushes_during(|| run(library.to_str().unwrap(), "/data/b"));
    assert_eaten(control, eaten, 6);
    assert!(disk.join("b").is_file());
}

#[test]
fn root_in_a_container_gets_the_filter_and_true_advice() {
    // Root in a container lacks CAP_SYS_ADMIN: seccomp mode must set
    // no_new_privs, and "run eatmydata as root" would be wrong advice.
    let program = crate::common::probe("sync_calls", &["-static"]);
    let musl = MuslImage::new("root", &program, true);
    let (image, inside) = (&musl.image, &musl.program);
    let disk = LoopFs::new("podman-root-disk", 64);
    let volume = data_volume(&disk);
    let control = disk.flushes_during(|| {
        podman_ok(&["run", "--rm", "-v", &volume, &image.0, inside, "/data/a"]);
    });
    let mut output = None;
    let eaten = disk.flushes_during(|| {
        output = Some(
            podman()
                .args(["run", "--rm", "-v", &volume, &image.0, "/bin/eatmydata"])
                .args([inside.as_str(), "/data/b"])
                .stdin(Stdio::null())
                .output()
                .expect("run podman"),
        );
    });
    let output = output.unwrap();
    assert!(output.status.success(), "{}", text(&output));
    assert_eaten(control, eaten, 6);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no_new_privs") && stderr.contains("root here lacks CAP_SYS_ADMIN"),
        "{stderr}"
    );
    assert!(!stderr.contains("run eatmydata as root"), "{stderr}");
}
