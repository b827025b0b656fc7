//! What the hooks cost per call, and what the command costs at start-up.
//!
//! The library cannot be preloaded into criterion's own process, so every
//! figure comes from a child. For calls, the child (`benches/calls.c`) times
//! its own loop and reports it: process start-up stays out of the figure,
//! and criterion's `iter_custom` takes the loop's time as the sample. For
//! start-up, the whole child is the thing measured.
//!
//! Each call is measured with no library, with ours, and with the original
//! libeatmydata when it is installed (Debian's `libeatmydata1`), so the
//! difference is read off one report. Build the library first:
//! `cargo build --release && cargo bench --bench hooks` (and
//! `scripts/build-static` for the static command's start-up).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

/// Where Debian's libeatmydata1 puts the original library.
const ORIGINAL: &str = "/usr/lib/x86_64-linux-gnu/libeatmydata.so.1";

struct Setup {
    calls: PathBuf,
    scratch: PathBuf,
    eatmydata: PathBuf,
    /// (name, library) for each way of running: none, ours, the original.
    libraries: Vec<(&'static str, Option<PathBuf>)>,
}

fn setup() -> Setup {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let release = tmp.parent().expect("target dir").join("release");
    let library = release.join("libeatmydata.so");
    let eatmydata = release.join("eatmydata");
    for built in [&library, &eatmydata] {
        assert!(
            built.exists(),
            "{} is missing: run `cargo build --release` first",
            built.display()
        );
    }
    let scratch = tmp.join("bench-hooks");
    std::fs::create_dir_all(&scratch).expect("scratch directory");
    let calls = scratch.join("calls");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/calls.c");
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(compiler)
        .args(["-O2", "-Wall", "-o"])
        .arg(&calls)
        .arg(&source)
        .status()
        .expect("run the C compiler");
    assert!(status.success(), "compiling {}", source.display());
    let mut libraries = vec![("no library", None), ("eatmydata", Some(library))];
    if Path::new(ORIGINAL).exists() {
        libraries.push(("libeatmydata", Some(PathBuf::from(ORIGINAL))));
    }
    Setup {
        calls,
        scratch,
        eatmydata,
        libraries,
    }
}

/// The child's own time for `iters` calls of `mode` under `library`.
fn loop_time(setup: &Setup, library: Option<&Path>, mode: &str, iters: u64) -> Duration {
    let mut child = Command::new(&setup.calls);
    child
        .arg(mode)
        .arg(iters.to_string())
        .arg(setup.scratch.join("file"))
        .env_remove("LD_PRELOAD")
        .stderr(Stdio::inherit());
    if let Some(library) = library {
        child.env("LD_PRELOAD", library);
    }
    let output = child.output().expect("run the calls helper");
    assert!(output.status.success(), "calls {mode} failed");
    let nanos = String::from_utf8_lossy(&output.stdout).trim().parse();
    Duration::from_nanos(nanos.expect("calls prints nanoseconds"))
}

fn calls(c: &mut Criterion) {
    let setup = setup();
    std::fs::write(setup.scratch.join("file"), b"x").expect("scratch file");
    for (mode, samples) in [
        ("open", 30),
        ("openat", 30),
        ("fsync", 20),
        ("write-fsync", 10),
    ] {
        let mut group = c.benchmark_group(mode);
        group.sample_size(samples);
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(3));
        for (name, library) in &setup.libraries {
            group.bench_function(*name, |b| {
                b.iter_custom(|iters| loop_time(&setup, library.as_deref(), mode, iters))
            });
        }
        group.finish();
    }
}

fn run(program: &Path, args: &[&str], preload: Option<&Path>) {
    let mut command = Command::new(program);
    command.args(args).env_remove("LD_PRELOAD");
    if let Some(library) = preload {
        command.env("LD_PRELOAD", library);
    }
    assert!(command.status().expect("spawn").success());
}

fn startup(c: &mut Criterion) {
    let setup = setup();
    let true_ = PathBuf::from("/bin/true");
    let env = PathBuf::from("/usr/bin/env");
    let mut group = c.benchmark_group("startup");
    group.sample_size(50);
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("true", |b| b.iter(|| run(&true_, &[], None)));
    for (name, library) in &setup.libraries {
        let Some(library) = library else { continue };
        let preload = format!("LD_PRELOAD={}", library.display());
        group.bench_function(format!("env LD_PRELOAD={name} true"), |b| {
            b.iter(|| run(&env, &[&preload, "true"], None))
        });
        group.bench_function(format!("true, {name} preloaded"), |b| {
            b.iter(|| run(&true_, &[], Some(library)))
        });
    }
    group.bench_function("env true", |b| b.iter(|| run(&env, &["true"], None)));
    group.bench_function("eatmydata true", |b| {
        b.iter(|| run(&setup.eatmydata, &["true"], None))
    });
    // The static command (scripts/build-static), when it has been built.
    let target = setup.eatmydata.parent().and_then(Path::parent);
    let static_command = target.map(|dir| dir.join("static/eatmydata"));
    if let Some(static_command) = static_command.filter(|path| path.is_file()) {
        group.bench_function("static eatmydata true", |b| {
            b.iter(|| run(&static_command, &["true"], None))
        });
    } else {
        eprintln!("startup: no target/static/eatmydata (scripts/build-static makes it)");
    }
    group.finish();
}

criterion_group!(benches, calls, startup);
criterion_main!(benches);
