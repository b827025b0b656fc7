//! `eatmydata-runtime configure ENGINE`: the engines' own files, as a
//! machine has them, come out with eatmydata registered and every other
//! byte in place; and the engines themselves read what it wrote.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use std::sync::OnceLock;

use crate::common::{TempDir, command, probe, registered_runtime};

mod buildkit; // docker --default on Docker 26: BuildKit's drop-in, read by systemd; --remove takes it
mod check; // eatmydata-runtime check alone: ready, or status 69 and why
mod closed_stdout; // a reader that goes (| head) stops nothing: the file written, dockerd told
mod copied; // run from another user's folder: the copy is the program running, not its name's file
mod dockerd; // a dockerd of the tests' own lists the runtime and runs a container through it
mod engines; // containerd and podman read the runtime it registered
mod files; // dry runs, files it cannot parse, missing files, the link, bad usage
mod kept; // a machine's own files: only its keys change, once, with a backup
mod reach; // a cargo install registered by root: reached by name on sudo's PATH; what --remove leaves, said
mod refused; // a FIFO or a folder as --config, a planted eatmydata-runtime: refused at once
mod removed; // --remove gives back each engine's file as it was, once, with a dry run

/// Where the tests register the runtime: `configure` registers only a
/// file that is there, is this command, and root may run (root's, in a
/// chain of root's folders): root's copy in the test process's home
/// (`common::registered_runtime`), wherever the checkout is.
pub const RUNTIME: Runtime = Runtime;

/// The path of [`RUNTIME`], as text.
pub struct Runtime;

impl Runtime {
    fn path() -> &'static str {
        static PATH: OnceLock<String> = OnceLock::new();
        PATH.get_or_init(|| registered_runtime().to_str().unwrap().to_owned())
    }
}

impl std::ops::Deref for Runtime {
    type Target = str;
    fn deref(&self) -> &str {
        Runtime::path()
    }
}

impl std::fmt::Display for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(Runtime::path())
    }
}

/// A link named `eatmydata-runtime` to the command under test, in `dir`.
pub fn runtime_in(dir: &Path) -> PathBuf {
    let link = dir.join("eatmydata-runtime");
    if link.symlink_metadata().is_err() {
        symlink(command(), &link).unwrap();
    }
    link
}

/// A container root in `dir` of one static program, `/show_args`, which
/// says what `LD_PRELOAD` it got: `preload (unset)` or `preload PATH`.
pub fn show_args_root(dir: &Path) -> PathBuf {
    let root = dir.join("root");
    fs::create_dir(&root).unwrap();
    fs::copy(probe("show_args", &["-static"]), root.join("show_args")).unwrap();
    root
}

/// `eatmydata-runtime configure ARGS...` run through a link in `dir`;
/// docker's systemd drop-in (Docker 26 and later) goes to `dir/systemd`
/// unless ARGS say where, never into the machine's own.
pub fn configure(dir: &Path, args: &[&str]) -> Output {
    let mut args = args.to_vec();
    let systemd = dir.join("systemd");
    if args.first() == Some(&"docker") && !args.contains(&"--systemd-dir") {
        args.extend(["--systemd-dir", systemd.to_str().unwrap()]);
    }
    Command::new(runtime_in(dir))
        .arg("configure")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run eatmydata-runtime configure")
}

/// As [`configure`], asserting success; its stdout.
pub fn configure_ok(dir: &Path, args: &[&str]) -> String {
    let output = configure(dir, args);
    assert!(
        output.status.success(),
        "configure {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `containerd config default` (what a node starts from) with comments of
/// its own and the systemd cgroup driver a kubelet asks for.
pub fn containerd_config() -> String {
    let output = Command::new("containerd")
        .args(["config", "default"])
        .output()
        .expect("run containerd config default");
    assert!(output.status.success());
    let default = String::from_utf8(output.stdout).unwrap();
    assert!(default.contains("SystemdCgroup = false"), "{default}");
    format!(
        "# containerd on the CI nodes; see the runbook\n{}",
        default.replace(
            "SystemdCgroup = false",
            "SystemdCgroup = true # the kubelet's cgroup driver"
        )
    )
}

/// Debian's own `containers.conf` (all comments and section headers) with
/// settings of the machine's own.
pub fn containers_conf() -> String {
    let shipped = fs::read_to_string("/usr/share/containers/containers.conf")
        .expect("podman's /usr/share/containers/containers.conf");
    let theirs = shipped.replacen(
        "[engine]\n",
        "[engine]\ncgroup_manager = \"cgroupfs\" # no systemd here\n\
         env = [\"http_proxy=http://proxy.example:3128\"]\n",
        1,
    );
    assert_ne!(theirs, shipped, "no [engine] table in containers.conf");
    theirs
}

/// A `daemon.json` as Docker's documentation writes one, with keys and a
/// runtime of its own.
pub const DAEMON_JSON: &str = r#"{
    "log-driver": "json-file",
    "log-opts": {
        "max-size": "10m",
        "max-file": "3"
    },
    "registry-mirrors": [
        "https://mirror.example"
    ],
    "runtimes": {
        "nvidia": {
            "path": "nvidia-container-runtime",
            "runtimeArgs": []
        }
    },
    "storage-driver": "overlay2"
}
"#;

#[test]
fn the_runtimes_help_names_configure_and_its_own_options() {
    let dir = TempDir::new("runtime-help");
    let output = Command::new(runtime_in(dir.path()))
        .arg("--help")
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(
        help.starts_with("Usage: eatmydata-runtime [--eatmydata-runtime=NAME|PATH] RUNC-ARGS...\n")
    );
    for name in [
        "configure ENGINE",
        "EATMYDATA_RUNTIME",
        "EATMYDATA_DISABLE",
        "/dev/.eatmydata/libeatmydata.so",
    ] {
        assert!(help.contains(name), "{name} not in {help}");
    }
    let configure = configure_ok(dir.path(), &["--help"]);
    for option in [
        "--default",
        "--remove",
        "--pid-file",
        "--docker-version",
        "--systemd-dir",
        "--dry-run",
        "--config",
        "--runtime-path",
        "--real-runtime",
    ] {
        assert!(
            configure.contains(&format!("  {option}")),
            "{option} not in {configure}"
        );
    }
    // Control: the command under its own name has its own help.
    let plain = Command::new(command()).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&plain.stdout).starts_with("Usage: eatmydata [OPTIONS]"));
}
