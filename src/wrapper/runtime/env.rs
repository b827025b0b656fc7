//! The container process's environment (`process.env`, `"NAME=value"`
//! strings): whether eatmydata is switched off there, and `LD_PRELOAD` with
//! the mounted library first.

use serde_json::Value;

use super::spec::MOUNTED;
use crate::protocol;

const PRELOAD: &str = "LD_PRELOAD";

/// The value of each `NAME=` entry of `env`, in order.
fn values<'a>(env: &'a [Value], name: &'a str) -> impl Iterator<Item = &'a str> {
    env.iter().filter_map(move |entry| {
        let entry = entry.as_str()?;
        entry.strip_prefix(name)?.strip_prefix('=')
    })
}

/// Whether `EATMYDATA_DISABLE` is on in `env` (any of its entries: runc
/// keeps the last one, crun passes them all).
pub fn disabled(env: &[Value]) -> bool {
    values(env, protocol::DISABLE).any(|value| protocol::switch_on(value.as_bytes()))
}

/// `value` of `LD_PRELOAD` with the library first, or `None` if it is
/// already in the list. The dynamic loader splits the list at spaces and
/// colons alike; ours is joined with the separator the list already uses.
pub fn with_ours(value: &str) -> Option<String> {
    let mut entries = value.split([' ', ':']).filter(|e| !e.is_empty());
    if entries.any(|entry| entry == MOUNTED) {
        return None;
    }
    if value.trim_matches([' ', ':']).is_empty() {
        return Some(MOUNTED.to_owned());
    }
    let separator = if value.contains(':') && !value.contains(' ') {
        ':'
    } else {
        ' '
    };
    Some(format!("{MOUNTED}{separator}{value}"))
}

/// Puts the library first in every `LD_PRELOAD` entry of `env`, or adds
/// one. Returns whether anything changed.
pub fn preload(env: &mut Vec<Value>) -> bool {
    let mut found = false;
    let mut changed = false;
    for entry in env.iter_mut() {
        let Some(value) = entry
            .as_str()
            .and_then(|e| e.strip_prefix(PRELOAD)?.strip_prefix('='))
        else {
            continue;
        };
        found = true;
        if let Some(value) = with_ours(value) {
            *entry = Value::String(format!("{PRELOAD}={value}"));
            changed = true;
        }
    }
    if !found {
        env.push(Value::String(format!("{PRELOAD}={MOUNTED}")));
        changed = true;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(entries: &[&str]) -> Vec<Value> {
        entries.iter().map(|e| json!(e)).collect()
    }

    #[test]
    fn ours_goes_first_and_once() {
        assert_eq!(with_ours("").as_deref(), Some(MOUNTED));
        assert_eq!(with_ours(" ").as_deref(), Some(MOUNTED));
        assert_eq!(
            with_ours("/lib/a.so").unwrap(),
            format!("{MOUNTED} /lib/a.so")
        );
        assert_eq!(
            with_ours("/lib/a.so:/lib/b.so").unwrap(),
            format!("{MOUNTED}:/lib/a.so:/lib/b.so")
        );
        assert_eq!(
            with_ours("/lib/a.so /lib/b.so").unwrap(),
            format!("{MOUNTED} /lib/a.so /lib/b.so")
        );
        assert_eq!(with_ours(&format!("/lib/a.so:{MOUNTED}")), None);
        assert_eq!(with_ours(MOUNTED), None);
        // A name that only contains ours is another file.
        assert!(with_ours(&format!("{MOUNTED}.1")).is_some());
    }

    #[test]
    fn preload_is_added_or_merged_in_place() {
        let mut plain = env(&["PATH=/bin", "HOME=/root"]);
        assert!(preload(&mut plain));
        assert_eq!(
            plain,
            env(&["PATH=/bin", "HOME=/root", &format!("LD_PRELOAD={MOUNTED}")])
        );
        assert!(!preload(&mut plain), "a second edit changes nothing");

        let mut image = env(&["LD_PRELOAD=/usr/lib/libjemalloc.so", "PATH=/bin"]);
        assert!(preload(&mut image));
        assert_eq!(
            image,
            env(&[
                &format!("LD_PRELOAD={MOUNTED} /usr/lib/libjemalloc.so"),
                "PATH=/bin"
            ])
        );
        // LD_PRELOADX is another variable.
        let mut other = env(&["LD_PRELOADX=1"]);
        preload(&mut other);
        assert_eq!(other.len(), 2);
    }

    #[test]
    fn the_switch_follows_the_librarys_rule() {
        assert!(disabled(&env(&["EATMYDATA_DISABLE=1"])));
        assert!(disabled(&env(&["A=1", "EATMYDATA_DISABLE=yes"])));
        assert!(!disabled(&env(&["EATMYDATA_DISABLE=0"])));
        assert!(!disabled(&env(&["EATMYDATA_DISABLE="])));
        assert!(!disabled(&env(&["EATMYDATA_DISABLED=1", "PATH=/bin"])));
        assert!(!disabled(&[]));
    }
}
