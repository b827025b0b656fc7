//! A device node where a program should be, as an image may hold one or a
//! container may `mknod` one before a `docker exec`: the runtime, root on
//! the host and outside the container's device cgroup, must never open it
//! (`/dev/watchdog`'s numbers reboot the host). strace of the runtime
//! itself (up to its `execve` of runc) is the oracle: the node is reached
//! with `O_PATH` alone, never opened for reading, as entry program or as
//! a `#!` line's interpreter, at `create` and at `exec`.

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;

use super::{Bundle, Container, Via, inside, new_id};
use crate::common::probe;
use crate::containers::daemon::RunDir;
use crate::loopfs::LoopFs;

/// Makes `path` a character device of /dev/null's numbers, mode 0755.
fn mknod(path: &Path) {
    let name = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a C string path; mknod reads it only.
    let made = unsafe { libc::mknod(name.as_ptr(), libc::S_IFCHR | 0o755, libc::makedev(1, 3)) };
    assert_eq!(made, 0, "mknod {}", std::io::Error::last_os_error());
}

/// `command` (the runtime's line) under strace, which writes each open and
/// execve of the runtime's own process (not its children), with the paths
/// of descriptors, to `trace`; the lines before it becomes the real
/// runtime.
fn traced(command: &Command, trace: &Path) -> Vec<String> {
    let output = Command::new("strace")
        .arg("-o")
        .arg(trace)
        .args(["-y", "-e", "trace=open,openat,openat2,execve", "--"])
        .arg(command.get_program())
        .args(command.get_args())
        .envs(command.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .stdin(Stdio::null())
        .output()
        .expect("run strace");
    // The container's program cannot run: runc says so, as without us.
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("permission denied"), "{said}");
    let text = fs::read_to_string(trace).expect("strace wrote its trace");
    let lines = text.lines().map(str::to_owned);
    // Until the runtime becomes runc (`exec`), or forks it (`run`).
    let ours = lines.skip(1).take_while(|l| !l.starts_with("execve("));
    ours.collect()
}

/// The opens of `name` (by path, or by the path strace gives the
/// descriptor they return) in `trace`: each must be `O_PATH` alone.
fn assert_only_looked_at(trace: &[String], name: &str) {
    let opens: Vec<&String> = trace
        .iter()
        .filter(|l| l.starts_with("open"))
        .filter(|l| l.contains(&format!("\"{name}\"")) || l.ends_with(&format!("{name}>")))
        .collect();
    assert!(
        !opens.is_empty(),
        "the runtime never looked at {name}: {trace:#?}"
    );
    for open in opens {
        assert!(open.contains("O_PATH"), "{name} opened: {open}");
    }
}

/// Failed before: `openat2(..., "/bin/dev", {flags=O_RDONLY|O_NOCTTY|
/// O_NONBLOCK|O_CLOEXEC, ...}) = 5</.../rootfs/bin/dev>`, at create and
/// at exec, for the node and for a script naming it.
#[test]
fn a_device_node_as_program_is_never_opened() {
    let hold = probe("hold", &["-static"]);
    let disk = LoopFs::new("runtime-devices", 16);
    let bundle = Bundle::new("runtime-devices", &[&hold], &disk);
    let rootfs = bundle.dir.join("rootfs");
    // Root's home for the runtime's account, not the machine's.
    let home = RunDir::new("runtime-devices-home");
    mknod(&rootfs.join("bin/dev"));
    fs::write(rootfs.join("bin/script"), "#!/bin/dev\n").unwrap();
    fs::set_permissions(rootfs.join("bin/script"), fs::Permissions::from_mode(0o755)).unwrap();
    for program in ["/bin/dev", "/bin/script"] {
        bundle.write_spec(&[program], |_| {});
        let id = new_id();
        let mut run = bundle.command(Via::Ours("runc"), None);
        run.env("EATMYDATA_HOME", home.path())
            .args(["run", "--bundle"])
            .arg(bundle.dir.path())
            .arg(&id);
        let trace = traced(&run, &bundle.dir.join(format!("trace-{id}")));
        Container::gone(&bundle, Via::Alone("runc"), &id);
        assert_only_looked_at(&trace, "/bin/dev");
    }
    // A node the running container makes, then has `docker exec` start.
    let container = Container::start(&bundle, Via::Ours("runc"), &inside(&hold));
    mknod(&rootfs.join("bin/made"));
    fs::write(rootfs.join("bin/made-script"), "#!/bin/made\n").unwrap();
    let mode = fs::Permissions::from_mode(0o755);
    fs::set_permissions(rootfs.join("bin/made-script"), mode).unwrap();
    for program in ["/bin/made", "/bin/made-script"] {
        let mut process = bundle.base["process"].clone();
        process["args"] = json!([program]);
        let file = bundle.dir.join(format!("process-{}.json", new_id()));
        fs::write(&file, serde_json::to_vec(&process).unwrap()).unwrap();
        let mut exec = bundle.command(Via::Ours("runc"), None);
        exec.env("EATMYDATA_HOME", home.path())
            .arg("exec")
            .arg("--process")
            .arg(&file)
            .arg(&container.id);
        let trace = traced(&exec, &bundle.dir.join(format!("trace-exec-{}", new_id())));
        assert_only_looked_at(&trace, "/bin/made");
    }
}
