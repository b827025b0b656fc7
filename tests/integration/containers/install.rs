//! `eatmydata-runtime install` and `uninstall` on a node whose root is a
//! folder (`host/`), with a containerd 1.6 of the test's own configured in
//! `host/etc/containerd/config.toml` and its CRI plugin serving pods
//! (cri.py, as the kubelet). containerd is started, and restarted by the
//! installer, by one command that writes its pid file, in a mount
//! namespace where `host/usr/local` is the machine's `/usr/local`: so the
//! runtime the installer copies to the node's
//! `/usr/local/eatmydata/bin/` is where the registration says. That
//! namespace is made at each start: the loop disks the pods use are
//! mounted before the install's restart, so that containerd sees them.
//!
//! The oracle: a pod under the handler `eatmydata` flushes at most 5% of
//! what the same pod under `runc` does on a loop device; the config file's
//! bytes before install and after uninstall; containerd's pid (a second
//! install restarts nothing); the handler refused once uninstalled.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use super::cases::{DYNAMIC, SYNCS};
use super::containerd::{config_text, load_at, runc_root};
use super::cri::{self, section};
use super::daemon::{Dockerd, RunDir, StoreLock};
use super::engine::{CACHE, Engine, Job, Ran, assert_eaten, floor_args, measure, runtime};
use crate::common::wait_until;
use crate::loopfs::LoopFs;

/// The installer's arguments the DaemonSet gives too
/// (contrib/kubernetes/daemonset.yaml, checked by `kubernetes.rs`), before
/// those only a test gives: its root, and how containerd restarts here.
pub const INSTALL: [&str; 3] = ["install", "--engine", "containerd"];

/// A node: its root in a folder, its containerd running.
struct Node {
    dir: RunDir,
    _lock: StoreLock,
}

impl Node {
    /// Starts containerd on the config `config` makes of the test's own
    /// (version 2: its folders, socket and CRI section).
    fn start(label: &str, config: impl FnOnce(&Node, String) -> String) -> Node {
        let lock = StoreLock::take("containerd");
        let dir = RunDir::new(label);
        let node = Node { dir, _lock: lock };
        let root = Path::new(CACHE).join("containerd");
        let cri = section(node.dir.path(), &runc_root(&node.dir));
        let etc = node.host().join("etc/containerd");
        fs::create_dir_all(&etc).unwrap();
        let config = config(&node, config_text(&root, &node.dir, &node.socket(), &cri));
        fs::create_dir_all(node.host().join("usr/local")).unwrap();
        fs::create_dir_all(node.dir.join("pods")).unwrap();
        fs::write(node.config(), config).unwrap();
        let mut child = Command::new("/bin/sh")
            .args(["-c", &node.start_command()])
            .stdin(Stdio::null())
            .spawn()
            .expect("start containerd");
        // Reaped when it ends, so that its pid counts as gone.
        std::thread::spawn(move || child.wait());
        node.wait_answers();
        node
    }

    fn host(&self) -> PathBuf {
        self.dir.join("host")
    }

    fn config(&self) -> PathBuf {
        self.host().join("etc/containerd/config.toml")
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("containerd.sock")
    }

    fn pid_file(&self) -> PathBuf {
        self.dir.join("containerd.pid")
    }

    /// containerd in a mount namespace of its own whose /usr/local is the
    /// node's, writing its pid file (the shell's pid, which it becomes).
    fn start_command(&self) -> String {
        format!(
            "exec unshare --mount --propagation private /bin/sh -c 'mount --bind {host}/usr/local \
             /usr/local && echo $$ > {pid} && exec containerd --config {config} >> {log} 2>&1'",
            host = self.host().display(),
            pid = self.pid_file().display(),
            config = self.config().display(),
            log = self.dir.join("containerd.log").display(),
        )
    }

    fn wait_answers(&self) {
        let socket = self.socket();
        wait_until("containerd answers", Duration::from_secs(60), || {
            std::os::unix::net::UnixStream::connect(&socket).is_ok()
        });
    }

    fn pid(&self) -> i32 {
        let text = fs::read_to_string(self.pid_file()).unwrap_or_default();
        text.trim().parse().unwrap_or(0)
    }

    /// The installer, as a process on the node, with `verb`'s arguments.
    fn installer(&self, verb: &str) -> Command {
        let mut installer = Command::new(runtime());
        let args = if verb == "install" {
            &INSTALL[..]
        } else {
            &["uninstall", "--engine", "containerd"]
        };
        installer
            .args(args)
            .arg("--host-root")
            .arg(self.host())
            .arg("--restart")
            .arg("pid-file")
            .arg(self.pid_file())
            .arg("--start")
            .arg(self.start_command())
            .arg("--address")
            .arg(self.socket())
            .arg("--timeout=60")
            .stdin(Stdio::null());
        installer
    }

