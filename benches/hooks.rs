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
//! difference is read off one report. Start-up is measured two ways: whole
//! commands spawned from here (`startup`), and a fork + exec loop of
//! `/bin/true` in a C helper (`benches/startup.c`, group `startup-loop`),
//! which also prints the system calls (strace) and instructions
//! (callgrind) of one start under each, where those tools are installed.
//! `scripts/bench-calls --startup` gives the same side by side in a
//! table. Build the library first:
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
    /// benches/startup.c: a fork + exec loop.
    startup: PathBuf,
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
    let compile = |name: &str| {
        let output = scratch.join(name);
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("benches/{name}.c"));
        let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let status = Command::new(compiler)
            .args(["-O2", "-Wall", "-o"])
            .arg(&output)
            .arg(&source)
            .status()
            .expect("run the C compiler");
        assert!(status.success(), "compiling {}", source.display());
        output
    };
    let calls = compile("calls");
    let startup = compile("startup");
    let mut libraries = vec![("no library", None), ("eatmydata", Some(library))];
    if Path::new(ORIGINAL).exists() {
        libraries.push(("libeatmydata", Some(PathBuf::from(ORIGINAL))));
    }
    Setup {
        calls,
        startup,
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

/// The time of `iters` starts of `/bin/true` under `library`: the CPU time
/// (user + system) the helper's children took, which other work on a busy
/// machine disturbs far less than the clock on the wall (the helper's own
/// start-up stays out of the figure).
fn start_loop(setup: &Setup, library: Option<&Path>, iters: u64) -> Duration {
    let library = library
        .map(|l| l.as_os_str().to_owned())
        .unwrap_or_default();
    let output = Command::new(&setup.startup)
        .arg("1")
        .arg(iters.to_string())
        .arg("/bin/true")
        .arg(&library)
        .env_remove("LD_PRELOAD")
        // cargo sets it for benches: each start would search its folders.
        .env_remove("LD_LIBRARY_PATH")
        .stderr(Stdio::inherit())
        .output()
        .expect("run the startup helper");
    assert!(output.status.success(), "the startup helper failed");
    let text = String::from_utf8_lossy(&output.stdout);
    // Its second line: library, wall µs per process, extra, cpu µs, extra.
    let micros: f64 = text
        .lines()
        .nth(1)
        .and_then(|line| line.split('\t').nth(3))
        .and_then(|field| field.parse().ok())
        .expect("the helper prints microseconds per process");
    Duration::from_secs_f64(micros * 1e-6 * iters as f64)
}

/// What one start of `/bin/true` under `library` makes: its system calls
/// (strace -c) and its user-space instructions (callgrind), when the tools
/// are there.
fn one_start(library: Option<&Path>) -> (Option<u64>, Option<u64>) {
    let scratch = std::env::temp_dir().join(format!("eatmydata-bench-{}", std::process::id()));
    let preload = library
        .map(|l| l.as_os_str().to_owned())
        .unwrap_or_default();
    let mut env = std::ffi::OsString::from("LD_PRELOAD=");
    env.push(&preload);
    let calls = Command::new("strace")
        .args(["-c", "-U", "calls,name", "-o"])
        .arg(&scratch)
        .arg("-E")
        .arg(&env)
        .arg("/bin/true")
        .env_remove("LD_LIBRARY_PATH")
        .status()
        .ok()
        .filter(|status| status.success())
        .and_then(|_| std::fs::read_to_string(&scratch).ok())
        .and_then(|table| {
            let total = table.lines().find(|line| line.ends_with(" total"))?;
            total.split_whitespace().next()?.parse().ok()
        });
    let mut callgrind = Command::new("valgrind");
    callgrind
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", scratch.display()))
        .arg("/bin/true")
        .env_remove("LD_LIBRARY_PATH")
        .stderr(Stdio::null());
    if library.is_some() {
        callgrind.env("LD_PRELOAD", &preload);
    } else {
        callgrind.env_remove("LD_PRELOAD");
    }
    let instructions = callgrind
        .status()
        .ok()
        .filter(|status| status.success())
        .and_then(|_| std::fs::read_to_string(&scratch).ok())
        .and_then(|out| {
            let line = out.lines().find(|line| line.starts_with("totals:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        });
    let _ = std::fs::remove_file(&scratch);
    (calls, instructions)
}

fn startup_loop(c: &mut Criterion) {
    let setup = setup();
    for (name, library) in &setup.libraries {
        let (calls, instructions) = one_start(library.as_deref());
        let show = |n: Option<u64>| n.map_or("(tool missing)".into(), |n| n.to_string());
        eprintln!(
            "startup-loop/{name}: one start of /bin/true makes {} system calls, {} instructions",
            show(calls),
            show(instructions)
        );
    }
    let mut group = c.benchmark_group("startup-loop");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(5));
    for (name, library) in &setup.libraries {
        group.bench_function(*name, |b| {
            b.iter_custom(|iters| start_loop(&setup, library.as_deref(), iters))
        });
    }
    group.finish();
}

criterion_group!(benches, calls, startup, startup_loop);
criterion_main!(benches);
