//! A dockerd of the test's own reads what `configure` wrote: it lists the
//! runtime as its default, and runs a container through it and the real
//! runtime that `runtimeArgs` names, on every verb. Each beside a control:
//! the daemon on the file as it was, or its runc.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{DAEMON_JSON, configure_ok};
use crate::common::{TempDir, probe, wait_until};
use crate::containers::MOUNTED;

/// A dockerd of the test's own, on its own socket and folders, off the
/// host's network; stopped by its pid when dropped.
struct Dockerd {
    child: Child,
    socket: String,
    log: std::path::PathBuf,
    // containerd's sockets are made here: a short path, as a unix socket's
    // must be.
    exec_root: std::path::PathBuf,
}

impl Dockerd {
    fn start(dir: &Path, config: &Path) -> Dockerd {
        fs::create_dir_all(dir).unwrap();
        let log = dir.join("dockerd.log");
        let name = dir.file_name().unwrap().to_string_lossy();
        let exec_root = std::env::temp_dir().join(format!("emd-{}-{name}", std::process::id()));
        let socket = format!("unix://{}", dir.join("docker.sock").display());
        let child = Command::new("dockerd")
            .arg("--config-file")
            .arg(config)
            .arg("--data-root")
            .arg(dir.join("data"))
            .arg("--exec-root")
            .arg(&exec_root)
            .arg("--pidfile")
            .arg(dir.join("dockerd.pid"))
            .args(["--host", &socket])
            .args([
                "--bridge=none",
                "--iptables=false",
                "--ip6tables=false",
                "--ip-masq=false",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(&log).unwrap())
            .spawn()
            .expect("start dockerd");
        Dockerd {
            child,
            socket,
            log,
            exec_root,
        }
    }

    /// `docker ARGS...` for this daemon, asserting success; its stdout.
    fn docker(&self, args: &[&str], stdin: Stdio) -> String {
        let output = Command::new("docker")
            .args(["-H", &self.socket])
            .args(args)
            .stdin(stdin)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "docker {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// `docker info --format FORMAT` (which is to list the runtimes), once
    /// the daemon answers.
    fn info(&mut self, format: &str) -> String {
        let mut answer = None;
        wait_until("dockerd answers", Duration::from_secs(60), || {
            if self.child.try_wait().unwrap().is_some() {
                let log = fs::read_to_string(&self.log).unwrap_or_default();
                panic!("dockerd ended: {log}");
            }
            let output = Command::new("docker")
                .args(["-H", &self.socket, "info", "--format", format])
                .stdin(Stdio::null())
                .output()
                .unwrap();
            // Every dockerd lists runc: an answer without it is not the
            // daemon's whole configuration yet.
            let text = String::from_utf8_lossy(&output.stdout).into_owned();
            answer = (output.status.success() && text.contains("\"runc\"")).then_some(text);
            answer.is_some()
        });
        answer.unwrap()
    }
}

impl Drop for Dockerd {
    fn drop(&mut self) {
        // SAFETY: kill sends a signal to the daemon this guard started.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.exec_root);
    }
}

#[test]
fn dockerd_lists_the_runtime_it_registered_as_its_default() {
    let dir = TempDir::new("configure-dockerd");
    let config = dir.join("daemon.json");
    fs::write(
        &config,
        DAEMON_JSON.replace(
            "\"storage-driver\": \"overlay2\"",
            "\"log-level\": \"warn\"",
        ),
    )
    .unwrap();
    let format = "{{.DefaultRuntime}} {{json .Runtimes}}";
    let before = Dockerd::start(&dir.join("before"), &config).info(format);
    assert!(before.starts_with("runc "), "{before}");
    assert!(!before.contains("eatmydata"), "{before}");
    // dockerd looks the runtime up when it starts: the command's own link.
    let runtime = super::runtime_in(dir.path());
    let runtime = runtime.to_str().unwrap();
    let path = config.to_str().unwrap();
    let args = [
        "docker",
        "--default",
        "--real-runtime",
        "crun",
        "--config",
        path,
    ];
    configure_ok(
        dir.path(),
        &[&args[..], &["--runtime-path", runtime]].concat(),
    );
    let after = Dockerd::start(&dir.join("after"), &config).info(format);
    assert!(after.starts_with("eatmydata "), "{after}");
    assert!(
        after.contains(&format!(
            "\"eatmydata\":{{\"path\":\"{runtime}\",\"runtimeArgs\":[\"--eatmydata-runtime=crun\"]}}"
        )),
        "{after}"
    );
    assert!(
        after.contains("\"nvidia\":{\"path\":\"nvidia-container-runtime\"}"),
        "{after}"
    );
}

#[test]
fn a_docker_container_runs_through_the_default_and_the_real_runtime_it_names() {
    let dir = TempDir::new("configure-docker-runs");
    // An image of one static program, which says what LD_PRELOAD it got.
    let root = dir.join("root");
    fs::create_dir(&root).unwrap();
    fs::copy(probe("show_args", &["-static"]), root.join("show_args")).unwrap();
    // The real runtime: runc, through a script that notes each verb.
    let seen = dir.join("seen");
    let real = dir.join("real-runc");
    let note = "for a; do case $a in create|start|kill|delete) echo $a; break;; esac; done";
    fs::write(
        &real,
        format!(
            "#!/bin/sh\n({note}) >>{}\nexec runc \"$@\"\n",
            seen.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o755)).unwrap();
    let runtime = super::runtime_in(dir.path());
    let config = dir.join("etc/docker/daemon.json");
    let args = [
        "docker",
        "--default",
        "--config",
        config.to_str().unwrap(),
        "--runtime-path",
        runtime.to_str().unwrap(),
        "--real-runtime",
        real.to_str().unwrap(),
    ];
    configure_ok(dir.path(), &args);
    let mut dockerd = Dockerd::start(&dir.join("dockerd"), &config);
    assert!(
        dockerd
            .info("{{.DefaultRuntime}} {{json .Runtimes}}")
            .starts_with("eatmydata ")
    );
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(&root)
        .args(["-c", "."])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let image = tar.stdout.take().unwrap();
    dockerd.docker(&["import", "-", "eatmydata-configure-test"], image.into());
    assert!(tar.wait().unwrap().success());
    let run = |runtime: &[&str]| {
        let args = [
            &["run", "--rm", "--network=none"][..],
            runtime,
            &["eatmydata-configure-test", "/show_args"],
        ];
        dockerd.docker(&args.concat(), Stdio::null())
    };
    // Control: the same daemon's runc, asked for by name.
    assert!(run(&["--runtime=runc"]).contains("\npreload (unset)\n"));
    assert!(
        !seen.exists(),
        "the control ran through the real runtime's script"
    );
    // No --runtime: the default, eatmydata, then the real runtime named.
    let eaten = run(&[]);
    assert!(eaten.contains(&format!("\npreload {MOUNTED}\n")), "{eaten}");
    let verbs = fs::read_to_string(&seen).unwrap();
    for verb in ["create", "start", "delete"] {
        assert!(
            verbs.lines().any(|v| v == verb),
            "{verb} not through {}: {verbs}",
            real.display()
        );
    }
}
