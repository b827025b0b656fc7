//! The spec's seccomp profile (`linux.seccomp`), given rules that answer
//! the sync calls with 0 without running them, for the programs
//! `LD_PRELOAD` cannot reach: static ones and every Go program.
//!
//! The calls are those of the command's plain filter (`seccomp/filter.rs`,
//! its native table), answered the same way (`SCMP_ACT_ERRNO` with errno 0
//! is a return of 0), except `msync`, answered only with `MS_SYNC` in its
//! flags (without it, it flushes nothing, and its errors stay the
//! kernel's). libseccomp lets an unconditional rule win over a later one
//! for the same call, so a call the profile already allows (Docker's
//! default allow list names them all) leaves that rule: its name is taken
//! out of the rule's `names`, and the rule goes only when no name is left.
//! `msync` without `MS_SYNC` keeps the action it had, by a rule of its own.
//!
//! A call the profile refuses (a rule of another action names it, or it is
//! not named and the default refuses) stays refused, and so does one named
//! by a rule with argument conditions, which this edit would have to
//! rewrite to keep; both are said in the log. A spec without a profile
//! gets one that allows everything else, on the architectures the command's
//! filter covers.

use serde_json::{Map, Value, json};

use crate::seccomp::filter::ABIS;

const ALLOW: &str = "SCMP_ACT_ALLOW";
const LOG: &str = "SCMP_ACT_LOG";
const MSYNC: &str = "msync";

/// What the profile now does with the sync calls.
#[derive(Debug, Default, PartialEq)]
pub struct Answered {
    /// Answered 0 by the new rules.
    pub calls: Vec<&'static str>,
    /// Left as the profile had them: refused, or conditional.
    pub left: Vec<&'static str>,
}

/// The sync calls, by name, from the command's filter table.
fn sync_calls() -> impl Iterator<Item = &'static str> {
    ABIS[0].calls.iter().map(|&(name, _)| name)
}

/// libseccomp's names of the ABIs in `ABIS`.
fn architectures() -> Vec<Value> {
    let name = |abi: &str| match abi {
        "x86_64" => "SCMP_ARCH_X86_64",
        "x32" => "SCMP_ARCH_X32",
        "i386" => "SCMP_ARCH_X86",
        _ => "SCMP_ARCH_AARCH64",
    };
    ABIS.iter().map(|abi| json!(name(abi.name))).collect()
}

/// `msync`'s flags are its third argument (index 2): `(flags & MS_SYNC) ==
/// want`.
fn ms_sync_is(want: u32) -> Value {
    let ms_sync = libc::MS_SYNC as u32;
    json!([{ "index": 2, "value": ms_sync, "valueTwo": want, "op": "SCMP_CMP_MASKED_EQ" }])
}

fn allows(action: Option<&Value>) -> bool {
    matches!(action.and_then(Value::as_str), Some(ALLOW | LOG))
}

fn names(rule: &Value) -> impl Iterator<Item = &str> {
    let names = rule.get("names").and_then(Value::as_array);
    names.into_iter().flatten().filter_map(Value::as_str)
}

/// A rule that answers its calls with 0 (ours, from an earlier edit of
/// the same bundle).
fn answers_zero(rule: &Value) -> bool {
    rule.get("action").and_then(Value::as_str) == Some("SCMP_ACT_ERRNO")
        && rule.get("errnoRet").and_then(Value::as_u64) == Some(0)
}

fn has_args(rule: &Value) -> bool {
    rule.get("args")
        .and_then(Value::as_array)
        .is_some_and(|args| !args.is_empty())
}

/// Edits `linux` (the spec's `linux` object) so that the sync calls the
/// profile lets reach the kernel are answered 0. Fails only on a profile
/// that is not shaped as the runtime spec says.
pub fn edit(linux: &mut Map<String, Value>) -> Result<Answered, String> {
    let Some(profile) = linux.get_mut("seccomp").filter(|p| !p.is_null()) else {
        let calls: Vec<&str> = sync_calls().collect();
        let syscalls = ours(&calls, None);
        linux.insert(
            "seccomp".into(),
            json!({ "defaultAction": ALLOW, "architectures": architectures(), "syscalls": syscalls }),
        );
        return Ok(Answered {
            calls,
            left: vec![],
        });
    };
    let profile = profile
        .as_object_mut()
        .ok_or("linux.seccomp is not an object")?;
    let default_allows = allows(profile.get("defaultAction"));
    let rules = profile
        .entry("syscalls")
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .ok_or("linux.seccomp.syscalls is not a list")?;
    let mut answered = Answered::default();
    // Calls this edit takes over now (not those a former edit took).
    let mut new = vec![];
    // The action msync without MS_SYNC keeps, when a rule gave it one.
    let mut msync_action = None;
    for call in sync_calls() {
        let naming: Vec<&Value> = rules
            .iter()
            .filter(|rule| names(rule).any(|n| n == call))
            .collect();
        if naming.iter().any(|rule| answers_zero(rule)) {
            answered.calls.push(call);
            continue;
        }
        let kept = if naming.is_empty() {
            default_allows
        } else {
            naming
                .iter()
                .all(|rule| allows(rule.get("action")) && !has_args(rule))
        };
        if !kept {
            answered.left.push(call);
            continue;
        }
        if call == MSYNC {
            msync_action = naming.first().and_then(|rule| rule.get("action")).cloned();
        }
        answered.calls.push(call);
        new.push(call);
    }
    // A rule goes only when this edit took its last name.
    let mut emptied = vec![];
    for (i, rule) in rules.iter_mut().enumerate() {
        if let Some(list) = rule.get_mut("names").and_then(Value::as_array_mut) {
            let before = list.len();
            list.retain(|n| !n.as_str().is_some_and(|n| new.contains(&n)));
            if list.is_empty() && before > 0 {
                emptied.push(i);
            }
        }
    }
    for i in emptied.into_iter().rev() {
        rules.remove(i);
    }
    rules.extend(ours(&new, msync_action));
    Ok(answered)
}

/// The rules that answer `calls` with 0, and keep `msync` without
/// `MS_SYNC` under `msync_action` if it had one.
fn ours(calls: &[&str], msync_action: Option<Value>) -> Vec<Value> {
    let plain: Vec<&str> = calls.iter().copied().filter(|&c| c != MSYNC).collect();
    let mut rules = vec![];
    if !plain.is_empty() {
        rules.push(json!({ "names": plain, "action": "SCMP_ACT_ERRNO", "errnoRet": 0 }));
    }
    if calls.contains(&MSYNC) {
        let ms_sync = libc::MS_SYNC as u32;
        rules.push(json!({
            "names": [MSYNC], "action": "SCMP_ACT_ERRNO", "errnoRet": 0, "args": ms_sync_is(ms_sync)
        }));
        if let Some(action) = msync_action {
            rules.push(json!({ "names": [MSYNC], "action": action, "args": ms_sync_is(0) }));
        }
    }
    rules
}

#[cfg(test)]
mod tests;
