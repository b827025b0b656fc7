//! `eatmydata-runtime` on OCI bundles of our own, run by runc and crun
//! directly, as an engine's shim runs them: beside a control run by the
//! real runtime alone, the flush counter of a loop device bind-mounted into
//! the container at `/data` is the oracle. The engines themselves (dockerd,
//! podman, containerd) are tested in `containers/`.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::common::{TempDir, command, musl_root};
use crate::loopfs::LoopFs;

mod barrier; // the build-step barrier: links planted since create not followed; the engine's switch alone
mod devices; // a device node as entry program or interpreter, never opened (strace)
mod edits; // what the edit leaves out, and where: i386, ASan, static, /dev, /opt, userns, hooks
mod exec; // exec process files as a file, /dev/stdin and <(...), beside runc; a planted name
mod failures; // bad specs refused with the container never started; the log line
mod home; // the test's own EATMYDATA_HOME: the account there, the machine's folders untouched
mod newcomer; // the runtime alone or --help, a typo, a user not root: our words beside runc's
mod runc; // dynamic and static programs, Docker's profile, exec, the off switch
mod verbs; // runc's help, lines we do not read, a bundle without its spec; bounded specs; log lines

/// Where the runtime mounts the library.
const MOUNTED: &str = "/dev/.eatmydata/libeatmydata.so";

/// `eatmydata-runtime`: a link to the command under test, as installed.
fn runtime() -> PathBuf {
    static MADE: std::sync::OnceLock<(TempDir, PathBuf)> = std::sync::OnceLock::new();
    let (_, link) = MADE.get_or_init(|| {
        let dir = TempDir::new("runtime-link");
        let link = dir.join("eatmydata-runtime");
        symlink(command(), &link).expect("link eatmydata-runtime");
        (dir, link)
    });
    link.clone()
}

