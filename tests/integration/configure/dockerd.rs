//! A dockerd of the test's own reads what `configure` wrote: it lists the
//! runtime as its default, and runs a container through it and the real
//! runtime that `runtimeArgs` names, on every verb. Each beside a control:
//! the daemon on the file as it was, or its runc.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{DAEMON_JSON, configure_ok};
use crate::common::{TempDir, probe, registered_runtime, wait_until};
use crate::containers::{RUNTIME_MOUNTED as MOUNTED, daemon};

/// A dockerd of the test's own (see [`daemon::Dockerd`]) on the
/// containerd it starts itself; stopped by its pid when dropped.
pub(super) struct Dockerd {
    pub(super) dockerd: daemon::Dockerd,
    // That containerd's sockets are made here: a short path, as a unix
    // socket's must be. Removed once the daemon is gone (fields drop in
    // order).
    _exec_root: Removed,
}

/// A folder removed when dropped.
struct Removed(PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

impl Dockerd {
    pub(super) fn start(dir: &Path, config: &Path) -> Dockerd {
        fs::create_dir_all(dir).unwrap();
        let name = dir.file_name().unwrap().to_string_lossy();
        let exec_root = std::env::temp_dir().join(format!("emd-{}-{name}", std::process::id()));
        let exec_root = Removed(exec_root);
        let data_root = dir.join("data");
        let dockerd = daemon::Dockerd::start(dir, config, &data_root, &exec_root.0, None);
        Dockerd {
            dockerd,
            _exec_root: exec_root,
        }
    }

    /// `docker ARGS...` for this daemon, asserting success; its stdout.
    fn docker(&self, args: &[&str], stdin: Stdio) -> String {
        let output = self
            .dockerd
            .docker()
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
            self.dockerd.daemon.assert_running();
            let output = self
                .dockerd
                .docker()
                .args(["info", "--format", format])
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
    // dockerd looks the runtime up when it starts: root's copy, as
    // registered.
    let runtime = registered_runtime();
    let runtime = runtime.to_str().unwrap();
    let path = config.to_str().unwrap();
    let args = [
        "docker",
        "--default",
        "--real-runtime",
        "runc",
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
            "\"eatmydata\":{{\"path\":\"{runtime}\",\"runtimeArgs\":[\"--eatmydata-runtime=runc\"]}}"
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
    let root = super::show_args_root(dir.path());
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
    let runtime = registered_runtime();
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
            &[&show_file(), "eatmydata-configure-test", "/show_args"],
        ];
        dockerd.docker(&args.concat(), Stdio::null())
    };
    // Control: the same daemon's runc, asked for by name.
    let control = run(&["--runtime=runc"]);
    assert!(control.contains("\npreload (unset)\n"), "{control}");
    assert!(
        control.contains(&format!("\nfile {MOUNTED} absent\n")),
        "{control}"
    );
    // (configure's check ran the script's --version, which notes no verb)
    assert_eq!(
        fs::read_to_string(&seen).unwrap_or_default(),
        "",
        "the control ran through the real runtime's script"
    );
    // No --runtime: the default, eatmydata, then the real runtime named.
    // A static program gets the runtime's rules, and keeps LD_PRELOAD to
    // pass on where every loader of the rootfs takes the library, as the
    // test image's (Debian's glibc) does (durability::exec, root_fits): the
    // library bound in its /dev, and named, shows the runtime.
    let eaten = run(&[]);
    assert!(eaten.contains(&format!("\npreload {MOUNTED}\n")), "{eaten}");
    assert!(
        eaten.contains(&format!("\nfile {MOUNTED} present\n")),
        "{eaten}"
    );
    let verbs = fs::read_to_string(&seen).unwrap();
    for verb in ["create", "start", "delete"] {
        assert!(
            verbs.lines().any(|v| v == verb),
            "{verb} not through {}: {verbs}",
            real.display()
        );
    }
}

/// `docker inspect --format FORMAT NAME`, trimmed.
fn inspect(dockerd: &Dockerd, name: &str, format: &str) -> String {
    let said = dockerd.docker(&["inspect", "--format", format, name], Stdio::null());
    said.trim().to_owned()
}

/// Waits until the daemon's default runtime is `runtime` (a reload is
/// read in the background).
pub(super) fn wait_default(dockerd: &mut Dockerd, runtime: &str) {
    wait_until(
        &format!("dockerd's default runtime is {runtime}"),
        Duration::from_secs(30),
        || {
            let info = dockerd.info("{{.DefaultRuntime}} {{json .Runtimes}}");
            info.starts_with(&format!("{runtime} "))
        },
    );
}

#[test]
fn on_and_off_by_reload_with_nothing_stopped() {
    let dir = TempDir::new("configure-reload");
    let root = super::show_args_root(dir.path());
    fs::copy(probe("hold", &["-static"]), root.join("hold")).unwrap();
    let config = dir.join("daemon.json");
    let original = DAEMON_JSON.replace(
        "\"storage-driver\": \"overlay2\"",
        "\"log-level\": \"warn\"",
    );
    fs::write(&config, &original).unwrap();
    let mut dockerd = Dockerd::start(&dir.join("dockerd"), &config);
    let pid_file = dir.join("dockerd/dockerd.pid");
    let pid = dockerd.dockerd.daemon.pid();
    wait_default(&mut dockerd, "runc");
    let mut tar = Command::new("tar")
        .arg("-C")
        .arg(&root)
        .args(["-c", "."])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let image = tar.stdout.take().unwrap();
    let tag = "eatmydata-configure-reload";
    dockerd.docker(&["import", "-", tag], image.into());
    assert!(tar.wait().unwrap().success());
    // A container running before, under runc: it is to run throughout.
    let run = [
        "run",
        "-d",
        "-i",
        "--network=none",
        "--name",
        "before",
        tag,
        "/hold",
    ];
    dockerd.docker(&run, Stdio::null());
    let before = inspect(&dockerd, "before", "{{.State.Pid}}");

    let runtime = registered_runtime();
    // configure run as the copy it registers: `--remove` names the library
    // it placed beside it as staying (the checkout's command has none
    // placed where root may not load it, as under /var/tmp).
    std::os::unix::fs::symlink(&runtime, dir.join("eatmydata-runtime")).unwrap();
    let common = [
        "docker",
        "--config",
        config.to_str().unwrap(),
        "--pid-file",
        pid_file.to_str().unwrap(),
    ];
    let on = [
        &common[..],
        &["--default", "--docker-version", "20.10.24"],
        &["--runtime-path", runtime.to_str().unwrap()],
    ]
    .concat();
    let said = configure_ok(dir.path(), &on);
    assert!(
        said.contains(&format!("Told dockerd (pid {pid}) to reload (SIGHUP)")),
        "{said}"
    );
    wait_default(&mut dockerd, "eatmydata");
    assert_eq!(dockerd.dockerd.daemon.pid(), pid);
    assert_eq!(inspect(&dockerd, "before", "{{.State.Pid}}"), before);
    // A new container runs under the runtime; one is kept, made with it.
    let eaten = dockerd.docker(
        &[
            "run",
            "--rm",
            "--network=none",
            &show_file(),
            tag,
            "/show_args",
        ],
        Stdio::null(),
    );
    assert!(
        eaten.contains(&format!("\nfile {MOUNTED} present\n")),
        "{eaten}"
    );
    let create = [
        "create",
        "--network=none",
        "--name",
        "made",
        &show_file(),
        tag,
        "/show_args",
    ];
    dockerd.docker(&create, Stdio::null());
    assert_eq!(
        inspect(&dockerd, "made", "{{.HostConfig.Runtime}}"),
        "eatmydata"
    );

    let off = [&common[..], &["--remove"]].concat();
    let said = configure_ok(dir.path(), &off);
    assert!(
        said.contains("Kept runtimes.eatmydata as an alias of runc") && said.contains("(made)"),
        "{said}"
    );
    assert!(
        said.contains(&format!("Told dockerd (pid {pid}) to reload")),
        "{said}"
    );
    // The library registration placed stays, said where.
    let placed = said
        .lines()
        .find_map(|line| line.strip_prefix("The library stays at "))
        .and_then(|rest| rest.split_once(':'))
        .unwrap_or_else(|| panic!("no word of the library in {said}"))
        .0;
    assert!(Path::new(placed).is_file(), "{placed}");
    wait_default(&mut dockerd, "runc");
    // The file is the original, but for runc as the default (dockerd
    // keeps a missing key) and the alias while `made` exists.
    let kept: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&config).unwrap()).unwrap();
    let mut expected: serde_json::Value = serde_json::from_str(&original).unwrap();
    expected["default-runtime"] = "runc".into();
    expected["runtimes"]["eatmydata"] = serde_json::json!({"path": "runc"});
    assert_eq!(kept, expected);
    // The container made under the runtime starts, now under runc.
    let started = dockerd.docker(&["start", "-a", "made"], Stdio::null());
    assert!(started.contains("\npreload (unset)\n"), "{started}");
    assert!(
        started.contains(&format!("\nfile {MOUNTED} absent\n")),
        "{started}"
    );
    assert_eq!(inspect(&dockerd, "before", "{{.State.Pid}}"), before);
    // A second removal changes nothing while `made` is there.
    let text = fs::read_to_string(&config).unwrap();
    let again = configure_ok(dir.path(), &off);
    assert!(again.contains("nothing changed"), "{again}");
    assert!(!again.contains("Told dockerd"), "{again}");
    assert_eq!(fs::read_to_string(&config).unwrap(), text);
    // Once it is gone, the alias goes too, and the file is the original
    // byte for byte but for the default.
    dockerd.docker(&["rm", "made"], Stdio::null());
    configure_ok(dir.path(), &off);
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        original.replace(
            "\"log-level\": \"warn\"\n",
            "\"log-level\": \"warn\",\n    \"default-runtime\": \"runc\"\n"
        )
    );
    wait_until(
        "dockerd lists no eatmydata",
        Duration::from_secs(30),
        || !dockerd.info("{{json .Runtimes}}").contains("eatmydata"),
    );
    assert_eq!(dockerd.dockerd.daemon.pid(), pid);
    assert_eq!(inspect(&dockerd, "before", "{{.State.Pid}}"), before);
    dockerd.docker(&["kill", "before"], Stdio::null());
}

