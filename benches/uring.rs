//! What io_uring costs under the library: a submission of 8 entries
//! through liburing (rewritten or left as they are), and the mmap and
//! munmap of a program that never sets up a ring (what the ring hooks
//! cost everyone else).
//!
//! As in `benches/hooks.rs`, the child (`benches/uring.c`, linked with
//! liburing) times its own loop, with no library, with ours and with the
//! original libeatmydata when installed: read the difference off one
//! report. Build the library first: `cargo build --release && cargo bench
//! --bench uring`. The write-fsync8 file lives in the target folder: put
//! it on the disk whose flushes are to be compared.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

const ORIGINAL: &str = "/usr/lib/x86_64-linux-gnu/libeatmydata.so.1";

fn child() -> (PathBuf, PathBuf, Vec<(&'static str, Option<PathBuf>)>) {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let library = tmp
        .parent()
        .expect("target dir")
        .join("release/libeatmydata.so");
    assert!(library.exists(), "run `cargo build --release` first");
    let scratch = tmp.join("bench-uring");
    std::fs::create_dir_all(&scratch).expect("scratch directory");
    let program = scratch.join("uring");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/uring.c");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-O2", "-Wall", "-o"])
        .arg(&program)
        .arg(&source)
        .arg("-luring")
        .status()
        .expect("run the C compiler");
    assert!(
        status.success(),
        "compiling {} (liburing-dev)",
        source.display()
    );
    let mut libraries = vec![("no library", None), ("eatmydata", Some(library))];
    if Path::new(ORIGINAL).exists() {
        libraries.push(("libeatmydata", Some(PathBuf::from(ORIGINAL))));
    }
    (program, scratch.join("file"), libraries)
}

fn loop_time(program: &Path, file: &Path, library: Option<&Path>, mode: &str, n: u64) -> Duration {
    let mut child = Command::new(program);
    child
        .arg(mode)
        .arg(n.to_string())
        .arg(file)
        .env_remove("LD_PRELOAD")
        .stderr(Stdio::inherit());
    if let Some(library) = library {
        child.env("LD_PRELOAD", library);
    }
    let output = child.output().expect("run the uring helper");
    assert!(output.status.success(), "uring {mode} failed");
    let nanos = String::from_utf8_lossy(&output.stdout).trim().parse();
    Duration::from_nanos(nanos.expect("uring prints nanoseconds"))
}

fn uring(c: &mut Criterion) {
    let (program, file, libraries) = child();
    for (mode, samples) in [("nop8", 30), ("mmap", 30), ("write-fsync8", 10)] {
        let mut group = c.benchmark_group(format!("uring-{mode}"));
        group.sample_size(samples);
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(3));
        for (name, library) in &libraries {
            group.bench_function(*name, |b| {
                b.iter_custom(|n| loop_time(&program, &file, library.as_deref(), mode, n))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, uring);
criterion_main!(benches);
