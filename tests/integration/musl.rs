//! One library for glibc and musl programs: what it needs from libc is all
//! in musl, a preload never kills a program of either, and the probes built
//! with `musl-gcc` pass the checks the glibc ones pass (all but pwritev2 and
//! the fortified opens, which musl 1.2.3 does not have).

use std::collections::BTreeSet;
use std::fs;
use std::process::Command;

use crate::common::{Libc, Run, TempDir, library, musl_loader, probe_for};
use crate::{aio, open, raw_syscall, report, sync, wrapper};

/// The names a shared object defines (`nm -D --defined-only`).
fn defined_names(object: &std::path::Path) -> BTreeSet<String> {
    let output = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(object)
        .output()
        .expect("run nm");
    assert!(output.status.success(), "nm {}", object.display());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().nth(2))
        .map(|name| name.split('@').next().unwrap_or(name).to_owned())
        .collect()
}

#[test]
fn every_name_the_library_needs_is_in_musl() {
    // musl's loader is its libc; it ignores symbol versions, so a strong
    // undefined name it lacks stops every program the library is loaded
    // into ("Error relocating ...: symbol not found", exit 127).
    let musl = fs::canonicalize(musl_loader()).expect("musl is installed");
    let provided = defined_names(&musl);
    assert!(
        provided.contains("fsync") && provided.contains("pthread_atfork"),
        "nm read musl's libc: {} names",
        provided.len()
    );
    let output = Command::new("nm")
        .args(["-D", "--undefined-only"])
        .arg(library())
        .output()
        .expect("run nm");
    let listing = String::from_utf8_lossy(&output.stdout).into_owned();
    // Weak references ("w") may stay unresolved; strong ones ("U") may not.
    let needed: Vec<&str> = listing
        .lines()
        .filter_map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                ["U", name] => Some(name.split('@').next().unwrap_or(name)),
                _ => None,
            },
        )
        .collect();
    assert!(
        needed.contains(&"dl_iterate_phdr"),
        "nm listed the needs:\n{listing}"
    );
    let missing: Vec<&&str> = needed.iter().filter(|n| !provided.contains(**n)).collect();
    assert!(missing.is_empty(), "not in musl: {missing:?}");
}

#[test]
fn a_preload_never_kills_a_glibc_or_musl_program() {
    for libc in [Libc::Glibc, Libc::Musl] {
        let program = probe_for(libc, "show_args", &[]);
        let plain = Run::new(&program).args(["a", "b c"]).run().success();
        let loaded = Run::new(&program)
            .args(["a", "b c"])
            .preload(true)
            .run()
            .success();
        let args = |stdout: String| -> Vec<String> {
            stdout
                .lines()
                .filter(|l| l.starts_with("arg"))
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(args(loaded.stdout()), args(plain.stdout()), "{libc:?}");
        let preload = format!("preload {}", library().display());
        assert!(loaded.stdout().contains(&preload), "{}", loaded.stdout());
        assert_eq!(loaded.stderr(), "", "{libc:?}");
    }
}

#[test]
fn the_musl_probes_are_musl_programs() {
    // Otherwise every check below could pass on glibc probes.
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let dir = TempDir::new("musl-kind");
    let traced = Run::new(&program)
        .arg(dir.join("data"))
        .trace(&["openat", "open"])
        .run()
        .success();
    let musl = musl_loader();
    let bytes = fs::read(&program).unwrap();
    let needle = musl.to_string_lossy();
    assert!(
        bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
        "{} names {needle} as its loader",
        program.display()
    );
    assert!(
        traced.calls_with("libc.so.6").is_empty(),
        "glibc was loaded: {:?}",
        traced.calls
    );
}

#[test]
fn sync_calls_are_eaten_in_musl_programs() {
    sync::check_sync_calls(Libc::Musl);
}

#[test]
fn sync_errors_are_kept_in_musl_programs() {
    sync::check_sync_errors(Libc::Musl);
}

#[test]
fn sync_flags_are_dropped_from_musl_opens() {
    open::check_open_probe(Libc::Musl, &[]);
}

#[test]
fn o_direct_is_kept_on_request_in_musl_programs() {
    open::check_keep_direct(Libc::Musl);
}

#[test]
fn fcntl_in_musl_programs() {
    open::check_write_flags(Libc::Musl);
}

#[test]
fn raw_syscalls_in_musl_programs() {
    raw_syscall::check_raw_syscalls(Libc::Musl);
}

#[test]
fn musl_programs_report_and_can_be_disabled() {
    report::check_report_lines(Libc::Musl);
}

#[test]
fn a_forked_musl_child_reports_its_own_skips() {
    report::check_forked_report(Libc::Musl);
}

#[test]
fn the_command_runs_musl_programs_with_the_library() {
    wrapper::check_command_runs(Libc::Musl);
    report::check_command_report(Libc::Musl);
}

#[test]
fn musl_aio_fsync_completes_without_a_flush() {
    // musl's aiocb keeps the result and error where glibc's does.
    aio::check_aio_fsync(Libc::Musl);
}
