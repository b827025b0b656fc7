//! The library loads into old and new systems: built on a new glibc, it
//! binds only symbol versions an old one has, and it does load into
//! programs on Debian 11 (glibc 2.31). Other architectures: aarch64.
//!
//! The library needs libc alone: each library more is opened, mapped and
//! relocated in every process. Before glibc 2.34, `pthread_testcancel`
//! lived in libpthread, and a plain build binds
//! `pthread_testcancel@GLIBC_2.34`; so the library refers to it weakly, at
//! its oldest version, and does without it in a program that has no
//! libpthread (and so no thread to cancel). The fork handler goes through
//! glibc's `__register_atfork` (libc since 2.3.2), weakly: musl has none.

use std::path::Path;
use std::process::Command;

use crate::common::{Run, TempDir, library, probe};

fn tool(program: &str, args: &[&str], file: &Path) -> String {
    let output = Command::new(program)
        .args(args)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("run {program}: {e}"));
    assert!(
        output.status.success(),
        "{program}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("text output")
}

/// The oldest glibc symbol version of this architecture.
fn oldest_version() -> &'static str {
    if cfg!(target_arch = "x86_64") {
        "GLIBC_2.2.5"
    } else if cfg!(target_arch = "aarch64") {
        "GLIBC_2.17"
    } else {
        panic!("no oldest glibc version known for this architecture")
    }
}

#[test]
fn pthread_testcancel_binds_its_oldest_version_weakly() {
    let table = tool("objdump", &["-T"], &library());
    let symbol = "pthread_testcancel";
    let line = table
        .lines()
        .find(|line| line.split_whitespace().last() == Some(symbol))
        .unwrap_or_else(|| panic!("{symbol} is not referenced:\n{table}"));
    assert!(
        line.contains(&format!("({})", oldest_version())),
        "{symbol}: {line}"
    );
    // objdump's flags column: "w" for a weak reference.
    assert!(line.contains(" w "), "{symbol} is not weak: {line}");
}

#[test]
fn needs_libc_alone() {
    let dynamic = tool("readelf", &["-d"], &library());
    let needed: Vec<&str> = dynamic
        .lines()
        .filter(|line| line.contains("(NEEDED)"))
        .filter_map(|line| line.split('[').nth(1)?.split(']').next())
        .collect();
    assert_eq!(needed, ["libc.so.6"], "{dynamic}");
    assert!(!dynamic.contains("libdl"), "{dynamic}");
}

/// The proof on a real old system: `scripts/check-old-glibc` makes (once,
/// about 30 s from deb.debian.org, then kept in /var/tmp) a Debian 11 tree
/// and runs dd and sync in it under the library, with controls. Needs root.
#[test]
fn loads_into_programs_on_debian_11_with_glibc_2_31() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-old-glibc");
    let output = Command::new(&script)
        .arg(library())
        .output()
        .expect("run scripts/check-old-glibc");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}{stderr}");
    for seen in [
        "2.31",
        "no sync call, no O_SYNC reached the kernel",
        "dd fsyncs",
        "GLIBC_2.34' not found",
        "PASS",
    ] {
        assert!(stdout.contains(seen), "expected {seen:?} in:\n{stdout}");
    }
}

/// Cross-builds everything for aarch64, checks the library's symbol
/// versions there and runs the probes under qemu-aarch64 with and without
/// it (`scripts/check-aarch64`, about 10 s once built; 40 s from nothing).
/// Needs rustup's aarch64 target and the packages gcc-aarch64-linux-gnu,
/// libc6-dev-arm64-cross and qemu-user (scripts/setup-test-deps).
#[test]
fn builds_for_aarch64_with_the_same_exports_and_glibc_2_17() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check-aarch64");
    let output = Command::new(&script)
        .output()
        .expect("run scripts/check-aarch64");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success()
            && stdout.contains("check-aarch64: PASS")
            && stdout.contains("ran under qemu-aarch64"),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Linked by GNU ld, as a native build on aarch64 (or with a Rust older
/// than 1.90) is, the library builds, exports the same names, and works.
///
/// Built as the copy the command carries is (`build/embed.rs`): the
/// library alone, without the `command` feature, which only adds the
/// command's crates (the library's code has no feature of its own) and,
/// through the build script, a second copy of the library to embed. The
/// default features built both for nothing: 36 s of CPU against 7.
#[test]
fn builds_and_works_when_linked_by_gnu_ld() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gnu-ld");
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--release", "--lib"])
        .args(["--no-default-features", "--manifest-path"])
        .arg(manifest.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env("RUSTFLAGS", "-C link-arg=-fuse-ld=bfd")
        .status()
        .expect("run cargo build");
    assert!(status.success(), "cargo build with GNU ld failed");
    let built = target.join("release/libeatmydata.so");
    let comment = tool("readelf", &["-p", ".comment"], &built);
    assert!(
        !comment.contains("Linker: LLD"),
        "lld linked it:\n{comment}"
    );

    let exports = |file: &Path| {
        let mut names: Vec<String> = tool("nm", &["-D", "--defined-only"], file)
            .lines()
            .filter_map(|l| l.split_whitespace().nth(2).map(str::to_owned))
            .collect();
        names.sort();
        names
    };
    assert_eq!(exports(&built), exports(&library()));

    let dir = TempDir::new("gnu-ld");
    let program = probe("sync_calls", &[]);
    let run = Run::new(&program)
        .arg(dir.join("data"))
        .env("LD_PRELOAD", &built);
    let eaten = run.trace(&["fsync", "fdatasync"]).run().success();
    assert!(eaten.calls_of("fsync").is_empty(), "{:?}", eaten.calls);
    assert!(eaten.calls_of("fdatasync").is_empty(), "{:?}", eaten.calls);
}