    /// Runs the installer to its end, asserting success; what it said.
    fn run(&self, verb: &str) -> String {
        said(
            self.installer(verb).output().expect("run the installer"),
            verb,
        )
    }
}

fn said(output: Output, verb: &str) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{verb}: {}\n{text}", output.status);
    eprintln!("{verb}:\n{text}");
    text
}

impl Drop for Node {
    fn drop(&mut self) {
        let pid = self.pid();
        if pid <= 1 {
            return;
        }
        // SAFETY: a signal to the containerd this test started (its pid
        // file's, in the test's own folder).
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let gone = || {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            stat.rsplit_once(") ")
                .is_none_or(|(_, rest)| rest.starts_with(['Z', 'X']))
        };
        for _ in 0..600 {
            if gone() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Pods on a node's containerd, under the handler `eatmydata` or `runc`.
struct Pods<'a> {
    node: &'a Node,
    image: String,
}

impl Engine for Pods<'_> {
    fn name(&self) -> &'static str {
        "containerd node"
    }

    fn image(&self) -> &str {
        &self.image
    }

    fn run(&self, disk: &LoopFs, job: &Job) -> Ran {
        cri::run_pod(
            &self.node.socket(),
            &self.node.dir.join("pods"),
            disk,
            job,
            &[],
        )
    }
}

/// `sync-dynamic loop FILE SYNCS` in a pod under `handler`.
fn pod(pods: &Pods, disk: &LoopFs, handler: &str, file: &str) -> Ran {
    let syncs = SYNCS.to_string();
    let args = [DYNAMIC, "loop", file, &syncs];
    let job = Job {
        eaten: false,
        image: pods.image(),
        env: &[],
        args: &args,
    };
    cri::pod(
        &pods.node.socket(),
        handler,
        &pods.node.dir.join("pods"),
        disk,
        &job,
        &[],
    )
}

#[test]
fn install_makes_the_handler_eat_a_pods_flushes_and_uninstall_puts_every_byte_back() {
    // Mounted before any restart, so that containerd's namespace has it.
    let disk = LoopFs::new("install-node", 64);
    let node = Node::start("install", |_, config| config);
    let before = fs::read(node.config()).unwrap();
    let first = node.pid();

    let said = node.run("install");
    let installed = node.pid();
    assert_ne!(installed, first, "install restarted containerd: {said}");
    assert!(said.contains("reports the handler eatmydata"), "{said}");
    assert!(
        node.host()
            .join("usr/local/eatmydata/bin/eatmydata-runtime")
            .exists()
    );

    let image = load_at(&node.socket());
    let pods = Pods { node: &node, image };
    let syncs = SYNCS.to_string();
    let control_args = [DYNAMIC, "loop", "/data/control", &syncs];
    let eaten_args = [DYNAMIC, "loop", "/data/eaten", &syncs];
    let job = |eaten, args| Job {
        eaten,
        image: &pods.image,
        env: &[],
        args,
    };
    let floor_args = floor_args(&disk, &[DYNAMIC, "loop", "/data/floor", &syncs]);
    let control = measure(&pods, &disk, &job(false, &control_args));
    let floor = measure(&pods, &disk, &job(false, &floor_args));
    let eaten = measure(&pods, &disk, &job(true, &eaten_args));
    assert_eaten(
        pods.name(),
        "installed, dynamic C",
        [&control, &floor, &eaten],
        SYNCS.into(),
    );

    // Nothing changed: nothing restarted.
    let again = node.run("install");
    assert_eq!(node.pid(), installed, "{again}");
    assert!(again.contains("nothing restarted"), "{again}");

    let said = node.run("uninstall");
    assert_ne!(node.pid(), installed, "{said}");
    assert_eq!(fs::read(node.config()).unwrap(), before, "{said}");
    assert!(said.contains("no longer reports the handler"), "{said}");
    assert!(!node.host().join("usr/local/eatmydata").exists());
    let refused = pod(&pods, &disk, "eatmydata", "/data/after");
    assert_ne!(
        refused.status,
        Some(0),
        "a pod under a handler gone: {refused:?}"
    );
    let plain = pod(&pods, &disk, "runc", "/data/plain");
    assert_eq!(plain.status, Some(0), "{plain:?}");

    let again = node.run("uninstall");
    assert!(again.contains("nothing restarted"), "{again}");
    assert_eq!(fs::read(node.config()).unwrap(), before);
}

