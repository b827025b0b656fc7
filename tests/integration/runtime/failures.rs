//! What the runtime says, and what it refuses: a spec it cannot parse
//! fails `create` with `eatmydata:` and status 125,
//! the spec byte for byte as it was and no container made; and the line it
//! appends to the runtime's log, in its format.

use std::fs;
use std::process::Stdio;

use super::{Bundle, Via, inside, new_id, text};
use crate::common::probe;
use crate::loopfs::LoopFs;

#[test]
fn a_spec_that_does_not_parse_starts_nothing() {
    let program = probe("sync_calls", &["-static"]);
    let disk = LoopFs::new("runtime-bad-spec", 16);
    let bundle = Bundle::new("runtime-bad-spec", &[&program], &disk);
    let bad = b"{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"/bin/sync_calls\"";
    // A bundle without its spec is runc's to report (`verbs.rs`).
    let label = "bad JSON";
    fs::write(bundle.config(), bad).unwrap();
    let (id, log) = (new_id(), bundle.dir.join("log.json"));
    let output = bundle
        .command(Via::Ours("runc"), Some(&log))
        .args(["create", "--bundle"])
        .arg(bundle.dir.path())
        .arg(&id)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(125),
        "{label}: {}",
        text(&output)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("eatmydata: "), "{label}: {stderr}");
    assert_eq!(fs::read(bundle.config()).unwrap(), bad, "{label}");
    assert!(stderr.contains("not valid JSON"), "{stderr}");
    // The shim reads the reason from the log, at level error.
    let logged = fs::read_to_string(&log).unwrap();
    let last: serde_json::Value = serde_json::from_str(logged.lines().last().unwrap()).unwrap();
    assert_eq!(last["level"], "error", "{logged}");
    assert!(last["msg"].as_str().unwrap().starts_with("eatmydata: "));
    let state = bundle
        .command(Via::Alone("runc"), None)
        .args(["state", &id])
        .output()
        .unwrap();
    assert!(!state.status.success(), "{label}: a container was made");
    let files: Vec<_> = fs::read_dir(bundle.dir.path()).unwrap().collect();
    assert!(
        files.len() <= 4,
        "{label}: something left beside the spec: {files:?}"
    );
}

#[test]
fn the_log_says_what_was_done() {
    let program = probe("sync_calls", &["-static"]);
    let disk = LoopFs::new("runtime-log", 64);
    let bundle = Bundle::new("runtime-log", &[&program], &disk);
    bundle.write_spec(&[&inside(&program), "/data/a"], |_| {});
    let (id, log) = (new_id(), bundle.dir.join("log.json"));
    let output = bundle
        .command(Via::Ours("runc"), Some(&log))
        .args(["run", "--bundle"])
        .arg(bundle.dir.path())
        .arg(&id)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let logged = fs::read_to_string(&log).unwrap();
    let ours: Vec<serde_json::Value> = logged
        .lines()
        .map(|line| serde_json::from_str(line).expect("a well-formed line"))
        .filter(|line: &serde_json::Value| line["msg"].as_str().unwrap().starts_with("eatmydata:"))
        // The account's own line (its report file) is the account's test's.
        .filter(|line| !line["msg"].as_str().unwrap().contains("report file"))
        .collect();
    // One line says what the edit did (the account's own may follow).
    assert!(!ours.is_empty(), "{logged}");
    let edits = ours.iter().filter(|line| {
        let message = line["msg"].as_str().unwrap();
        message.contains("sync calls answered")
    });
    assert_eq!(edits.count(), 1, "{logged}");
    assert_eq!(ours[0]["level"], "info");
    let message = ours[0]["msg"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("eatmydata: {id}: library mounted at ")),
        "{message}"
    );
    // A static program in a rootfs with no loader that cannot take the
    // library keeps LD_PRELOAD for what it starts; the rules answer its
    // own syncs.
    assert!(message.contains(", LD_PRELOAD set, "), "{message}");
    assert!(
        message.contains(", 6 sync calls answered 0 by seccomp"),
        "{message}"
    );
    // The container's own output has no word of ours.
    assert!(output.stderr.is_empty(), "{}", text(&output));
}
