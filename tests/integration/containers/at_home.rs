//! The runtime for an engine that hands it none of its environment, kept
//! to the test's root home. Each test process's `EATMYDATA_HOME`
//! (`common/home.rs`) reaches what the test starts by inheritance: dockerd,
//! containerd and their shims, buildah's steps. podman does not pass it:
//! its conmon starts the runtime's `create` with containers.conf's
//! `conmon_env_vars` alone, and podman's own calls (`start`, `kill`,
//! `delete`, `state`) get `XDG_RUNTIME_DIR` and at most `PATH`. So
//! the runtime that podman runs is a script that names the home and
//! executes `eatmydata-runtime`: without it, the runtime placed its
//! library, mounted its containers' reports and wrote their records in
//! the machine's `/run/eatmydata` and `/var/lib/eatmydata`. The scripts
//! live in the home, root's, and execute root's copy of the command there
//! (`common::registered_runtime`): podman runs nothing in the checkout.
//!
//! It is what an operator whose root home is not the machine's registers
//! with such an engine (docs/runtime.md). A global option of the runtime
//! naming the home would not do: containers.conf has no place for a
//! runtime's arguments (only `podman --runtime-flag` on each command line),
//! and podman runs `state` without them; CRI-O's handlers take a path and
//! no arguments either. A path reaches every call of every engine.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::home::HOME;
use crate::common::{registered_runtime, wait_until};

/// This test process's root home, as `common/home.rs` made and named it.
fn home() -> PathBuf {
    PathBuf::from(
        std::env::var_os(HOME).expect("common::home names the home (the tests run as root)"),
    )
}

/// The runtime through a script in this test process's home that names
/// the home: the runtime to give podman (`--runtime PATH`).
pub fn runtime_at_home() -> PathBuf {
    static MADE: OnceLock<PathBuf> = OnceLock::new();
    MADE.get_or_init(|| {
        let script = home().join("engines/eatmydata-runtime");
        naming_home(&script, &home(), &registered_runtime());
        script
    })
    .clone()
}

/// Points the runtime `configure podman` registered in `config` at a
/// script in this test process's home that names the home and executes
/// what was registered. The name, its table and a `--default` stay as
/// `configure` wrote them: podman still finds the runtime by name.
pub fn podman_at_home(config: &Path) {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let text = fs::read_to_string(config).unwrap();
    let entries: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("eatmydata = ["))
        .collect();
    let [entry] = entries[..] else {
        panic!("one eatmydata entry in {}: {text}", config.display());
    };
    let registered = entry.split('"').nth(1).expect("a quoted path");
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let script = home().join(format!("engines/registered-{n}"));
    naming_home(&script, &home(), Path::new(registered));
    let entry_at_home = format!("eatmydata = [\"{}\"]", script.display());
    fs::write(config, text.replacen(entry, &entry_at_home, 1)).unwrap();
}

/// The command as installed in a folder of this test process's home
/// (links to root's copy and its library), with a script naming the home
/// beside it as `eatmydata-runtime`: `eatmydata podman ...` gives podman
/// the runtime beside the command, which then keeps to the test's home.
pub fn installed_command() -> PathBuf {
    static MADE: OnceLock<PathBuf> = OnceLock::new();
    MADE.get_or_init(|| {
        let runtime = registered_runtime();
        let copies = runtime.parent().unwrap();
        let bin = home().join("client/bin");
        fs::create_dir_all(&bin).unwrap();
        for name in ["eatmydata", "libeatmydata.so"] {
            fs::hard_link(copies.join(name), bin.join(name)).expect("link root's copy");
        }
        naming_home(&bin.join("eatmydata-runtime"), &home(), &runtime);
        bin.join("eatmydata")
    })
    .clone()
}

/// Waits (a minute at most) until this test process's home holds a
/// container's record: the runtime podman ran kept to the test's home to
/// the end, through the `delete` that writes the record. Given
/// `eatmydata-runtime` itself, podman's runtime wrote it in the machine's
/// `/var/lib/eatmydata/account.jsonl` instead.
pub fn wait_for_a_record_at_home() {
    let account = home().join("account.jsonl");
    let what = format!("a container's record in {}", account.display());
    wait_until(&what, Duration::from_secs(60), || {
        fs::read_to_string(&account).is_ok_and(|text| text.lines().any(|l| !l.is_empty()))
    });
}

/// Writes at `script` a runtime that executes `runtime` with
/// `EATMYDATA_HOME` naming `home` (whole, through a rename).
pub fn naming_home(script: &Path, home: &Path, runtime: &Path) {
    let quoted = |path: &Path| {
        let text = path.to_str().expect("a UTF-8 path");
        assert!(!text.contains('\''), "a quote in {text}");
        format!("'{text}'")
    };
    let text = format!(
        "#!/bin/sh\n# The engine passes no environment: root's home named here.\n\
         {HOME}={} exec {} \"$@\"\n",
        quoted(home),
        quoted(runtime)
    );
    let folder = script.parent().unwrap();
    fs::create_dir_all(folder).unwrap();
    let partial = script.with_extension(format!("part{}", std::process::id()));
    fs::write(&partial, text).unwrap();
    fs::set_permissions(&partial, fs::Permissions::from_mode(0o755)).unwrap();
    fs::rename(&partial, script).unwrap();
}
