use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;

use super::*;

/// A folder of this test's own.
fn folder(label: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("eatmydata-runtime-{label}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&path);
    fs::create_dir_all(&path).unwrap();
    path
}

fn strings(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// The create edit of a dynamic program, its refusal as the runtime
/// reports it.
fn config(value: &mut serde_json::Value, library: &Path) -> Result<edit::Done, Failure> {
    let facts = crate::elf::Program {
        kind: crate::elf::Kind::Dynamic,
        loader: Some(crate::elf::Loader::Glibc),
    };
    let learned = edit::Learned {
        library: library.to_str().unwrap(),
        program: edit::preload::Program {
            path: "/bin/prog".into(),
            facts: Ok(facts),
            init: None,
            root_fits: Err("not read".into()),
        },
        binds: vec![],
    };
    edit::edit_config(value, &learned)
        .map_err(|why| Failure::File(Subject::Container, "config.json".into(), Problem::Edit(why)))
}

#[test]
fn its_name_is_the_file_name() {
    assert!(is_its_name(OsStr::new("eatmydata-runtime")));
    assert!(is_its_name(OsStr::new("/usr/bin/eatmydata-runtime")));
    assert!(!is_its_name(OsStr::new("eatmydata")));
    assert!(!is_its_name(OsStr::new(
        "/opt/eatmydata-runtime/bin/eatmydata"
    )));
}

#[test]
fn our_options_come_off_the_front_only() {
    let mut args = strings(&["--eatmydata-runtime=crun", "--root", "/r", "create", "ID"]);
    assert_eq!(our_options(&mut args).unwrap().runtime, Some("crun".into()));
    assert_eq!(args, strings(&["--root", "/r", "create", "ID"]));
    let mut spaced = strings(&["--eatmydata-runtime", "/usr/bin/runc", "state", "ID"]);
    assert_eq!(
        our_options(&mut spaced).unwrap().runtime,
        Some("/usr/bin/runc".into())
    );
    assert_eq!(spaced, strings(&["state", "ID"]));
    let mut none = strings(&["--root", "/r", "--eatmydata-runtime=crun"]);
    assert_eq!(our_options(&mut none).unwrap().runtime, None);
    assert_eq!(
        none.len(),
        3,
        "after the first other argument, all is runc's"
    );
    let mut both = strings(&[
        "--eatmydata-keep-binds",
        "--eatmydata-runtime=crun",
        "state",
    ]);
    let ours = our_options(&mut both).unwrap();
    assert!(ours.keep_binds && ours.runtime == Some("crun".into()));
    assert_eq!(both, strings(&["state"]));
    assert!(!our_options(&mut strings(&["state"])).unwrap().keep_binds);
    let mut unknown = strings(&["--eatmydata-foo", "state"]);
    let failure = our_options(&mut unknown).unwrap_err();
    assert_eq!(failure.exit_code(), 2);
    assert!(failure.to_string().contains("--eatmydata-foo"), "{failure}");
    assert_eq!(
        our_options(&mut strings(&["--eatmydata-runtime"]))
            .unwrap_err()
            .exit_code(),
        2
    );
}

#[test]
fn never_ourselves() {
    let us = library::this_program().unwrap();
    let failure = real_runtime(Some(us.into_os_string())).unwrap_err();
    assert!(matches!(failure, Failure::Ourselves(_)), "{failure:?}");
}

#[test]
fn bad_json_is_left_byte_for_byte() {
    let dir = folder("bad");
    let path = dir.join("config.json");
    let bytes = b"{\"ociVersion\": \"1.0.2\", \"process\": {\n";
    fs::write(&path, bytes).unwrap();
    let failure = edit(&path, |_| panic!("no edit of what does not parse")).unwrap_err();
    assert_eq!(failure.exit_code(), 125);
    let message = failure.to_string();
    assert!(message.contains("is not valid JSON"), "{message}");
    assert!(message.contains("container not started"), "{message}");
    assert_eq!(fs::read(&path).unwrap(), bytes);
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        1,
        "no file left beside it"
    );
    // A shape we cannot edit: the same.
    fs::write(&path, b"[1, 2]").unwrap();
    let library = Path::new("/l.so");
    let failure = edit(&path, |v| config(v, library)).unwrap_err();
    assert!(
        matches!(failure, Failure::File(_, _, Problem::Edit(_))),
        "{failure:?}"
    );
    assert_eq!(fs::read(&path).unwrap(), b"[1, 2]");
    fs::remove_dir_all(&dir).unwrap();
}

/// A bundle without its spec is the real runtime's to report; a spec that
/// is there and cannot be read safely is ours.
#[test]
fn a_missing_spec_is_handed_on_and_a_bad_one_refused() {
    let dir = folder("missing");
    let missing = edit(&dir.join("config.json"), |_| panic!("nothing read"));
    assert!(missing.unwrap().is_none());
    let no_folder = edit(&dir.join("none/config.json"), |_| panic!("nothing read"));
    assert!(no_folder.unwrap().is_none());
    let fifo = dir.join("fifo.json");
    let name = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a C string for the call.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let big = dir.join("big.json");
    let file = fs::File::create(&big).unwrap();
    file.set_len(input::SPEC_LIMIT + 1).unwrap();
    let target = dir.join("target.json");
    fs::write(&target, "{}").unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    for (path, says) in [
        (&fifo, "a FIFO, not a regular file"),
        (&big, "larger than 16 MiB"),
        (&link, "a symbolic link, not followed"),
        (&dir, "a folder, not a regular file"),
    ] {
        let failure = edit(path, |_| panic!("nothing read")).unwrap_err();
        assert_eq!(failure.exit_code(), 125);
        let message = failure.to_string();
        assert!(message.starts_with("cannot read "), "{message}");
        assert!(message.contains(says), "{message}");
        assert!(message.ends_with("container not started"), "{message}");
    }
    assert_eq!(fs::read(&target).unwrap(), b"{}");
    fs::remove_dir_all(&dir).unwrap();
}

/// An exec's failure speaks of the process, not of a container.
#[test]
fn an_exec_failure_says_process() {
    let failure = Failure::File(
        Subject::Process,
        "/tmp/runc-process1".into(),
        Problem::Edit("the process is not a JSON object".into()),
    );
    let message = failure.to_string();
    assert!(!message.contains("container"), "{message}");
    assert!(message.ends_with("process not started"), "{message}");
}

#[test]
fn the_file_keeps_its_mode_and_layout() {
    let dir = folder("mode");
    let path = dir.join("config.json");
    for (text, pretty) in [
        ("{\"process\":{\"env\":[]}}", false),
        ("{\n  \"process\": {\n    \"env\": []\n  }\n}", true),
    ] {
        fs::write(&path, text).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        let library = Path::new("/l.so");
        let done = edit(&path, |v| config(v, library)).unwrap().unwrap();
        assert!(matches!(done, edit::Done::Created { .. }));
        let written = fs::read_to_string(&path).unwrap();
        assert_eq!(written.contains('\n'), pretty, "{written}");
        assert!(written.contains(edit::APPLIED), "{written}");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640);
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left"
        );
    }
    // Off: not even written.
    fs::write(&path, "{\"process\":{\"env\":[\"EATMYDATA_DISABLE=1\"]}}").unwrap();
    let before = fs::metadata(&path).unwrap().modified().unwrap();
    let done = edit(&path, |v| config(v, Path::new("/l.so")))
        .unwrap()
        .unwrap();
    assert!(matches!(done, edit::Done::Off(_)));
    assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), before);
    fs::remove_dir_all(&dir).unwrap();
}
