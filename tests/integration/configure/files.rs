//! The other rules for an engine's file: a dry run that writes nothing; a
//! file it cannot parse left as it was; a missing file made with
//! eatmydata's keys alone; the runtime's link made when missing; a file
//! behind a link edited where it lives; bad usage; a copy of the command alone, through `eatmydata --runtime`.

use std::fs;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::Path;
use std::process::{Command, Stdio};

use super::{DAEMON_JSON, RUNTIME, configure, configure_ok};
use crate::common::{RootHome, TempDir};

/// For each engine, a file it cannot parse, and the same file put right.
const BROKEN: [(&str, &str, &str); 4] = [
    (
        "docker",
        "{\n    \"log-driver\": \"json-file\",\n}\n",
        "{\n    \"log-driver\": \"json-file\"\n}\n",
    ),
    (
        "podman",
        "[engine\nruntime = \"crun\"\n",
        "[engine]\nruntime = \"crun\"\n",
    ),
    (
        "containerd",
        "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"\ncontainerd = 1\n",
        "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n",
    ),
    (
        "crio",
        "[crio.runtime]\ndefault_runtime = crun\n",
        "[crio.runtime]\ndefault_runtime = \"crun\"\n",
    ),
];

#[test]
fn a_file_it_cannot_parse_is_left_byte_for_byte_with_status_65() {
    for (engine, broken, right) in BROKEN {
        let dir = TempDir::new("configure-broken");
        let path = dir.join("config");
        let config = path.to_str().unwrap();
        let args = [
            engine,
            "--default",
            "--config",
            config,
            "--runtime-path",
            &*RUNTIME,
        ];
        fs::write(&path, broken).unwrap();
        let refused = configure(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(65), "{engine}: {stderr}");
        assert!(
            stderr.starts_with(&format!("eatmydata: configure: cannot edit {config}: ")),
            "{engine}: {stderr}"
        );
        assert!(stderr.contains("left as it was"), "{stderr}");
        assert_eq!(fs::read_to_string(&path).unwrap(), broken, "{engine}");
        assert!(!dir.join("config.bak-eatmydata").exists());
        // Control: the same file put right is edited.
        fs::write(&path, right).unwrap();
        configure_ok(dir.path(), &args);
        assert_ne!(fs::read_to_string(&path).unwrap(), right, "{engine}");
    }
}

#[test]
fn a_dry_run_lists_the_change_and_writes_nothing() {
    let dir = TempDir::new("configure-dry");
    let path = dir.join("daemon.json");
    fs::write(&path, DAEMON_JSON).unwrap();
    let config = path.to_str().unwrap();
    let said = configure_ok(dir.path(), &["docker", "--dry-run", "--config", config]);
    assert!(said.contains(&format!("--- {config}\n")), "{said}");
    assert!(said.contains("\n+        \"eatmydata\": {\n"), "{said}");
    assert!(said.ends_with("Dry run: nothing written.\n"), "{said}");
    assert_eq!(fs::read_to_string(&path).unwrap(), DAEMON_JSON);
    assert!(!dir.join("daemon.json.bak-eatmydata").exists());
    // A missing file and its folder are not made either, nor the link.
    let missing = dir.join("etc/containerd/config.toml");
    let config = missing.to_str().unwrap();
    let said = configure_ok(dir.path(), &["containerd", "--dry-run", "--config", config]);
    assert!(said.contains("+BinaryName = "), "{said}");
    assert!(!dir.join("etc").exists());
}

#[test]
fn a_missing_file_is_made_with_its_folder_and_eatmydatas_keys_alone() {
    let made = |engine: &str| {
        let dir = TempDir::new("configure-missing");
        let path = dir.join("etc/engine/config");
        let config = path.to_str().unwrap();
        let said = configure_ok(
            dir.path(),
            &[engine, "--config", config, "--runtime-path", &*RUNTIME],
        );
        assert!(said.contains(&format!("Made {config}.")), "{said}");
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o644);
        fs::read_to_string(&path).unwrap()
    };
    assert_eq!(
        made("docker"),
        format!(
            "{{\n    \"runtimes\": {{\n        \"eatmydata\": {{\n            \"path\": \"{RUNTIME}\"\n        }}\n    }}\n}}\n"
        )
    );
    assert_eq!(
        made("podman"),
        format!("[engine.runtimes]\neatmydata = [\"{RUNTIME}\"]\n")
    );
    assert_eq!(
        made("crio"),
        format!(
            "[crio.runtime.runtimes.eatmydata]\nruntime_path = \"{RUNTIME}\"\nruntime_type = \"oci\"\n"
        )
    );
    let containerd = made("containerd");
    assert!(containerd.starts_with("version = 2\n"), "{containerd}");
}

