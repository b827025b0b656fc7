//! Shared test machinery: the built artefacts, C probes compiled on demand,
//! private temporary folders, and runs with and without the library, under
//! `strace` when a test needs to see what reached the kernel.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::{env, fs};

pub mod flushes; // flush counts judged against a control and a floor, never against 0
pub mod home; // root's homes for tests (EATMYDATA_HOME): each process's, made before main, and a test's own
mod lock; // one machine-wide lock between sync(2) callers and disk readers
pub mod mariadb; // a MariaDB server of a test's own, started and stopped around a script
pub mod pipe; // a full pipe that holds a writer at a known line while the test acts
mod run; // a program run with or without the library, under strace or not
pub mod trusted; // folders root trusts, on a disk, wherever the checkout is (shared with unit tests)
pub use flushes::{Flushes, floor_writing, nosync, nosync_into};
pub use home::{RootHome, registered_runtime};
pub use lock::{QuietDisks, in_whole_machine_sync, locked, quiet_disks, whole_machine_sync};
pub use run::{Outcome, Run};

/// The `eatmydata` command under test, with the library it finds beside it
/// built first: never a stale one.
pub fn command() -> PathBuf {
    static COMMAND: OnceLock<PathBuf> = OnceLock::new();
    COMMAND
        .get_or_init(|| {
            library();
            reachable(Path::new(env!("CARGO_BIN_EXE_eatmydata")))
        })
        .clone()
}

/// The library under test, built beside the command.
///
/// Cargo does not build a cdylib for integration tests, so the first call
/// in a test run runs `cargo build --lib` for the profile the tests were
/// built with: a no-op when the library is fresh, and never a stale
/// library. Under nextest, whose test processes share a run, the first
/// process of the run does it ([`once_per_run`]).
pub fn library() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let path =
                PathBuf::from(env!("CARGO_BIN_EXE_eatmydata")).with_file_name("libeatmydata.so");
            let profile_dir = path
                .parent()
                .and_then(Path::file_name)
                .and_then(OsStr::to_str);
            once_per_run(&path.with_file_name("libeatmydata.so.run"), || {
                let mut cargo = Command::new(env!("CARGO"));
                cargo.args(["build", "--quiet", "--lib", "--manifest-path"]);
                cargo.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"));
                // target/debug holds the dev and test profiles; others their own.
                if let Some(profile) = profile_dir.filter(|dir| *dir != "debug") {
                    cargo.args(["--profile", profile]);
                }
                let status = cargo.status().expect("run cargo build --lib");
                assert!(status.success(), "cargo build --lib failed");
            });
            assert!(
                path.is_file(),
                "{} is missing after cargo build --lib",
                path.display()
            );
            reachable(&path)
        })
        .clone()
}

/// Runs `build` once per nextest run, whose processes share the run's id
/// (`NEXTEST_RUN_ID`): the first process of the run builds, under a lock,
/// and writes the id to `stamp`; the others find it there and go on, as
/// they would after a cargo run that found nothing to do (about 60 ms of
/// cargo per process, in turns on its lock). Nothing changes the sources
/// during a run that the test binary was not built from either. Without
/// the id (`cargo test`, one process) it runs `build`.
pub fn once_per_run(stamp: &Path, build: impl FnOnce()) {
    let Ok(run) = env::var("NEXTEST_RUN_ID") else {
        return build();
    };
    let _turn = locked(&stamp.with_extension("lock"), libc::LOCK_EX);
    if fs::read_to_string(stamp).is_ok_and(|built| built == run) {
        return;
    }
    let _ = fs::remove_file(stamp);
    build();
    fs::write(stamp, &run).unwrap_or_else(|e| panic!("write {}: {e}", stamp.display()));
}

/// `file`, a program or library the build made, where every user can
/// reach it: itself where every user may pass through the folders above
/// it, else (a checkout under `/root`, mode 0700) a hard link to it (a
/// copy across file systems) of the same name in a folder named as its
/// own, in this process's folder of root's (`trusted::own`), made once.
/// The command and the library so stay side by side.
fn reachable(file: &Path) -> PathBuf {
    let (Some(folder), Some(name)) = (file.parent(), file.file_name()) else {
        return file.to_owned();
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || trusted::others_pass(folder) {
        return file.to_owned();
    }
    let at = trusted::own()
        .join("reach")
        .join(folder.file_name().unwrap_or(name));
    fs::create_dir_all(&at).expect("create a folder every user reaches");
    fs::set_permissions(&at, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(at.parent().unwrap(), fs::Permissions::from_mode(0o755)).unwrap();
    let link = at.join(name);
    if !link.exists() && fs::hard_link(file, &link).is_err() {
        let partial = link.with_extension(format!("part{}", std::process::id()));
        fs::copy(file, &partial).expect("copy where every user reaches");
        fs::rename(&partial, &link).expect("copy where every user reaches");
    }
    link
}

/// `scripts/build-static`'s folder: the static command and the library
/// beside it (built once per test run, [`once_per_run`]).
pub fn static_pair() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"));
            fs::create_dir_all(target_tmp()).expect("make the tests' folder");
            once_per_run(&target_tmp().join("static-pair.run"), || {
                let status = Command::new(root.join("scripts/build-static"))
                    .stdout(Stdio::null())
                    .status()
                    .expect("run scripts/build-static");
                assert!(status.success(), "scripts/build-static failed");
            });
            root.join("target/static")
        })
        .clone()
}

