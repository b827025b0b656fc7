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
    // Docker's legacy builder: its steps are plain containers, unless the
    // engine's side asks (an annotation).
    let docker = Path::new("/run/docker/moby/c98e");
    let annotated = spec(&[], json!({ANNOTATION: "1"}));
    assert_eq!(
        step(&annotated, id("c98e"), docker, false),
        Some(Builder::Asked)
    );
    // The container's environment (an image's ENV) has no say, either way.
    let env = spec(&["EATMYDATA_BARRIER=1"], json!({}));
    assert_eq!(step(&env, id("c98e"), docker, false), None);
    let env_off = spec(&["EATMYDATA_BARRIER=0"], json!({}));
    assert_eq!(
        step(&env_off, id("w4"), docker, true),
        Some(Builder::BuildKit)
    );
    // Off takes it away.
    let off = spec(&["EATMYDATA_BARRIER=1"], json!({ANNOTATION: "0"}));
    assert_eq!(step(&off, id("w4"), docker, true), None);
}

#[test]
fn a_marked_spec_is_flushed_at_its_delete() {
    let mut value = spec(&[], json!({"other": "kept"}));
    assert!(!marked(&value));
    let named = [PathBuf::from("/b/rootfs"), PathBuf::from("/d/cache")];
    mark(&mut value, Builder::Buildah, &named).unwrap();
    assert!(marked(&value));
    assert_eq!(
        value["annotations"],
        json!({"other": "kept", ANNOTATION: "buildah", TARGETS: r#"["/b/rootfs","/d/cache"]"#})
    );
    // What the create named, not what the spec names now.
    assert_eq!(marked_targets(&value, Path::new("/elsewhere")), named);
    // A spec marked without them: the spec's own.
    let mut older = spec(&[], json!({ANNOTATION: "buildah"}));
    assert_eq!(
        marked_targets(&older, Path::new("/b")),
        targets(&older, Path::new("/b"))
    );
    older["annotations"][TARGETS] = json!("not json");
    assert_eq!(marked_targets(&older, Path::new("/b")).len(), 4);
    let mut bare = json!({});
    mark(&mut bare, Builder::Asked, &[]).unwrap();
    assert!(marked(&bare));
    assert!(!marked(&json!({"annotations": {ANNOTATION: "0"}})));
    assert!(mark(&mut json!([]), Builder::Asked, &[]).is_err());
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

/// A link put in place of a target after the `create` resolved it (a
/// container writing in a folder above a bind's source) leads the
/// barrier nowhere: not flushed, said; the path as resolved, flushed.
#[test]
fn a_link_planted_after_create_is_not_followed() {
    let dir = std::env::temp_dir().join(format!("eatmydata-barrier-link-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("volume/sub")).unwrap();
    std::fs::create_dir_all(dir.join("host-only")).unwrap();
    std::os::unix::fs::symlink(dir.join("volume"), dir.join("through-a-link")).unwrap();
    // At create: a link of the host's in the path, resolved then.
    let named = resolved(vec![dir.join("through-a-link/sub"), dir.join("gone")]);
    assert_eq!(named, [dir.join("volume/sub"), dir.join("gone")]);
    assert_eq!(flush(&named[..1]).flushed, 1);
    // The container swaps its folder for a link to the host's.
    std::fs::remove_dir(dir.join("volume/sub")).unwrap();
    std::os::unix::fs::symlink(dir.join("host-only"), dir.join("volume/sub")).unwrap();
    let done = flush(&named[..1]);
    assert_eq!(done.flushed, 0, "{done:?}");
    assert_eq!(done.failed.len(), 1, "{done:?}");
    assert!(done.failed[0].contains("symbolic links"), "{done:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
