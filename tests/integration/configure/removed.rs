//! `configure ENGINE --remove` on a machine's own files: registered then
//! removed, each file is byte for byte as it was (docker's but for
//! `default-runtime: runc`, which dockerd needs); a second removal
//! changes nothing; a dry run lists the removal and writes nothing; a
//! file made by registration goes again.

use std::fs;

use super::{DAEMON_JSON, RUNTIME, configure, configure_ok, containerd_config, containers_conf};
use crate::common::TempDir;

/// Registers (`--default`) into `file` holding `theirs`, then removes:
/// the text after the removal, which a second removal leaves alone.
fn registered_then_removed(engine: &str, theirs: &str, extra: &[&str]) -> String {
    let dir = TempDir::new("configure-removed");
    let path = dir.join("config");
    fs::write(&path, theirs).unwrap();
    let config = path.to_str().unwrap();
    let mut args = vec![engine, "--config", config];
    let mut register = args.clone();
    register.extend(["--default", "--runtime-path", &*RUNTIME]);
    register.extend(extra);
    configure_ok(dir.path(), &register);
    let registered = fs::read_to_string(&path).unwrap();
    assert_ne!(registered, theirs, "{engine}");
    args.push("--remove");
    // A dry run lists what goes, and writes nothing.
    let dry = configure_ok(dir.path(), &[&args[..], &["--dry-run"]].concat());
    assert!(dry.contains(&format!("--- {config}\n")), "{dry}");
    assert!(dry.contains("(without eatmydata)"), "{dry}");
    assert!(
        dry.lines()
            .any(|l| l.starts_with('-') && l.contains("eatmydata"))
    );
    assert!(dry.ends_with("Dry run: nothing written.\n"), "{dry}");
    assert_eq!(fs::read_to_string(&path).unwrap(), registered);
    let said = configure_ok(dir.path(), &args);
    let backup = dir.join("config.bak-eatmydata");
    assert!(said.contains(&backup.display().to_string()), "{said}");
    assert_eq!(fs::read_to_string(&backup).unwrap(), registered);
    let removed = fs::read_to_string(&path).unwrap();
    let again = configure_ok(dir.path(), &args);
    assert!(again.contains("nothing changed"), "{again}");
    assert_eq!(fs::read_to_string(&path).unwrap(), removed);
    removed
}

#[test]
fn containerd_podman_and_crio_files_come_back_byte_for_byte() {
    let crio = "[crio.runtime]\n# crun, as the fleet runs it\ndefault_runtime = \"crun\"\n\n\
                [crio.runtime.runtimes.crun]\nruntime_path = \"/usr/bin/crun\"\n";
    for (engine, theirs) in [
        ("containerd", containerd_config()),
        ("podman", containers_conf()),
        ("crio", crio.to_owned()),
    ] {
        let removed = registered_then_removed(engine, &theirs, &[]);
        assert!(removed == theirs, "{engine}: not as it was:\n{removed}");
    }
}

#[test]
fn dockers_daemon_json_comes_back_but_for_runc_as_the_default() {
    let real = ["--real-runtime", "runc"];
    let removed = registered_then_removed("docker", DAEMON_JSON, &real);
    // dockerd keeps a key that goes missing on reload: runc, said.
    let expected = DAEMON_JSON.replace(
        "\"storage-driver\": \"overlay2\"\n",
        "\"storage-driver\": \"overlay2\",\n    \"default-runtime\": \"runc\"\n",
    );
    assert_eq!(removed, expected);
}

#[test]
fn a_file_registration_made_goes_again_its_backup_kept() {
    for engine in ["docker", "podman", "containerd", "crio"] {
        let dir = TempDir::new("configure-made-removed");
        let path = dir.join("etc/engine/config");
        let config = path.to_str().unwrap();
        configure_ok(
            dir.path(),
            &[engine, "--config", config, "--runtime-path", &*RUNTIME],
        );
        let made = fs::read_to_string(&path).unwrap();
        let said = configure_ok(dir.path(), &[engine, "--config", config, "--remove"]);
        assert!(
            said.contains(&format!("Removed {config}")),
            "{engine}: {said}"
        );
        assert!(!path.exists(), "{engine}");
        let backup = dir.join("etc/engine/config.bak-eatmydata");
        assert_eq!(fs::read_to_string(backup).unwrap(), made);
        let again = configure_ok(dir.path(), &[engine, "--config", config, "--remove"]);
        assert!(again.contains("nothing changed"), "{again}");
        assert!(!path.exists());
    }
}

/// What `--remove` puts back from the comment registration wrote is a
/// runtime's name only: a comment edited to hold another value (an
/// inline table, a list) is refused, named, and the file left as it is.
/// Security review 3 (issue 45): any TOML value came back as the
/// engine's setting. The control: the comment as registration writes it.
#[test]
fn remove_puts_back_only_a_runtime_s_name_from_its_comment() {
    let dir = TempDir::new("configure-removed-noted");
    let path = dir.join("containers.conf");
    let config = path.to_str().unwrap();
    let noted = |was: &str| {
        format!(
            "[engine]\nruntime = \"eatmydata\" # eatmydata-runtime configure replaced: {was}\n\n\
             [engine.runtimes]\neatmydata = [\"{}\"]\n",
            &*RUNTIME
        )
    };
    let remove = ["podman", "--remove", "--config", config];
    for was in ["{ path = \"/tmp/theirs\" }", "[\"/tmp/theirs\"]", "42"] {
        let planted = noted(was);
        fs::write(&path, &planted).unwrap();
        let output = configure(dir.path(), &remove);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{was}: {stderr}");
        assert!(stderr.starts_with("eatmydata: "), "{stderr}");
        assert!(stderr.contains("not a runtime's name"), "{stderr}");
        assert_eq!(fs::read_to_string(&path).unwrap(), planted, "{was}");
    }
    fs::write(&path, noted("\"crun\"")).unwrap();
    configure_ok(dir.path(), &remove);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "[engine]\nruntime = \"crun\"\n"
    );
}