/// Lays out at `root` a file system with musl and no glibc: musl's loader,
/// the static command alone in `/bin` (it carries its library), `programs`
/// (musl-built) in `/bin` too, and an empty `/tmp`. No `/proc`.
pub fn musl_root(root: &Path, programs: &[&Path]) {
    let pair = static_pair();
    for dir in ["bin", "lib", "tmp"] {
        fs::create_dir_all(root.join(dir)).expect("make the root's folders");
    }
    let loader = musl_loader();
    let real = fs::canonicalize(&loader).expect("musl is installed");
    fs::copy(real, root.join(loader.strip_prefix("/").unwrap())).expect("copy musl");
    fs::copy(pair.join("eatmydata"), root.join("bin/eatmydata")).expect("copy the command");
    for program in programs {
        fs::copy(program, root.join("bin").join(program.file_name().unwrap()))
            .expect("copy a program");
    }
}

/// Where the probes and scratch folders go.
fn target_tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// A folder of our own, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Beside the build, or where `TempDir::trusted` makes its folders
    /// when another user could not pass through the folders above it.
    pub fn new(label: &str) -> TempDir {
        let beside = target_tmp().join("scratch");
        fs::create_dir_all(&beside).expect("create the scratch folder");
        let parent = match trusted::others_pass(&beside) {
            true => beside,
            false => trusted::base(&beside),
        };
        let path = TempDir::name(&parent, label);
        fs::create_dir_all(&path).expect("create a scratch folder");
        TempDir(path)
    }

    /// The same in a chain of folders root trusts, each mode 0755 (another
    /// user may pass through): for a test whose root run must use what it
    /// holds, or whose other user must trust the chain and reach it,
    /// wherever the checkout is (`trusted.rs`: under `/var/lib` when the
    /// checkout is under `/tmp`, `/var/tmp` or a user's home).
    pub fn trusted(label: &str) -> TempDir {
        let beside = target_tmp().join("scratch");
        fs::create_dir_all(&beside).expect("create the scratch folder");
        let path = TempDir::name(&trusted::base(&beside), label);
        fs::create_dir(&path).expect("create a trusted scratch folder");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        TempDir(path)
    }

    /// A fresh name in `parent` for the `label` of this process, nothing
    /// left there.
    fn name(parent: &Path, label: &str) -> PathBuf {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let path = parent.join(format!("{label}-{}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        path
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A `TMPDIR` of `user`'s own (by name), in a chain of folders that user
/// may trust (`TempDir::trusted`), for the command run as that user in a
/// test about something else: from a checkout whose chain a user may not
/// trust (under `/tmp`, `/var/tmp` or another user's home) the command
/// writes the library it carries to its temporary place, which is then
/// this folder, not the machine's `/tmp`. Removed with the `TempDir`.
pub fn tmpdir_of(user: &str) -> (TempDir, PathBuf) {
    let dir = TempDir::trusted(&format!("tmpdir-{user}"));
    let tmpdir = dir.join("tmp");
    fs::create_dir(&tmpdir).expect("create a TMPDIR");
    fs::set_permissions(&tmpdir, fs::Permissions::from_mode(0o755)).unwrap();
    let status = Command::new("chown")
        .arg(format!("{user}:"))
        .arg(&tmpdir)
        .status()
        .expect("run chown");
    assert!(status.success(), "chown {user}: {}", tmpdir.display());
    (dir, tmpdir)
}

/// The C library a probe is built against: the system's glibc, or musl
/// through Debian's `musl-gcc` (what Alpine images run).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Libc {
    Glibc,
    Musl,
}

impl Libc {
    fn compiler(self) -> &'static str {
        match self {
            Libc::Glibc => "cc",
            Libc::Musl => "musl-gcc",
        }
    }
}

/// musl's dynamic loader, which is also its libc (`libc.so`).
pub fn musl_loader() -> PathBuf {
    PathBuf::from(format!("/lib/ld-musl-{}.so.1", env::consts::ARCH))
}

/// Compiles `tests/integration/probes/{name}.c` with `flags` (once per set of
/// flags; concurrent test processes each write their own file, then rename)
/// and returns the program's path.
pub fn probe(name: &str, flags: &[&str]) -> PathBuf {
    probe_for(Libc::Glibc, name, flags)
}

/// [`probe`], built against `libc`.
pub fn probe_for(libc: Libc, name: &str, flags: &[&str]) -> PathBuf {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/integration/probes/{name}.c"));
    let mut tag: String = flags
        .concat()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    if libc == Libc::Musl {
        tag.push_str("musl");
    }
    let dir = target_tmp().join("probes");
    fs::create_dir_all(&dir).expect("create the probes folder");
    let suffix = if flags.contains(&"-shared") {
        ".so"
    } else {
        ""
    };
    let output = dir.join(format!(
        "{name}{}{tag}{suffix}",
        if tag.is_empty() { "" } else { "-" }
    ));
    let fresh = |out: &Path| {
        let built = fs::metadata(out).and_then(|m| m.modified());
        let written = fs::metadata(&source)
            .and_then(|m| m.modified())
            .expect("probe source exists");
        built.is_ok_and(|built| built >= written)
    };
    // Tests run on threads of one process, which share the pid in the
    // partial file's name: one compiles at a time, the others then find the
    // probe fresh.
    static COMPILING: Mutex<()> = Mutex::new(());
    let _compiling = COMPILING.lock().unwrap_or_else(PoisonError::into_inner);
    if !fresh(&output) {
        let partial = output.with_extension(format!("part{}", std::process::id()));
        let mut cc = Command::new(libc.compiler());
        cc.args(["-Wall", "-Wextra", "-Werror", "-O1", "-D_GNU_SOURCE", "-o"])
            .arg(&partial)
            .arg(&source)
            .args(flags);
        // gcc-12-multilib lacks the /usr/include/asm link of gcc-multilib
        // (which conflicts with the aarch64 cross gcc): the x86_64 kernel
        // headers it points to serve -m32 as well.
        if flags.contains(&"-m32") && !Path::new("/usr/include/asm").exists() {
            cc.args(["-idirafter", "/usr/include/x86_64-linux-gnu"]);
        }
        let status = cc.status().expect("run cc");
        assert!(status.success(), "compiling probe {name} failed");
        fs::rename(&partial, &output).expect("move the probe into place");
    }
    reachable(&output)
}

/// Polls `done` until it holds, for at most `timeout`, and panics saying
/// `what` did not happen otherwise. Only for what no event announces (a
/// file another process makes, a process gone, a timer under test): never
/// in place of a pipe, a FIFO or a line to wait for.
pub fn wait_until(what: &str, timeout: std::time::Duration, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + timeout;
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: not within {timeout:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// `job` with its `--sync` made `none`: the same writes, no flush (a
/// count's floor).
pub fn unsynced<'a>(job: &[&'a str]) -> Vec<&'a str> {
    let mut job = job.to_vec();
    match job.iter().position(|option| *option == "--sync") {
        Some(at) => job[at + 1] = "none",
        None => job.extend(["--sync", "none"]),
    }
    job
}

