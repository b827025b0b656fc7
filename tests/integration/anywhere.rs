//! A command that runs anywhere: `scripts/build-static` makes a static
//! command which, copied alone into a root file system without `/proc`
//! (one of musl and no glibc, one of glibc), runs a program there with its
//! syncs eaten, through the library it carries; and which finds an
//! installed library beside it without `/proc` too.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{
    Libc, Run, TempDir, command, library, musl_root, probe, probe_for, static_pair,
};

#[test]
fn the_static_command_has_no_loader_and_needs_no_library() {
    let pair = static_pair();
    let headers = |path: &std::path::Path| {
        let output = Command::new("readelf")
            .args(["--program-headers", "--dynamic"])
            .arg(path)
            .env("LC_ALL", "C")
            .output()
            .expect("run readelf");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    // The control: today's command has both, so the check can see them.
    let dynamic = headers(&command());
    assert!(
        dynamic.contains("INTERP") && dynamic.contains("(NEEDED)"),
        "{dynamic}"
    );
    let static_headers = headers(&pair.join("eatmydata"));
    assert!(
        static_headers.contains("LOAD")
            && !static_headers.contains("INTERP")
            && !static_headers.contains("(NEEDED)"),
        "{static_headers}"
    );
    assert!(pair.join("libeatmydata.so").is_file());
}

#[test]
fn the_command_alone_runs_a_musl_program_in_a_root_without_glibc_or_proc() {
    let program = probe_for(Libc::Musl, "sync_calls", &[]);
    let dir = TempDir::new("musl-root");
    let root = dir.join("root");
    musl_root(&root, &[&program]);
    let listing = listing(&root);
    assert!(
        !listing.contains("libc.so.6") && !listing.contains("ld-linux"),
        "{listing}"
    );
    eats_in_root(&root, &program);
}

#[test]
fn the_command_alone_runs_a_glibc_program_in_a_root_without_proc() {
    let program = probe("sync_calls", &[]);
    let dir = TempDir::new("glibc-root");
    let root = dir.join("root");
    glibc_root(&root, &program);
    let listing = listing(&root);
    assert!(
        listing.contains("libc.so.6") && !listing.contains("musl"),
        "{listing}"
    );
    eats_in_root(&root, &program);
}

/// Every path in the tree at `root`.
fn listing(root: &Path) -> String {
    let listing = Command::new("find").arg(root).output().unwrap();
    String::from_utf8_lossy(&listing.stdout).into_owned()
}

/// Lays out at `root` a glibc file system: the libraries `program` needs
/// (as `ldd` names them), the program and the static command alone in
/// `/bin`, an empty `/tmp`. No `/proc`.
fn glibc_root(root: &Path, program: &Path) {
    for dir in ["bin", "tmp"] {
        fs::create_dir_all(root.join(dir)).unwrap();
    }
    let ldd = Command::new("ldd").arg(program).output().unwrap();
    let ldd = String::from_utf8_lossy(&ldd.stdout);
    for object in ldd.split_whitespace().filter(|w| w.starts_with('/')) {
        let inside = root.join(object.trim_start_matches('/'));
        fs::create_dir_all(inside.parent().unwrap()).unwrap();
        fs::copy(fs::canonicalize(object).unwrap(), inside).unwrap();
    }
    fs::copy(static_pair().join("eatmydata"), root.join("bin/eatmydata")).unwrap();
    fs::copy(program, root.join("bin").join(program.file_name().unwrap())).unwrap();
}

/// In `root` (no `/proc`, no library, only the static command): the
/// program's fsync reaches the kernel alone and not under the command,
/// which, as root, placed the library it carries beside itself
/// (`/lib/eatmydata/`), never in the root's `/tmp`.
fn eats_in_root(root: &Path, program: &Path) {
    assert!(!root.join("proc").exists());
    assert!(!listing(root).contains("libeatmydata"));
    let inside = format!("/bin/{}", program.file_name().unwrap().to_string_lossy());
    let plain = Run::new("chroot")
        .args([root.as_os_str(), inside.as_ref(), "/tmp/plain".as_ref()])
        .trace(&["fsync"])
        .run()
        .success();
    assert_eq!(
        plain.calls_of("fsync").len(),
        1,
        "control: {:?}",
        plain.calls
    );

    let eaten = Run::new("chroot")
        .args([root.as_os_str(), "/bin/eatmydata".as_ref(), "-v".as_ref()])
        .args([inside.as_str(), "/tmp/eaten"])
        .env("TMPDIR", "")
        .trace(&["fsync"])
        .run()
        .success();
    assert!(eaten.calls_of("fsync").is_empty(), "{:?}", eaten.calls);
    let written = format!("/lib/eatmydata/libeatmydata-{}.so", &static_hash()[..16]);
    assert_eq!(
        eaten.stderr(),
        format!(
            "eatmydata: running {inside} with {written} preloaded (the copy placed beside \
             eatmydata, written now)\n"
        )
    );
    assert!(root.join("tmp/eaten").is_file());

    let printed = Run::new("chroot")
        .args([root.as_os_str(), "/bin/eatmydata".as_ref()])
        .arg("--print-library")
        .run()
        .success();
    assert_eq!(printed.stdout(), format!("{written}\n"));
}

/// The hash of the library the static command carries, as it says.
fn static_hash() -> String {
    let version = Command::new(static_pair().join("eatmydata"))
        .arg("--version")
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    let hash = version
        .lines()
        .find_map(|l| l.strip_prefix("library: embedded, sha256 "));
    hash.unwrap_or_else(|| panic!("{version}")).to_owned()
}

#[test]
fn without_proc_the_command_still_finds_its_library() {
    library();
    // A mount namespace of its own, with /proc unmounted in it only.
    let script = r#"umount -l /proc || exit 90
test -e /proc/self/exe && exit 91
exec "$0" --print-library"#;
    let run = |program: &std::path::Path| {
        Run::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", script])
            .arg(program)
            .run()
    };
    // What each finds with /proc, which depends on where the checkout is
    // (root passes over a copy in a folder others may write, such as
    // /var/tmp, for its home): the same without it.
    for program in [command(), static_pair().join("eatmydata")] {
        let with_proc = Run::new(&program).arg("--print-library").run().success();
        let found = with_proc.stdout();
        assert!(Path::new(found.trim_end()).is_file(), "{found}");
        let printed = run(&program).success();
        assert_eq!(printed.stdout(), found, "{}", program.display());
    }
}

#[test]
fn without_proc_seccomp_mode_says_what_it_cannot_do() {
    // A static program in the root: seccomp mode, whose supervisor reads
    // the program's arguments in /proc, which is not there.
    let program = crate::common::probe("open_flags", &["-static"]);
    let dir = TempDir::new("no-proc-seccomp");
    let root = dir.join("root");
    musl_root(&root, &[&program]);
    fs::create_dir(root.join("tmp/files")).unwrap();
    let inside = format!("/bin/{}", program.file_name().unwrap().to_string_lossy());
    let run = Run::new("chroot")
        .args([root.as_os_str(), "/bin/eatmydata".as_ref()])
        .args([inside.as_str(), "/tmp/files"])
        .run()
        .success();
    assert!(
        run.stderr()
            .contains("eatmydata: /proc is not mounted here"),
        "{}",
        run.stderr()
    );
    // What the notice says: the plain filter, and the opens keep their
    // flags (as they do under the supervisor too).
    assert!(run.stderr().contains("plain filter"), "{}", run.stderr());
    assert!(run.stdout().contains("openat: sync=1"), "{}", run.stdout());

    // The control: with /proc, no such notice; the opens, the kernel's,
    // keep their flags there too.
    let files = dir.join("files");
    fs::create_dir(&files).unwrap();
    let host = Run::new(static_pair().join("eatmydata"))
        .arg(&program)
        .arg(&files)
        .run()
        .success();
    assert!(!host.stderr().contains("/proc"), "{}", host.stderr());
    assert!(
        host.stdout().contains("openat: sync=1"),
        "{}",
        host.stdout()
    );
}
