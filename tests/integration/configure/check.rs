//! `eatmydata-runtime check` alone: ready where the runtime can work (the
//! real runtime's version, the library, the spec edited), and exit 69
//! with the reason where it cannot: run from `/tmp` with no home of
//! root's it may use, or naming a real runtime that is not there.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};

use crate::common::{RootHome, command};

fn check(runtime: &std::path::Path, home: &std::path::Path, args: &[&str]) -> Output {
    Command::new(runtime)
        .args(["--runtime", "check"])
        .args(args)
        .env("EATMYDATA_HOME", home)
        .output()
        .unwrap()
}

#[test]
fn check_says_ready_or_why_not_with_status_69() {
    let home = RootHome::new("check");
    let ours = home.join("home");
    let ready = check(&command(), &ours, &[]);
    let said = String::from_utf8_lossy(&ready.stdout);
    assert!(
        ready.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&ready.stderr)
    );
    assert!(said.contains("Real runtime: "), "{said}");
    assert!(
        said.contains("A spec edited as create would: library mounted at "),
        "{said}"
    );
    assert!(
        said.ends_with("Ready: an engine may run this runtime.\n"),
        "{said}"
    );

    let missing = check(
        &command(),
        &ours,
        &["--eatmydata-runtime=/nonexistent/runc"],
    );
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(69), "{stderr}");
    assert!(
        stderr.starts_with("eatmydata: check: /nonexistent/runc"),
        "{stderr}"
    );

    // From /tmp, with a home every user may write: no library root may use.
    let x = std::path::PathBuf::from(format!("/tmp/eatmydata-test-check-{}", std::process::id()));
    let _ = fs::remove_dir_all(&x);
    fs::create_dir(&x).unwrap();
    fs::set_permissions(&x, fs::Permissions::from_mode(0o755)).unwrap();
    fs::copy(command(), x.join("eatmydata")).unwrap();
    let open = home.join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o1777)).unwrap();
    let nowhere = check(&x.join("eatmydata"), &open, &[]);
    let _ = fs::remove_dir_all(&x);
    let stderr = String::from_utf8_lossy(&nowhere.stderr);
    assert_eq!(nowhere.status.code(), Some(69), "{stderr}");
    assert!(
        stderr.starts_with("eatmydata: check: no place root may load the library from"),
        "{stderr}"
    );
    assert!(
        stderr.contains("/tmp is writable by every user"),
        "{stderr}"
    );
    assert!(
        fs::read_dir(&open).unwrap().next().is_none(),
        "written in {}",
        open.display()
    );
}
