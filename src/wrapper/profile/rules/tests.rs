use super::*;

const DOCKER_20_10: &str = include_str!("../defaults/docker-20.10.json");

fn rules(profile: &Value) -> &Vec<Value> {
    profile["syscalls"].as_array().unwrap()
}

fn naming<'a>(profile: &'a Value, call: &str) -> Vec<&'a Value> {
    rules(profile)
        .iter()
        .filter(|rule| names(rule).any(|n| n == call))
        .collect()
}

/// An engine's default (moby's format): every call of the family is
/// taken over, the architecture-only ones with the rule's `includes`.
#[test]
fn an_engines_default_loses_the_family_from_its_allow_rules_only() {
    let mut profile: Value = serde_json::from_str(DOCKER_20_10).unwrap();
    let before = profile.clone();
    let answered = add_sync_rules(&mut profile);
    assert_eq!(answered.calls, SYNC_FAMILY);
    assert!(answered.left.is_empty() && answered.malformed.is_none());
    // Nothing but the names went from the engine's rules.
    let family = |n: &Value| SYNC_FAMILY.contains(&n.as_str().unwrap());
    let kept: Vec<Value> = rules(&before)
        .iter()
        .filter_map(|rule| {
            let mut rule = rule.clone();
            let list = rule["names"].as_array_mut().unwrap();
            list.retain(|n| !family(n));
            (!list.is_empty()).then_some(rule)
        })
        .collect();
    assert_eq!(rules(&profile)[..kept.len()], kept[..]);
    for key in ["defaultAction", "archMap"] {
        assert_eq!(profile[key], before[key]);
    }
    // Each call: an ERRNO-0 rule and (but sync) its other half allowed,
    // under the same includes as the rule it left.
    for &call in SYNC_FAMILY {
        let ours = naming(&profile, call);
        let zero: Vec<_> = ours.iter().filter(|r| r["errnoRet"] == 0).collect();
        let allowed: Vec<_> = ours.iter().filter(|r| r["action"] == ALLOW).collect();
        assert_eq!(
            zero.len(),
            allowed.len() + usize::from(call == SYNC),
            "{call}"
        );
        assert_eq!(ours.len(), zero.len() + allowed.len(), "{call}");
        for (z, a) in zero.iter().zip(&allowed) {
            assert_eq!(z["includes"], a["includes"], "{call}");
        }
    }
    let sfr2 = naming(&profile, "sync_file_range2");
    assert_eq!(sfr2.len(), 4, "ppc64le's and arm's rules");
    assert_eq!(sfr2[0]["includes"], json!({"arches": ["ppc64le"]}));
    assert!(
        naming(&profile, "fsync")
            .iter()
            .all(|r| r.get("includes").is_none())
    );
    // Idempotent.
    let once = profile.clone();
    assert_eq!(add_sync_rules(&mut profile).calls, SYNC_FAMILY);
    assert_eq!(profile, once);
}

#[test]
fn the_guard_reads_the_descriptors_sign_bit_only() {
    // (arg & value) == valueTwo, as libseccomp reads SCMP_CMP_MASKED_EQ.
    let matches = |args: &Value, arg: u64| {
        let (mask, want) = (
            args[0]["value"].as_u64().unwrap(),
            args[0]["valueTwo"].as_u64().unwrap(),
        );
        arg & mask == want
    };
    let (zero, negative) = (descriptor_is(0), descriptor_is(SIGN));
    for fd in [0u64, 3, 1023, 0x7fff_ffff, 0x1_0000_0003] {
        assert!(matches(&zero, fd) && !matches(&negative, fd), "{fd:#x}");
    }
    // -1 sign-extended, -1 with the upper half zero, i386's -1.
    for fd in [u64::MAX, 0xffff_ffff, 0x8000_0000, (-100i64) as u64] {
        assert!(!matches(&zero, fd) && matches(&negative, fd), "{fd:#x}");
    }
}

#[test]
fn refused_or_conditional_calls_are_left_alone() {
    let mut profile = json!({
        "defaultAction": "SCMP_ACT_ERRNO",
        "syscalls": [
            {"names": ["read", "fsync"], "action": ALLOW},
            {"names": ["fdatasync"], "action": "SCMP_ACT_KILL"},
            {"names": ["msync"], "action": ALLOW,
             "args": [{"index": 0, "value": 0, "op": "SCMP_CMP_NE"}]},
            {"names": ["syncfs"], "action": "SCMP_ACT_LOG"},
            {"names": [], "action": ALLOW},
        ]
    });
    let answered = add(
        &mut profile,
        &["msync", "fsync", "fdatasync", "sync", "syncfs"],
    )
    .unwrap();
    assert_eq!(answered.calls, ["fsync", "syncfs"]);
    // sync: not named, and the default refuses it.
    assert_eq!(answered.left, ["msync", "fdatasync", "sync"]);
    let rules = rules(&profile);
    assert_eq!(rules[0], json!({"names": ["read"], "action": ALLOW}));
    assert_eq!(rules[1]["names"], json!(["fdatasync"]));
    assert_eq!(rules[2]["names"], json!(["msync"]));
    // The LOG rule named only syncfs: it went; the empty rule was there.
    assert_eq!(rules[3], json!({"names": [], "action": ALLOW}));
    // Each call's other half keeps its own action.
    assert_eq!(rules[4]["names"], json!(["fsync"]));
    assert_eq!(
        rules[5],
        json!({"names": ["fsync"], "action": ALLOW, "args": descriptor_is(SIGN)})
    );
    assert_eq!(rules[6]["names"], json!(["syncfs"]));
    assert_eq!(rules[7]["action"], "SCMP_ACT_LOG");
    assert_eq!(rules.len(), 8);
}

#[test]
fn a_default_that_allows_needs_no_rule_taken_out() {
    let mut profile = json!({"defaultAction": "SCMP_ACT_ALLOW", "flags": ["X"]});
    let answered = add_sync_rules(&mut profile);
    assert_eq!(answered.calls, SYNC_FAMILY);
    assert_eq!(profile["flags"], json!(["X"]));
    assert_eq!(rules(&profile).len(), 3);
}

#[test]
fn a_profile_not_shaped_as_one_is_left_and_said() {
    for mut bad in [json!([]), json!("x"), json!({"syscalls": 3})] {
        let before = bad.clone();
        let answered = add_sync_rules(&mut bad);
        assert!(answered.malformed.is_some() && answered.calls.is_empty());
        assert_eq!(answered.left, SYNC_FAMILY);
        assert_eq!(bad, before);
    }
}
