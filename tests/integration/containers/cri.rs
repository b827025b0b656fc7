//! containerd's CRI plugin, as a Kubernetes node runs it: the runtime
//! registered in containerd's config as a runtime handler of the runc shim
//! (`BinaryName`, what a `RuntimeClass` names) by `eatmydata-runtime
//! configure containerd`, and each container run in a
//! pod of its own by `cri.py` (a CRI client, making the kubelet's calls),
//! beside the same pod under the handler `runc`. The off switch by
//! annotation reaches the runtime only through the handler's
//! `pod_annotations` and `container_annotations`, which `configure`
//! writes: a pod annotated `io.eatmydata.disable: "1"` flushes as its
//! control does, beside the eaten ones.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::DISABLE;
use super::cases::{self, DYNAMIC, STATIC};
use super::containerd::{Containerd, load, runc_root};
use super::daemon::StoreLock;
use super::engine::{CACHE, Engine, Job, Ran};
use super::image::test_image;
use crate::loopfs::LoopFs;

/// The venv `scripts/setup-test-deps` makes, with grpcio.
const PYTHON: &str = "/var/tmp/eatmydata-venv/bin/python";

/// The CRI plugin's section of containerd's config: the pause image, no
/// CNI, the stream server on loopback, and the handler runc (registration
/// adds eatmydata beside it, with runc's options). The
/// sandbox's oom_score_adj (-998) is kept no lower than containerd's own,
/// which a test may not lower.
pub fn section(dir: &Path, runc: &Path) -> String {
    let cri = "plugins.\"io.containerd.grpc.v1.cri\"";
    let pause = format!("docker.io/{}", test_image().pause);
    format!(
        "[{cri}]\n  sandbox_image = \"{pause}\"\n  stream_server_address = \"127.0.0.1\"\n  \
         stream_server_port = \"0\"\n  restrict_oom_score_adj = true\n\
         [{cri}.cni]\n  bin_dir = \"{cni}/bin\"\n  conf_dir = \"{cni}/conf\"\n\
         [{cri}.containerd]\n  default_runtime_name = \"runc\"\n\
         [{cri}.containerd.runtimes.runc]\n  runtime_type = \"io.containerd.runc.v2\"\n\
         [{cri}.containerd.runtimes.runc.options]\n  Root = \"{runc}\"\n",
        cni = dir.join("cni").display(),
        runc = runc.display(),
    )
}

struct Cri {
    containerd: Containerd,
    image: String,
    logs: PathBuf,
    _lock: StoreLock,
}

impl Cri {
    fn start() -> Cri {
        let lock = StoreLock::take("containerd");
        let mut logs = PathBuf::new();
        let containerd =
            Containerd::start_with("cri", &Path::new(CACHE).join("containerd"), |dir| {
                logs = dir.join("pods");
                Some(section(&dir.join("."), &runc_root(dir)))
            });
        let image = load(&containerd);
        Cri {
            containerd,
            image,
            logs,
            _lock: lock,
        }
    }
}

impl Engine for Cri {
    fn name(&self) -> &'static str {
        "containerd CRI"
    }

    fn image(&self) -> &str {
        &self.image
    }

    fn run(&self, disk: &LoopFs, job: &Job) -> Ran {
        self.run_pod(disk, job, &[])
    }
}

impl Cri {
    /// Runs `job` in a pod of its own, with cri.py's options `extra`.
    fn run_pod(&self, disk: &LoopFs, job: &Job, extra: &[&str]) -> Ran {
        run_pod(&self.containerd.socket, &self.logs, disk, job, extra)
    }
}

/// Runs `job` in a pod of its own through the CRI of the containerd on
/// `socket`, under the handler `eatmydata` or `runc`, with cri.py's
/// options `extra`; its log in a new folder under `logs`.
pub fn run_pod(socket: &Path, logs: &Path, disk: &LoopFs, job: &Job, extra: &[&str]) -> Ran {
    let handler = if job.eaten { "eatmydata" } else { "runc" };
    pod(socket, handler, logs, disk, job, extra)
}

/// The same under `handler`, whatever `job.eaten` says.
pub fn pod(
    socket: &Path,
    handler: &str,
    logs: &Path,
    disk: &LoopFs,
    job: &Job,
    extra: &[&str],
) -> Ran {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/containers/cri.py");
    let logs = logs.join(format!("{}", fs::read_dir(logs).map_or(0, Iterator::count)));
    fs::create_dir_all(&logs).expect("make the pod's log folder");
    let mut cri = Command::new(PYTHON);
    cri.arg(script)
        .arg(socket)
        .arg(handler)
        .arg(job.image)
        .arg(&logs)
        .arg(format!("{}:/data", disk.path().display()));
    for env in job.env {
        cri.args(["--env", env]);
    }
    cri.args(extra).arg("--").args(job.args);
    cri.stdin(Stdio::null())
        .output()
        .expect("run cri.py")
        .into()
}

/// The pods of `cri`, those under the runtime annotated as `how` says
/// (cri.py's `--pod-annotation` or `--container-annotation`, `K=V`).
struct Annotated<'a> {
    cri: &'a Cri,
    how: [&'a str; 2],
}

impl Engine for Annotated<'_> {
    fn name(&self) -> &'static str {
        self.cri.name()
    }

    fn image(&self) -> &str {
        self.cri.image()
    }

    fn run(&self, disk: &LoopFs, job: &Job) -> Ran {
        let extra: &[&str] = if job.eaten { &self.how } else { &[] };
        self.cri.run_pod(disk, job, extra)
    }
}

#[test]
fn static_dynamic_disabled_and_annotated_pods_under_the_runtime_class_handler() {
    let cri = Cri::start();
    cases::program(&cri, "static C", STATIC);
    cases::program(&cri, "dynamic C", DYNAMIC);
    cases::disabled(&cri);
    // The switch as a pod's metadata.annotations gives it (what the
    // kubelet passes on), and as a container's own (a CRI client's).
    let off = format!("{DISABLE}=1");
    for (flag, label) in [
        ("--pod-annotation", "pod-annotation"),
        ("--container-annotation", "container-annotation"),
    ] {
        let annotated = Annotated {
            cri: &cri,
            how: [flag, &off],
        };
        cases::left_alone(&annotated, &format!("{flag} {off}"), label, &[]);
    }
}
