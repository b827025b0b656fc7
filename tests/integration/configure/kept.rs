//! A machine's own engine files, registered twice in a row: only
//! eatmydata's keys change, and only the first time; every other line
//! stays byte for byte, the file keeps its mode and owner, and the old one
//! is kept as the backup.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};

use similar::{ChangeTag, TextDiff};

use super::{DAEMON_JSON, RUNTIME, configure_ok, containerd_config, containers_conf};
use crate::common::TempDir;

/// The lines `new` lost from `old`, and those it gained.
fn changes(old: &str, new: &str) -> (Vec<String>, Vec<String>) {
    let diff = TextDiff::from_lines(old, new);
    let pick = |tag| {
        diff.iter_all_changes()
            .filter(|change| change.tag() == tag)
            .map(|change| change.value().trim_end_matches('\n').to_owned())
            .collect()
    };
    (pick(ChangeTag::Delete), pick(ChangeTag::Insert))
}

/// Registers with `--default` into `file` holding `theirs` (mode 0640,
/// owned by 1234:1234), twice, and checks what every file must: the backup
/// is the old file, mode and owner stay, the second run changes nothing.
/// The new text.
fn registered_twice(
    dir: &TempDir,
    engine: &str,
    file: &str,
    theirs: &str,
    extra: &[&str],
) -> String {
    let path = dir.join(file);
    fs::write(&path, theirs).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    chown(&path, Some(1234), Some(1234)).unwrap();
    let config = path.to_str().unwrap();
    let mut args = vec![
        engine,
        "--default",
        "--config",
        config,
        "--runtime-path",
        &*RUNTIME,
    ];
    args.extend(extra);
    let said = configure_ok(dir.path(), &args);
    let backup = dir.join(format!("{file}.bak-eatmydata"));
    assert!(said.contains(&format!("{}", backup.display())), "{said}");
    assert!(said.contains("Next: "), "{said}");
    assert_eq!(fs::read_to_string(&backup).unwrap(), theirs);
    let new = fs::read_to_string(&path).unwrap();
    assert_ne!(new, theirs);
    let meta = fs::metadata(&path).unwrap();
    assert_eq!(
        (meta.mode() & 0o7777, meta.uid(), meta.gid()),
        (0o640, 1234, 1234)
    );
    // Nothing else is left in the folder: no temporary file.
    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "eatmydata-runtime")
        .collect();
    names.sort();
    assert_eq!(names, [file.to_owned(), format!("{file}.bak-eatmydata")]);

    fs::write(&backup, "the first backup").unwrap();
    let again = configure_ok(dir.path(), &args);
    assert!(again.contains("nothing changed"), "{again}");
    assert_eq!(fs::read_to_string(&path).unwrap(), new);
    assert_eq!(fs::read_to_string(&backup).unwrap(), "the first backup");
    new
}

#[test]
fn containerds_config_keeps_every_byte_not_its_own() {
    let dir = TempDir::new("configure-containerd");
    let theirs = containerd_config();
    let new = registered_twice(&dir, "containerd", "config.toml", &theirs, &[]);
    let (lost, gained) = changes(&theirs, &new);
    assert_eq!(lost, ["      default_runtime_name = \"runc\""]);
    let runtimes = "plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.eatmydata";
    assert_eq!(
        gained,
        [
            // What it replaced, noted for --remove.
            "      default_runtime_name = \"eatmydata\" \
             # eatmydata-runtime configure replaced: \"runc\"",
            &format!("        [{runtimes}]"),
            "          runtime_type = \"io.containerd.runc.v2\"",
            // The pod's and the container's io.eatmydata.* reach the spec.
            "          pod_annotations = [\"io.eatmydata.*\"]",
            "          container_annotations = [\"io.eatmydata.*\"]",
            "",
            &format!("          [{runtimes}.options]"),
            // runc's own option, which the kubelet needs the same.
            "            SystemdCgroup = true",
            &format!("            BinaryName = \"{RUNTIME}\""),
            "",
        ]
    );
}

#[test]
fn podmans_containers_conf_keeps_every_byte_not_its_own() {
    let dir = TempDir::new("configure-podman");
    let theirs = containers_conf();
    let new = registered_twice(&dir, "podman", "containers.conf", &theirs, &[]);
    let (lost, gained) = changes(&theirs, &new);
    assert_eq!(lost, Vec::<String>::new());
    assert_eq!(
        gained,
        [
            "runtime = \"eatmydata\"",
            &format!("eatmydata = [\"{RUNTIME}\"]"),
        ]
    );
}

#[test]
fn dockers_daemon_json_keeps_every_key_not_its_own_in_order() {
    let dir = TempDir::new("configure-docker");
    let real = ["--real-runtime", "runc"];
    let new = registered_twice(&dir, "docker", "daemon.json", DAEMON_JSON, &real);
    // JSON has no comments; each key of the user's keeps its value, its
    // place and its lines, but for the commas JSON puts between entries.
    let (lost, gained) = changes(DAEMON_JSON, &new);
    assert_eq!(lost, ["    \"storage-driver\": \"overlay2\""]);
    assert_eq!(
        gained,
        [
            "        },",
            "        \"eatmydata\": {",
            &format!("            \"path\": \"{RUNTIME}\","),
            "            \"runtimeArgs\": [",
            "                \"--eatmydata-runtime=runc\"",
            "            ]",
            // (the old closing brace of nvidia's entry closes ours)
            "    \"storage-driver\": \"overlay2\",",
            "    \"default-runtime\": \"eatmydata\"",
        ]
    );
}
