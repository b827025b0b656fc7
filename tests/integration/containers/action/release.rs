//! scripts/release, run as .github/workflows/release.yml runs it on a
//! tag (the publishing itself needs GitHub): the static single file for
//! x86_64 and aarch64, each run (aarch64 under qemu-user) and carrying
//! its library; the seccomp profile of each engine version it carries,
//! the same as `eatmydata profile` prints; SHA256SUMS that `sha256sum -c`
//! accepts, also written into the action's tree; the installer image as an OCI archive with both
//! platforms, loaded by podman and run.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::said;
use crate::common::TempDir;
use crate::containers::daemon::RunDir;

fn run(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(output.status.success(), "{command:?}: {}", said(&output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A file of the OCI archive's layout.
fn member(archive: &Path, name: &str) -> Value {
    let text = run(Command::new("tar").arg("-xOf").arg(archive).arg(name));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn scripts_release_makes_both_architectures_and_the_image() {
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    let dir = TempDir::new("release");
    let (out, tree) = (dir.join("out"), dir.join("tree"));
    run(Command::new(super::repository().join("scripts/release"))
        .arg(&tag)
        .arg("--out")
        .arg(&out)
        .arg("--tree")
        .arg(&tree));

    let sums = fs::read_to_string(out.join("SHA256SUMS")).unwrap();
    run(Command::new("sha256sum")
        .args(["--check", "--strict", "SHA256SUMS"])
        .current_dir(&out));
    // The binaries, the image, and a profile per default carried.
    let listed = run(Command::new(out.join("eatmydata-x86_64")).args(["profile", "--list"]));
    assert_eq!(listed.lines().count(), 4, "{listed}");
    assert_eq!(sums.lines().count(), 3 + listed.lines().count(), "{sums}");
    for line in listed.lines() {
        let [engine, version, file] = line.split(' ').collect::<Vec<_>>()[..] else {
            panic!("{line}")
        };
        assert!(
            sums.contains(&format!("  {file}\n")),
            "{file} not in {sums}"
        );
        let printed = run(Command::new(crate::common::command()).args([
            "profile",
            engine,
            "--engine-version",
            version,
        ]));
        assert_eq!(
            fs::read_to_string(out.join(file)).unwrap(),
            printed,
            "{file}"
        );
        let profile: Value = serde_json::from_str(&printed).unwrap();
        assert!(profile["syscalls"].as_array().is_some_and(|r| r.len() > 10));
    }
    assert_eq!(
        fs::read_to_string(tree.join("action/release/SHA256SUMS")).unwrap(),
        sums
    );
    assert_eq!(
        fs::read_to_string(tree.join("action/release/VERSION")).unwrap(),
        format!("{tag}\n")
    );

    for (arch, machine) in [("x86_64", "x86-64"), ("aarch64", "ARM aarch64")] {
        let file = out.join(format!("eatmydata-{arch}"));
        let kind = run(Command::new("file").arg(&file));
        assert!(kind.contains(machine) && kind.contains("static"), "{kind}");
        let version = match arch {
            "x86_64" => run(Command::new(&file).arg("--version")),
            _ => run(Command::new("qemu-aarch64").arg(&file).arg("--version")),
        };
        assert!(
            version.contains("library: embedded, sha256"),
            "{arch}: {version}"
        );
    }

    let archive = out.join("eatmydata-installer.oci.tar");
    let index = member(&archive, "index.json");
    let top = &index["manifests"][0];
    let name = top["annotations"]["org.opencontainers.image.ref.name"].as_str();
    assert_eq!(name, Some(&*format!("eatmydata-installer:{tag}")));
    let digest = top["digest"].as_str().unwrap().replace("sha256:", "");
    let platforms: Vec<String> = member(&archive, &format!("blobs/sha256/{digest}"))["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["platform"]["architecture"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(platforms, ["amd64", "arm64"]);

    // podman, with storage of the test's own (a short path: its run
    // root must fit 50 characters), loads it and runs it; with runc named,
    // as the tests' containers.conf names it: podman's own default is crun
    // wherever crun is installed, which refuses this machine's hybrid
    // cgroups ("cgroups in hybrid mode not supported").
    let storage = RunDir::new("release-podman");
    let podman = || {
        let mut podman = Command::new("podman");
        podman
            .args(["--runtime", "runc"])
            .arg("--root")
            .arg(storage.join("root"))
            .arg("--runroot")
            .arg(storage.join("run"))
            .args(["--storage-driver", "vfs", "--cgroup-manager", "cgroupfs"])
            .args(["--events-backend", "none"]);
        podman
    };
    run(podman().arg("load").arg("--input").arg(&archive));
    let image = format!("localhost/eatmydata-installer:{tag}");
    let help = run(podman()
        .args([
            "run",
            "--rm",
            "--network=none",
            "--ulimit",
            "nofile=4096:4096",
        ])
        .args(["--ulimit", "nproc=4096:4096", &image]));
    assert!(help.contains("install"), "{help}");
}
