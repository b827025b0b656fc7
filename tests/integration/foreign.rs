//! Programs the library cannot be loaded into are treated like static ones
//! (the seccomp filter, one notice, no `LD_PRELOAD`): a 32-bit program,
//! whose loader would print an error and ignore the 64-bit library, and a
//! musl program when the library found is one musl's loader would die of.

use crate::common::{Libc, Run, TempDir, command, library, probe, probe_for};

/// The notices of a run: its stderr lines from eatmydata.
fn notices(outcome: &crate::common::Outcome) -> Vec<String> {
    outcome.stderr().lines().map(str::to_owned).collect()
}

#[test]
fn a_32_bit_program_gets_the_filter_and_a_clean_stderr() {
    library();
    let program = probe("sync_errors", &["-m32"]);
    let dir = TempDir::new("thirty-two");
    let plain = Run::new(&program).arg(dir.join("a")).run().success();
    assert!(
        plain.stdout().contains("fsync(pipe): EINVAL"),
        "{}",
        plain.stdout()
    );
    // The control: preloaded the plain way, the loader refuses the library
    // aloud, and the kernel still answers.
    let preloaded = Run::new(&program)
        .arg(dir.join("b"))
        .preload(true)
        .run()
        .success();
    assert!(
        preloaded.stderr().contains("wrong ELF class"),
        "{}",
        preloaded.stderr()
    );
    assert!(preloaded.stdout().contains("fsync(pipe): EINVAL"));

    let eaten = Run::new(command())
        .arg(&program)
        .arg(dir.join("c"))
        .run()
        .success();
    // The filter answered: what the kernel refuses, it never saw.
    assert!(
        eaten.stdout().contains("fsync(pipe): ok"),
        "{}",
        eaten.stdout()
    );
    let said = notices(&eaten);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("eatmydata: ") && said[0].contains("is a 32-bit program"),
        "{said:?}"
    );
}

#[test]
fn a_library_musl_cannot_load_never_reaches_a_musl_program() {
    let old = probe(
        "glibc_only_lib",
        &["-shared", "-fPIC", "-O2", "-D_FORTIFY_SOURCE=2"],
    );
    let program = probe_for(Libc::Musl, "sync_errors", &[]);
    let dir = TempDir::new("musl-old-library");
    // The control: preloaded by hand, musl's loader kills the program.
    let killed = Run::new(&program)
        .arg(dir.join("a"))
        .env("LD_PRELOAD", &old)
        .run();
    assert_eq!(
        killed.output.status.code(),
        Some(127),
        "{}",
        killed.stderr()
    );
    assert!(
        killed.stderr().contains("__fprintf_chk"),
        "{}",
        killed.stderr()
    );

    let run = Run::new(command())
        .arg(&program)
        .arg(dir.join("b"))
        .env("EATMYDATA_LIBRARY", &old)
        .run()
        .success();
    // The filter answers a sync on /dev/null, which the kernel refuses.
    assert!(
        run.stdout().contains("fsync(/dev/null): ok"),
        "{}",
        run.stdout()
    );
    let said = notices(&run);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("is a musl program"), "{said:?}");

    // Our library, the same program: preloaded, not filtered.
    let ours = Run::new(command())
        .arg(&program)
        .arg(dir.join("c"))
        .run()
        .success();
    assert_eq!(ours.stderr(), "");
    assert!(
        ours.stdout().contains("fsync(/dev/null): EINVAL"),
        "{}",
        ours.stdout()
    );
}
