//! Docker's `daemon.json`: `runtimes.eatmydata.path` (and `runtimeArgs`
//! for a real runtime of the user's choice), and `default-runtime` with
//! `--default`. JSON keeps no comments; the keys keep their order
//! (serde_json's `preserve_order`) and the file its indentation.

use serde_json::{Map, Value, json};

use super::{REGISTERED, Want};

/// The new text of `daemon.json`; `text` itself when it says what is asked.
pub fn edit(text: &str, want: &Want) -> Result<String, String> {
    let old: Value = if text.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(text).map_err(|error| format!("it is not JSON ({error})"))?
    };
    let mut new = old.clone();
    let Value::Object(top) = &mut new else {
        return Err("it is not a JSON object".into());
    };
    let runtimes = object(top, "runtimes", "runtimes")?;
    let ours = object(runtimes, REGISTERED, "runtimes.eatmydata")?;
    ours.insert("path".into(), json!(want.path));
    match &want.real {
        Some(real) => {
            ours.insert(
                "runtimeArgs".into(),
                json!([format!("--eatmydata-runtime={real}")]),
            );
        }
        None => {
            ours.shift_remove("runtimeArgs");
        }
    }
    if want.default {
        top.insert("default-runtime".into(), json!(REGISTERED));
    }
    if new == old && !text.trim().is_empty() {
        return Ok(text.to_owned());
    }
    Ok(written(&new, indent_of(text)) + "\n")
}

/// The object at `key` of `map`, made when missing.
fn object<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
    shown: &str,
) -> Result<&'a mut Map<String, Value>, String> {
    match map.entry(key).or_insert_with(|| json!({})) {
        Value::Object(object) => Ok(object),
        _ => Err(format!("\"{shown}\" is not an object")),
    }
}

/// The indentation the file's first indented line uses (four spaces for a
/// new file, as Docker's documentation writes daemon.json).
fn indent_of(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|line| &line[..line.len() - line.trim_start().len()])
        .find(|indent| !indent.is_empty())
        .unwrap_or("    ")
        .to_owned()
}

/// `value` pretty-printed with `indent` for each level: serde_json's
/// two spaces a level, changed line by line (a JSON string holds no raw
/// line break).
fn written(value: &Value, indent: String) -> String {
    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
    let lines: Vec<String> = pretty
        .lines()
        .map(|line| {
            let body = line.trim_start_matches(' ');
            indent.repeat((line.len() - body.len()) / 2) + body
        })
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let new = edit(THEIRS, &Want::example(true, Some("crun"))).unwrap();
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
        assert_eq!(edit(&new, &Want::example(true, Some("crun"))).unwrap(), new);
        // Asked again without the real runtime, its argument goes.
        let plain = edit(&new, &Want::example(true, None)).unwrap();
        assert!(!plain.contains("runtimeArgs\": [\"--eatmydata"), "{plain}");
    }

    #[test]
    fn refuses_what_is_not_a_daemon_json() {
        for text in ["{\"log-driver\": ", "[]", "{\"runtimes\": []}", "// c\n{}"] {
            assert!(edit(text, &Want::example(false, None)).is_err(), "{text}");
        }
        assert_eq!(
            edit("", &Want::example(false, None)).unwrap(),
            "{\n    \"runtimes\": {\n        \"eatmydata\": {\n            \"path\": \
             \"/usr/bin/eatmydata-runtime\"\n        }\n    }\n}\n"
        );
    }
}
