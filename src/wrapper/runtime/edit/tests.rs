use super::library::MOUNTED;
use super::*;
use crate::elf::{self, Foreign, Kind, Loader};
use preload::Program;

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

/// A program of `kind` at `/bin/prog`.
fn program(kind: Kind) -> Program {
    Program {
        path: "/bin/prog".into(),
        facts: Ok(elf::Program {
            kind,
            loader: Some(Loader::Glibc),
        }),
        init: None,
        root_fits: Err("not read".into()),
    }
}

fn learned(kind: Kind) -> Learned<'static> {
    Learned {
        library: LIBRARY,
        program: program(kind),
        binds: vec![],
    }
}

fn edit(spec: &mut Value) -> Result<Done, String> {
    edit_config(spec, &learned(Kind::Dynamic))
}

fn edited(text: &str) -> (Value, Done) {
    let mut spec = parse(text);
    let done = edit(&mut spec).unwrap();
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
        assert!(matches!(done, Done::Created { .. }));
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
    let done = edit(&mut twice).unwrap();
    assert_eq!(
        serde_json::to_string(&twice).unwrap(),
        serde_json::to_string(&once).unwrap()
    );
    let Done::Created {
        library: Ok(()),
        preload: Ok(()),
        answered,
        ..
    } = done
    else {
        panic!("{done:?}")
    };
    assert_eq!(answered.calls.len(), 6, "{answered:?}");
}

#[test]
fn a_library_the_user_mounted_is_not_mounted_again() {
    let mut spec = parse(DOCKER);
    let mount = serde_json::json!({"destination": MOUNTED, "type": "bind", "source": "/x.so",
                                   "options": ["rbind", "rprivate"]});
    spec["mounts"].as_array_mut().unwrap().push(mount.clone());
    let env = spec["process"]["env"].clone();
    let done = edit(&mut spec).unwrap();
    let ours: Vec<&Value> = spec["mounts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["destination"] == MOUNTED)
        .collect();
    assert_eq!(ours, [&mount]);
    // It is the user's: the container has no place for ours, and its
    // environment (its own LD_PRELOAD naming the place, say) is as runc's.
    assert_eq!(spec["process"]["env"], env);
    assert!(!library::in_spec(&spec));
    let told = done.describe();
    assert!(
        told.starts_with("no library (the spec mounts something at or under /dev/.eatmydata)"),
        "{told}"
    );
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
        let done = edit(&mut edited).unwrap();
        assert!(matches!(done, Done::Off(_)), "{done:?}");
        assert_eq!(edited, spec);
    }
    // Off means off: "0" and an empty value leave it on.
    let mut zero = parse(PODMAN);
    zero["annotations"][DISABLE] = "0".into();
    let done = edit(&mut zero).unwrap();
    assert!(matches!(done, Done::Created { .. }));
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
        let error = edit(&mut spec);
        assert!(error.is_err(), "{text}: {error:?}");
    }
}

#[test]
fn a_minimal_spec_gets_the_seccomp_rules_and_no_library_without_a_dev_tmpfs() {
    let mut spec = parse(r#"{"ociVersion": "1.0.2", "process": {"args": ["/x"]}}"#);
    let done = edit(&mut spec).unwrap();
    assert!(spec["process"].get("env").is_none(), "{spec}");
    assert!(spec.get("mounts").is_none(), "{spec}");
    assert_eq!(spec["linux"]["seccomp"]["defaultAction"], "SCMP_ACT_ALLOW");
    let keys: Vec<&String> = spec.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["ociVersion", "process", "linux", "annotations"]);
    assert!(
        done.describe().starts_with(
            "no library (the spec mounts nothing at /dev): no LD_PRELOAD, 6 sync calls answered 0"
        ),
        "{}",
        done.describe()
    );
    let mut with_dev = parse(
        r#"{"process": {"args": ["/x"]}, "mounts": [{"destination": "/dev", "type": "tmpfs"}]}"#,
    );
    edit(&mut with_dev).unwrap();
    assert_eq!(
        with_dev["process"]["env"][0],
        format!("LD_PRELOAD={MOUNTED}")
    );
    assert_eq!(with_dev["mounts"][1]["destination"], MOUNTED);
}

/// A spec whose /dev is the host's (a bind): nothing is made there, and
/// the log line says why.
#[test]
fn a_dev_of_the_hosts_gets_no_library() {
    let mut spec = parse(DOCKER);
    spec["mounts"][1] = serde_json::json!({
        "destination": "/dev", "type": "bind", "source": "/dev", "options": ["rbind"]
    });
    let before = spec["mounts"].clone();
    let done = edit(&mut spec).unwrap();
    assert_eq!(spec["mounts"], before);
    let env = spec["process"]["env"].as_array().unwrap();
    assert!(
        !env.iter()
            .any(|e| e.as_str().unwrap().starts_with("LD_PRELOAD"))
    );
    assert!(
        done.describe()
            .starts_with("no library (the spec's /dev is not a tmpfs of its own): no LD_PRELOAD"),
        "{}",
        done.describe()
    );
}