#[test]
fn two_installers_at_once_on_a_config_with_comments_handlers_and_imports() {
    let mut imported = PathBuf::new();
    let mut theirs = String::new();
    let node = Node::start("install-theirs", |node, config| {
        imported = node.host().join("etc/containerd/conf.d/10-theirs.toml");
        fs::create_dir_all(imported.parent().unwrap()).unwrap();
        let timeout = "[timeouts]\n  \"io.containerd.timeout.shim.cleanup\" = \"5s\"\n";
        fs::write(&imported, format!("version = 2\n{timeout}")).unwrap();
        // Theirs: comments, an import, a second handler.
        theirs = format!(
            "# The node's own config, kept as it is.\nversion = 2\nimports = [\"{}\"] # theirs\n\
             {}\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.other] # another\n  \
             runtime_type = \"io.containerd.runc.v2\"\n",
            imported.with_file_name("*.toml").display(),
            config.strip_prefix("version = 2\n").unwrap(),
        );
        theirs.clone()
    });
    let first = node.pid();
    let both: Vec<_> = (0..2)
        .map(|_| {
            let mut installer = node.installer("install");
            installer.stdout(Stdio::piped()).stderr(Stdio::piped());
            installer.spawn().expect("start the installer")
        })
        .collect();
    let said: Vec<String> = both
        .into_iter()
        .map(|child| said(child.wait_with_output().unwrap(), "install"))
        .collect();
    let restarts = said
        .iter()
        .filter(|s| s.contains("Restarted containerd"))
        .count();
    assert_eq!(restarts, 1, "{said:?}");
    assert!(
        said.iter()
            .all(|s| s.contains("reports the handler eatmydata")),
        "{said:?}"
    );
    assert_ne!(node.pid(), first);
    let installed = fs::read_to_string(node.config()).unwrap();
    assert!(installed.starts_with(&theirs), "{installed}");
    assert!(installed.contains("BinaryName = \"/usr/local/eatmydata/bin/eatmydata-runtime\""));

    let said = node.run("uninstall");
    assert_eq!(fs::read_to_string(node.config()).unwrap(), theirs, "{said}");
    assert!(imported.exists());
}

/// A Docker host's daemon.json before install.
const THEIRS: &str = "{\n    \"debug\": false\n}\n";

/// A Docker host in `dir`: its root (`host/`), its daemon.json (holding
/// [`THEIRS`]), and a dockerd of the test's own reading it.
fn docker_host(dir: &RunDir) -> (PathBuf, PathBuf, Dockerd) {
    let host = dir.join("host");
    let config = host.join("etc/docker/daemon.json");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, THEIRS).unwrap();
    let dockerd = Dockerd::start(
        dir.path(),
        &config,
        &dir.join("data"),
        &dir.join("exec"),
        None,
    );
    (host, config, dockerd)
}

/// The installer on a Docker host, as `docker run --privileged --pid=host
/// -v /:/host IMAGE install --host-root /host --engine docker` runs it
/// (here as a process, on a folder): dockerd reloaded, not restarted, and
/// its `GET /info` lists the runtime; uninstall gives daemon.json back.
#[test]
fn on_a_docker_host_install_reloads_dockerd_and_uninstall_gives_daemon_json_back() {
    let dir = RunDir::new("install-docker");
    let (host, config, dockerd) = docker_host(&dir);
    let theirs = THEIRS;
    let pid = dockerd.daemon.pid();
    let run = |verb: &str| {
        let mut installer = Command::new(runtime());
        installer
            .args([verb, "--engine", "docker", "--host-root"])
            .arg(&host)
            .args(["--restart", "pid-file"])
            .arg(dir.join("dockerd.pid"))
            .arg("--address")
            .arg(&dockerd.socket)
            .arg("--timeout=60")
            .stdin(Stdio::null());
        said(installer.output().expect("run the installer"), verb)
    };
    let installed = run("install");
    assert!(
        installed.contains(&format!("Reloaded dockerd (SIGHUP to {pid})")),
        "{installed}"
    );
    assert!(
        installed.contains("reports the handler eatmydata"),
        "{installed}"
    );
    let again = run("install");
    assert!(again.contains("nothing restarted"), "{again}");
    let removed = run("uninstall");
    assert!(
        removed.contains("dockerd lists eatmydata until its next restart"),
        "{removed}"
    );
    assert_eq!(fs::read_to_string(&config).unwrap(), theirs);
    assert_eq!(dockerd.daemon.pid(), pid);
}

