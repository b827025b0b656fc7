//! Container parity: one corpus of containers, each run on one private
//! dockerd under plain runc and under the runtime (registered as
//! `eatmydata`), compared: exit status, stdout, stderr, `docker diff`, and
//! the files the container leaves in its volumes, on the host and in what
//! `docker commit` and `docker export` make. The corpus is what breaks a
//! runtime that is a machine's default (issue 28): user mounts at `/opt`,
//! images whose `/opt` is a file, i386, arm64 under qemu-user, musl,
//! AddressSanitizer, setuid, `--read-only`, `--user`, `--cap-drop ALL`.
//!
//! The differences docs/runtime.md lists ("Differences from runc") are
//! cases too, checked to differ exactly as documented. The output is a
//! table, case -> runc -> runtime, so a failure says which case differs
//! and how (`--no-capture` shows it on success too).

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use super::containerd::Containerd;
use super::daemon::{Dockerd, RunDir, StoreLock, Unmounted};
use super::engine::{CACHE, register};
use crate::common::TempDir;
use crate::common::{Flushes, floor_writing};
use crate::loopfs::LoopFs;

mod binfmt; // qemu-aarch64 registered with binfmt_misc's F flag, for the arm64 image
mod children; // what the first program starts: shells, --init, volumes, chroot, ldd (issue 36)
mod images; // the tiny images: the probe and the host's loader and libraries
mod podman_init; // podman's --init (catatonit) before dynamic, i386 and static programs

use images::{Images, PROBE, Tiny, run};

/// The fsyncing writes of a flush case.
const SYNCS: u32 = 100;

/// The daemon the corpus runs on, with its images loaded.
struct Parity {
    // Dropped in this order: dockerd, its containerd, the mounts left in
    // the data root, their folder, the lock.
    dockerd: Dockerd,
    _containerd: Containerd,
    _mounts: Unmounted,
    _dir: RunDir,
    images: Images,
    _lock: StoreLock,
}

impl Parity {
    /// A dockerd whose store is `CACHE/LABEL` (kept between runs, under a
    /// lock), with `settings` in its daemon.json beside the storage driver.
    fn start(label: &str, settings: &str) -> Parity {
        let lock = StoreLock::take(label);
        let images = Images::make();
        let data_root = Path::new(CACHE).join(label);
        let containerd = Containerd::start(
            "parity-containerd",
            &Path::new(CACHE).join(format!("{label}-containerd")),
        );
        let dir = RunDir::new("parity");
        let config = dir.join("daemon.json");
        let json = format!("{{\n  {settings}\"storage-driver\": \"overlay2\"\n}}\n");
        fs::write(&config, json).unwrap();
        register("docker", &config);
        let dockerd = Dockerd::start(
            dir.path(),
            &config,
            &data_root,
            &dir.join("exec"),
            Some(&containerd.socket),
        );
        let parity = Parity {
            dockerd,
            _containerd: containerd,
            _mounts: Unmounted(data_root),
            _dir: dir,
            images,
            _lock: lock,
        };
        // What a failed run left behind.
        run(parity.docker().args(["container", "prune", "--force"]));
        run(parity.docker().args(["volume", "prune", "--force"]));
        parity.images.load(|| parity.docker());
        parity
    }

    fn docker(&self) -> Command {
        self.dockerd.docker()
    }

    /// Runs `image` with `options` and `args` under `runtime` as the
    /// container `name`, then takes its `docker diff` and whatever `after`
    /// lists of it, and removes it.
    fn run(
        &self,
        runtime: Runtime,
        name: &str,
        image: &Tiny,
        options: &[&str],
        args: &[&str],
        after: impl FnOnce(&str) -> Vec<(String, Vec<String>)>,
    ) -> Outcome {
        let _ = self.docker().args(["rm", "--force", name]).output();
        let output = self
            .docker()
            .args(["run", "--name", name, "--hostname=parity", "--network=none"])
            .arg(runtime.option())
            .args(options)
            .arg(&image.tag)
            .args(args)
            .output()
            .expect("run docker");
        let diff = self.lines(&["diff", name]);
        let files = after(name);
        let _ = self.docker().args(["rm", "--force", name]).output();
        Outcome {
            status: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: ids_hidden(&String::from_utf8_lossy(&output.stderr)),
            diff,
            files,
            flushes: None,
        }
    }

