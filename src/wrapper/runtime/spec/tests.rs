use super::*;

/// A `config.json` dockerd 20.10 (Debian's docker.io) wrote for
/// `docker run --runtime=... tiny /bin/probe-static`, recorded here, its
/// data and exec roots renamed to the default ones; Docker's default
/// seccomp profile included.
const DOCKER: &str = include_str!("docker-config.json");
/// The same from podman 4.3 with runc, its default profile included.
const PODMAN: &str = include_str!("podman-config.json");

const LIBRARY: &str = "/usr/lib/eatmydata/libeatmydata.so";

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn edited(text: &str) -> (Value, Done) {
    let mut spec = parse(text);
    let done = edit_config(&mut spec, Path::new(LIBRARY)).unwrap();
    (spec, done)
}

/// `spec` with what the edit owns taken out: our mount, our `LD_PRELOAD`,
/// the sync calls in any seccomp rule, the rules that name nothing else,
/// and our annotation.
fn without_ours(spec: &Value) -> Value {
    let mut spec = spec.clone();
    let mounts = spec["mounts"].as_array_mut().unwrap();
    mounts.retain(|m| m["destination"] != MOUNTED);
    let env = spec["process"]["env"].as_array_mut().unwrap();
    env.retain(|e| !e.as_str().unwrap().starts_with("LD_PRELOAD="));
    let syncs = [
        "fsync",
        "fdatasync",
        "sync",
        "syncfs",
        "sync_file_range",
        "msync",
    ];
    if let Some(rules) = spec["linux"]["seccomp"]["syscalls"].as_array_mut() {
        for rule in rules.iter_mut() {
            let names = rule["names"].as_array_mut().unwrap();
            names.retain(|n| !syncs.contains(&n.as_str().unwrap()));
        }
        rules.retain(|rule| !rule["names"].as_array().unwrap().is_empty());
    }
    if let Some(annotations) = spec.get_mut("annotations").and_then(Value::as_object_mut) {
        annotations.shift_remove(APPLIED);
        if annotations.is_empty() {
            spec.as_object_mut().unwrap().shift_remove("annotations");
        }
    }
    spec
}

#[test]
fn every_other_byte_of_structure_is_kept_in_its_order() {
    for text in [DOCKER, PODMAN] {
        let before = parse(text);
        let (after, done) = edited(text);
        assert!(matches!(done, Done::Applied { .. }));
        // Strings compare the order of keys too.
        assert_eq!(
            serde_json::to_string(&without_ours(&after)).unwrap(),
            serde_json::to_string(&without_ours(&before)).unwrap()
        );
        assert_ne!(after, before);
    }
}

#[test]
fn the_library_is_mounted_read_only_and_preloaded_first() {
    let (after, _) = edited(DOCKER);
    let mounts = after["mounts"].as_array().unwrap();
    assert_eq!(
        mounts.last().unwrap(),
        &serde_json::json!({
            "destination": MOUNTED, "type": "bind", "source": LIBRARY,
            "options": ["rbind", "ro", "nosuid", "nodev"]
        })
    );
    assert_eq!(
        after["process"]["env"].as_array().unwrap().last().unwrap(),
        &format!("LD_PRELOAD={MOUNTED}")
    );
    assert!(
        after["annotations"][APPLIED]
            .as_str()
            .unwrap()
            .contains("6 sync calls")
    );
}

#[test]
fn a_second_edit_changes_nothing() {
    let (once, _) = edited(DOCKER);
    let mut twice = once.clone();
    let done = edit_config(&mut twice, Path::new(LIBRARY)).unwrap();
    assert_eq!(
        serde_json::to_string(&twice).unwrap(),
        serde_json::to_string(&once).unwrap()
    );
    let Done::Applied {
        answered: Some(answered),
    } = done
    else {
        panic!("{done:?}")
    };
    assert_eq!(answered.calls.len(), 6, "{answered:?}");
}