/// What `scripts/fio-flushes` measured of one fio job (which it checked:
/// fio exited 0 and its crc32c verification passed).
#[derive(Debug)]
pub struct FioRun {
    pub flushes: u64,
    pub line: String,
}

/// Runs one fio job on a fresh loop-device ext4 through
/// `scripts/fio-flushes` (`job`: its options, such as `--engine io_uring
/// --sync fdatasync`), under the command `prefix` (none for the control),
/// and asserts that fio succeeded and verified what it wrote.
pub fn fio_flushes(job: &[&str], prefix: &[&str]) -> FioRun {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fio-flushes");
    // The script counts its loop device's flushes: no test's sync(2) then.
    let _quiet = quiet_disks();
    let output = Command::new("python3")
        .arg(script)
        .args(job)
        .arg("--")
        .args(prefix)
        .output()
        .expect("run scripts/fio-flushes");
    let line = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    assert!(
        output.status.success(),
        "fio-flushes {job:?} -- {prefix:?}: {line}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let number = |key: &str| -> u64 {
        let label = format!("\"{key}\": ");
        line.split_once(&label)
            .and_then(|(_, rest)| rest.split([',', '}']).next())
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {line}"))
    };
    assert_eq!(number("fio_status"), 0, "fio failed: {line}");
    assert!(
        line.contains("\"verify\": true"),
        "fio's verification failed: {line}"
    );
    FioRun {
        flushes: number("flushes"),
        line,
    }
}

/// Makes the folder `path` (in a folder every user may write, such as
/// /var/tmp) this process's, or fails the test: taken only when it is
/// ours alone, by `scripts/own-path`, the rule the scripts apply to their
/// own folders there. Another user who made it first would otherwise have
/// root run what they put in it.
pub fn own_folder(path: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/own-path");
    let output = Command::new(&script)
        .arg("dir")
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", script.display()));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
