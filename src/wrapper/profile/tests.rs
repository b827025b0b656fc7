use super::*;

/// Each file carried is Debian's, byte for byte (defaults/README.md).
#[test]
fn embedded_files_are_debians() {
    let readme = include_str!("defaults/README.md");
    for carried in defaults::EMBEDDED {
        let name = format!("{}-{}.json", carried.engine.name(), carried.version_name());
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/wrapper/profile/defaults")
            .join(&name);
        let out = std::process::Command::new("sha256sum")
            .arg(&path)
            .output()
            .unwrap();
        let sum = String::from_utf8(out.stdout).unwrap();
        let sum = sum.split_whitespace().next().unwrap();
        let row = readme
            .lines()
            .find(|l| l.contains(&format!("`{name}`")))
            .unwrap();
        assert!(row.contains(sum), "{name}: {sum} is not the README's");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), carried.json);
        let json: Value = serde_json::from_str(carried.json).unwrap();
        assert_eq!(json["defaultAction"], "SCMP_ACT_ERRNO", "{name}");
    }
}

#[test]
fn a_version_picks_its_own_default_or_the_nearest_older() {
    let picked = |engine, version| {
        let (embedded, how) = embedded_for(engine, version).unwrap();
        (embedded.version_name(), how)
    };
    assert_eq!(picked(Engine::Docker, Some("20.10.24+dfsg1")).0, "20.10");
    assert_eq!(picked(Engine::Docker, Some("26.1.5+dfsg1")).0, "26.1");
    assert_eq!(picked(Engine::Docker, Some("24.0.7")).0, "20.10");
    let (version, how) = picked(Engine::Docker, Some("28.0.1"));
    assert_eq!(version, "26.1");
    assert!(
        how.contains("nearest older") && how.contains("28.0.1"),
        "{how}"
    );
    assert_eq!(picked(Engine::Docker, Some("26")).0, "26.1");
    assert!(picked(Engine::Docker, None).1.contains("newest"));
    assert_eq!(picked(Engine::Podman, Some("4.3.1")).0, "4.3");
    assert_eq!(picked(Engine::Podman, Some("5.6.0")).0, "5.4");
    for bad in ["19.03.15", "x", "", "26.x", "1.2.3.4.5x"] {
        let error = embedded_for(Engine::Docker, Some(bad))
            .map(|_| ())
            .unwrap_err();
        assert_eq!(error.exit_code(), 2, "{bad}");
        assert!(error.to_string().starts_with("profile: Docker "), "{error}");
    }
}

#[test]
fn versions_are_read_as_engines_say_them() {
    let read = defaults::parse_version;
    assert_eq!(read("20.10.24+dfsg1"), Some((20, 10)));
    assert_eq!(read("v27.3.1"), Some((27, 3)));
    assert_eq!(read("28.0.1-rd\n"), Some((28, 0)));
    assert_eq!(read("26.1~rc2"), Some((26, 1)));
    assert_eq!(read("5"), Some((5, u32::MAX)));
    for bad in ["", "x.1", "26.", "26.x", "26.1x", "-1.2", "99999999999.1"] {
        assert_eq!(read(bad), None, "{bad}");
    }
}

#[test]
fn the_note_names_the_default_and_the_profile_answers_the_family() {
    let chosen = embedded_default(Engine::Docker, Some("26.1.5")).unwrap();
    assert_eq!(
        chosen.note,
        "eatmydata: profile: Docker 26.1's default, for Docker 26.1.5"
    );
    assert_eq!(chosen.answered.calls, rules::SYNC_FAMILY);
    assert_eq!(chosen.json["defaultErrnoRet"], 1);
}

#[test]
fn runsc_is_known_to_drop_errno_ret() {
    for name in ["runsc", "/usr/local/bin/runsc", "runsc-kvm", "gvisor"] {
        assert!(drops_errno_ret(name), "{name}");
    }
    for name in ["runc", "crun", "eatmydata", "io.containerd.runc.v2", "kata"] {
        assert!(!drops_errno_ret(name), "{name}");
    }
}