    /// Starts `image`'s probe waiting under `runtime` as `name`, then
    /// runs `args` in it with `docker exec` (the runtime's `exec`
    /// verb); the exec's outcome, and the container's diff.
    fn exec(&self, runtime: Runtime, name: &str, image: &Tiny, args: &[&str]) -> Outcome {
        let _ = self.docker().args(["rm", "--force", name]).output();
        let started = self
            .docker()
            .args(["run", "--detach", "--name", name, "--hostname=parity"])
            .args([
                "--network=none",
                runtime.option(),
                &image.tag,
                PROBE,
                "pause",
            ])
            .output()
            .expect("run docker");
        // A container that did not start: that is the outcome.
        let output = if started.status.success() {
            self.docker()
                .args(["exec", name])
                .args(args)
                .output()
                .expect("run docker exec")
        } else {
            started
        };
        let diff = self.lines(&["diff", name]);
        let _ = self.docker().args(["rm", "--force", name]).output();
        Outcome {
            status: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: ids_hidden(&String::from_utf8_lossy(&output.stderr)),
            diff,
            files: Vec::new(),
            flushes: None,
        }
    }

    /// The lines `docker args` prints, sorted; none if it fails (a
    /// container that was never made has no diff).
    fn lines(&self, args: &[&str]) -> Vec<String> {
        let output = self.docker().args(args).output().expect("run docker");
        let mut lines: Vec<String> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines
    }

    /// The files in the root file system of `container`, as `docker
    /// export` writes them.
    fn exported(&self, container: &str) -> Vec<String> {
        let line = format!(
            "docker -H unix://{} export '{container}' | tar -t | sort",
            self.dockerd.socket.display()
        );
        run(Command::new("sh").args(["-c", &line]))
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// The two runtimes a case runs under.
#[derive(Clone, Copy, PartialEq)]
enum Runtime {
    Runc,
    Eatmydata,
}

impl Runtime {
    fn option(self) -> &'static str {
        match self {
            Runtime::Runc => "--runtime=runc",
            Runtime::Eatmydata => "--runtime=eatmydata",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Runtime::Runc => "runc",
            Runtime::Eatmydata => "eatmydata",
        }
    }
}

/// What a container did and left.
#[derive(Clone, Debug, Default, PartialEq)]
struct Outcome {
    status: Option<i32>,
    stdout: String,
    /// Ids and hashes hidden: they differ between any two runs.
    stderr: String,
    /// `docker diff`, sorted.
    diff: Vec<String>,
    /// Files the case lists after the run: what a volume or a host folder
    /// gained, what an export or a commit holds.
    files: Vec<(String, Vec<String>)>,
    /// Flushes on the case's loop device, for the flush bound (not compared).
    flushes: Option<u64>,
}

impl Outcome {
    /// One cell of the table.
    fn summary(&self) -> String {
        let status = self
            .status
            .map_or_else(|| "killed".to_owned(), |code| code.to_string());
        let mut cell = format!("exit {status}, {} lines", self.stdout.lines().count());
        if let Some(line) = self.stderr.lines().next() {
            cell.push_str(&format!(", stderr {:?}", shortened(line, 70)));
        }
        if !self.diff.is_empty() {
            cell.push_str(&format!(", diff [{}]", self.diff.join(" ")));
        }
        for (label, files) in &self.files {
            if files.len() <= 3 {
                cell.push_str(&format!(", {label} [{}]", files.join(" ")));
            } else {
                cell.push_str(&format!(", {label} {} files", files.len()));
            }
        }
        if let Some(flushes) = self.flushes {
            cell.push_str(&format!(", {flushes} flushes"));
        }
        cell
    }

