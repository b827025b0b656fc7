//! What a user reads: --help and --version, bad usage (2), a missing
//! command (127), an unrunnable one (126), a missing library (125).

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
    assert_eq!(
        String::from_utf8_lossy(&version.stdout),
        format!("eatmydata {}\n", env!("CARGO_PKG_VERSION"))
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
fn a_missing_library_exits_125_and_says_where_it_looked() {
    library();
    let dir = TempDir::new("no-library");
    let lonely = dir.join("bin/eatmydata");
    fs::create_dir_all(lonely.parent().unwrap()).unwrap();
    fs::copy(command(), &lonely).unwrap();
    let output = Command::new(&lonely)
        .arg("true")
        .env_remove("EATMYDATA_LIBRARY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(125));
    let message = stderr(&output);
    assert!(
        message.starts_with("eatmydata: cannot find libeatmydata.so"),
        "{message}"
    );
    // What `cargo install` leaves, and what to do about it.
    for advice in [
        "cargo install",
        "libeatmydata1 package",
        "scripts/install.sh",
    ] {
        assert!(message.contains(advice), "{advice}: {message}");
    }
    assert!(
        message.contains(&dir.join("bin/libeatmydata.so").display().to_string()),
        "{message}"
    );
    assert!(
        message.contains(
            &dir.join("lib/eatmydata/libeatmydata.so")
                .display()
                .to_string()
        ),
        "{message}"
    );

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
