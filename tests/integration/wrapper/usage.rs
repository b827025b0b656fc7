//! What a user reads: --help and --version, bad usage (2), a missing
//! command (127), an unrunnable one (126), a missing library (125; and
//! see single_file/unwritable.rs).

use std::fs;
use std::process::Command;

use super::{eatmydata, stderr};
use crate::common::{TempDir, command, library};

#[test]
fn help_and_version_succeed() {
    let help = eatmydata(&["--help"]);
    assert!(help.status.success());
    assert!(
        String::from_utf8_lossy(&help.stdout)
            .starts_with("Usage: eatmydata [OPTIONS] [--] COMMAND")
    );
    let version = eatmydata(&["--version"]);
    let version = String::from_utf8_lossy(&version.stdout);
    let (first, library) = version.split_once('\n').unwrap();
    assert_eq!(first, format!("eatmydata {}", env!("CARGO_PKG_VERSION")));
    // The hash of what it carries, as a copy alone writes it out.
    let hash = library.strip_prefix("library: embedded, sha256 ").unwrap();
    let dir = TempDir::new("version");
    let place = crate::single_file::place(&dir);
    let written = Command::new(crate::single_file::lonely(&dir))
        .arg("--print-library")
        .env("TMPDIR", &place)
        .output()
        .unwrap();
    let path = String::from_utf8_lossy(&written.stdout);
    let sum = Command::new("sha256sum")
        .arg(path.trim_end())
        .output()
        .unwrap();
    let sum = String::from_utf8_lossy(&sum.stdout);
    assert_eq!(
        sum.split_whitespace().next(),
        Some(hash.trim_end()),
        "{path}"
    );
}

#[test]
fn bad_usage_exits_2() {
    for (args, message) in [
        (&[][..], "eatmydata: no command given"),
        (&["--"], "eatmydata: no command given"),
        (
            &["--frobnicate", "true"],
            "eatmydata: unknown option '--frobnicate'",
        ),
    ] {
        let output = eatmydata(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).starts_with(message),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn a_missing_command_exits_127_and_an_unrunnable_one_126() {
    let missing = eatmydata(&["eatmydata-no-such-command"]);
    assert_eq!(missing.status.code(), Some(127));
    assert_eq!(
        stderr(&missing),
        "eatmydata: eatmydata-no-such-command: command not found\n"
    );

    let dir = TempDir::new("unrunnable");
    let text = dir.join("notes.txt");
    fs::write(&text, "not a program\n").unwrap();
    let output = eatmydata(&[text.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(126));
    assert!(
        stderr(&output).starts_with("eatmydata: "),
        "{}",
        stderr(&output)
    );
    let output = eatmydata(&[dir.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(126), "a folder cannot be run");
}

#[test]
fn a_library_named_by_the_variable_that_is_missing_exits_125() {
    library();
    let dir = TempDir::new("no-library");
    let output = Command::new(command())
        .arg("true")
        .env("EATMYDATA_LIBRARY", dir.join("nope.so"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(125));
    assert!(
        stderr(&output).contains("EATMYDATA_LIBRARY"),
        "{}",
        stderr(&output)
    );
}