/// Why `--remove` writes `"default-runtime": "runc"` rather than taking
/// the key away: dockerd, told to reload a file without the key, keeps
/// the default it had. Control: the key written as runc is read.
#[test]
fn dockerd_keeps_a_default_that_goes_missing_on_reload() {
    let dir = TempDir::new("configure-missing-key");
    let config = dir.join("daemon.json");
    let with = |default: Option<&str>| {
        let default = default.map_or(String::new(), |d| {
            format!(",\n    \"default-runtime\": \"{d}\"")
        });
        format!("{{\n    \"runtimes\": {{\"alias\": {{\"path\": \"runc\"}}}}{default}\n}}\n")
    };
    fs::write(&config, with(Some("alias"))).unwrap();
    let mut dockerd = Dockerd::start(&dir.join("dockerd"), &config);
    wait_default(&mut dockerd, "alias");
    let pid = dockerd.dockerd.daemon.pid() as libc::pid_t;
    let log = dir.join("dockerd/dockerd.log");
    let reloads = || {
        let text = fs::read_to_string(&log).unwrap_or_default();
        text.matches("Reloaded configuration").count()
    };
    let reload = |text: String| {
        let before = reloads();
        fs::write(&config, text).unwrap();
        // SAFETY: a signal to the daemon the test started, still running.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
        // The reload is read in the background; the log says when.
        wait_until("dockerd reloads", Duration::from_secs(30), || {
            reloads() > before
        });
    };
    reload(with(None));
    let kept = dockerd.info("{{.DefaultRuntime}} {{json .Runtimes}}");
    assert!(kept.starts_with("alias "), "{kept}");
    reload(with(Some("runc")));
    wait_default(&mut dockerd, "runc");
}

/// `--env=SHOW_FILE=MOUNTED`: `show_args` says whether the library the
/// runtime binds is there.
fn show_file() -> String {
    format!("--env=SHOW_FILE={MOUNTED}")
}
