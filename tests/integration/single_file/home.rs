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

use std::fs;
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::Path;

use super::{USER, carried_hash, fsyncs_alone};
use crate::common::{RootHome, Run, TempDir, command, probe};

/// Runs of the command per place.
const RUNS: usize = 40;

/// The shell that stages it all and runs the command `RUNS` times:
/// `$0` the stage, `$1` the command's folder, `$2` its prefix, `$3`
/// "mount" for tmpfs on `/tmp` and `/var/tmp`, `$4` the multiarch name.
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
  strace -f -qq -e trace=fsync,fdatasync,sync_file_range,syncfs -o "$stage/out/trace-$i" \
    "$bin/eatmydata" -v "$stage/sync_calls" "$stage/out/data-$i" \
    >"$stage/out/stdout-$i" 2>"$stage/out/stderr-$i" || echo "$i: exit $?" >>"$stage/out/failed"
  i=$((i+1))
done
"#;

/// Stages the command, the probe and the plant in a folder of root's,
/// runs `SCRIPT` for the command in `bin` (prefix its parent), and checks
/// each run.
fn planted_everywhere_never_loaded(label: &str, bin: &Path, mount: bool) {
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
    run.args(["-c", SCRIPT])
        .arg(&stage)
        .arg(bin)
        .arg(prefix)
        .arg(if mount { "mount" } else { "none" })
        .arg(&multiarch)
        .env("USER_ID", USER.to_string())
        .env("PLACED", &placed)
        .env("RUNS", RUNS.to_string())
        .env("EATMYDATA_HOME", &roots_home)
        .env("TMPDIR", "")
        .run()
        .success();

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
    planted_everywhere_never_loaded("tmp", bin, true);
}

#[test]
fn root_runs_it_from_var_tmp_and_never_loads_a_planted_library() {
    let bin = Path::new("/var/tmp/x");
    planted_everywhere_never_loaded("var-tmp", bin, true);
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
    planted_everywhere_never_loaded("cargo", &bin, false);
}