#[test]
fn the_runtime_beside_the_command_is_made_as_a_link_when_missing() {
    let dir = TempDir::new("configure-link");
    // The command where root may run it (root's, in root's folders), as
    // an operator installs it; wherever the checkout is.
    let home = RootHome::new("configure-link");
    let bin = home.join("bin");
    fs::create_dir(&bin).unwrap();
    fs::copy(crate::common::command(), bin.join("eatmydata")).unwrap();
    let elsewhere = dir.join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    symlink(bin.join("eatmydata"), elsewhere.join("eatmydata-runtime")).unwrap();
    let config = dir.join("daemon.json");
    let config = config.to_str().unwrap();
    let beside = bin.join("eatmydata-runtime");
    let dry = configure_ok(&elsewhere, &["docker", "--dry-run", "--config", config]);
    assert!(
        dry.contains(&format!(
            "Would make {}, a link to eatmydata.",
            beside.display()
        )),
        "{dry}"
    );
    assert!(beside.symlink_metadata().is_err());
    let said = configure_ok(&elsewhere, &["docker", "--config", config]);
    assert!(
        said.contains(&format!("Made {}, a link to eatmydata.", beside.display())),
        "{said}"
    );
    assert_eq!(fs::read_link(&beside).unwrap(), Path::new("eatmydata"));
    let written = fs::read_to_string(config).unwrap();
    assert!(
        written.contains(&format!("\"path\": \"{}\"", beside.display())),
        "{written}"
    );
    // The second time the link is there, and so is the file.
    let again = configure_ok(&elsewhere, &["docker", "--config", config]);
    assert!(!again.contains("a link to"), "{again}");
    assert!(again.contains("nothing changed"), "{again}");
}

#[test]
fn a_single_file_registers_through_eatmydata_runtime_option() {
    // A copy of the command alone (cargo install, the static file): no
    // eatmydata-runtime anywhere, so `eatmydata --runtime` is the way in.
    // In a folder of root's, as installed: elsewhere (a checkout in
    // /var/tmp) `configure` copies it to root's place instead.
    let home = RootHome::new("configure-single");
    let alone = home.join("eatmydata");
    fs::copy(crate::common::command(), &alone).unwrap();
    let dir = TempDir::new("configure-single");
    let config = dir.join("daemon.json");
    let run = |args: &[&str]| {
        Command::new(&alone)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run the copy")
    };
    let help = run(&["--runtime", "--help"]);
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.starts_with("Usage: eatmydata-runtime"), "{help}");
    let said = run(&[
        "--runtime",
        "configure",
        "docker",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(
        said.status.success(),
        "{}",
        String::from_utf8_lossy(&said.stderr)
    );
    let beside = home.join("eatmydata-runtime");
    assert_eq!(fs::read_link(&beside).unwrap(), Path::new("eatmydata"));
    let written = fs::read_to_string(&config).unwrap();
    assert!(
        written.contains(&format!("\"path\": \"{}\"", beside.display())),
        "{written}"
    );
    // Control: without --runtime, `configure` is a command to run, not ours.
    let plain = run(&["configure", "docker"]);
    assert_eq!(plain.status.code(), Some(127));
}

#[test]
fn a_config_behind_a_link_is_edited_where_it_lives() {
    let dir = TempDir::new("configure-behind");
    fs::create_dir(dir.join("real")).unwrap();
    fs::write(dir.join("real/daemon.json"), DAEMON_JSON).unwrap();
    symlink("real/daemon.json", dir.join("daemon.json")).unwrap();
    let config = dir.join("daemon.json");
    configure_ok(
        dir.path(),
        &[
            "docker",
            "--config",
            config.to_str().unwrap(),
            "--runtime-path",
            &*RUNTIME,
        ],
    );
    assert_eq!(
        fs::read_link(&config).unwrap(),
        Path::new("real/daemon.json")
    );
    assert!(
        fs::read_to_string(dir.join("real/daemon.json"))
            .unwrap()
            .contains(&*RUNTIME)
    );
    assert_eq!(
        fs::read_to_string(dir.join("real/daemon.json.bak-eatmydata")).unwrap(),
        DAEMON_JSON
    );
}

#[test]
fn bad_usage_is_status_2_and_changes_nothing() {
    let dir = TempDir::new("configure-usage");
    let path = dir.join("config.toml");
    fs::write(&path, "version = 2\n").unwrap();
    let config = path.to_str().unwrap();
    for args in [
        &["kubelet", "--config", config][..],
        &["containerd", "--real-runtime", "crun", "--config", config],
        &[
            "containerd",
            "--runtime-path",
            "eatmydata-runtime",
            "--config",
            config,
        ],
        &["containerd", "--config"],
    ] {
        let output = configure(dir.path(), args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("eatmydata: configure: "), "{stderr}");
        assert_eq!(fs::read_to_string(&path).unwrap(), "version = 2\n");
    }
}

#[test]
fn a_file_it_cannot_read_or_write_is_status_125_and_changes_nothing() {
    let dir = TempDir::new("configure-io");
    // A folder that is a file: the config under it can be neither read
    // nor made.
    fs::write(dir.join("etc"), "a file").unwrap();
    let config = dir.join("etc/daemon.json");
    let output = configure(
        dir.path(),
        &[
            "docker",
            "--config",
            config.to_str().unwrap(),
            "--runtime-path",
            &*RUNTIME,
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(125), "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "eatmydata: configure: cannot read {}: ",
            config.display()
        )),
        "{stderr}"
    );
    assert_eq!(fs::read_to_string(dir.join("etc")).unwrap(), "a file");
}
