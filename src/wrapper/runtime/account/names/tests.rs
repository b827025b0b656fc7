use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::PathBuf;

use serde_json::json;

use super::*;

const ID: &str = "4f3c0a9e1b2d4c5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6";

/// A folder of root's, mode 0755, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new(label: &str) -> Folder {
        let path =
            std::env::temp_dir().join(format!("eatmydata-names-{label}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        Folder(path)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Writes `text` at `path` with `mode`, its folders made 0755.
fn write(path: &Path, text: &str, mode: u32) {
    let folder = path.parent().unwrap();
    fs::create_dir_all(folder).unwrap();
    fs::set_permissions(folder, fs::Permissions::from_mode(0o755)).unwrap();
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn docker_spec(root: &Path, id: &str) -> Value {
    json!({"mounts": [
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/etc/hostname", "type": "bind",
         "source": root.join("containers").join(id).join("hostname"), "options": ["rbind"]},
    ]})
}

const DOCKER: &str = r#"{"ID":"x","Name":"/web-1","Config":{"Hostname":"4f3c0a9e1b2d","Image":"eatmydata-test/account:latest"},"Image":"sha256:98c3"}"#;

#[test]
fn annotations_name_cri_containers_with_their_pod() {
    let spec = json!({"annotations": {
        "io.kubernetes.cri.container-name": "postgres",
        "io.kubernetes.cri.sandbox-name": "ci-database",
        "io.kubernetes.cri.image-name": "docker.io/library/postgres:16",
    }});
    let named = of(&spec, Path::new("/nowhere"), ID);
    assert_eq!(named.name, "ci-database/postgres");
    assert_eq!(named.image, "docker.io/library/postgres:16");
    assert_eq!(of(&json!({}), Path::new("/nowhere"), ID), Named::default());
    let sandbox = json!({"annotations": {
        "io.kubernetes.cri.container-type": "sandbox",
        "io.kubernetes.cri.sandbox-name": "ci-database",
    }});
    assert_eq!(
        of(&sandbox, Path::new("/nowhere"), ID).name,
        "ci-database (sandbox)"
    );
}

#[test]
fn dockers_config_is_found_only_under_the_containers_own_id() {
    let root = Path::new("/var/lib/docker");
    let wanted = root.join("containers").join(ID).join("config.v2.json");
    assert_eq!(docker_config(&docker_spec(root, ID), ID), Some(wanted));
    // Another container's folder, a relative path, another file's name.
    assert_eq!(docker_config(&docker_spec(root, "other"), ID), None);
    assert_eq!(docker_config(&docker_spec(Path::new("var"), ID), ID), None);
    let mut renamed = docker_spec(root, ID);
    renamed["mounts"][1]["source"] = json!(format!("/var/lib/docker/containers/{ID}/hosts"));
    assert_eq!(docker_config(&renamed, ID), None);
    assert_eq!(docker_config(&json!({}), ID), None);
}

#[test]
fn dockers_config_gives_the_name_and_the_image_as_asked() {
    let named = parse_docker(DOCKER.as_bytes()).unwrap();
    assert_eq!(
        named,
        Named {
            name: "web-1".into(),
            image: "eatmydata-test/account:latest".into()
        }
    );
    assert_eq!(parse_docker(b"{\"Name\": 3}"), None);
    assert_eq!(parse_docker(b"not json"), None);
}

#[test]
fn podmans_list_gives_the_first_name_and_the_image_name() {
    let bundle = PathBuf::from(format!(
        "/var/lib/containers/storage/overlay-containers/{ID}/userdata"
    ));
    assert_eq!(
        podman_list(&bundle, ID),
        Some("/var/lib/containers/storage/overlay-containers/containers.json".into())
    );
    assert_eq!(podman_list(&bundle, "other"), None);
    assert_eq!(
        podman_list(
            Path::new("/run/containerd/io.containerd.runtime.v2.task/moby/x"),
            "x"
        ),
        None
    );
    let list = json!([
        {"id": "other", "names": ["not-this"], "metadata": "{}"},
        {"id": ID, "names": ["myname", "alias"], "image": "98c3",
         "metadata": "{\"image-name\":\"localhost/tiny:1\",\"name\":\"myname\"}"},
    ])
    .to_string();
    let named = parse_podman(list.as_bytes(), ID).unwrap();
    assert_eq!(
        named,
        Named {
            name: "myname".into(),
            image: "localhost/tiny:1".into()
        }
    );
    assert_eq!(parse_podman(list.as_bytes(), "absent"), None);
}

#[test]
fn an_engines_file_is_read_only_if_root_alone_may_write_it() {
    let root = Folder::new("docker");
    let config = root.0.join("containers").join(ID).join("config.v2.json");
    write(&config, DOCKER, 0o600);
    let spec = docker_spec(&root.0, ID);
    assert_eq!(of(&spec, Path::new("/nowhere"), ID).name, "web-1");
    // An annotation's image is kept; the engine's name fills the gap.
    let mut annotated = spec.clone();
    annotated["annotations"] = json!({"org.opencontainers.image.source": "https://example.org/x"});
    let named = of(&annotated, Path::new("/nowhere"), ID);
    assert_eq!(
        (named.name.as_str(), named.image.as_str()),
        ("web-1", "https://example.org/x")
    );
    // Others may write it: not read.
    fs::set_permissions(&config, fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(of(&spec, Path::new("/nowhere"), ID), Named::default());
    // A link in its place: not followed.
    let elsewhere = root.0.join("planted.json");
    write(&elsewhere, DOCKER, 0o600);
    fs::remove_file(&config).unwrap();
    symlink(&elsewhere, &config).unwrap();
    assert_eq!(of(&spec, Path::new("/nowhere"), ID), Named::default());
    // Its folder open to others: not read.
    fs::remove_file(&config).unwrap();
    write(&config, DOCKER, 0o600);
    assert_eq!(of(&spec, Path::new("/nowhere"), ID).name, "web-1");
    fs::set_permissions(config.parent().unwrap(), fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(of(&spec, Path::new("/nowhere"), ID), Named::default());
}

#[test]
fn podmans_bundle_leads_to_its_list() {
    let storage = Folder::new("podman");
    let containers = storage.0.join("vfs-containers");
    let bundle = containers.join(ID).join("userdata");
    fs::create_dir_all(&bundle).unwrap();
    let list = json!([{"id": ID, "names": ["myname"], "metadata": "{\"image-name\":\"localhost/tiny:1\"}"}]);
    write(
        &containers.join("containers.json"),
        &list.to_string(),
        0o600,
    );
    let named = of(&json!({}), &bundle, ID);
    assert_eq!(
        named,
        Named {
            name: "myname".into(),
            image: "localhost/tiny:1".into()
        }
    );
}
