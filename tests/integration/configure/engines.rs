//! Engines read what `configure` wrote: containerd's own dump of its
//! config, and podman running a container through the runtime as its
//! default; each beside a control, the engine on the file as it was.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{RUNTIME, configure_ok, containerd_config};
use crate::common::{TempDir, registered_runtime, wait_until};
use crate::containers::at_home::{podman_at_home, wait_for_a_record_at_home};
use crate::containers::{RUNTIME_MOUNTED as MOUNTED, conf as podman_test_conf};

/// `containerd --config FILE config dump`: the config as containerd reads it.
fn containerd_dump(config: &Path) -> String {
    let output = Command::new("containerd")
        .arg("--config")
        .arg(config)
        .args(["config", "dump"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn containerd_reads_the_runtime_and_the_default_it_registered() {
    let dir = TempDir::new("configure-containerd-reads");
    let config = dir.join("config.toml");
    fs::write(&config, containerd_config()).unwrap();
    let before = containerd_dump(&config);
    // Runtimes and the default by name: the config's own path (a scratch
    // folder) may name eatmydata.
    assert!(!before.contains("runtimes.eatmydata"), "{before}");
    assert!(!before.contains("\"eatmydata\""), "{before}");
    assert!(before.contains("default_runtime_name = \"runc\""));
    let path = config.to_str().unwrap();
    configure_ok(
        dir.path(),
        &[
            "containerd",
            "--default",
            "--config",
            path,
            "--runtime-path",
            &*RUNTIME,
        ],
    );
    let after = containerd_dump(&config);
    let section = |table: &str| {
        let table = format!("[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.{table}]");
        let rest = after
            .split_once(&table)
            .unwrap_or_else(|| panic!("no {table} in {after}"))
            .1;
        rest.split("\n\n").next().unwrap().to_owned()
    };
    let entry = section("eatmydata");
    for key in ["pod_annotations", "container_annotations"] {
        let line = format!("{key} = [\"io.eatmydata.*\"]");
        assert!(entry.contains(&line), "{entry}");
        // runc's entry, the control, lets none through.
        assert!(section("runc").contains(&format!("{key} = []")));
    }
    let options = section("eatmydata.options");
    assert!(
        options.contains(&format!("BinaryName = \"{RUNTIME}\"")),
        "{options}"
    );
    assert!(options.contains("SystemdCgroup = true"), "{options}");
    assert!(
        after.contains("default_runtime_name = \"eatmydata\""),
        "{after}"
    );
}

#[test]
fn a_podman_container_runs_through_the_runtime_registered_as_its_default() {
    let dir = TempDir::new("configure-podman-runs");
    let root = super::show_args_root(dir.path());
    let config = dir.join("containers.conf");
    fs::copy(podman_test_conf(), &config).unwrap();
    let run = || {
        let output = Command::new("podman")
            .env("CONTAINERS_CONF", &config)
            .args(["run", "--rm", "--network=none", "--env"])
            .arg(format!("SHOW_FILE={MOUNTED}"))
            .arg("--rootfs")
            .arg(&root)
            .arg("/show_args")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "podman run: {stderr}");
        String::from_utf8(output.stdout).unwrap()
    };
    // Control: podman's default of the tests' settings, runc, leaves the
    // container as it is.
    let control = run();
    assert!(control.contains("\npreload (unset)\n"), "{control}");
    assert!(
        control.contains(&format!("\nfile {MOUNTED} absent\n")),
        "{control}"
    );
    let runtime = registered_runtime();
    let runtime = runtime.to_str().unwrap();
    let path = config.to_str().unwrap();
    configure_ok(
        dir.path(),
        &[
            "podman",
            "--default",
            "--config",
            path,
            "--runtime-path",
            runtime,
        ],
    );
    // podman hands the runtime no environment: the entry configure wrote
    // executed through a script that names the test's root home.
    podman_at_home(&config);
    // A static program gets the runtime's rules, and keeps LD_PRELOAD to
    // pass on where every loader of the rootfs takes the library, as the
    // test image's (Debian's glibc) does (durability::exec, root_fits): the
    // library bound in its /dev, and named, shows the runtime.
    let eaten = run();
    assert!(eaten.contains(&format!("\npreload {MOUNTED}\n")), "{eaten}");
    assert!(
        eaten.contains(&format!("\nfile {MOUNTED} present\n")),
        "{eaten}"
    );
    wait_for_a_record_at_home();
}

/// A podman container of the test's own, removed when dropped.
struct PodmanContainer<'a> {
    name: String,
    config: &'a Path,
}

impl Drop for PodmanContainer<'_> {
    fn drop(&mut self) {
        let _ = podman(self.config, &["rm", "--force", &self.name]);
    }
}

/// `podman ARGS...` on the settings in `config`.
fn podman(config: &Path, args: &[&str]) -> std::process::Output {
    Command::new("podman")
        .env("CONTAINERS_CONF", config)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn podman_removal_keeps_the_name_for_a_container_made_with_it() {
    let dir = TempDir::new("configure-podman-remove");
    let root = super::show_args_root(dir.path());
    let config = dir.join("containers.conf");
    fs::copy(podman_test_conf(), &config).unwrap();
    let original = fs::read_to_string(&config).unwrap();
    let runtime = registered_runtime();
    let configure = |args: &[&str]| {
        let output = Command::new(&runtime)
            .env("CONTAINERS_CONF", &config)
            .arg("configure")
            .args(["podman", "--config", config.to_str().unwrap()])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "configure {args:?}: {stderr}");
        String::from_utf8(output.stdout).unwrap()
    };
    configure(&["--runtime-path", runtime.to_str().unwrap()]);
    let name = format!("eatmydata-configure-{}", std::process::id());
    let made = PodmanContainer {
        name: name.clone(),
        config: &config,
    };
    let create = [
        "create",
        "--runtime",
        "eatmydata",
        "--network=none",
        "--name",
        &name,
        "--rootfs",
    ];
    let root = root.to_str().unwrap();
    let created = podman(&config, &[&create[..], &[root, "/show_args"]].concat());
    assert!(created.status.success(), "{created:?}");
    let said = configure(&["--remove"]);
    assert!(
        said.contains("Kept [engine.runtimes] eatmydata as an alias of runc")
            && said.contains(&format!("({name})")),
        "{said}"
    );
    // It starts, through runc.
    let started = podman(&config, &["start", "--attach", &name]);
    let stdout = String::from_utf8_lossy(&started.stdout);
    assert!(started.status.success(), "{started:?}");
    assert!(stdout.contains("\npreload (unset)\n"), "{stdout}");
    // Control: without the alias, podman refuses to start it.
    let bare = dir.join("bare.conf");
    fs::write(&bare, &original).unwrap();
    let refused = podman(&bare, &["start", "--attach", &name]);
    assert!(!refused.status.success(), "{refused:?}");
    let again = configure(&["--remove"]);
    assert!(again.contains("nothing changed"), "{again}");
    drop(made);
    // Once it is gone the alias goes (as soon as no other test's podman
    // container made with the name is there either: they are --rm).
    wait_until("the alias goes", Duration::from_secs(120), || {
        configure(&["--remove"]);
        fs::read_to_string(&config).unwrap() == original
    });
}
