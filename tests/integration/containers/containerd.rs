//! containerd started by the test, on its own config, root, state and
//! socket, and containers run through it with `ctr`: the runtime named as
//! the runc shim's `BinaryName` option (`ctr run --runc-binary`, the
//! option a Kubernetes node's RuntimeClass handler sets on the shim), the
//! control with the shim's default, runc. Docker's tests run their dockerd
//! on one of these too, so that no system containerd is ever used.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::cases::{self, GO, STATIC};
use super::daemon::{Daemon, RunDir, StoreLock};
use super::engine::{CACHE, Engine, Job, Ran, register, runtime};
use super::image::test_image;
use crate::loopfs::LoopFs;

/// The namespace the tests' containers and images live in: the CRI
/// plugin's, so that one import serves `ctr` and the CRI alike.
pub const NAMESPACE: &str = "k8s.io";

/// A containerd of the test's own, stopped by its pid when dropped, after
/// every task left in it is killed and deleted.
pub struct Containerd {
    daemon: Daemon,
    pub socket: PathBuf,
    dir: RunDir,
}

impl Containerd {
    /// Starts one whose store is `root` (state, sockets and log in a fresh
    /// folder under /run), without its CRI plugin.
    pub fn start(label: &str, root: &Path) -> Containerd {
        Containerd::start_with(label, root, |_| None)
    }

    /// The same, with the CRI plugin when `cri` gives its section of the
    /// config (it is given the folder, for the runc root and logs); the
    /// runtime is then registered as its handler `eatmydata` by
    /// `eatmydata-runtime configure containerd`.
    pub fn start_with(
        label: &str,
        root: &Path,
        cri: impl FnOnce(&RunDir) -> Option<String>,
    ) -> Containerd {
        Containerd::start_with_env(label, root, &[], cri)
    }

    /// The same, with `env` in containerd's environment, which its shims
    /// and their runtimes inherit.
    pub fn start_with_env(
        label: &str,
        root: &Path,
        env: &[(&str, &Path)],
        cri: impl FnOnce(&RunDir) -> Option<String>,
    ) -> Containerd {
        let dir = RunDir::new(label);
        let section = cri(&dir);
        let plugins = match &section {
            // No CRI plugin: it wants CNI.
            None => "disabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n",
            Some(section) => section,
        };
        let socket = dir.join("containerd.sock");
        let config = dir.join("config.toml");
        fs::write(&config, config_text(root, &dir, &socket, plugins))
            .expect("write containerd's config");
        if section.is_some() {
            register("containerd", &config);
        }
        let mut command = Command::new("containerd");
        command.arg("--config").arg(&config);
        command.envs(env.iter().copied());
        let daemon = Daemon::start("containerd", command, &socket, dir.join("log"));
        Containerd {
            daemon,
            socket,
            dir,
        }
    }

    /// The `--root` of the runc (or runtime) its shims run.
    pub fn runc_root(&self) -> PathBuf {
        runc_root(&self.dir)
    }

    /// `ctr` on this containerd, in `namespace`.
    pub fn ctr(&self, namespace: &str) -> Command {
        let mut ctr = Command::new("ctr");
        ctr.arg("--address")
            .arg(&self.socket)
            .args(["-n", namespace]);
        ctr
    }

    fn lines(&self, namespace: &str, args: &[&str]) -> Vec<String> {
        let output = self.ctr(namespace).args(args).output().expect("run ctr");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for Containerd {
    fn drop(&mut self) {
        // Shims outlive containerd: end every task first, so that they go.
        for namespace in self.lines("default", &["namespaces", "ls", "-q"]) {
            for task in self.lines(&namespace, &["tasks", "ls", "-q"]) {
                let quiet = |args: &[&str]| {
                    let _ = self
                        .ctr(&namespace)
                        .args(args)
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .status();
                };
                quiet(&["tasks", "kill", "-s", "SIGKILL", &task]);
                quiet(&["tasks", "delete", "-f", &task]);
                quiet(&["containers", "delete", &task]);
            }
        }
        eprintln!("containerd {}: stopping", self.daemon.pid());
    }
}

/// A config (version 2) with its store in `root`, its state in `dir`, its
/// socket at `socket`, no debug or metrics listener, and `plugins` after.
pub fn config_text(root: &Path, dir: &RunDir, socket: &Path, plugins: &str) -> String {
    fs::create_dir_all(root).expect("make containerd's root");
    format!(
        "version = 2\nroot = \"{root}\"\nstate = \"{state}\"\n\
         [grpc]\n  address = \"{socket}\"\n[debug]\n  address = \"\"\n\
         [metrics]\n  address = \"\"\n\
         [plugins.\"io.containerd.internal.v1.opt\"]\n  path = \"{root}/opt\"\n{plugins}",
        root = root.display(),
        state = dir.join("state").display(),
        socket = socket.display(),
    )
}

/// The runc root of a containerd whose folder is `dir`.
pub fn runc_root(dir: &RunDir) -> PathBuf {
    dir.join("runc")
}

/// Loads the test image into `containerd`; its name there.
pub fn load(containerd: &Containerd) -> String {
    load_at(&containerd.socket)
}

/// Loads the test image into the containerd on `socket`; its name there.
pub fn load_at(socket: &Path) -> String {
    let image = test_image();
    let socket = socket.display().to_string();
    let ctr = format!("ctr --address '{socket}' -n {NAMESPACE}");
    // containerd names the archive's images docker.io/...
    let plain = format!("docker.io/{}", image.plain);
    image.load_unless(
        &format!("{ctr} images ls -q | grep -qx '{plain}'"),
        // The store is the tests' own: all it holds is older test images.
        &format!("{ctr} images ls -q"),
        &format!("{ctr} images rm --sync"),
        &format!("{ctr} images import -"),
        &[],
    );
    plain
}

/// The engine for the cases: `ctr run` on a private containerd.
struct Ctr {
    containerd: Containerd,
    image: String,
    _lock: StoreLock,
}

impl Ctr {
    fn start() -> Ctr {
        let lock = StoreLock::take("containerd");
        let containerd = Containerd::start("containerd", &Path::new(CACHE).join("containerd"));
        let image = load(&containerd);
        Ctr {
            containerd,
            image,
            _lock: lock,
        }
    }
}

impl Engine for Ctr {
    fn name(&self) -> &'static str {
        "containerd"
    }

    fn image(&self) -> &str {
        &self.image
    }

    fn run(&self, disk: &LoopFs, job: &Job) -> Ran {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let id = format!(
            "c{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        );
        let mut ctr = self.containerd.ctr(NAMESPACE);
        // runc's state in the test's folder, not /run/containerd/runc.
        ctr.args(["run", "--rm", "--runc-root"])
            .arg(self.containerd.runc_root());
        if job.eaten {
            ctr.arg("--runc-binary").arg(runtime());
        }
        let volume = format!(
            "type=bind,src={},dst=/data,options=rbind:rw",
            disk.path().display()
        );
        ctr.args(["--mount", &volume]);
        for env in job.env {
            ctr.args(["--env", env]);
        }
        ctr.arg(job.image).arg(&id).args(job.args);
        ctr.stdin(Stdio::null()).output().expect("run ctr").into()
    }
}

#[test]
fn a_postgresql_container_through_the_shims_binary_name() {
    cases::server(&Ctr::start(), "postgres");
}

#[test]
fn static_go_and_disabled_containers_through_the_shims_binary_name() {
    let ctr = Ctr::start();
    cases::program(&ctr, "static C", STATIC);
    cases::program(&ctr, "Go", GO);
    cases::disabled(&ctr);
}