/// The library is mounted for later `exec`s, but a program that cannot
/// take it gets no `LD_PRELOAD`; the log line says why.
#[test]
fn a_program_that_cannot_take_the_library_gets_no_preload() {
    for (kind, why) in [
        (
            Kind::Foreign(Foreign::Bits32),
            "/bin/prog is a 32-bit program",
        ),
        (
            Kind::Foreign(Foreign::Sanitizer),
            "/bin/prog is linked with a sanitizer",
        ),
        (
            Kind::Foreign(Foreign::Machine),
            "/bin/prog is built for another",
        ),
    ] {
        let mut spec = parse(DOCKER);
        let done = edit_config(&mut spec, &learned(kind)).unwrap();
        let env = spec["process"]["env"].as_array().unwrap();
        assert!(
            !env.iter()
                .any(|e| e.as_str().unwrap().starts_with("LD_PRELOAD"))
        );
        assert!(library::in_spec(&spec));
        let text = done.describe();
        let expected = format!("library mounted at {MOUNTED}, no LD_PRELOAD ({why}");
        assert!(text.starts_with(&expected), "{text}");
        assert_eq!(spec["annotations"][APPLIED], text);
    }
}

/// createContainer hooks without `env` would inherit our `LD_PRELOAD`
/// from runc: they get the environment as it was.
#[test]
fn hooks_keep_the_environment_they_would_have_had() {
    let mut spec = parse(DOCKER);
    let original = spec["process"]["env"].clone();
    spec["hooks"]["createContainer"] = serde_json::json!([{"path": "/hook"}]);
    edit(&mut spec).unwrap();
    assert_eq!(spec["hooks"]["createContainer"][0]["env"], original);
    assert!(spec["hooks"]["prestart"][0].get("env").is_none());
    // Without LD_PRELOAD too: the account's EATMYDATA_REPORT, added
    // after, would reach them (security review 3, issue 45).
    let mut foreign = parse(DOCKER);
    foreign["hooks"]["createContainer"] = serde_json::json!([{"path": "/hook"}]);
    edit_config(&mut foreign, &learned(Kind::Foreign(Foreign::Bits32))).unwrap();
    assert_eq!(foreign["hooks"]["createContainer"][0]["env"], original);
}

#[test]
fn exec_sets_the_preload_only_where_the_library_is_and_the_program_takes_it() {
    let process = parse(DOCKER)["process"].clone();
    let mut mounted = process.clone();
    assert_eq!(
        edit_process(&mut mounted, Some(&program(Kind::Dynamic))).unwrap(),
        Done::Exec { preload: Ok(()) }
    );
    assert_eq!(
        mounted["env"].as_array().unwrap().last().unwrap(),
        &format!("LD_PRELOAD={MOUNTED}")
    );
    let mut bare = process.clone();
    let done = edit_process(&mut bare, None).unwrap();
    assert!(matches!(done, Done::Off(_)) && !done.changed());
    assert_eq!(bare, process);
    let mut i386 = process.clone();
    let done = edit_process(&mut i386, Some(&program(Kind::Foreign(Foreign::Bits32)))).unwrap();
    assert!(!done.changed());
    assert!(
        done.describe()
            .starts_with("no LD_PRELOAD (/bin/prog is a 32-bit")
    );
    assert_eq!(i386, process);
    let mut off = process.clone();
    off["env"]
        .as_array_mut()
        .unwrap()
        .push("EATMYDATA_DISABLE=1".into());
    let before = off.clone();
    let done = edit_process(&mut off, Some(&program(Kind::Dynamic))).unwrap();
    assert!(matches!(done, Done::Off(_)));
    assert_eq!(off, before);
}

#[test]
fn what_the_container_has() {
    assert!(!library::in_spec(&parse(DOCKER)));
    assert!(library::in_spec(&edited(DOCKER).0));
}

