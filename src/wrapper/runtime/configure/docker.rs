//! Docker's `daemon.json`: `runtimes.eatmydata.path` (and `runtimeArgs`
//! for a real runtime of the user's choice), and `default-runtime` with
//! `--default`; and their removal. JSON keeps no comments; every byte but
//! the members touched stays (see `json.rs`).
//!
//! dockerd reads the file again on SIGHUP, but keeps a key that has gone
//! missing: so a removal sets `default-runtime` back to `runc` in so many
//! words, and keeps `runtimes.eatmydata` as a plain alias of runc while a
//! container made under it exists (dockerd asks for the runtime by that
//! name when it starts the container again).

use serde_json::{Value, json};

use super::json::{self, Member, Object};
use super::{REGISTERED, Want};

/// The runtime dockerd runs when nothing names another.
pub const RUNC: &str = "runc";

/// The new text of `daemon.json`; `text` itself when it says what is asked.
pub fn register(text: &str, want: &Want) -> Result<String, String> {
    let mut entry = json!({ "path": want.path });
    let mut args = vec![];
    if let Some(real) = &want.real {
        args.push(format!("--eatmydata-runtime={real}"));
    }
    if want.keep_binds {
        args.push(crate::runtime::KEEP_BINDS_OPTION.to_owned());
    }
    if !args.is_empty() {
        entry["runtimeArgs"] = json!(args);
    }
    let mut text = match text.trim().is_empty() {
        true => "{}\n".to_owned(),
        false => text.to_owned(),
    };
    let top = json::top(&text)?;
    text = match top.get("runtimes") {
        None => json::insert(&text, &top, "runtimes", &json!({ REGISTERED: entry })),
        Some(runtimes) => {
            let runtimes = json::object_of(&text, runtimes, "runtimes")?;
            set(&text, &runtimes, REGISTERED, &entry)
        }
    };
    if want.default {
        let top = json::top(&text)?;
        text = set(&text, &top, "default-runtime", &json!(REGISTERED));
    }
    Ok(text)
}

/// The text of `daemon.json` without what [`register`] added: the
/// default back to `runc`, and the entry kept as an alias of runc when
/// `alias` (a container made under it still exists), else gone, with
/// `runtimes` when nothing else is left in it.
pub fn remove(text: &str, alias: bool) -> Result<String, String> {
    if text.trim().is_empty() {
        return Ok(text.to_owned());
    }
    let mut text = text.to_owned();
    let top = json::top(&text)?;
    if let Some(default) = top.get("default-runtime")
        && default.value(&text) == json!(REGISTERED)
    {
        text = json::replace(&text, default, &json!(RUNC));
    }
    let top = json::top(&text)?;
    let Some(runtimes) = top.get("runtimes") else {
        return Ok(text);
    };
    let runtimes = json::object_of(&text, runtimes, "runtimes")?;
    if runtimes.get(REGISTERED).is_none() {
        return Ok(text);
    }
    if alias {
        return Ok(set(&text, &runtimes, REGISTERED, &json!({ "path": RUNC })));
    }
    text = without(&text, &runtimes, REGISTERED);
    let top = json::top(&text)?;
    if let Some(runtimes) = top.get("runtimes")
        && json::object_of(&text, runtimes, "runtimes")?
            .members
            .is_empty()
    {
        text = without(&text, &top, "runtimes");
    }
    Ok(text)
}

/// Whether a removal from `old` to `new` named `runc` the default where
/// `old` named the runtime (`new`: `None` when the file goes).
pub fn named_runc(old: &str, new: Option<&str>) -> bool {
    let default = |text: &str| json::parse(text).ok().map(|v| v["default-runtime"].clone());
    default(old) == Some(json!(REGISTERED)) && new.and_then(default) == Some(json!(RUNC))
}

/// Whether `text` makes the runtime dockerd's default.
pub fn names_default(text: &str) -> bool {
    setting(text, "default-runtime").as_deref() == Some(REGISTERED)
}

/// Whether nothing is left in the file but an empty object.
pub fn holds_nothing(text: &str) -> bool {
    text.trim().is_empty() || json::parse(text).is_ok_and(|v| v == json!({}))
}

/// The string the file gives `key` (`data-root`, `pidfile`), if any.
pub fn setting(text: &str, key: &str) -> Option<String> {
    json::parse(text)
        .ok()?
        .get(key)?
        .as_str()
        .map(str::to_owned)
}

/// `object`'s member `key` set to `value`: replaced when it differs,
/// added at the end when missing.
fn set(text: &str, object: &Object, key: &str, value: &Value) -> String {
    match object.get(key) {
        Some(member) if member.value(text) == *value => text.to_owned(),
        Some(member) => json::replace(text, member, value),
        None => json::insert(text, object, key, value),
    }
}

