//! Root runs the single file from where people put it (`/tmp/emd`,
//! `/var/tmp/x`, a user's `~/.cargo/bin`), and another user has planted
//! a `libeatmydata.so` in every folder the command used to look in (its
//! folder where they can write, `PREFIX/lib/eatmydata/`, `PREFIX/lib/`,
//! the Debian multiarch folder, the placed copy's name): 40 runs each,
//! the planted library never loaded (its constructor would say so), the
//! syncs eaten (strace), the library taken from root's home
//! (`EATMYDATA_HOME`, a folder of the test's own), and each planted copy
//! named under `-v` with why it was passed over.
//!
//! `/tmp` and `/var/tmp` are tmpfs of a private mount namespace: the
//! paths are the real ones, the machine's folders untouched.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::Path;
use std::process::Command;

use super::{USER, carried_hash, fsyncs_alone};
use crate::common::{RootHome, Run, TempDir, command, probe};

/// Runs of the command per place.
const RUNS: usize = 40;

/// The shell that stages it all and runs the command `RUNS` times:
/// `$0` the stage, `$1` the command's folder, `$2` its prefix, `$3`
/// "mount" for tmpfs on `/tmp` and `/var/tmp`, `$4` the multiarch name;
/// `$VIA` what the command is run through (nothing, or `sudo ...`), and
/// `$VIA_ODD` another for every other run.
const SCRIPT: &str = r#"set -e
stage=$0 bin=$1 prefix=$2 mounts=$3 multiarch=$4
if [ "$mounts" = mount ]; then
  mount -t tmpfs -o mode=1777 tmpfs /tmp
  mount -t tmpfs -o mode=1777 tmpfs /var/tmp
fi
as_user() { setpriv --reuid=$USER_ID --regid=$USER_ID --clear-groups "$@"; }
if [ ! -e "$bin/eatmydata" ]; then
  mkdir -p "$bin"; chmod 755 "$bin"
  cp "$stage/eatmydata" "$bin/eatmydata"
fi
# The other user's plants, in every place of the old search they can write.
as_user sh -c '
  decoy=$0 prefix=$1 bin=$2 multiarch=$3 placed=$4
  for f in "$prefix/lib/eatmydata/libeatmydata.so" "$prefix/lib/libeatmydata.so" \
           "$prefix/lib/eatmydata/$placed"; do
    mkdir -p "${f%/*}"; cp "$decoy" "$f"; chmod 644 "$f"
  done
  mkdir -p "$prefix/lib/$multiarch"; cp "$decoy" "$prefix/decoy.so"
  ln -sf "$prefix/decoy.so" "$prefix/lib/$multiarch/libeatmydata.so.1"
  if [ -w "$bin" ]; then cp "$decoy" "$bin/libeatmydata.so"; fi
' "$stage/decoy.so" "$prefix" "$bin" "$multiarch" "$PLACED"
# The oracle: the plant loads when a program is given it.
LD_PRELOAD="$prefix/lib/libeatmydata.so" /bin/true 2>"$stage/out/oracle"
i=0
while [ $i -lt $RUNS ]; do
  case $((i % 2)) in 0) via=$VIA ;; *) via=${VIA_ODD-$VIA} ;; esac
  strace -f -qq -e trace=fsync,fdatasync,sync_file_range,syncfs -o "$stage/out/trace-$i" \
    $via "$bin/eatmydata" -v "$stage/sync_calls" "$stage/out/data-$i" \
    >"$stage/out/stdout-$i" 2>"$stage/out/stderr-$i" || echo "$i: exit $?" >>"$stage/out/failed"
  i=$((i+1))
done
"#;

/// Who planted, and how root runs the command.
struct Setting<'a> {
    /// The user whose plants these are.
    planter: u32,
    /// What each run goes through (nothing, or `sudo` and its options),
    /// for even and odd runs.
    via: [&'a str; 2],
    /// More of the runs' environment (under `sudo -E`, the user's).
    env: Vec<(&'a str, OsString)>,
}

impl Setting<'_> {
    /// Root runs the command itself; `USER` planted.
    fn direct() -> Setting<'static> {
        Setting {
            planter: USER,
            via: ["", ""],
            env: Vec::new(),
        }
    }
}

