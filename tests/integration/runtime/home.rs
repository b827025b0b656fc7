//! No test touches the machine's own state: the test process's
//! `EATMYDATA_HOME` (made before `main` by `common/home.rs`) is a folder of
//! root's own, in a chain no one else may write, and the runtime and the
//! command, run as the tests run them, keep to it: a container through the
//! runtime leaves its record in that home's account and nothing in the
//! machine's `/run/eatmydata` or `/var/lib/eatmydata` (which other
//! programs on a shared machine may be writing meanwhile: what is looked
//! for there is this process's containers alone).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use super::{Bundle, Via, inside};
use crate::common::home::{self, MACHINE};
use crate::common::{Run, command, probe, wait_until};
use crate::loopfs::LoopFs;

/// What of `folder` names a container of this test process (ids are
/// `eatmydata-test-PID-N`): account lines and report folders.
fn ours_in(folder: &Path) -> Vec<String> {
    let tag = format!("eatmydata-test-{}-", std::process::id());
    let mut found = Vec::new();
    for (path, text) in home::snapshot(&folder.display().to_string())
        .iter()
        .filter_map(|line| line.split(' ').next())
        .map(|path| {
            (
                path.to_owned(),
                fs::read_to_string(path).unwrap_or_default(),
            )
        })
    {
        if path.contains(&tag) || text.contains(&tag) {
            found.push(path);
        }
    }
    found
}

#[test]
fn the_runtime_and_the_command_keep_to_the_tests_own_home() {
    let own = PathBuf::from(std::env::var_os(home::HOME).expect("common::home sets it"));
    assert_eq!(own, home::path());
    // Root's, from / down, writable by no one else: it passes the rule for
    // root's home wherever the checkout is.
    for folder in own.ancestors() {
        let meta = fs::metadata(folder).unwrap();
        assert!(meta.is_dir(), "{}", folder.display());
        assert_eq!(meta.uid(), 0, "{} is not root's", folder.display());
        assert_eq!(
            meta.mode() & 0o022,
            0,
            "{} is writable by others",
            folder.display()
        );
    }

    // A container through the runtime, each verb as an engine's shim
    // gives it: create, start, and delete once it stopped (the record is
    // written then).
    let program = probe("sync_calls", &["-static"]);
    let disk = LoopFs::new("runtime-home", 64);
    let bundle = Bundle::new("runtime-home", &[&program], &disk);
    bundle.write_spec(&[&inside(&program), "/data/a"], |_| {});
    let id = format!("eatmydata-test-{}-home", std::process::id());
    // The container's stdio is not a pipe to wait on: created, it would
    // hold it until it ends.
    let said = bundle.dir.join("said");
    let verb = |args: &[&str]| {
        let status = bundle
            .command(Via::Ours("runc"), None)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(fs::File::create(&said).unwrap())
            .status()
            .expect("run the runtime");
        let told = fs::read_to_string(&said).unwrap_or_default();
        assert!(status.success(), "{args:?}: {status}: {told}");
    };
    let dir = bundle.dir.path().to_str().unwrap();
    verb(&["create", "--bundle", dir, &id]);
    verb(&["start", &id]);
    wait_until("the container stopped", Duration::from_secs(60), || {
        let state = bundle
            .command(Via::Alone("runc"), None)
            .args(["state", &id])
            .output()
            .expect("run runc state");
        String::from_utf8_lossy(&state.stdout).contains("\"stopped\"")
    });
    verb(&["delete", &id]);
    // And the command as root, told to say which library it took.
    let said = Run::new(command()).args(["-v", "true"]).run().success();

    let records = fs::read_to_string(own.join("account.jsonl")).unwrap_or_default();
    assert!(
        records.contains(&format!("eatmydata-test-{}-", std::process::id())),
        "the container's record is not in the test's own account: {records:?}"
    );
    for machine in MACHINE {
        assert_eq!(
            ours_in(Path::new(machine)),
            Vec::<String>::new(),
            "{machine}"
        );
        // A path below it; the test homes' /run/eatmydata-test is not.
        let below = format!("{machine}/");
        assert!(!said.stderr().contains(&below), "{}", said.stderr());
    }
}
