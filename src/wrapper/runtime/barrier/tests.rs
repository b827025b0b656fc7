use super::*;

fn spec(env: &[&str], annotations: Value) -> Value {
    json!({
        "root": {"path": "rootfs"},
        "process": {"args": ["sh"], "env": env},
        "annotations": annotations,
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc"},
            {"destination": "/dev", "type": "tmpfs", "source": "tmpfs"},
            {"destination": "/etc/hosts", "type": "bind", "source": "/d/hosts", "options": ["rbind", "rprivate"]},
            {"destination": "/cache", "source": "/d/cache", "options": ["rbind", "rw"]},
            {"destination": "/ro", "type": "bind", "source": "/d/ro", "options": ["rbind", "ro"]},
            {"destination": "/dev/.eatmydata/report", "type": "bind", "source": "/run/e/report"},
            {"destination": "/dev/.eatmydatax", "type": "bind", "source": "/d/x"},
            {"destination": "/rel", "type": "bind", "source": "relative"},
        ],
    })
}

#[test]
fn builders_are_told_apart_by_verb_and_id() {
    let plain = spec(&["PATH=/bin"], json!({}));
    let id = OsStr::new;
    // BuildKit: a run that waits.
    assert_eq!(
        step(&plain, id("w4diy"), Path::new("/d/executor/w4diy"), true),
        Some(Builder::BuildKit)
    );
    // buildah: `buildah-` and its bundle's name, as recorded.
    let bundle = Path::new("/var/tmp/buildah1389496349");
    assert_eq!(
        step(&plain, id("buildah-buildah1389496349"), bundle, false),
        Some(Builder::Buildah)
    );
    for (other, bundle) in [
        ("buildah-buildah1", "/var/tmp/buildah2"),
        ("buildah-x", "/var/tmp/x"),
        ("c98ef7b95cfc", "/run/docker/moby/c98ef7b95cfc"),
        ("buildah-buildah1", "/"),
    ] {
        assert_eq!(step(&plain, id(other), Path::new(bundle), false), None);
    }
    // Docker's legacy builder: its steps are plain containers, unless asked.
    let docker = Path::new("/run/docker/moby/c98e");
    let asked = spec(&["EATMYDATA_BARRIER=1"], json!({}));
    assert_eq!(
        step(&asked, id("c98e"), docker, false),
        Some(Builder::Asked)
    );
    let annotated = spec(&[], json!({ANNOTATION: "1"}));
    assert_eq!(
        step(&annotated, id("c98e"), docker, false),
        Some(Builder::Asked)
    );
    // Off takes it away, the annotation first.
    let off = spec(&["EATMYDATA_BARRIER=0"], json!({}));
    assert_eq!(step(&off, id("w4"), docker, true), None);
    let both = spec(&["EATMYDATA_BARRIER=1"], json!({ANNOTATION: "0"}));
    assert_eq!(step(&both, id("w4"), docker, true), None);
    let last = spec(&["EATMYDATA_BARRIER=0", "EATMYDATA_BARRIER=1"], json!({}));
    assert_eq!(step(&last, id("w4"), docker, true), Some(Builder::BuildKit));
}

#[test]
fn a_marked_spec_is_flushed_at_its_delete() {
    let mut value = spec(&[], json!({"other": "kept"}));
    assert!(!marked(&value));
    mark(&mut value, Builder::Buildah).unwrap();
    assert!(marked(&value));
    assert_eq!(
        value["annotations"],
        json!({"other": "kept", ANNOTATION: "buildah"})
    );
    let mut bare = json!({});
    mark(&mut bare, Builder::Asked).unwrap();
    assert!(marked(&bare));
    assert!(!marked(&json!({"annotations": {ANNOTATION: "0"}})));
    assert!(mark(&mut json!([]), Builder::Asked).is_err());
}

#[test]
fn the_targets_are_the_rootfs_and_read_write_binds() {
    let value = spec(&[], json!({}));
    let targets = targets(&value, Path::new("/b"));
    let expected: Vec<PathBuf> = ["/b/rootfs", "/d/hosts", "/d/cache", "/d/x"]
        .iter()
        .map(PathBuf::from)
        .collect();
    assert_eq!(targets, expected);
    let absolute = json!({"root": {"path": "/d/executor/w4/rootfs"}});
    assert_eq!(
        super::targets(&absolute, Path::new("/b")),
        [PathBuf::from("/d/executor/w4/rootfs")]
    );
    assert!(super::targets(&json!({}), Path::new("/b")).is_empty());
}

#[test]
fn each_file_system_is_flushed_once_and_devices_never_opened() {
    let dir = std::env::temp_dir().join(format!("eatmydata-barrier-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(dir.join("f"), b"x").unwrap();
    let targets = [
        dir.join("a"),
        dir.join("f"),
        dir.clone(),
        "/dev/null".into(),
    ];
    let done = flush(&targets);
    // The folder, the file and their parent are on one file system.
    assert_eq!(done.flushed, 1, "{done:?}");
    assert_eq!(done.failed.len(), 1, "{done:?}");
    assert!(done.failed[0].starts_with("/dev/null"), "{done:?}");
    let missing = flush(&[dir.join("gone")]);
    assert_eq!((missing.flushed, missing.failed.len()), (0, 1));
    assert!(
        done.describe("buildkit")
            .contains("syncfs of 1 file system")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
