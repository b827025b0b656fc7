//! The sync rules: the one edit that makes a seccomp profile answer the
//! sync calls with 0 without running them (`SCMP_ACT_ERRNO` with errno 0
//! is a return of 0). The runtime applies it to a spec's `linux.seccomp`
//! (`runtime/edit/seccomp.rs`), `eatmydata profile` to an engine's default
//! profile, and the client to a user's own: one source, so a container
//! gets the same answers whichever way it was reached.
//!
//! A call that takes a descriptor is answered 0 only for a descriptor the
//! kernel could hold: the rule tests bit 31 of the first argument (the
//! kernel reads an `unsigned int`, the low 32 bits, on every ABI), and a
//! second rule gives a negative one the action the call had, so that
//! `fsync(-1)` still fails `EBADF`, as the kernel fails it, whether the
//! register's upper half is sign-extended or zero. `sync` takes no
//! descriptor; `msync` is answered 0 only with `MS_SYNC` in its flags
//! (without it, it flushes nothing, and its errors stay the kernel's).
//!
//! libseccomp lets an unconditional rule win over a later one for the
//! same call, so a call the profile already allows (every engine's
//! default allow list names them) leaves that rule: its name is taken out
//! of the rule's `names`, and the rule goes only when no name is left.
//! Our rules for it carry the `includes` and `excludes` of the rule it
//! left (an engine's default names `sync_file_range2` for some
//! architectures only), and the call's other half keeps that rule's
//! action. A call the profile refuses (a rule of another action names it,
//! or it is not named and the default refuses), or names with argument
//! conditions, which this edit would have to rewrite to keep, stays as it
//! was: [`Answered::left`] lists it.

use serde_json::{Map, Value, json};

pub const ALLOW: &str = "SCMP_ACT_ALLOW";
const LOG: &str = "SCMP_ACT_LOG";
const ERRNO: &str = "SCMP_ACT_ERRNO";
const MSYNC: &str = "msync";
const SYNC: &str = "sync";
/// Bit 31 of a descriptor: set, the descriptor is negative.
const SIGN: u32 = 0x8000_0000;

/// The sync family, by the names engines give them on any architecture:
/// what the profile answers (`sync_file_range2` is ppc's and arm's order
/// of the arguments, `arm_sync_file_range` 32-bit arm's name for it).
pub const SYNC_FAMILY: &[&str] = &[
    "fsync",
    "fdatasync",
    "sync_file_range",
    "sync_file_range2",
    "arm_sync_file_range",
    "syncfs",
    SYNC,
    MSYNC,
];

/// What the profile now does with the sync calls.
#[derive(Debug, Default, PartialEq)]
pub struct Answered {
    /// Answered 0 by our rules (added now, or by an earlier edit).
    pub calls: Vec<&'static str>,
    /// Left as the profile had them: refused, or conditional. May name
    /// calls another architecture has (`sync_file_range2`), when the
    /// profile does not name them.
    pub left: Vec<&'static str>,
    /// The profile is not shaped as a seccomp profile, and why: nothing
    /// was changed (only [`add_sync_rules`] says so here; [`add`] fails).
    pub malformed: Option<String>,
}

/// Adds the sync rules for the whole [`SYNC_FAMILY`] to `profile`, an
/// engine's (moby's `default.json` format) or the runtime spec's: the same
/// edit the runtime makes. A profile that is not shaped as one is left as
/// it was, said in [`Answered::malformed`].
pub fn add_sync_rules(profile: &mut Value) -> Answered {
    add(profile, SYNC_FAMILY).unwrap_or_else(|why| Answered {
        calls: vec![],
        left: SYNC_FAMILY.to_vec(),
        malformed: Some(why),
    })
}

/// Where a call's rules come from: the action it had (none when the
/// default allowed it) and the conditions on the engine's side
/// (`includes`, `excludes`) of the rule that named it.
#[derive(PartialEq)]
struct Origin {
    action: Option<Value>,
    conditions: Map<String, Value>,
}

