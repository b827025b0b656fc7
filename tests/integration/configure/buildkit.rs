//! `configure docker --default` on Docker 26 or later also writes the
//! systemd drop-in that sends BuildKit's RUN steps through the runtime
//! (`DOCKER_BUILDKIT_RUNC_COMMAND`), which systemd reads without a
//! complaint; shown by a dry run, said to take effect at dockerd's next
//! restart, a note instead for older Dockers, and gone with --remove.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::configure_ok;
use crate::common::{TempDir, registered_runtime};

/// What `systemd-analyze verify` says of `unit` with the units and
/// drop-ins of `dir`: its stderr, where it warns of every line it ignores.
fn verified(dir: &Path, unit: &str) -> String {
    let output = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(dir.join(unit))
        .env("SYSTEMD_UNIT_PATH", format!("{}:", dir.display()))
        .output()
        .expect("run systemd-analyze (systemd is in scripts/setup-test-deps)");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn docker_26_gets_the_buildkit_drop_in_and_remove_takes_it_away() {
    let dir = TempDir::new("configure-buildkit");
    let systemd = dir.join("systemd");
    fs::create_dir(&systemd).unwrap();
    let unit = "[Unit]\nDescription=dockerd\n[Service]\nExecStart=/bin/true\n";
    fs::write(systemd.join("docker.service"), unit).unwrap();
    let drop_in = systemd.join("docker.service.d/eatmydata-buildkit.conf");
    let runtime = registered_runtime();
    let config = dir.join("daemon.json");
    let common = [
        "docker",
        "--config",
        config.to_str().unwrap(),
        "--systemd-dir",
        systemd.to_str().unwrap(),
    ];
    let on = |version: &str, extra: &[&str]| {
        let args = [
            &common[..],
            &["--default", "--docker-version", version],
            &["--runtime-path", runtime.to_str().unwrap()],
            extra,
        ]
        .concat();
        configure_ok(dir.path(), &args)
    };
    let line = format!(
        "Environment=\"DOCKER_BUILDKIT_RUNC_COMMAND={}\"",
        runtime.display()
    );
    let dry = on("26.1.5", &["--dry-run"]);
    assert!(
        dry.contains(&format!("--- {}\n", drop_in.display())),
        "{dry}"
    );
    assert!(dry.contains(&format!("\n+{line}\n")), "{dry}");
    assert!(dry.ends_with("Dry run: nothing written.\n"), "{dry}");
    assert!(!drop_in.exists() && !config.exists());
    // Older, or unknown: a note, no drop-in.
    let old = on("Docker version 25.0.3, build 4debf41", &["--dry-run"]);
    assert!(old.contains("Docker 25 does not read it"), "{old}");
    assert!(!old.contains("eatmydata-buildkit.conf"), "{old}");

    let said = on("26.1.5", &[]);
    assert!(
        said.contains("once dockerd restarts") && said.contains("systemctl daemon-reload"),
        "{said}"
    );
    let text = fs::read_to_string(&drop_in).unwrap();
    assert!(text.contains(&format!("\n[Service]\n{line}\n")), "{text}");
    // systemd reads it without a word; control: a line it cannot read
    // in the same place is named.
    assert_eq!(verified(&systemd, "docker.service"), "");
    let control = TempDir::new("configure-buildkit-control");
    fs::create_dir(control.join("docker.service.d")).unwrap();
    fs::write(control.join("docker.service"), unit).unwrap();
    let broken = text.replace("Environment=\"", "Environment=\"unterminated ");
    let broken = broken.replace("\"\n", "\n");
    fs::write(
        control.join("docker.service.d/eatmydata-buildkit.conf"),
        broken,
    )
    .unwrap();
    let complaint = verified(control.path(), "docker.service");
    assert!(complaint.contains("eatmydata-buildkit.conf"), "{complaint}");

    let again = on("26.1.5", &[]);
    assert!(
        again.contains("already sets DOCKER_BUILDKIT_RUNC_COMMAND"),
        "{again}"
    );
    assert!(!again.contains("restarts"), "{again}");

    let off = [&common[..], &["--remove"]].concat();
    let dry = configure_ok(dir.path(), &[&off[..], &["--dry-run"]].concat());
    assert!(
        dry.contains(&format!("Would remove {}.", drop_in.display())),
        "{dry}"
    );
    assert!(drop_in.exists());
    let said = configure_ok(dir.path(), &off);
    assert!(
        said.contains(&format!("Removed {}", drop_in.display())),
        "{said}"
    );
    assert!(!drop_in.exists());
    // The folder it made, empty, goes too; the unit stays.
    assert!(!systemd.join("docker.service.d").exists());
    assert!(systemd.join("docker.service").exists());
    let again = configure_ok(dir.path(), &off);
    assert!(!again.contains("Removed"), "{again}");
}
