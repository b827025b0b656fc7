use super::*;

const DOCKER: &str = include_str!("../docker-config.json");

fn linux(profile: Value) -> Map<String, Value> {
    let mut linux = Map::new();
    linux.insert("seccomp".into(), profile);
    linux
}

fn rules(linux: &Map<String, Value>) -> &Vec<Value> {
    linux["seccomp"]["syscalls"].as_array().unwrap()
}

fn naming<'a>(linux: &'a Map<String, Value>, call: &str) -> Vec<&'a Value> {
    rules(linux)
        .iter()
        .filter(|rule| names(rule).any(|n| n == call))
        .collect()
}

/// The fact checked with Docker: the sync calls must leave the allow rule,
/// and the rule keeps every other name.
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
    assert_eq!(
        ours[0],
        json!({"names": ["fsync", "fdatasync", "sync", "sync_file_range", "syncfs"],
               "action": "SCMP_ACT_ERRNO", "errnoRet": 0})
    );
    assert_eq!(ours[1]["args"], ms_sync_is(4));
    assert_eq!(ours[1]["errnoRet"], 0);
    // msync without MS_SYNC stays allowed, by a rule of its own.
    assert_eq!(
        ours[2],
        json!({"names": ["msync"], "action": ALLOW, "args": ms_sync_is(0)})
    );
    assert_eq!(ours.len(), 3);
    for call in sync_calls() {
        assert!(
            naming(&linux, call)
                .iter()
                .all(|r| r.get("errnoRet").is_some() || call == MSYNC)
        );
    }
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
    // No allow rule for msync: the default allows it.
    assert_eq!(rules(&linux).len(), 2);
    let mut null = linux_of_null();
    edit(&mut null).unwrap();
    assert_eq!(null["seccomp"], linux["seccomp"]);
}

fn linux_of_null() -> Map<String, Value> {
    linux(Value::Null)
}

#[test]
fn refused_or_conditional_calls_are_left_alone() {
    let mut linux = linux(json!({
        "defaultAction": "SCMP_ACT_ERRNO",
        "syscalls": [
            {"names": ["read", "fsync"], "action": ALLOW},
            {"names": ["fdatasync"], "action": "SCMP_ACT_KILL"},
            {"names": ["msync"], "action": ALLOW,
             "args": [{"index": 0, "value": 0, "op": "SCMP_CMP_NE"}]},
            {"names": ["syncfs"], "action": "SCMP_ACT_LOG"},
            {"names": [], "action": ALLOW},
        ]
    }));
    let answered = edit(&mut linux).unwrap();
    assert_eq!(answered.calls, ["fsync", "syncfs"]);
    // sync and sync_file_range: not named, and the default refuses them.
    assert_eq!(
        answered.left,
        ["msync", "fdatasync", "sync", "sync_file_range"]
    );
    let rules = rules(&linux);
    assert_eq!(rules[0], json!({"names": ["read"], "action": ALLOW}));
    assert_eq!(rules[1]["names"], json!(["fdatasync"]));
    assert_eq!(rules[2]["names"], json!(["msync"]));
    // The LOG rule named only syncfs: it went; the empty rule was there.
    assert_eq!(rules[3], json!({"names": [], "action": ALLOW}));
    assert_eq!(rules[4]["names"], json!(["fsync", "syncfs"]));
    assert_eq!(rules.len(), 5);
}

#[test]
fn a_default_that_allows_needs_no_rule_taken_out() {
    let mut linux = linux(json!({"defaultAction": "SCMP_ACT_ALLOW", "flags": ["X"]}));
    let answered = edit(&mut linux).unwrap();
    assert_eq!(answered.calls.len(), 6);
    assert_eq!(linux["seccomp"]["flags"], json!(["X"]));
    assert_eq!(rules(&linux).len(), 2);
}
