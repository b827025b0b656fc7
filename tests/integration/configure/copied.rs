//! `configure` run from a folder another user owns copies the command
//! to root's place, and copies the program running, never the file its
//! name gives: the folder's owner may change that name meanwhile.
//! Security review 3 (issue 45) found the copy made by name.

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};

use crate::common::pipe::{full_pipe, wait_held};
use crate::common::{RootHome, TempDir, command};

/// The owner swaps the file while the command stands at its first line
/// (stdout a full pipe): the name gone, and a file of theirs at the one
/// the kernel's link to the running file reads once the name is gone
/// (`NAME (deleted)`). The copy is the command that ran, byte for byte.
#[test]
fn the_copy_is_the_command_running_not_what_its_name_became() {
    let dir = TempDir::new("configure-swapped");
    let theirs = dir.join("theirs");
    fs::create_dir(&theirs).unwrap();
    fs::set_permissions(&theirs, fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let program = theirs.join("eatmydata");
    fs::copy(command(), &program).unwrap();
    let home = RootHome::new("configure-swapped");
    let config = dir.join("containers.conf");
    let (mut said, stdout) = full_pipe();
    let child = Command::new(&program)
        .args(["--runtime", "configure", "podman", "--config"])
        .arg(&config)
        .env("EATMYDATA_HOME", home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::piped())
        .spawn()
        .expect("run configure");
    wait_held(child.id());
    fs::remove_file(&program).unwrap();
    let planted = theirs.join("eatmydata (deleted)");
    fs::write(&planted, "#!/bin/sh\necho planted\n").unwrap();
    fs::set_permissions(&planted, fs::Permissions::from_mode(0o755)).unwrap();
    let mut stdout = vec![];
    said.read_to_end(&mut stdout).unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&stdout);
    let stdout = stdout.trim_start_matches('.');
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains("copying it where only root may change it"),
        "{stdout}{stderr}"
    );
    let copy = fs::read(home.join("bin/eatmydata")).expect("the copy");
    assert!(
        copy == fs::read(command()).unwrap(),
        "the copy is not the command that ran ({} bytes): {stdout}{stderr}",
        copy.len()
    );
    assert!(output.status.success(), "{stdout}{stderr}");
}