/// The installer heals: a first install on a Docker host whose reload
/// failed (a pid file that names no dockerd, as a wrong `--restart`
/// leaves it) changed daemon.json and left dockerd without the handler;
/// before, every later run said "nothing restarted" and timed out waiting
/// for it. Now the next run sees dockerd does not report the handler,
/// reloads it, and reports it ready. `--restart none` registers and
/// exits at once, saying what to restart.
#[test]
fn a_second_install_heals_a_failed_reload_and_restart_none_returns_at_once() {
    let dir = RunDir::new("install-heal");
    let (host, config, dockerd) = docker_host(&dir);
    let theirs = THEIRS;
    let pid = dockerd.daemon.pid();
    let installer = |verb: &str, restart: &[&str]| {
        let mut installer = Command::new(runtime());
        installer
            .args([verb, "--engine", "docker", "--host-root"])
            .arg(&host)
            .args(restart)
            .arg("--address")
            .arg(&dockerd.socket)
            .arg("--timeout=20")
            .stdin(Stdio::null());
        installer.output().expect("run the installer")
    };
    let pid_file = dir.join("dockerd.pid");
    let pid_file = pid_file.to_str().unwrap();
    let right = ["--restart", "pid-file", pid_file];

    // A first install whose reload fails (a pid file naming no dockerd):
    // it fails, daemon.json changed, dockerd without the handler.
    let wrong = dir.join("none.pid");
    let failed = installer(
        "install",
        &["--restart", "pid-file", wrong.to_str().unwrap()],
    );
    assert_eq!(
        failed.status.code(),
        Some(125),
        "{}",
        String::from_utf8_lossy(&failed.stderr)
    );
    assert_ne!(fs::read_to_string(&config).unwrap(), theirs);
    // The next run: the files say so already, dockerd does not: reloaded.
    let healed = said(installer("install", &right), "install");
    assert!(
        healed.contains("already register eatmydata, but dockerd does not report the handler"),
        "{healed}"
    );
    assert!(
        healed.contains(&format!("Reloaded dockerd (SIGHUP to {pid})")),
        "{healed}"
    );
    assert!(healed.contains("reports the handler eatmydata"), "{healed}");
    // And the one after it has nothing to do.
    let again = said(installer("install", &right), "install");
    assert!(again.contains("nothing restarted"), "{again}");
    let removed = said(installer("uninstall", &right), "uninstall");
    assert!(removed.contains("Put "), "{removed}");
    assert_eq!(fs::read_to_string(&config).unwrap(), theirs);

    // --restart none: registered (or put back), said, no wait.
    for verb in ["install", "uninstall"] {
        let started = std::time::Instant::now();
        let none = said(installer(verb, &["--restart", "none"]), verb);
        assert!(started.elapsed() < Duration::from_secs(15), "{none}");
        assert!(
            none.contains("--restart none: ") && none.contains("once you reload it"),
            "{none}"
        );
    }
    assert_eq!(fs::read_to_string(&config).unwrap(), theirs);
    assert_eq!(dockerd.daemon.pid(), pid);
}

/// Every file and folder under `root`, sorted.
fn listing(root: &Path) -> Vec<PathBuf> {
    let mut seen = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(path) = todo.pop() {
        if path.is_dir() && !path.is_symlink() {
            todo.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
        seen.push(path);
    }
    seen.sort();
    seen
}

/// A host root in a folder every user may write (as `/tmp/H`), where the
/// library may not be placed: refused before anything is made, naming
/// the folder judged. Before: the command and its link were left under
/// H, and the message named `/usr/local/...`. The control: the same tree
/// in a folder of root's installs, then uninstalls to nothing of ours.
#[test]
fn a_host_root_whose_parent_others_may_write_is_refused_with_nothing_made() {
    use std::os::unix::fs::PermissionsExt;
    let dir = RunDir::new("install-open-parent");
    let open = dir.join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o1777)).unwrap();
    let installer = |host: &Path, verb: &str| {
        let args = ["--engine", "docker", "--restart", "none"];
        Command::new(runtime())
            .arg(verb)
            .args(args)
            .arg("--host-root")
            .arg(host)
            .stdin(Stdio::null())
            .output()
            .expect("run the installer")
    };
    for parent in [&open, dir.path()] {
        let host = parent.join("host");
        fs::create_dir_all(host.join("etc/docker")).unwrap();
        fs::write(host.join("etc/docker/daemon.json"), "{}\n").unwrap();
        let before = listing(&host);
        let output = installer(&host, "install");
        if *parent == open {
            let text = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(125), "{text}");
            assert!(
                text.starts_with(&format!(
                    "eatmydata: cannot install into {}: {} is writable by every user",
                    host.join("usr/local/eatmydata").display(),
                    open.display()
                )),
                "{text}"
            );
            assert!(output.stdout.is_empty(), "{}", said(output, "install"));
            assert_eq!(listing(&host), before, "install left something");
        } else {
            said(output, "install");
            assert!(host.join("usr/local/eatmydata/bin/eatmydata").is_file());
            said(installer(&host, "uninstall"), "uninstall");
            assert!(!host.join("usr/local/eatmydata").exists());
        }
    }
}