/// Stages the command, the probe and the plant in a folder of root's,
/// runs `SCRIPT` for the command in `bin` (prefix its parent), and checks
/// each run.
fn planted_everywhere_never_loaded(label: &str, bin: &Path, mount: bool, setting: Setting) {
    let home = RootHome::new(label);
    let stage = home.join("stage");
    fs::create_dir_all(stage.join("out")).unwrap();
    fs::copy(command(), stage.join("eatmydata")).unwrap();
    fs::copy(probe("sync_calls", &[]), stage.join("sync_calls")).unwrap();
    fs::copy(
        probe("decoy_lib", &["-shared", "-fPIC"]),
        stage.join("decoy.so"),
    )
    .unwrap();
    fs::set_permissions(stage.join("decoy.so"), fs::Permissions::from_mode(0o644)).unwrap();
    let prefix = bin.parent().unwrap();
    let placed = format!("libeatmydata-{}.so", &carried_hash()[..16]);
    let multiarch = format!("{}-linux-gnu", std::env::consts::ARCH);
    let roots_home = home.join("home");
    let run = match mount {
        true => Run::new("unshare").args(["--mount", "--propagation", "private", "sh"]),
        false => Run::new("sh"),
    };
    let run = run
        .args(["-c", SCRIPT])
        .arg(&stage)
        .arg(bin)
        .arg(prefix)
        .arg(if mount { "mount" } else { "none" })
        .arg(&multiarch)
        .env("USER_ID", setting.planter.to_string())
        .env("PLACED", &placed)
        .env("RUNS", RUNS.to_string())
        .env("EATMYDATA_HOME", &roots_home)
        .env("TMPDIR", "")
        .env("VIA", setting.via[0])
        .env("VIA_ODD", setting.via[1]);
    let run = setting
        .env
        .iter()
        .fold(run, |run, (name, value)| run.env(name, value));
    run.run().success();

    let out = stage.join("out");
    assert_eq!(
        fs::read_to_string(out.join("oracle")).unwrap(),
        "decoy library loaded\n",
        "the plant is not a library that says it loaded"
    );
    fsyncs_alone(&home.join("control"));
    let failed = fs::read_to_string(out.join("failed")).unwrap_or_default();
    assert_eq!(failed, "", "runs failed: {}", out.display());
    let ours = roots_home.join(&placed);
    for i in 0..RUNS {
        let stderr = fs::read_to_string(out.join(format!("stderr-{i}"))).unwrap();
        assert!(
            !stderr.contains("decoy"),
            "run {i} loaded the plant: {stderr}"
        );
        let whence = if i == 0 { ", written now" } else { "" };
        assert!(
            stderr.contains(&format!(
                " with {} preloaded (the copy in root's home{whence})\n",
                ours.display()
            )),
            "run {i}: {stderr}"
        );
        let beside = bin.join("libeatmydata.so");
        let beside = beside.exists().then_some(beside);
        for planted in [
            prefix.join("lib/eatmydata/libeatmydata.so"),
            prefix.join("lib/libeatmydata.so"),
            prefix.join(format!("lib/{multiarch}/libeatmydata.so.1")),
        ]
        .into_iter()
        .chain(beside)
        {
            assert!(
                stderr.contains(&format!("eatmydata: passed over {}: ", planted.display())),
                "run {i} does not name {}: {stderr}",
                planted.display()
            );
        }
        let trace = fs::read_to_string(out.join(format!("trace-{i}"))).unwrap();
        assert!(
            !trace.lines().any(|l| l.contains("sync")),
            "run {i}: a sync reached the kernel: {trace}"
        );
    }
}

#[test]
fn root_runs_it_from_tmp_and_never_loads_a_planted_library() {
    let bin = Path::new("/tmp/emd");
    planted_everywhere_never_loaded("tmp", bin, true, Setting::direct());
}

#[test]
fn root_runs_it_from_var_tmp_and_never_loads_a_planted_library() {
    let bin = Path::new("/var/tmp/x");
    planted_everywhere_never_loaded("var-tmp", bin, true, Setting::direct());
}

#[test]
fn root_runs_it_from_a_users_cargo_bin_and_never_loads_their_library() {
    // The user's home, theirs from below a folder of the test's own; the
    // command theirs too, as `cargo install` leaves it.
    let dir = TempDir::new("cargo-bin");
    let user_home = dir.join("home/u");
    let bin = user_home.join(".cargo/bin");
    fs::create_dir_all(&bin).unwrap();
    fs::copy(command(), bin.join("eatmydata")).unwrap();
    for path in [&user_home, &user_home.join(".cargo"), &bin] {
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
        chown(path, Some(USER), Some(USER)).unwrap();
    }
    chown(bin.join("eatmydata"), Some(USER), Some(USER)).unwrap();
    let bin = bin.canonicalize().unwrap();
    planted_everywhere_never_loaded("cargo", &bin, false, Setting::direct());
}

/// A user of the test's own, made with `useradd` (their home at `home`,
/// not made), removed with their group when dropped.
struct User {
    name: String,
    uid: u32,
}