#[test]
fn a_library_the_user_mounted_is_not_mounted_again() {
    let mut spec = parse(DOCKER);
    let mount = serde_json::json!({"destination": MOUNTED, "type": "bind", "source": "/x.so"});
    spec["mounts"].as_array_mut().unwrap().push(mount.clone());
    edit_config(&mut spec, Path::new(LIBRARY)).unwrap();
    let ours: Vec<&Value> = spec["mounts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["destination"] == MOUNTED)
        .collect();
    assert_eq!(ours, [&mount]);
}

#[test]
fn switched_off_by_environment_or_annotation() {
    let mut by_env = parse(DOCKER);
    by_env["process"]["env"]
        .as_array_mut()
        .unwrap()
        .push("EATMYDATA_DISABLE=1".into());
    let mut by_annotation = parse(PODMAN);
    by_annotation["annotations"][DISABLE] = "1".into();
    for spec in [by_env, by_annotation] {
        let mut edited = spec.clone();
        let done = edit_config(&mut edited, Path::new(LIBRARY)).unwrap();
        assert!(matches!(done, Done::Off(_)), "{done:?}");
        assert_eq!(edited, spec);
    }
    // Off means off: "0" and an empty value leave it on.
    let mut zero = parse(PODMAN);
    zero["annotations"][DISABLE] = "0".into();
    let done = edit_config(&mut zero, Path::new(LIBRARY)).unwrap();
    assert!(matches!(done, Done::Applied { .. }));
}

#[test]
fn a_spec_of_another_shape_is_refused() {
    for text in [
        "[]",
        r#"{"process": []}"#,
        r#"{"process": {"env": "A=1"}}"#,
        r#"{"linux": 1}"#,
        r#"{"mounts": {}}"#,
        r#"{"annotations": []}"#,
        r#"{"linux": {"seccomp": []}}"#,
        r#"{"linux": {"seccomp": {"syscalls": {}}}}"#,
    ] {
        let mut spec = parse(text);
        let error = edit_config(&mut spec, Path::new(LIBRARY));
        assert!(error.is_err(), "{text}: {error:?}");
    }
}

#[test]
fn a_minimal_spec_gets_everything() {
    let mut spec = parse(r#"{"ociVersion": "1.0.2", "process": {"args": ["/x"]}}"#);
    edit_config(&mut spec, Path::new(LIBRARY)).unwrap();
    assert_eq!(spec["process"]["env"][0], format!("LD_PRELOAD={MOUNTED}"));
    assert_eq!(spec["mounts"][0]["destination"], MOUNTED);
    assert_eq!(spec["linux"]["seccomp"]["defaultAction"], "SCMP_ACT_ALLOW");
    let keys: Vec<&String> = spec.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["ociVersion", "process", "linux", "mounts", "annotations"]
    );
}

#[test]
fn exec_sets_the_preload_only_where_the_library_is() {
    let process = parse(DOCKER)["process"].clone();
    let mut mounted = process.clone();
    assert_eq!(
        edit_process(&mut mounted, true).unwrap(),
        Done::Applied { answered: None }
    );
    assert_eq!(
        mounted["env"].as_array().unwrap().last().unwrap(),
        &format!("LD_PRELOAD={MOUNTED}")
    );
    let mut bare = process.clone();
    assert!(matches!(
        edit_process(&mut bare, false).unwrap(),
        Done::Off(_)
    ));
    assert_eq!(bare, process);
    let mut off = process.clone();
    off["env"]
        .as_array_mut()
        .unwrap()
        .push("EATMYDATA_DISABLE=1".into());
    let before = off.clone();
    assert!(matches!(
        edit_process(&mut off, true).unwrap(),
        Done::Off(_)
    ));
    assert_eq!(off, before);
}

#[test]
fn what_the_container_has() {
    assert!(!has_library(&parse(DOCKER)));
    assert!(has_library(&edited(DOCKER).0));
}