/// Which real runtime runs the container, and whether ours is in front.
#[derive(Clone, Copy)]
enum Via {
    Alone(&'static str),
    Ours(&'static str),
}

/// A bundle: a musl root holding `programs` in `/bin` (musl's loader, no
/// library, no glibc), `/data` bound to a loop file system, and a state
/// folder of its own for the runtime's `--root`.
struct Bundle {
    dir: TempDir,
    /// The spec every run starts from (`runc spec`, made rootless-free).
    base: Value,
}

impl Bundle {
    fn new(label: &str, programs: &[&Path], data: &LoopFs) -> Bundle {
        let dir = TempDir::new(label);
        musl_root(&dir.join("rootfs"), programs);
        // Only musl and the programs: the library comes from the runtime.
        fs::remove_file(dir.join("rootfs/bin/eatmydata")).expect("remove the command");
        fs::create_dir_all(dir.join("state")).unwrap();
        let status = Command::new("runc")
            .arg("spec")
            .current_dir(dir.path())
            .status()
            .expect("run runc spec");
        assert!(status.success(), "runc spec");
        let mut base: Value =
            serde_json::from_slice(&fs::read(dir.join("config.json")).unwrap()).unwrap();
        base["process"]["terminal"] = json!(false);
        base["root"]["readonly"] = json!(false);
        base["mounts"].as_array_mut().unwrap().push(json!({
            "destination": "/data", "type": "bind",
            "source": data.path(), "options": ["rbind", "rw"]
        }));
        Bundle { dir, base }
    }

    /// Writes the spec for `args`, with `change` made to it.
    fn write_spec(&self, args: &[&str], change: impl FnOnce(&mut Value)) {
        let mut spec = self.base.clone();
        spec["process"]["args"] = json!(args);
        change(&mut spec);
        fs::write(self.config(), serde_json::to_vec_pretty(&spec).unwrap()).unwrap();
    }

    fn config(&self) -> PathBuf {
        self.dir.join("config.json")
    }

    fn state(&self) -> PathBuf {
        self.dir.join("state")
    }

    /// The line for `verb_args` through `via`, with the shims' globals.
    fn command(&self, via: Via, log: Option<&Path>) -> Command {
        let mut command = match via {
            Via::Alone(real) => Command::new(real),
            Via::Ours(real) => {
                let mut ours = Command::new(runtime());
                ours.arg(format!("--eatmydata-runtime={real}"));
                ours
            }
        };
        command.arg("--root").arg(self.state());
        if matches!(via, Via::Alone("crun") | Via::Ours("crun")) {
            // crun refuses this machine's hybrid cgroups; a spec without
            // limits needs none.
            command.arg("--cgroup-manager=disabled");
        }
        if let Some(log) = log {
            command.arg("--log").arg(log).args(["--log-format", "json"]);
        }
        command
    }

    /// `run --bundle DIR ID` in the foreground, to its end; the container's
    /// state is gone after it (`runc run` deletes it). A foreground `run`
    /// is how BuildKit runs a build step, which gets the build-step barrier
    /// (one `syncfs` per file system at its end): these tests count a
    /// container's own syncs, so the spec takes the barrier away
    /// (`io.eatmydata.barrier=0`, given to runc alone too, so that both
    /// runs see the same spec). The barrier is `containers::barrier`'s.
    fn run(&self, via: Via, args: &[&str], change: impl FnOnce(&mut Value)) -> Output {
        self.write_spec(args, |spec| {
            change(spec);
            without_barrier(spec);
        });
        let id = new_id();
        let output = self
            .command(via, None)
            .args(["run", "--bundle"])
            .arg(self.dir.path())
            .arg(&id)
            .stdin(Stdio::null())
            .output()
            .expect("run the runtime");
        Container::gone(self, via, &id);
        output
    }
}

/// Takes the build-step barrier away from `spec` (`io.eatmydata.barrier`
/// off), unless it says otherwise: see [`Bundle::run`].
fn without_barrier(spec: &mut Value) {
    let annotations = spec
        .as_object_mut()
        .expect("a spec is an object")
        .entry("annotations")
        .or_insert_with(|| json!({}));
    if let Some(annotations) = annotations.as_object_mut() {
        annotations
            .entry("io.eatmydata.barrier")
            .or_insert_with(|| json!("0"));
    }
}

/// Where `program`, given to [`Bundle::new`], is inside the container.
fn inside(program: &Path) -> String {
    format!("/bin/{}", program.file_name().unwrap().to_str().unwrap())
}

/// A container id of this test process's own.
fn new_id() -> String {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    format!("eatmydata-test-{}-{n}", std::process::id())
}

/// A container left running (`run --detach`), deleted by force when
/// dropped, also when the test fails.
struct Container<'a> {
    bundle: &'a Bundle,
    via: Via,
    id: String,
    /// Its stdin: the `hold` probe ends when this closes.
    stdin: Option<std::process::ChildStdin>,
}

impl<'a> Container<'a> {
    fn start(bundle: &'a Bundle, via: Via, hold: &str) -> Container<'a> {
        bundle.write_spec(&[hold], |_| {});
        let id = new_id();
        let mut child = bundle
            .command(via, None)
            .args(["run", "--detach", "--bundle"])
            .arg(bundle.dir.path())
            .arg(&id)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("run the runtime");
        let stdin = child.stdin.take();
        let status = child.wait().expect("wait for the runtime");
        assert!(status.success(), "run --detach: {status}");
        Container {
            bundle,
            via,
            id,
            stdin,
        }
    }

    /// `exec --process FILE ID`, as `docker exec` runs it, through `via`.
    fn exec(&self, via: Via, process: &Value) -> Output {
        let file = self.bundle.dir.join(format!("process-{}.json", new_id()));
        fs::write(&file, serde_json::to_vec(process).unwrap()).unwrap();
        let output = self
            .bundle
            .command(via, None)
            .arg("exec")
            .arg("--process")
            .arg(&file)
            .arg(&self.id)
            .stdin(Stdio::null())
            .output()
            .expect("run the runtime");
        let _ = fs::remove_file(file);
        output
    }

    fn gone(bundle: &Bundle, via: Via, id: &str) {
        let real = match via {
            Via::Alone(real) | Via::Ours(real) => real,
        };
        let _ = Command::new(real)
            .arg("--root")
            .arg(bundle.state())
            .args(["delete", "--force", id])
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for Container<'_> {
    fn drop(&mut self) {
        drop(self.stdin.take());
        Container::gone(self.bundle, self.via, &self.id);
    }
}

/// Output and status as one text, for messages.
fn text(output: &Output) -> String {
    format!(
        "{}: {}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