/// A profile that refuses `fsync` with `EPERM`: the library would answer
/// it 0 first, so the program gets no `LD_PRELOAD`, and the kernel
/// refuses as under runc; nothing is set for an exec into it either.
#[test]
fn a_profile_that_refuses_a_sync_call_keeps_the_library_out() {
    let mut spec = parse(DOCKER);
    let syscalls = spec["linux"]["seccomp"]["syscalls"].as_array_mut().unwrap();
    syscalls.insert(
        0,
        json!({"names": ["fsync"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}),
    );
    let refusing = spec.clone();
    let done = edit(&mut spec).unwrap();
    let Done::Created { preload, .. } = &done else {
        panic!("{done:?}")
    };
    let why = preload.as_ref().unwrap_err();
    assert!(why.contains("refuses or conditions fsync"), "{why}");
    let env = spec["process"]["env"].as_array().unwrap();
    assert!(
        !env.iter()
            .any(|e| e.as_str().unwrap().starts_with("LD_PRELOAD="))
    );
    assert!(profile_answers_first(&spec).is_err());
    assert!(profile_answers_first(&refusing).is_err());
    assert!(profile_answers_first(&parse(DOCKER)).is_ok());
}

/// A container that keeps a mount: `EATMYDATA_KEEP` names it and every
/// kept bind, and the profile is left as the engine wrote it (its rules
/// cannot tell one mount from another), so that a static program keeps
/// every sync.
#[test]
fn a_kept_mount_leaves_the_profile_and_names_the_mounts() {
    let mut spec = parse(DOCKER);
    let profile = spec["linux"]["seccomp"].clone();
    spec["annotations"] = json!({keep::ANNOTATION: "/keep"});
    let mut kept = learned(Kind::Dynamic);
    kept.binds = vec!["/srv".to_owned()];
    let done = edit_config(&mut spec, &kept).unwrap();
    assert_eq!(
        spec["linux"]["seccomp"], profile,
        "the profile is untouched"
    );
    let env = spec["process"]["env"].as_array().unwrap();
    assert!(env.contains(&json!("EATMYDATA_KEEP=/keep:/srv")), "{env:?}");
    assert!(
        done.describe().contains("syncs kept on /keep /srv"),
        "{}",
        done.describe()
    );
    // Without a kept mount, the profile answers the syncs.
    let (plain, _) = edited(DOCKER);
    assert_ne!(plain["linux"]["seccomp"], profile);
}

/// A list the container gives that cannot be read keeps every sync: the
/// profile is left as it is, the library is given the list as it was (it
/// reads it the same way, keeps every sync and names it), and the log
/// says which entry and why. `EATMYDATA_ONLY` leaves the profile too.
#[test]
fn a_list_that_cannot_be_read_keeps_every_sync_and_says_why() {
    let cases = [
        (
            Some("data"),
            None,
            "EATMYDATA_KEEP=data",
            r#"EATMYDATA_KEEP entry "data" is relative"#,
        ),
        (
            Some("/data:"),
            None,
            "EATMYDATA_KEEP=/data:",
            r#"EATMYDATA_KEEP entry "/data:" cannot be parsed"#,
        ),
        (
            None,
            Some("relative"),
            "EATMYDATA_KEEP=relative",
            r#"annotation io.eatmydata.keep entry "relative" is relative"#,
        ),
        (
            Some("/keep"),
            Some("/a::"),
            "EATMYDATA_KEEP=/keep:/a::",
            r#"annotation io.eatmydata.keep entry "/a::" cannot be parsed"#,
        ),
    ];
    for (variable, annotation, named, said) in cases {
        let mut spec = parse(DOCKER);
        let profile = spec["linux"]["seccomp"].clone();
        if let Some(value) = variable {
            let env = spec["process"]["env"].as_array_mut().unwrap();
            env.push(json!(format!("EATMYDATA_KEEP={value}")));
        }
        if let Some(value) = annotation {
            spec["annotations"] = json!({keep::ANNOTATION: value});
        }
        let done = edit_config(&mut spec, &learned(Kind::Dynamic)).unwrap();
        assert_eq!(spec["linux"]["seccomp"], profile, "{named}");
        let env = spec["process"]["env"].as_array().unwrap();
        let keep: Vec<_> = env
            .iter()
            .filter(|e| e.as_str().unwrap().starts_with("EATMYDATA_KEEP="))
            .collect();
        assert_eq!(keep, [&json!(named)]);
        let told = done.describe();
        assert!(told.contains(said), "{told}");
        assert!(told.contains("every sync is kept"), "{told}");
    }
    let mut spec = parse(DOCKER);
    let profile = spec["linux"]["seccomp"].clone();
    let env = spec["process"]["env"].as_array_mut().unwrap();
    env.push(json!("EATMYDATA_ONLY=/scratch"));
    let done = edit_config(&mut spec, &learned(Kind::Dynamic)).unwrap();
    assert_eq!(
        spec["linux"]["seccomp"], profile,
        "ONLY scopes the container"
    );
    let env = spec["process"]["env"].as_array().unwrap();
    assert!(env.contains(&json!("EATMYDATA_ONLY=/scratch")));
    assert!(
        !env.iter()
            .any(|e| e.as_str().unwrap().starts_with("EATMYDATA_KEEP"))
    );
    assert!(
        done.describe().contains("EATMYDATA_ONLY"),
        "{}",
        done.describe()
    );
}
