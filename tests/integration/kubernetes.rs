//! contrib/kubernetes/: every manifest valid against the Kubernetes API's
//! schemas, strictly (no key the API does not know), offline, by PyPI's
//! kubernetes-validate (in the venv scripts/setup-test-deps makes), which
//! must refuse a planted mistake; the kustomization names files that are
//! there; and the DaemonSet's installer runs the command the node tests
//! ran (`containers::install`), on the image's entry point.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::TempDir;
use crate::containers::install::INSTALL;

const VENV: &str = "/var/tmp/eatmydata-venv/bin";
/// The oldest Kubernetes release still supported upstream when written.
const VERSION: &str = "1.31.0";

fn manifests() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/kubernetes")
}

/// kubernetes-validate on `files`: its exit status and what it said.
fn validate(files: &[PathBuf]) -> (bool, String) {
    let output = Command::new(Path::new(VENV).join("kubernetes-validate"))
        .args(["--strict", "--quiet", "-k", VERSION])
        .args(files)
        .output()
        .expect("run kubernetes-validate (scripts/setup-test-deps installs it)");
    let said = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), said)
}

/// A value of a YAML file, by a Python expression on `doc` (PyYAML comes
/// with kubernetes-validate), as JSON.
fn yaml(file: &Path, expression: &str) -> serde_json::Value {
    let script = format!(
        "import json, sys, yaml\ndoc = yaml.safe_load(open(sys.argv[1]))\nprint(json.dumps({expression}))"
    );
    let output = Command::new(Path::new(VENV).join("python"))
        .args(["-c", &script])
        .arg(file)
        .output()
        .expect("run python");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON from python")
}

#[test]
fn every_manifest_validates_and_a_planted_mistake_does_not() {
    let mut files = Vec::new();
    for folder in [manifests(), manifests().join("uninstall")] {
        for entry in fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap();
            if name.ends_with(".yaml") && name != "kustomization.yaml" {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 6, "{files:?}");
    let (valid, said) = validate(&files);
    assert!(valid, "{said}");

    let scratch = TempDir::new("kubernetes");
    let planted = scratch.join("daemonset.yaml");
    let text = fs::read_to_string(manifests().join("daemonset.yaml")).unwrap();
    fs::write(&planted, text.replace("hostPID:", "hostPid:")).unwrap();
    let (valid, said) = validate(&[planted]);
    assert!(!valid && said.contains("hostPid"), "{said}");
}

#[test]
fn the_kustomization_names_files_that_are_there() {
    let kustomization = manifests().join("kustomization.yaml");
    let resources = yaml(&kustomization, "doc['resources']");
    let resources = resources.as_array().unwrap();
    assert!(resources.len() >= 4);
    for resource in resources {
        let name = resource.as_str().unwrap();
        assert!(manifests().join(name).is_file(), "{name}");
    }
}

#[test]
fn the_daemonset_runs_the_install_the_node_tests_ran() {
    let daemonset = manifests().join("daemonset.yaml");
    let install = yaml(
        &daemonset,
        "[c for c in doc['spec']['template']['spec']['initContainers'] if c['name'] == 'install'][0]",
    );
    let args: Vec<&str> = install["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arg| arg.as_str().unwrap())
        .collect();
    // The tests' own arguments, then the node's root and its systemd
    // where the tests give a folder and a pid file.
    assert_eq!(args[..INSTALL.len()], INSTALL, "{args:?}");
    assert_eq!(
        args[INSTALL.len()..],
        ["--host-root", "/host", "--restart", "systemd"]
    );
    // The image's entry point (contrib/container/Dockerfile.installer).
    let dockerfile =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/container/Dockerfile.installer");
    let entry = fs::read_to_string(dockerfile).unwrap();
    let entry = entry
        .lines()
        .find_map(|line| line.strip_prefix("ENTRYPOINT "))
        .unwrap();
    let command: serde_json::Value = serde_json::from_str(entry).unwrap();
    assert_eq!(install["command"], command);
    // Each mount the steps use is the host's path under /host.
    let mounts = install["volumeMounts"].as_array().unwrap();
    for path in [
        "/etc/containerd",
        "/usr/local",
        "/var/lib/eatmydata",
        "/run/containerd",
    ] {
        let at = format!("/host{path}");
        assert!(mounts.iter().any(|m| m["mountPath"] == at.as_str()), "{at}");
    }
    let class = yaml(&manifests().join("runtimeclass.yaml"), "doc");
    assert_eq!(class["handler"], "eatmydata");
    assert_eq!(
        class["scheduling"]["nodeSelector"]["eatmydata.io/runtime"],
        "true"
    );
}
