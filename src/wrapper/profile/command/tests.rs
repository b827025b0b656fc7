use super::*;

fn parse_strs(args: &[&str]) -> Result<Asked, Error> {
    parse(args.iter().map(OsString::from))
}

#[test]
fn an_engine_and_its_options() {
    assert_eq!(
        parse_strs(&["docker", "--engine-version", "26.1", "--output=p.json"]).unwrap(),
        Asked::Make {
            engine: Engine::Docker,
            version: Some("26.1".into()),
            output: Some("p.json".into()),
        }
    );
    assert_eq!(
        parse_strs(&["--engine-version=5.4", "podman"]).unwrap(),
        Asked::Make {
            engine: Engine::Podman,
            version: Some("5.4".into()),
            output: None,
        }
    );
    assert_eq!(parse_strs(&["docker", "--help"]).unwrap(), Asked::Help);
    assert_eq!(parse_strs(&["--list"]).unwrap(), Asked::List);
}

#[test]
fn bad_usage_is_said_with_status_2() {
    for (args, says) in [
        (&[][..], "name an engine"),
        (&["containerd"][..], "unknown engine 'containerd'"),
        (&["docker", "podman"][..], "one engine"),
        (&["docker", "--engine-version"][..], "needs a value"),
        (&["docker", "--engine-version="][..], "needs a value"),
        (&["docker", "--frobnicate"][..], "unknown option"),
    ] {
        let error = parse_strs(args).unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert!(error.to_string().contains(says), "{args:?}: {error}");
    }
}

#[test]
fn the_output_is_written_whole_and_a_file_in_the_way_is_left() {
    let dir = std::env::temp_dir().join(format!("emd-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.json");
    std::fs::write(&path, "old").unwrap();
    write_whole(&path, b"new").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    // Someone's file where the temporary one would go: refused, kept.
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".eatmydata-{}.tmp", std::process::id()));
    std::fs::write(&temp, "theirs").unwrap();
    assert!(write_whole(&path, b"newer").is_err());
    assert_eq!(std::fs::read_to_string(&temp).unwrap(), "theirs");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    std::fs::remove_dir_all(&dir).unwrap();
}