impl User {
    fn new(home: &Path) -> User {
        let name = format!("emdsudo{}", std::process::id());
        let made = Command::new("useradd")
            .args(["--no-create-home", "--no-log-init", "--user-group"])
            .args(["--shell", "/usr/sbin/nologin", "--home-dir"])
            .arg(home)
            .arg(&name)
            .status()
            .expect("run useradd");
        assert!(made.success(), "useradd {name}");
        // Removed from here on, whatever fails.
        let mut user = User { name, uid: 0 };
        let id = Command::new("id")
            .args(["-u", &user.name])
            .output()
            .unwrap();
        user.uid = String::from_utf8_lossy(&id.stdout).trim().parse().unwrap();
        user
    }
}

impl Drop for User {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).status();
    }
}

/// The issue's case: a user put the single file in their `~/.cargo/bin`
/// and runs `sudo ~/.cargo/bin/eatmydata ...`. Root (by sudo, with only
/// root's default sudoers: root sudoes without a password) runs a file in
/// folders the user owns, where the user planted their library in every
/// place the old search looked; half the runs with the user's environment
/// (`sudo -E`: their `HOME`, `TMPDIR` and `SUDO_USER`), half with sudo's
/// reset one. Each run as `planted_everywhere_never_loaded` checks it:
/// root's home's copy, never the plant, no sync reaching the kernel. Then
/// `sqlite3` as the issue names it: its commits' syncs under strace, eaten
/// against a control run through sudo without eatmydata, every row there.
#[test]
fn root_runs_a_users_cargo_bin_under_sudo_and_never_loads_their_library() {
    let dir = TempDir::new("sudo-cargo-bin");
    let user_home = dir.join("home/u");
    let user = User::new(&user_home);
    let bin = user_home.join(".cargo/bin");
    let tmp = user_home.join("tmp");
    fs::create_dir_all(&bin).unwrap();
    fs::create_dir_all(&tmp).unwrap();
    fs::copy(command(), bin.join("eatmydata")).unwrap();
    for path in [&user_home, &user_home.join(".cargo"), &bin, &tmp] {
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
        chown(path, Some(user.uid), Some(user.uid)).unwrap();
    }
    chown(bin.join("eatmydata"), Some(user.uid), Some(user.uid)).unwrap();
    let bin = bin.canonicalize().unwrap();
    // sudo resets the environment: root's home for the test goes through
    // by name (EATMYDATA_HOME; without it, /run/eatmydata, the machine's).
    let as_user = format!(
        "sudo -E SUDO_USER={} SUDO_UID={uid} SUDO_GID={uid}",
        user.name,
        uid = user.uid
    );
    let reset = "sudo --preserve-env=EATMYDATA_HOME";
    let users_env = |home: &Path, tmp: &Path| -> Vec<(&str, OsString)> {
        vec![
            ("HOME", home.into()),
            ("TMPDIR", tmp.into()),
            ("USER", user.name.clone().into()),
            ("LOGNAME", user.name.clone().into()),
        ]
    };
    planted_everywhere_never_loaded(
        "sudo",
        &bin,
        false,
        Setting {
            planter: user.uid,
            via: [&as_user, reset],
            env: users_env(&user_home, &tmp),
        },
    );

    // sqlite3's 200 commits, each synced, through sudo as the user typed it.
    let roots_home = RootHome::new("sudo-sqlite");
    let sql: String = std::iter::once("create table t(n);".to_owned())
        .chain((0..200).map(|n| format!("insert into t values({n});")))
        .collect();
    let eatmydata = bin.join("eatmydata");
    let traced = |label: &str, through: &[&Path]| {
        let db = user_home.join(format!("{label}.db"));
        let run = Run::new("sh")
            .args(["-c", "exec $VIA \"$@\"", "sh"])
            .args(through)
            .arg("sqlite3")
            .arg(&db)
            .arg(&sql)
            .env("VIA", &as_user)
            .env("EATMYDATA_HOME", roots_home.path())
            .trace(&["fsync", "fdatasync", "sync_file_range", "syncfs"]);
        let run = users_env(&user_home, &tmp)
            .into_iter()
            .fold(run, |run, (name, value)| run.env(name, value));
        let outcome = run.run().success();
        let rows = Command::new("sqlite3")
            .arg(&db)
            .arg("select count(*) from t")
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&rows.stdout), "200\n", "{label}");
        outcome.calls
    };
    let control = traced("control", &[]);
    assert!(control.len() >= 200, "the control's syncs: {control:?}");
    let eaten = traced("eaten", &[&eatmydata]);
    assert!(eaten.is_empty(), "syncs reached the kernel: {eaten:?}");
}
