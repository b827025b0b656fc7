//! Symlink mode: a link or copy named after a command runs the next one
//! in PATH; a copy with eatmydata in its name is the command itself.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;
use std::{env, fs};

use super::stderr;
use crate::common::{Run, TempDir, command, library, probe};

#[test]
fn a_link_or_copy_named_after_a_command_runs_the_next_one_in_path() {
    let dir = TempDir::new("symlink-mode");
    let (links, copies, real) = (dir.join("links"), dir.join("copies"), dir.join("real"));
    for folder in [&links, &copies, &real] {
        fs::create_dir_all(folder).unwrap();
    }
    fs::copy(probe("sync_calls", &[]), real.join("syncer")).unwrap();
    symlink(command(), links.join("syncer")).unwrap();
    // A container image's COPY turns the link into a copy; that works too,
    // with the library found by EATMYDATA_LIBRARY as an image would set it.
    fs::copy(command(), copies.join("syncer")).unwrap();

    let control = Run::new(real.join("syncer"))
        .arg(dir.join("a"))
        .trace(&["fsync"])
        .run()
        .success();
    assert_eq!(
        control.calls_of("fsync").len(),
        1,
        "control: {:?}",
        control.calls
    );
    for (first, out) in [(&links, "b"), (&copies, "c")] {
        let path = env::join_paths([
            first.as_path(),
            real.as_path(),
            Path::new("/usr/bin"),
            Path::new("/bin"),
        ])
        .unwrap();
        let named = Run::new(first.join("syncer"))
            .arg(dir.join(out))
            .env("PATH", &path)
            .env("EATMYDATA_LIBRARY", library())
            .trace(&["fsync"])
            .run()
            .success();
        assert!(
            named.calls_of("fsync").is_empty(),
            "{first:?}: {:?}",
            named.calls
        );
        assert!(dir.join(out).is_file(), "{first:?}: the real syncer ran");
    }
}

#[test]
fn a_copy_with_eatmydata_in_its_name_is_the_command() {
    let dir = TempDir::new("renamed");
    for name in ["ours-eatmydata", "eatmydata-rs"] {
        fs::copy(command(), dir.join(name)).unwrap();
        let output = Command::new(dir.join(name))
            .args(["-v", "true"])
            .env("EATMYDATA_LIBRARY", library())
            .output()
            .unwrap();
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("running /"),
            "{name}: {}",
            stderr(&output)
        );
    }
    // Control: a name without it is symlink mode, and finds no command by
    // that name in PATH but itself.
    fs::copy(command(), dir.join("ours-eat")).unwrap();
    let output = Command::new(dir.join("ours-eat"))
        .args(["-v", "true"])
        .env("EATMYDATA_LIBRARY", library())
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(127), "{}", stderr(&output));
}

#[test]
fn a_link_named_eatmydata_finds_the_library_beside_the_real_file() {
    let dir = TempDir::new("link-elsewhere");
    symlink(command(), dir.join("eatmydata")).unwrap();
    library();
    let output = Command::new(dir.join("eatmydata"))
        .args(["-v", "true"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&library().display().to_string()),
        "{}",
        stderr(&output)
    );
}
