use super::*;
use crate::profile::rules::{descriptor_is, ms_sync_is, names};

const DOCKER: &str = include_str!("../docker-config.json");

fn rules(linux: &Map<String, Value>) -> &Vec<Value> {
    linux["seccomp"]["syscalls"].as_array().unwrap()
}

/// The fact checked with Docker: the sync calls leave the allow rule,
/// which keeps every other name; ours follow the engine's rules, guarded.
#[test]
fn dockers_allow_rule_loses_the_sync_calls_only() {
    let spec: Value = serde_json::from_str(DOCKER).unwrap();
    let mut linux = spec["linux"].as_object().unwrap().clone();
    let before = rules(&linux).clone();
    let answered = edit(&mut linux).unwrap();
    assert_eq!(
        answered.calls,
        [
            "msync",
            "fsync",
            "fdatasync",
            "sync",
            "sync_file_range",
            "syncfs"
        ]
    );
    assert!(answered.left.is_empty());
    let allow_before = before[0]["names"].as_array().unwrap();
    let allow_after = rules(&linux)[0]["names"].as_array().unwrap();
    assert_eq!(allow_after.len(), allow_before.len() - 6);
    assert!(
        allow_before
            .iter()
            .filter(|n| !answered.calls.contains(&n.as_str().unwrap()))
            .eq(allow_after.iter())
    );
    // Every rule the engine put there is still there, ours after them.
    assert_eq!(rules(&linux)[1..before.len()], before[1..]);
    let ours = &rules(&linux)[before.len()..];
    let fds = json!(["fsync", "fdatasync", "sync_file_range", "syncfs"]);
    assert_eq!(
        ours,
        [
            json!({"names": fds, "action": "SCMP_ACT_ERRNO", "errnoRet": 0, "args": descriptor_is(0)}),
            json!({"names": fds, "action": ALLOW, "args": descriptor_is(0x8000_0000)}),
            json!({"names": ["sync"], "action": "SCMP_ACT_ERRNO", "errnoRet": 0}),
            json!({"names": ["msync"], "action": "SCMP_ACT_ERRNO", "errnoRet": 0, "args": ms_sync_is(4)}),
            json!({"names": ["msync"], "action": ALLOW, "args": ms_sync_is(0)}),
        ]
    );
    // A second edit (an exec's check, a second create) changes nothing.
    let once = linux.clone();
    let again = edit(&mut linux).unwrap();
    assert_eq!(again.calls, answered.calls);
    assert_eq!(linux, once);
}

#[test]
fn no_profile_gets_one_that_allows_the_rest() {
    let mut linux = Map::new();
    let answered = edit(&mut linux).unwrap();
    assert_eq!(answered.calls.len(), 6);
    assert_eq!(linux["seccomp"]["defaultAction"], ALLOW);
    assert_eq!(
        linux["seccomp"]["architectures"].as_array().unwrap().len(),
        ABIS.len()
    );
    // The default allows a negative descriptor and msync without MS_SYNC:
    // three rules, all answering 0.
    assert_eq!(rules(&linux).len(), 3);
    assert!(rules(&linux).iter().all(|r| r["errnoRet"] == 0));
    let mut null = Map::new();
    null.insert("seccomp".into(), Value::Null);
    edit(&mut null).unwrap();
    assert_eq!(null["seccomp"], linux["seccomp"]);
}

#[test]
fn a_profile_not_shaped_as_one_fails() {
    let mut linux = Map::new();
    linux.insert("seccomp".into(), json!([]));
    assert!(edit(&mut linux).unwrap_err().starts_with("linux.seccomp: "));
    linux.insert("seccomp".into(), json!({"syscalls": {}}));
    assert!(edit(&mut linux).is_err());
    let mut linux = Map::new();
    // No defaultAction: the kernel's default refuses, nothing is taken.
    linux.insert("seccomp".into(), json!({"syscalls": [{"names": ["read"]}]}));
    assert_eq!(edit(&mut linux).unwrap().left.len(), 6);
    linux.insert("seccomp".into(), json!({"defaultAction": ALLOW}));
    edit(&mut linux).unwrap();
    assert!(rules(&linux).iter().any(|r| names(r).any(|n| n == "fsync")));
}