    /// How `other` differs from this run, field by field; empty if alike.
    fn differences(&self, other: &Outcome) -> Vec<String> {
        let mut found = Vec::new();
        if self.status != other.status {
            found.push(format!("status {:?} / {:?}", self.status, other.status));
        }
        for (field, mine, theirs) in [
            ("stdout", &self.stdout, &other.stdout),
            ("stderr", &self.stderr, &other.stderr),
        ] {
            if mine != theirs {
                found.push(format!("{field}: {}", changed_lines(mine, theirs)));
            }
        }
        if self.diff != other.diff {
            found.push(format!("diff {:?} / {:?}", self.diff, other.diff));
        }
        if self.files != other.files {
            for (label, files) in &other.files {
                let mine = self.files.iter().find(|(own, _)| own == label);
                let mine = mine.map(|(_, files)| files.as_slice()).unwrap_or(&[]);
                let more: Vec<&String> = files.iter().filter(|f| !mine.contains(f)).collect();
                let fewer: Vec<&String> = mine.iter().filter(|f| !files.contains(f)).collect();
                if !more.is_empty() || !fewer.is_empty() {
                    found.push(format!("{label}: more {more:?}, fewer {fewer:?}"));
                }
            }
        }
        found
    }
}

/// The lines only `theirs` has (`+`) and only `mine` has (`-`).
fn changed_lines(mine: &str, theirs: &str) -> String {
    let mut said: Vec<String> = mine
        .lines()
        .filter(|line| !theirs.lines().any(|other| other == *line))
        .map(|line| format!("-{line:?}"))
        .collect();
    said.extend(
        theirs
            .lines()
            .filter(|line| !mine.lines().any(|other| other == *line))
            .map(|line| format!("+{line:?}")),
    );
    if said.is_empty() {
        // The same lines, in another order or with other line ends.
        said.push(format!("{mine:?} / {theirs:?}"));
    }
    said.join(" ")
}

fn shortened(line: &str, at: usize) -> String {
    match line.char_indices().nth(at) {
        Some((cut, _)) => format!("{}...", &line[..cut]),
        None => line.to_owned(),
    }
}

/// `text` with every run of 12 or more hex digits that holds a digit (a
/// container id, a layer's hash) shown as `<id>`.
fn ids_hidden(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.len() >= 12 && run.chars().any(|c| c.is_ascii_digit()) {
            out.push_str("<id>");
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_hexdigit() && !c.is_ascii_uppercase() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Where the runtime binds the library in a container (decision D2): in
/// the `/dev` tmpfs, which no layer, volume or commit holds.
const LIBRARY: &str = "/dev/.eatmydata/libeatmydata.so";

/// A difference docs/runtime.md lists: the case must differ exactly so.
#[derive(Clone, Copy)]
enum Known {
    /// A program that prints its environment sees `LD_PRELOAD` (and
    /// `EATMYDATA_REPORT`, the container's account file).
    PreloadInEnvironment,
    /// A program that reads its mount table sees the binds under
    /// `/dev/.eatmydata` (the library's, and the account file's).
    LibraryMounted,
    /// A program that lists `/dev` with its dot files sees `.eatmydata`.
    DevEntry,
    /// A dynamic program that lists what it maps finds the library: it
    /// has it, which is what the case asks (one started by an init).
    LibraryMapped,
}

impl Known {
    /// Whether `eaten` differs from `runc` exactly as documented.
    fn check(self, runc: &Outcome, eaten: &Outcome) -> Result<String, String> {
        let mut rest = eaten.clone();
        let (said, expected) = match self {
            Known::PreloadInEnvironment => {
                let (added, others): (Vec<&str>, Vec<&str>) =
                    eaten.stdout.lines().partition(|line| {
                        line.starts_with("LD_PRELOAD=") || line.starts_with("EATMYDATA_REPORT=")
                    });
                rest.stdout = others.iter().map(|line| format!("{line}\n")).collect();
                let said = format!("sees {}", added.join(" "));
                let preload = format!("LD_PRELOAD={LIBRARY}");
                let report = added
                    .iter()
                    .filter(|line| line.starts_with("EATMYDATA_REPORT="));
                let expected = added.contains(&preload.as_str())
                    && added
                        .iter()
                        .filter(|l| l.starts_with("LD_PRELOAD="))
                        .count()
                        == 1
                    && report.clone().count() <= 1
                    && report
                        .clone()
                        .all(|line| line.contains("=/dev/.eatmydata/"));
                (said, expected)
            }
            Known::LibraryMounted => {
                let (added, others): (Vec<&str>, Vec<&str>) = eaten
                    .stdout
                    .lines()
                    .partition(|line| line.starts_with("/dev/.eatmydata/"));
                rest.stdout = others.iter().map(|line| format!("{line}\n")).collect();
                let said = format!("sees the mounts {}", added.join(" "));
                (said, added.contains(&LIBRARY))
            }
            Known::DevEntry => {
                let entries = eaten.stdout.trim_end().trim_start_matches("entries=");
                let others: Vec<&str> = entries.split(',').filter(|e| *e != ".eatmydata").collect();
                rest.stdout = format!("entries={}\n", others.join(","));
                let listed = entries.split(',').any(|entry| entry == ".eatmydata");
                ("sees /dev/.eatmydata".to_owned(), listed)
            }
            Known::LibraryMapped => {
                rest.stdout = runc.stdout.clone();
                let expected =
                    runc.stdout == "mapped=\n" && eaten.stdout == format!("mapped={LIBRARY}\n");
                ("maps the library".to_owned(), expected)
            }
        };
        let others = runc.differences(&rest);
        if expected && others.is_empty() {
            Ok(format!("known difference: {said}"))
        } else {
            Err(format!(
                "not the documented difference ({said}); {}",
                others.join("; ")
            ))
        }
    }
}

/// What the control run under runc must show, so that a case cannot pass
/// by both runs failing alike.
#[derive(Clone, Copy, PartialEq)]
enum Control {
    /// Exit 0.
    Succeeds,
    /// Exit 0, an empty `docker diff`, and every listing empty.
    LeavesNothing,
}

impl Control {
    fn check(self, runc: &Outcome) -> Result<(), String> {
        let clean = runc.diff.is_empty() && runc.files.iter().all(|(_, files)| files.is_empty());
        if runc.status != Some(0) {
            Err(format!("the control failed: {runc:?}"))
        } else if self == Control::LeavesNothing && !clean {
            Err(format!("the control left files: {runc:?}"))
        } else {
            Ok(())
        }
    }
}

/// One case of the corpus.
struct Case {
    name: &'static str,
    control: Control,
    known: Option<Known>,
    run: fn(&Parity, Runtime, &str) -> Outcome,
}

/// The corpus. Each `run` is given the runtime and a container name of
/// the case's own.
fn corpus() -> Vec<Case> {
    let case = |name, control, run| Case {
        name,
        control,
        known: None,
        run,
    };
    vec![
        case("true: docker diff", Control::LeavesNothing, |p, r, n| {
            p.run(r, n, &p.images.plain, &[], &[PROBE, "true"], none)
        }),
        case("report", Control::Succeeds, |p, r, n| {
            p.run(r, n, &p.images.plain, &[], &[PROBE, "report"], none)
        }),
        case("named volume at /opt", Control::LeavesNothing, named_volume),
        case("-v DIR:/opt:ro", Control::LeavesNothing, |p, r, n| {
            host_folder(p, r, n, ":ro")
        }),
        case(
            "-v DIR:/opt (host gains)",
            Control::LeavesNothing,
            |p, r, n| host_folder(p, r, n, ""),
        ),
        case("image: /opt a file", Control::LeavesNothing, |p, r, n| {
            let args = [PROBE, "ls", "/opt"];
            p.run(r, n, &p.images.opt_file, &[], &args, none)
        }),
        case(
            "image: /opt/eatmydata a file",
            Control::LeavesNothing,
            |p, r, n| {
                let args = [PROBE, "ls", "/opt"];
                p.run(r, n, &p.images.opt_eatmydata_file, &[], &args, none)
            },
        ),
        case("commit and export", Control::Succeeds, commit_and_export),
        case("i386 image", Control::Succeeds, |p, r, n| {
            p.run(r, n, &p.images.i386, &[], &[PROBE, "report"], none)
        }),
        case(
            "i386: 100 fsyncs on a volume",
            Control::Succeeds,
            |p, r, n| flushes(p, r, n, &p.images.i386, &[]),
        ),
        case(
            "arm64: 100 fsyncs on a volume",
            Control::Succeeds,
            |p, r, n| flushes(p, r, n, &p.images.arm64, &[]),
        ),
        case(
            "ASan: 100 fsyncs on a volume",
            Control::Succeeds,
            |p, r, n| flushes(p, r, n, &p.images.asan, &[]),
        ),
        case(
            "setuid: 100 fsyncs on a volume",
            Control::Succeeds,
            |p, r, n| flushes(p, r, n, &p.images.setuid, &["--user", "1000:1000"]),
        ),
        case("arm64 image (qemu-user)", Control::Succeeds, |p, r, n| {
            p.run(r, n, &p.images.arm64, &[], &[PROBE, "report"], none)
        }),
        case("musl image", Control::Succeeds, |p, r, n| {
            p.run(r, n, &p.images.musl, &[], &[PROBE, "report"], none)
        }),
        case("-fsanitize=address", Control::Succeeds, |p, r, n| {
            p.run(r, n, &p.images.asan, &[], &[PROBE, "report"], none)
        }),
        case("setuid, --user 1000:1000", Control::Succeeds, |p, r, n| {
            let options = ["--user", "1000:1000"];
            p.run(r, n, &p.images.setuid, &options, &[PROBE, "report"], none)
        }),
        case("--read-only", Control::Succeeds, |p, r, n| {
            let options = ["--read-only"];
            p.run(r, n, &p.images.plain, &options, &[PROBE, "report"], none)
        }),
        case("--user 1000:1000", Control::Succeeds, |p, r, n| {
            let options = ["--user", "1000:1000"];
            p.run(r, n, &p.images.plain, &options, &[PROBE, "report"], none)
        }),
        case("--cap-drop ALL", Control::Succeeds, |p, r, n| {
            let options = ["--cap-drop", "ALL"];
            p.run(r, n, &p.images.plain, &options, &[PROBE, "report"], none)
        }),
        case("exec: report", Control::Succeeds, |p, r, n| {
            p.exec(r, n, &p.images.plain, &[PROBE, "report"])
        }),
        case("exec: i386", Control::Succeeds, |p, r, n| {
            p.exec(r, n, &p.images.i386, &[PROBE, "report"])
        }),
        case("exec: -fsanitize=address", Control::Succeeds, |p, r, n| {
            p.exec(r, n, &p.images.asan, &[PROBE, "report"])
        }),
        Case {
            known: Some(Known::PreloadInEnvironment),
            ..case("env", Control::Succeeds, |p, r, n| {
                p.run(r, n, &p.images.plain, &[], &[PROBE, "env"], none)
            })
        },
        Case {
            known: Some(Known::LibraryMounted),
            ..case("mounts", Control::Succeeds, |p, r, n| {
                p.run(r, n, &p.images.plain, &[], &[PROBE, "mounts"], none)
            })
        },
        Case {
            known: Some(Known::DevEntry),
            ..case("ls -a /dev", Control::Succeeds, |p, r, n| {
                p.run(r, n, &p.images.plain, &[], &[PROBE, "ls", "/dev"], none)
            })
        },
        // A user's own binds at the runtime's places are the user's
        // (issue 45): the container is left as runc leaves it.
        case(
            "-v FILE:/dev/.eatmydata/report",
            Control::Succeeds,
            own_report_file,
        ),
        case(
            "-v LIB:/dev/.eatmydata/libeatmydata.so, LD_PRELOAD",
            Control::Succeeds,
            own_library,
        ),
        // The rules' guard: a negative descriptor fails EBADF as under
        // runc, through libc and raw, upper half sign-extended and zero.
        case("static: fsync(-1)", Control::Succeeds, |p, r, n| {
            p.run(r, n, &p.images.static_glibc, &[], &[PROBE, "badfd"], none)
        }),
    ]
    .into_iter()
    .chain(children::cases())
    .collect()
}

/// No listing after the run.
fn none(_: &str) -> Vec<(String, Vec<String>)> {
    Vec::new()
}

/// A named volume at `/opt`, fresh for each run: what it holds after.
fn named_volume(parity: &Parity, runtime: Runtime, name: &str) -> Outcome {
    let volume = format!("{name}-{}", runtime.label());
    let _ = parity
        .docker()
        .args(["volume", "rm", "-f", &volume])
        .output();
    run(parity.docker().args(["volume", "create", &volume]));
    let mount = format!("{volume}:/opt");
    let outcome = parity.run(
        runtime,
        name,
        &parity.images.plain,
        &["-v", &mount],
        &[PROBE, "ls", "/opt"],
        |_| {
            let inspect = ["volume", "inspect", "--format", "{{.Mountpoint}}", &volume];
            let point = run(parity.docker().args(inspect));
            vec![("volume".to_owned(), tree(Path::new(point.trim())))]
        },
    );
    run(parity.docker().args(["volume", "rm", &volume]));
    outcome
}

/// A host folder holding one file, bound at `/opt` (`suffix` ":ro" or
/// ""): what the host gained.
fn host_folder(parity: &Parity, runtime: Runtime, name: &str, suffix: &str) -> Outcome {
    let host = TempDir::new(&format!("parity-host-opt-{}", runtime.label()));
    fs::write(host.join("kept"), "the host's\n").unwrap();
    let before = tree(host.path());
    let mount = format!("{}:/opt{suffix}", host.path().display());
    parity.run(
        runtime,
        name,
        &parity.images.plain,
        &["-v", &mount],
        &[PROBE, "ls", "/opt"],
        |_| {
            let gained = tree(host.path())
                .into_iter()
                .filter(|path| !before.contains(path))
                .collect();
            vec![("host".to_owned(), gained)]
        },
    )
}

/// A host file of the user's bound at the runtime's report path, the
/// probe's environment printed: what the file holds after.
fn own_report_file(parity: &Parity, runtime: Runtime, name: &str) -> Outcome {
    let host = TempDir::new(&format!("parity-own-report-{}", runtime.label()));
    let file = host.join("report");
    fs::write(&file, "the user's\n").unwrap();
    let mount = format!("{}:/dev/.eatmydata/report", file.display());
    parity.run(
        runtime,
        name,
        &parity.images.plain,
        &["-v", &mount],
        &[PROBE, "env"],
        |_| {
            let held = fs::read_to_string(&file).unwrap();
            vec![("file".to_owned(), held.lines().map(str::to_owned).collect())]
        },
    )
}

/// The user's own copy of the library bound at the runtime's place and
/// named in `LD_PRELOAD`, the probe's environment printed.
fn own_library(parity: &Parity, runtime: Runtime, name: &str) -> Outcome {
    let host = TempDir::new(&format!("parity-own-library-{}", runtime.label()));
    let library = host.join("libeatmydata.so");
    fs::copy(crate::common::library(), &library).unwrap();
    let mount = format!("{}:{LIBRARY}:ro", library.display());
    let preload = format!("LD_PRELOAD={LIBRARY}");
    parity.run(
        runtime,
        name,
        &parity.images.plain,
        &["-v", &mount, "-e", &preload],
        &[PROBE, "env"],
        none,
    )
}

/// A container that ran `true`: the files of its export, and of the image
/// `docker commit` makes of it.
fn commit_and_export(parity: &Parity, runtime: Runtime, name: &str) -> Outcome {
    parity.run(
        runtime,
        name,
        &parity.images.plain,
        &[],
        &[PROBE, "true"],
        |container| {
            let exported = parity.exported(container);
            let image = format!(
                "eatmydata-parity-commit/{}:{}",
                std::process::id(),
                runtime.label()
            );
            run(parity.docker().args(["commit", container, &image]));
            let made = format!("{container}-committed");
            run(parity.docker().args(["create", "--name", &made, &image]));
            let committed = parity.exported(&made);
            run(parity.docker().args(["rm", &made]));
            run(parity.docker().args(["rmi", &image]));
            vec![
                ("export".to_owned(), exported),
                ("commit".to_owned(), committed),
            ]
        },
    )
}

/// `image`'s probe writes and fsyncs a block `SYNCS` times on a loop
/// device's file system (`options` given too): its flushes counted.
fn flushes(
    parity: &Parity,
    runtime: Runtime,
    name: &str,
    image: &Tiny,
    options: &[&str],
) -> Outcome {
    let disk = LoopFs::new(&format!("parity-{}", runtime.label()), 64);
    let mount = format!("{}:/data", disk.path().display());
    let syncs = SYNCS.to_string();
    let mut outcome = None;
    let mut all = vec!["-v", &mount];
    all.extend(options);
    let flushes = disk.flushes_during(|| {
        outcome = Some(parity.run(
            runtime,
            name,
            image,
            &all,
            &[PROBE, "loop", "/data/synced", &syncs],
            none,
        ));
    });
    let mut outcome = outcome.unwrap();
    outcome.flushes = Some(flushes);
    outcome
}

/// Every path under `dir`, relative to it, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let listed = run(Command::new("find").arg(dir).args(["-mindepth", "1"]));
    let mut paths: Vec<String> = listed
        .lines()
        .map(|line| {
            line.strip_prefix(dir.to_str().unwrap())
                .unwrap_or(line)
                .to_owned()
        })
        .collect();
    paths.sort();
    paths
}

/// One case's two runs and the verdict.
struct Row {
    name: &'static str,
    runc: Outcome,
    eaten: Outcome,
    verdict: Result<String, String>,
}

/// The control checked, then `eaten` compared with `runc`: the same, or
/// different exactly as `known` documents.
fn verdict(
    control: Control,
    known: Option<Known>,
    runc: &Outcome,
    eaten: &Outcome,
) -> Result<String, String> {
    control.check(runc)?;
    match known {
        Some(known) => known.check(runc, eaten),
        None => {
            let found = runc.differences(eaten);
            if found.is_empty() {
                Ok("same".to_owned())
            } else {
                Err(found.join("; "))
            }
        }
    }
}

/// The table: case -> runc -> runtime -> verdict, then the details of
/// each case that differs.
fn table(rows: &[Row]) -> String {
    let mut text = String::from("container parity: case | runc | eatmydata-runtime | verdict\n");
    for row in rows {
        let eaten = if row.eaten == row.runc {
            "the same".to_owned()
        } else {
            row.eaten.summary()
        };
        let verdict = match &row.verdict {
            Ok(said) => said.clone(),
            Err(_) => "DIFFERS".to_owned(),
        };
        text.push_str(&format!(
            "  {:<30} | {} | {} | {verdict}\n",
            row.name,
            row.runc.summary(),
            eaten
        ));
    }
    for row in rows {
        if let Err(why) = &row.verdict {
            text.push_str(&format!("{}: {why}\n", row.name));
        }
    }
    text
}

/// Runs `cases` on `parity`, prints the table, and asserts that each is
/// the same under both runtimes or differs only as documented.
fn compare(parity: &Parity, cases: &[Case]) -> Vec<Row> {
    let start = Instant::now();
    let mut rows = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let name = format!("parity-{}-{n}", std::process::id());
        let runc = (case.run)(parity, Runtime::Runc, &name);
        let eaten = (case.run)(parity, Runtime::Eatmydata, &name);
        let verdict = verdict(case.control, case.known, &runc, &eaten);
        rows.push(Row {
            name: case.name,
            runc,
            eaten,
            verdict,
        });
    }
    let text = table(&rows);
    eprintln!(
        "{text}container parity: {:.0} s",
        start.elapsed().as_secs_f64()
    );
    // The table is above, on stderr.
    let differing: Vec<&str> = rows
        .iter()
        .filter(|row| row.verdict.is_err())
        .map(|row| row.name)
        .collect();
    assert!(
        differing.is_empty(),
        "under the runtime, these cases differ from runc: {differing:?} (see the table)"
    );
    rows
}

#[test]
fn parity_of_the_corpus_under_runc_and_the_runtime() {
    let parity = Parity::start("parity-docker", "");
    let _binfmt = binfmt::Aarch64::registered();
    let rows = compare(&parity, &corpus());
    // The syncs of programs the library cannot serve still eaten, by the
    // seccomp rules.
    // The floor: the probe's blocks written to a like disk, unsynced.
    let floor_disk = LoopFs::new("parity-floor", 64);
    let floor = floor_writing(&floor_disk, "floor", SYNCS as usize * 4096);
    let mut measured = 0;
    for row in rows.iter().filter(|row| row.runc.flushes.is_some()) {
        Flushes {
            control: row.runc.flushes.unwrap(),
            floor,
            eaten: row.eaten.flushes.unwrap(),
        }
        .assert_eaten(u64::from(SYNCS), &format!("{} under the runtime", row.name));
        measured += 1;
    }
    assert_eq!(measured, 4 + 12, "the flush cases");
}

/// The oracle sees what it must: a status, an output line, a diff entry
/// and a file more are each a difference, hidden ids are not, and the
/// documented differences pass only as documented.
#[test]
fn parity_oracle_sees_each_difference() {
    let base = Outcome {
        status: Some(0),
        stdout: "opt=\n".to_owned(),
        stderr: ids_hidden("container 0123456789abcdef0123 failed\n"),
        diff: Vec::new(),
        files: vec![("volume".to_owned(), Vec::new())],
        flushes: Some(200),
    };
    assert_eq!(base.stderr, "container <id> failed\n");
    assert_eq!(ids_hidden("CapEff: deadbeefcafe"), "CapEff: deadbeefcafe");
    let mut same = base.clone();
    same.stderr = ids_hidden("container fedcba9876543210fedc failed\n");
    same.flushes = Some(2);
    assert!(base.differences(&same).is_empty());
    let changed: [fn(&mut Outcome); 5] = [
        |o| o.status = Some(125),
        |o| o.stdout.push_str("more\n"),
        |o| o.stderr = "ERROR: ld.so: object ...\n".to_owned(),
        |o| o.diff.push("A /opt/eatmydata".to_owned()),
        |o| o.files[0].1.push("/eatmydata".to_owned()),
    ];
    for change in changed {
        let mut other = base.clone();
        change(&mut other);
        assert_eq!(base.differences(&other).len(), 1, "{other:?}");
    }
    let mut env = base.clone();
    env.stdout = "A=1\n".to_owned();
    let mut preloaded = env.clone();
    preloaded.stdout =
        format!("A=1\nEATMYDATA_REPORT=/dev/.eatmydata/report\nLD_PRELOAD={LIBRARY}\n");
    let known = Known::PreloadInEnvironment;
    assert!(known.check(&env, &preloaded).is_ok());
    let mut elsewhere = preloaded.clone();
    elsewhere.stdout = "A=1\nLD_PRELOAD=/opt/eatmydata/libeatmydata.so\n".to_owned();
    assert!(known.check(&env, &elsewhere).is_err());
    assert!(known.check(&env, &env).is_err());
    preloaded.status = Some(1);
    assert!(known.check(&env, &preloaded).is_err());
    let mut dirty = base.clone();
    dirty.diff.push("C /opt".to_owned());
    assert!(Control::LeavesNothing.check(&dirty).is_err());
    assert!(Control::Succeeds.check(&dirty).is_ok());
}

/// The same on a dockerd with `userns-remap` (containers' root mapped to
/// the `dockremap` user's subordinate ids; the user and its ranges made
/// here if missing, and said so): what needs no other daemon setting.
#[test]
fn parity_under_userns_remap() {
    remap_user();
    let parity = Parity::start("parity-userns-docker", "\"userns-remap\": \"default\",\n  ");
    let info = run(parity
        .docker()
        .args(["info", "--format", "{{.SecurityOptions}}"]));
    assert!(
        info.contains("userns"),
        "no user namespace remapping: {info}"
    );
    let names = [
        "true: docker diff",
        "report",
        "named volume at /opt",
        "-v DIR:/opt:ro",
        "image: /opt a file",
        "i386 image",
        "env",
    ];
    let cases: Vec<Case> = corpus()
        .into_iter()
        .filter(|case| names.contains(&case.name))
        .collect();
    assert_eq!(cases.len(), names.len());
    compare(&parity, &cases);
}

/// The user dockerd's `userns-remap: default` maps containers to, with
/// subordinate id ranges, made unless there.
fn remap_user() {
    let _lock = StoreLock::take("dockremap");
    let known = Command::new("getent")
        .args(["passwd", "dockremap"])
        .output()
        .expect("run getent");
    if !known.status.success() {
        eprintln!("parity: making the system user dockremap for userns-remap");
        run(Command::new("useradd").args([
            "--system",
            "--no-create-home",
            "--shell",
            "/usr/sbin/nologin",
            "dockremap",
        ]));
    }
    for file in ["/etc/subuid", "/etc/subgid"] {
        let text = fs::read_to_string(file).unwrap_or_default();
        if !text.lines().any(|line| line.starts_with("dockremap:")) {
            eprintln!("parity: giving dockremap the range 1065536-1131071 in {file}");
            let mut text = text;
            text.push_str("dockremap:1065536:65536\n");
            fs::write(file, text).unwrap_or_else(|e| panic!("write {file}: {e}"));
        }
    }
}
