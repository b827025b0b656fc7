//! `cargo install --path . --root DIR` as a user who is not root, from a
//! copy of the source as a clean clone has it: the one file it installs
//! runs the sqlite3 shell with its syncs eaten.
//!
//! The user is `nobody`, with a home and a `CARGO_HOME` the test makes.
//! It reaches the toolchain and the crates already downloaded through bind
//! mounts in a mount namespace of the test's own (root's home is closed to
//! others), and builds offline. The source copy and the target folder stay
//! under `CARGO_TARGET_TMPDIR` between runs, so a later run builds only
//! what changed.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::MadeInTmp;
use crate::common::{Outcome, Run, TempDir};

const NOBODY: u32 = 65534;
/// Autocommit INSERTs: each one a transaction of its own, synced.
const INSERTS: usize = 1000;

#[test]
fn cargo_install_as_a_user_installs_one_file_that_eats_sqlites_syncs() {
    let kept = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cargo-install");
    let source = copy_of_the_source(&kept.join("src"));
    let (home, target) = (kept.join("home"), kept.join("target"));
    let dir = TempDir::new("cargo-install");
    let root = dir.join("root");
    for folder in [&home, &target, &root] {
        fs::create_dir_all(folder).unwrap();
        chown(folder, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    let toolchain = Path::new(env!("CARGO")).parent().unwrap().parent().unwrap();
    let registry = cargo_home().join("registry");
    let (tool_view, registry_view) = (home.join("toolchain"), home.join("cargo/registry"));
    for view in [&tool_view, &registry_view] {
        fs::create_dir_all(view).unwrap();
    }
    chown(home.join("cargo"), Some(NOBODY), Some(NOBODY)).unwrap();
    let script = format!(
        "set -e
mount --bind '{}' '{}'
mount --bind '{}' '{}'
mount -o remount,bind,ro '{}'
{}
exec setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups \
  env -i HOME='{}' CARGO_HOME='{}' CARGO_TARGET_DIR='{}' CARGO_NET_OFFLINE=true \
  PATH='{}/bin:/usr/bin:/bin' \
  cargo install --quiet --path '{}' --root '{}'",
        toolchain.display(),
        tool_view.display(),
        registry.display(),
        registry_view.display(),
        registry_view.display(),
        let_nobody_reach(&kept, &dir),
        home.display(),
        home.join("cargo").display(),
        target.display(),
        tool_view.display(),
        source.display(),
        root.display(),
    );
    let installed = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .output()
        .unwrap();
    assert!(
        installed.status.success(),
        "cargo install failed:\n{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    // One file: the command, and no library beside it or in the prefix.
    let listing = Command::new("find")
        .arg(&root)
        .args(["-type", "f"])
        .output();
    let listing = String::from_utf8_lossy(&listing.unwrap().stdout).into_owned();
    let files: Vec<&str> = listing.lines().filter(|f| !f.ends_with(".json")).collect();
    let files: Vec<&str> = files
        .into_iter()
        .filter(|f| !f.ends_with(".toml"))
        .collect();
    assert_eq!(
        files,
        [root.join("bin/eatmydata").to_str().unwrap()],
        "{listing}"
    );

    let work = dir.join("work");
    fs::create_dir(&work).unwrap();
    fs::set_permissions(&work, fs::Permissions::from_mode(0o777)).unwrap();
    let plain = inserts(&work, "plain.db", None);
    let eatmydata = root.join("bin/eatmydata");
    // nobody, with no TMPDIR, writes the carried library to the machine's /tmp.
    let _made = MadeInTmp::watch(NOBODY);
    let eaten = inserts(&work, "eaten.db", Some(&eatmydata));
    let syncs = |run: &Outcome| {
        SYNCS
            .iter()
            .map(|call| run.calls_of(call).len())
            .sum::<usize>()
    };
    assert!(syncs(&plain) >= INSERTS, "control: {} syncs", syncs(&plain));
    assert_eq!(syncs(&eaten), 0, "{:?}", eaten.calls);
    assert!(
        eaten.stderr().contains("(the copy embedded in eatmydata"),
        "{}",
        eaten.stderr()
    );
    for db in ["plain.db", "eaten.db"] {
        let count = Command::new("sqlite3")
            .arg(work.join(db))
            .arg("select count(*) from t")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&count.stdout),
            format!("{INSERTS}\n")
        );
    }
}

/// Shell lines that, in a mount namespace of the test's own, let nobody
/// reach `kept` at its path where a folder above it is closed to others
/// (a checkout under `/root`, mode 0700): `kept` bound aside in `dir`, a
/// tmpfs of mode 0755 over the outermost closed folder, and `kept` bound
/// back at its path. Nothing where nobody can reach it already.
fn let_nobody_reach(kept: &Path, dir: &TempDir) -> String {
    let real = kept.canonicalize().unwrap();
    let closed = real
        .ancestors()
        .filter(|above| fs::metadata(above).is_ok_and(|meta| meta.mode() & 0o001 == 0))
        .last();
    let Some(closed) = closed else {
        return String::new();
    };
    let aside = dir.join("kept");
    fs::create_dir_all(&aside).unwrap();
    format!(
        "mount --rbind '{kept}' '{aside}'
mount -t tmpfs -o mode=0755 tmpfs '{closed}'
mkdir -p '{kept}'
mount --rbind '{aside}' '{kept}'",
        kept = real.display(),
        aside = aside.display(),
        closed = closed.display(),
    )
}

/// Every call that asks the kernel for durability.
const SYNCS: [&str; 6] = [
    "fsync",
    "fdatasync",
    "sync_file_range",
    "msync",
    "syncfs",
    "sync",
];

/// `sqlite3 DB` with `INSERTS` autocommit INSERTs on its input, as
/// `nobody`, under `eatmydata -v` or alone, under strace.
fn inserts(work: &Path, db: &str, eatmydata: Option<&Path>) -> Outcome {
    let mut sql = String::from("create table t(x);\n");
    for n in 0..INSERTS {
        sql.push_str(&format!("insert into t values({n});\n"));
    }
    let sql_file = work.join(format!("{db}.sql"));
    fs::write(&sql_file, sql).unwrap();
    let mut run = Run::new("setpriv")
        .args([
            format!("--reuid={NOBODY}"),
            format!("--regid={NOBODY}"),
            "--clear-groups".into(),
        ])
        .cwd(work)
        .env("HOME", work)
        .env("TMPDIR", "");
    if let Some(eatmydata) = eatmydata {
        run = run.arg(eatmydata).arg("-v");
    }
    run.args(["sqlite3", db])
        .arg(format!(".read {}", sql_file.display()))
        .trace(&SYNCS)
        .run()
        .success()
}

/// A copy at `to` of the files a clean clone has (those git tracks, and
/// new ones it does not ignore), with their times, so that a later run
/// rebuilds only what changed; owned by root, so the build cannot write
/// to it.
fn copy_of_the_source(to: &Path) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    // git refuses a checkout another user owns (a clone in a user's
    // home, the tests run by root) unless told this one is safe.
    let safe = format!("safe.directory={}", manifest.display());
    let files = Command::new("git")
        .args(["-c", &safe])
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(manifest)
        .output()
        .unwrap();
    assert!(files.status.success(), "git ls-files");
    let _ = fs::remove_dir_all(to);
    for file in files.stdout.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        let file = Path::new(std::str::from_utf8(file).unwrap());
        let from = manifest.join(file);
        if !from.is_file() {
            continue; // removed in the work tree, still in git's index
        }
        let into = to.join(file);
        fs::create_dir_all(into.parent().unwrap()).unwrap();
        let copied = Command::new("cp")
            .arg("--preserve=mode,timestamps")
            .arg(&from)
            .arg(&into)
            .status()
            .unwrap();
        assert!(copied.success(), "copy {}", from.display());
    }
    to.to_owned()
}

/// Root's `CARGO_HOME`, where the crates this build needs were downloaded.
fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"))
}
