//! The lookup of the next definitions finds what `dlsym(RTLD_NEXT)` would
//! find from the library, for every hooked name, under glibc and musl, with
//! other preloads before and after it, an IFUNC among them, and a library
//! loaded later with dlopen (also RTLD_LOCAL, where our lookup finds more
//! than RTLD_NEXT, as a plugin's liburing needs); a function no library
//! defines gives NULL,
//! remembered, which the hooks turn into a failed call (ENOSYS).
//!
//! The oracle is the libc loader itself: a twin library preloaded right
//! after ours, defining none of the names, asks dlsym(RTLD_NEXT), which
//! from there searches exactly the objects our lookup must search.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::common::{Libc, Run, library, probe, probe_for};
use crate::symbols::listed_hooks;

#[test]
fn a_missing_next_definition_fails_the_call_instead_of_crashing() {
    let program = probe("lookup_missing", &[]);
    let outcome = Run::new(&program).preload(true).run().success();
    assert_eq!(
        outcome.stdout(),
        "missing: null null, remembered: yes\n\
         write: libc's, cached: yes, errno kept: yes\n\
         fallback: -1 ENOSYS\n"
    );
    // Control: without the library the probe cannot reach the lookup.
    let control = Run::new(&program).run();
    assert_eq!(control.stdout(), "the library is not preloaded\n");
}

/// Every hooked name, what the hooks and the library's own checks call,
/// a name of liburing's, and names no library has.
fn names() -> Vec<String> {
    let mut names: Vec<String> = listed_hooks().into_iter().collect();
    for more in [
        "aio_read",
        "pthread_testcancel",
        "write",
        "io_uring_submit",
        "lookup_other_marker",
        "eatmydata_no_such_function",
    ] {
        names.push(more.into());
    }
    names
}

/// `LD_PRELOAD` for `objects`, in order.
fn preload_list(objects: &[&Path]) -> OsString {
    let paths: Vec<OsString> = objects.iter().map(|p| p.as_os_str().to_owned()).collect();
    paths.join(std::ffi::OsStr::new(" "))
}

/// Runs the comparison under `objects` preloaded; returns its lines, having
/// checked each name is found alike and that the lines are all there.
fn compare(program: &Path, objects: &[&Path], late: Option<&Path>) -> Vec<String> {
    let mut run = Run::new(program)
        .args(names())
        .env("LD_PRELOAD", preload_list(objects));
    if let Some(late) = late {
        run = run
            .env("LATE_LIBRARY", late)
            .env("LATE_NAME", "lookup_other_marker");
    }
    let outcome = run.run().success();
    let lines: Vec<String> = outcome.stdout().lines().map(str::to_owned).collect();
    assert_eq!(
        lines.len(),
        names().len() + usize::from(late.is_some()),
        "{lines:#?}"
    );
    for line in &lines {
        assert!(line.contains(" same"), "{line}\nall:\n{lines:#?}");
    }
    lines
}

fn line<'a>(lines: &'a [String], name: &str) -> &'a str {
    let prefix = format!("{name} ");
    lines
        .iter()
        .find(|line| line.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no line for {name}: {lines:#?}"))
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

struct Probes {
    program: PathBuf,
    twin: PathBuf,
    before: PathBuf,
    after: PathBuf,
    late: PathBuf,
}

fn probes(libc: Libc) -> Probes {
    let shared = ["-shared", "-fPIC"];
    let after_flags: &[&str] = match libc {
        Libc::Glibc => &["-shared", "-fPIC", "-DWITH_IFUNC"],
        Libc::Musl => &["-shared", "-fPIC", "-DAFTER"],
    };
    Probes {
        program: probe_for(libc, "lookup_same", &[]),
        twin: probe_for(libc, "lookup_twin", &shared),
        before: probe_for(libc, "lookup_other", &shared),
        after: probe_for(libc, "lookup_other", after_flags),
        late: probe_for(libc, "lookup_other", &["-shared", "-fPIC", "-DLATE"]),
    }
}

fn finds_what_the_loader_finds(libc: Libc, libc_object: &str) {
    let p = probes(libc);
    let ours = library();

    // Alone: every name from libc, or from nowhere.
    let lines = compare(&p.program, &[&ours, &p.twin], None);
    for name in ["fsync", "open", "openat", "write", "syscall", "fcntl"] {
        assert!(
            line(&lines, name).ends_with(libc_object),
            "{name}: {lines:#?}"
        );
    }
    for name in ["eatmydata_no_such_function", "lookup_other_marker"] {
        assert!(line(&lines, name).ends_with("same none"), "{lines:#?}");
    }

    // Between two other preloads that define fsync: the one after wins,
    // the one before is skipped, as RTLD_NEXT skips it.
    let lines = compare(&p.program, &[&p.before, &ours, &p.twin, &p.after], None);
    let after = file_name(&p.after);
    for name in ["fsync", "fdatasync", "lookup_other_marker"] {
        assert!(line(&lines, name).ends_with(&after), "{name}: {lines:#?}");
    }
    assert!(line(&lines, "open").ends_with(libc_object), "{lines:#?}");

    // A library loaded after a name was found absent: found then.
    let lines = compare(&p.program, &[&ours, &p.twin], Some(&p.late));
    let late = lines.last().unwrap();
    assert_eq!(
        late,
        "late lookup_other_marker: absent before, found after, same"
    );
}

#[test]
fn finds_what_dlsym_rtld_next_finds_under_glibc() {
    finds_what_the_loader_finds(Libc::Glibc, "libc.so.6");
}

#[test]
fn finds_what_dlsym_rtld_next_finds_under_musl() {
    // musl's libc is its loader, which dladdr names as the loader.
    finds_what_the_loader_finds(Libc::Musl, &file_name(&crate::common::musl_loader()));
}