/// `object` without its members named `key`.
fn without(text: &str, object: &Object, key: &str) -> String {
    let found = object.members.iter().rposition(|m: &Member| m.key == key);
    match found {
        Some(index) => json::remove(text, object, index),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn keep_binds_is_passed_as_an_option() {
        let mut want = Want::example(false, Some("crun"));
        want.keep_binds = true;
        let text = register("{}", &want).unwrap();
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            value["runtimes"]["eatmydata"]["runtimeArgs"],
            json!(["--eatmydata-runtime=crun", "--eatmydata-keep-binds"])
        );
    }

    use super::*;

    #[test]
    fn a_default_made_before_is_read_back() {
        let default = register("{}", &Want::example(true, None)).unwrap();
        let again = register(&default, &Want::example(false, None)).unwrap();
        assert!(names_default(&again), "{again}");
        assert!(!names_default(
            &register("{}", &Want::example(false, None)).unwrap()
        ));
        assert!(!names_default(&remove(&again, true).unwrap()));
    }

    const THEIRS: &str = r#"{
	"log-driver": "journald",
	"registry-mirrors": ["https://mirror.example"],
	"runtimes": {
		"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}
	},
	"max-concurrent-downloads": 3
}
"#;

    #[test]
    fn adds_the_runtime_after_the_users_own_keeping_their_order_and_tabs() {
        let new = register(THEIRS, &Want::example(true, Some("crun"))).unwrap();
        let value: Value = serde_json::from_str(&new).unwrap();
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "log-driver",
                "registry-mirrors",
                "runtimes",
                "max-concurrent-downloads",
                "default-runtime"
            ]
        );
        assert_eq!(
            value["runtimes"]["nvidia"],
            json!({"path": "nvidia-container-runtime", "runtimeArgs": []})
        );
        assert_eq!(
            value["runtimes"]["eatmydata"],
            json!({"path": "/usr/bin/eatmydata-runtime",
                   "runtimeArgs": ["--eatmydata-runtime=crun"]})
        );
        assert!(new.contains("\n\t\"log-driver\""), "{new}");
        assert_eq!(
            register(&new, &Want::example(true, Some("crun"))).unwrap(),
            new
        );
        // Asked again without the real runtime, its argument goes.
        let plain = register(&new, &Want::example(true, None)).unwrap();
        assert!(!plain.contains("runtimeArgs\": [\"--eatmydata"), "{plain}");
    }

    #[test]
    fn refuses_what_is_not_a_daemon_json() {
        for text in ["{\"log-driver\": ", "[]", "{\"runtimes\": []}", "// c\n{}"] {
            assert!(
                register(text, &Want::example(false, None)).is_err(),
                "{text}"
            );
        }
        assert_eq!(
            register("", &Want::example(false, None)).unwrap(),
            "{\n    \"runtimes\": {\n        \"eatmydata\": {\n            \"path\": \
             \"/usr/bin/eatmydata-runtime\"\n        }\n    }\n}\n"
        );
    }

    #[test]
    fn a_removal_gives_back_the_bytes_it_took_and_runc_as_the_default() {
        let one_line = "{\"log-driver\": \"journald\", \"runtimes\": {}}";
        for theirs in [THEIRS, one_line, "{\n  \"debug\": true\n}\n"] {
            for real in [None, Some("crun")] {
                let plain = register(theirs, &Want::example(false, real)).unwrap();
                assert_eq!(
                    remove(&plain, false).unwrap(),
                    theirs.replace(", \"runtimes\": {}", "")
                );
                let default = register(theirs, &Want::example(true, real)).unwrap();
                let back = remove(&default, false).unwrap();
                let value: Value = serde_json::from_str(&back).unwrap();
                assert_eq!(value["default-runtime"], json!("runc"), "{back}");
                // The rest is theirs, byte for byte.
                let runc = json::top(&back).unwrap();
                let index = runc.members.len() - 1;
                assert_eq!(
                    json::remove(&back, &runc, index),
                    theirs.replace(", \"runtimes\": {}", "")
                );
                // A second removal changes nothing.
                assert_eq!(remove(&back, false).unwrap(), back);
            }
        }
        // Their own default, replaced, comes back as runc: dockerd
        // keeps a missing key.
        let crun = "{\n    \"default-runtime\": \"crun\"\n}\n";
        let default = register(crun, &Want::example(true, None)).unwrap();
        assert_eq!(
            remove(&default, false).unwrap(),
            "{\n    \"default-runtime\": \"runc\"\n}\n"
        );
        // A file made for the runtime alone is left with nothing in it.
        let made = register("", &Want::example(false, None)).unwrap();
        let left = remove(&made, false).unwrap();
        assert!(holds_nothing(&left), "{left}");
        assert!(!holds_nothing(THEIRS));
    }

    #[test]
    fn a_removal_keeps_the_name_as_an_alias_of_runc_while_asked() {
        let registered = register(THEIRS, &Want::example(true, Some("crun"))).unwrap();
        let kept = remove(&registered, true).unwrap();
        let value: Value = serde_json::from_str(&kept).unwrap();
        assert_eq!(value["runtimes"]["eatmydata"], json!({"path": "runc"}));
        assert_eq!(value["default-runtime"], json!("runc"));
        assert_eq!(remove(&kept, true).unwrap(), kept);
        // Once the containers are gone, the alias goes too.
        let gone = remove(&kept, false).unwrap();
        assert!(!gone.contains("eatmydata"), "{gone}");
        assert_eq!(gone, remove(&registered, false).unwrap());
        // Registering again replaces the alias.
        let again = register(&kept, &Want::example(true, Some("crun"))).unwrap();
        assert_eq!(again, registered);
        assert_eq!(setting(THEIRS, "log-driver").as_deref(), Some("journald"));
    }
}