/// The edit, for `calls` of [`SYNC_FAMILY`]. Fails, changing nothing, on
/// a profile that is not an object or whose `syscalls` is not a list.
pub fn add(profile: &mut Value, calls: &[&'static str]) -> Result<Answered, String> {
    let profile = profile
        .as_object_mut()
        .ok_or("the seccomp profile is not an object")?;
    let default_allows = allows(profile.get("defaultAction"));
    let rules = profile
        .entry("syscalls")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or("the seccomp profile's syscalls is not a list")?;
    let mut answered = Answered::default();
    // Calls this edit takes over now (not those an earlier edit took),
    // grouped by where they come from.
    let mut new = vec![];
    let mut groups: Vec<(Origin, Vec<&'static str>)> = vec![];
    for &call in calls {
        let naming: Vec<&Value> = rules
            .iter()
            .filter(|rule| names(rule).any(|n| n == call))
            .collect();
        if naming.iter().any(|rule| answers_zero(rule)) {
            answered.calls.push(call);
            continue;
        }
        let kept = match naming.is_empty() {
            true => default_allows,
            false => naming
                .iter()
                .all(|rule| allows(rule.get("action")) && !has_args(rule)),
        };
        if !kept {
            answered.left.push(call);
            continue;
        }
        let origins = match naming.is_empty() {
            true => vec![Origin {
                action: None,
                conditions: Map::new(),
            }],
            false => naming.iter().map(|rule| origin(rule)).collect(),
        };
        for origin in origins {
            match groups.iter_mut().find(|(o, _)| *o == origin) {
                Some((_, group)) => group.push(call),
                None => groups.push((origin, vec![call])),
            }
        }
        answered.calls.push(call);
        new.push(call);
    }
    // A rule goes only when this edit took its last name.
    rules.retain_mut(|rule| {
        let Some(list) = rule.get_mut("names").and_then(Value::as_array_mut) else {
            return true;
        };
        let before = list.len();
        list.retain(|n| !n.as_str().is_some_and(|n| new.contains(&n)));
        list.len() == before || !list.is_empty()
    });
    for (origin, calls) in &groups {
        rules.extend(ours(calls, origin));
    }
    Ok(answered)
}

/// The rules that answer `calls` with 0, and give their other half (a
/// negative descriptor, `msync` without `MS_SYNC`) the action they had.
fn ours(calls: &[&str], origin: &Origin) -> Vec<Value> {
    let with = |mut rule: Value| {
        if let Some(rule) = rule.as_object_mut() {
            rule.extend(origin.conditions.clone());
        }
        rule
    };
    let zero = |names: &[&str], args: Option<Value>| {
        let mut rule = json!({ "names": names, "action": ERRNO, "errnoRet": 0 });
        if let Some(args) = args {
            rule["args"] = args;
        }
        with(rule)
    };
    let other_half = |names: &[&str], args: Value| {
        let action = origin.action.clone()?;
        Some(with(
            json!({ "names": names, "action": action, "args": args }),
        ))
    };
    let fds: Vec<&str> = calls
        .iter()
        .copied()
        .filter(|&c| c != SYNC && c != MSYNC)
        .collect();
    let mut rules = vec![];
    if !fds.is_empty() {
        rules.push(zero(&fds, Some(descriptor_is(0))));
        rules.extend(other_half(&fds, descriptor_is(SIGN)));
    }
    if calls.contains(&SYNC) {
        rules.push(zero(&[SYNC], None));
    }
    if calls.contains(&MSYNC) {
        let ms_sync = libc::MS_SYNC as u32;
        rules.push(zero(&[MSYNC], Some(ms_sync_is(ms_sync))));
        rules.extend(other_half(&[MSYNC], ms_sync_is(0)));
    }
    rules
}

/// The descriptor's sign bit (of its low 32 bits, all the kernel reads)
/// is `want`: `(arg0 & 0x80000000) == want`.
pub fn descriptor_is(want: u32) -> Value {
    json!([{ "index": 0, "value": SIGN, "valueTwo": want, "op": "SCMP_CMP_MASKED_EQ" }])
}

/// `msync`'s flags are its third argument (index 2): `(flags & MS_SYNC) ==
/// want`.
pub fn ms_sync_is(want: u32) -> Value {
    let ms_sync = libc::MS_SYNC as u32;
    json!([{ "index": 2, "value": ms_sync, "valueTwo": want, "op": "SCMP_CMP_MASKED_EQ" }])
}

fn origin(rule: &Value) -> Origin {
    let conditions = ["includes", "excludes"]
        .into_iter()
        .filter_map(|key| {
            let value = rule.get(key)?;
            let empty = value.as_object().is_some_and(Map::is_empty) || value.is_null();
            (!empty).then(|| (key.to_owned(), value.clone()))
        })
        .collect();
    Origin {
        action: rule.get("action").cloned(),
        conditions,
    }
}

fn allows(action: Option<&Value>) -> bool {
    matches!(action.and_then(Value::as_str), Some(ALLOW | LOG))
}

pub fn names(rule: &Value) -> impl Iterator<Item = &str> {
    let names = rule.get("names").and_then(Value::as_array);
    names.into_iter().flatten().filter_map(Value::as_str)
}

/// A rule that answers its calls with 0 (ours, from an earlier edit).
fn answers_zero(rule: &Value) -> bool {
    rule.get("action").and_then(Value::as_str) == Some(ERRNO)
        && rule.get("errnoRet").and_then(Value::as_u64) == Some(0)
}

fn has_args(rule: &Value) -> bool {
    rule.get("args")
        .and_then(Value::as_array)
        .is_some_and(|args| !args.is_empty())
}

#[cfg(test)]
mod tests;
