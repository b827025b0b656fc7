//! containerd's `config.toml`: a runc-shim runtime named `eatmydata`
//! whose `options.BinaryName` is the runtime, in the CRI plugin's table
//! (what a Kubernetes RuntimeClass's handler names), and
//! `default_runtime_name` with `--default`. The plugin's name depends on
//! the file's `version`: 1 (containerd 1.x without the key), 2 (what
//! containerd 1.6's `containerd config default` writes) or 3 (containerd
//! 2.x). A new file is version 2, which containerd 2.x reads too.
//!
//! The entry also lets eatmydata's annotations through: the CRI plugin
//! puts into a container's spec only those of the pod's annotations that
//! the handler's `pod_annotations` patterns match (and of the container's
//! own, `container_annotations`; both globs, matched whole), so without
//! them a pod's `io.eatmydata.disable` never reaches the runtime.

use toml_edit::{Item, Value};

use super::toml;
use super::{REGISTERED, Want};
use crate::runtime::edit::ANNOTATIONS;

/// The shim that runs a runc-like binary.
const RUNC_SHIM: &str = "io.containerd.runc.v2";

/// The entry's lists of annotation patterns the CRI plugin passes on to
/// the spec: the pod's, and the container's own.
const PASSED_ON: [&str; 2] = ["pod_annotations", "container_annotations"];

/// The CRI plugin's `containerd` table for each config version.
fn cri_table(version: i64) -> Result<&'static [&'static str], String> {
    match version {
        1 => Ok(&["plugins", "cri", "containerd"]),
        2 => Ok(&["plugins", "io.containerd.grpc.v1.cri", "containerd"]),
        3 => Ok(&["plugins", "io.containerd.cri.v1.runtime", "containerd"]),
        _ => Err(format!(
            "its config version {version} is not one eatmydata knows (1, 2 or 3)"
        )),
    }
}

/// The CRI plugin's `containerd` table for the file's `version`.
fn cri_table_of(doc: &toml_edit::DocumentMut) -> Result<&'static [&'static str], String> {
    let version = match doc.get("version") {
        None => 1,
        Some(item) => item
            .as_integer()
            .ok_or_else(|| "its version is not a number".to_string())?,
    };
    cri_table(version)
}

/// The new text of `config.toml`.
pub fn register(text: &str, want: &Want) -> Result<String, String> {
    let mut doc = toml::parse(text)?;
    let new = doc.is_empty();
    if new {
        doc.insert("version", toml_edit::value(2));
    }
    let containerd = cri_table_of(&doc)?;
    let root = doc.as_item_mut();
    let default_name = toml::table(root, containerd)?
        .get("default_runtime_name")
        .and_then(Item::as_str)
        .unwrap_or("runc")
        .to_owned();
    let runtimes: Vec<&str> = containerd.iter().copied().chain(["runtimes"]).collect();
    let ours: Vec<&str> = runtimes.iter().copied().chain([REGISTERED]).collect();
    // A new entry takes the default runtime's options that are set
    // (SystemdCgroup, say: a pod's cgroups must be where the kubelet
    // expects them); an empty, 0 or false one is the shim's default.
    let fresh = !toml::has(root, &ours);
    let template = match fresh {
        false => Vec::new(),
        true => toml::table(root, &runtimes)?
            .get(&default_name)
            .and_then(|runtime| runtime.get("options"))
            .and_then(Item::as_table_like)
            .map(|options| {
                options
                    .iter()
                    .filter(|(key, _)| *key != "BinaryName")
                    .filter_map(|(key, item)| Some((key.to_owned(), item.as_value()?.clone())))
                    .filter(|(_, value)| !is_unset(value))
                    .collect()
            })
            .unwrap_or_default(),
    };
    let sibling = |leaf: &[&str]| {
        let path: Vec<&str> = runtimes
            .iter()
            .chain([&default_name.as_str()])
            .chain(leaf)
            .copied()
            .collect();
        let item = path.iter().try_fold(&*root, |item, key| item.get(key));
        item.and_then(toml::layout_of).unwrap_or_default()
    };
    let layouts = (sibling(&[]), sibling(&["options"]));
    let entry = toml::table(root, &ours)?;
    let indent = toml::layout_of(entry).unwrap_or_default();
    toml::set(entry, "runtime_type", RUNC_SHIM.into())?;
    for key in PASSED_ON {
        // An entry of an older eatmydata, or the user's: theirs stay.
        if toml::include(entry, key, ANNOTATIONS)? && !fresh {
            toml::indent_key(entry, key, &indent);
        }
    }
    if fresh {
        toml::lay_out(entry, &layouts.0);
    }
    let options = toml::table(entry, &["options"])?;
    for (key, mut value) in template {
        value.decor_mut().clear();
        toml::set(options, &key, value)?;
    }
    toml::set(options, "BinaryName", want.path.as_str().into())?;
    if fresh {
        toml::lay_out(options, &layouts.1);
    }
    if want.default {
        let table = toml::table(root, containerd)?;
        toml::set_noting(table, "default_runtime_name", REGISTERED)?;
    }
    Ok(doc.to_string())
}

/// The text of `config.toml` without what [`register`] added: the
/// default as it was, and the `eatmydata` entry gone. The `version = 2`
/// a new file was given stays (see [`holds_nothing`]).
pub fn remove(text: &str) -> Result<String, String> {
    let mut doc = toml::parse(text)?;
    if doc.is_empty() {
        return Ok(text.to_owned());
    }
    let containerd = cri_table_of(&doc)?;
    let root = doc.as_item_mut();
    let restored = toml::restore(root, containerd, "default_runtime_name", REGISTERED)?;
    let runtimes: Vec<&str> = containerd.iter().copied().chain(["runtimes"]).collect();
    let removed = toml::remove_pruning(root, &runtimes, REGISTERED);
    Ok(match restored || removed {
        true => doc.to_string(),
        false => text.to_owned(),
    })
}

/// Whether nothing is left but the version a new file was given.
pub fn holds_nothing(text: &str) -> bool {
    toml::holds_nothing(text, &["version"])
}

/// Whether an option holds what the shim takes when it is missing.
fn is_unset(value: &Value) -> bool {
    match value {
        Value::String(s) => s.value().is_empty(),
        Value::Integer(i) => *i.value() == 0,
        Value::Boolean(b) => !*b.value(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_beside_runc_with_its_options_for_each_version() {
        for (version, plugin) in [
            ("", "cri"),
            ("version = 2\n", "\"io.containerd.grpc.v1.cri\""),
            ("version = 3\n", "'io.containerd.cri.v1.runtime'"),
        ] {
            let runtimes = format!("plugins.{plugin}.containerd.runtimes");
            let text = format!(
                "{version}# ours\n[plugins.{plugin}.containerd]\n  default_runtime_name = \"runc\"\n\
                 [{runtimes}.runc]\n  runtime_type = \"io.containerd.runc.v2\"\n\
                 [{runtimes}.runc.options]\n  SystemdCgroup = true # the kubelet's\n"
            );
            let new = register(&text, &Want::example(true, None)).unwrap();
            let plain = plugin.trim_matches(['"', '\'']);
            let doc = toml::parse(&new).unwrap();
            let ours = &doc["plugins"][plain]["containerd"]["runtimes"]["eatmydata"];
            assert_eq!(ours["runtime_type"].as_str(), Some(RUNC_SHIM), "{new}");
            let options = &ours["options"];
            assert_eq!(
                options["BinaryName"].as_str(),
                Some("/usr/bin/eatmydata-runtime")
            );
            assert_eq!(options["SystemdCgroup"].as_bool(), Some(true), "{new}");
            for key in PASSED_ON {
                let patterns = ours[key].as_array().unwrap();
                let patterns: Vec<_> = patterns.iter().map(|p| p.as_str()).collect();
                assert_eq!(patterns, [Some("io.eatmydata.*")], "{new}");
            }
            assert!(
                new.contains(
                    "  default_runtime_name = \"eatmydata\" \
                     # eatmydata-runtime configure replaced: \"runc\"\n"
                ),
                "{new}"
            );
            // A removal gives back the bytes it took.
            assert_eq!(remove(&new).unwrap(), text, "{new}");
            assert!(new.starts_with(&format!("{version}# ours\n")), "{new}");
            assert!(new.contains("SystemdCgroup = true # the kubelet's\n"));
            assert_eq!(register(&new, &Want::example(true, None)).unwrap(), new);
        }
    }

    #[test]
    fn a_new_file_is_version_2_and_an_unknown_version_is_refused() {
        let new = register("", &Want::example(false, None)).unwrap();
        assert_eq!(
            new,
            "version = 2\n\n\
             [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.eatmydata]\n\
             runtime_type = \"io.containerd.runc.v2\"\n\
             pod_annotations = [\"io.eatmydata.*\"]\n\
             container_annotations = [\"io.eatmydata.*\"]\n\n\
             [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.eatmydata.options]\n\
             BinaryName = \"/usr/bin/eatmydata-runtime\"\n"
        );
        for text in [
            "version = 4\n",
            "version = \"2\"\n",
            "version = 2\nplugins = 1\n",
        ] {
            assert!(
                register(text, &Want::example(false, None)).is_err(),
                "{text}"
            );
        }
    }

    #[test]
    fn the_pattern_matches_the_off_switch() {
        // containerd matches it as Go's path.Match does: `*` stops at `/`.
        let prefix = ANNOTATIONS.strip_suffix('*').unwrap();
        for ours in [crate::runtime::edit::DISABLE, crate::runtime::edit::APPLIED] {
            let rest = ours.strip_prefix(prefix).unwrap();
            assert!(
                !rest.is_empty() && !rest.contains(['/', '*', '?', '[']),
                "{ours}"
            );
        }
    }

    #[test]
    fn an_entry_without_the_annotation_lists_gains_them_and_keeps_theirs() {
        let ours = "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.eatmydata]";
        // As an older eatmydata wrote it, the keys indented.
        let older = format!(
            "version = 2\n{ours}\n  runtime_type = \"io.containerd.runc.v2\"\n\n  \
             [{}.options]\n    BinaryName = \"/usr/bin/eatmydata-runtime\"\n",
            &ours[1..ours.len() - 1]
        );
        let new = register(&older, &Want::example(false, None)).unwrap();
        assert_eq!(
            new,
            older.replace(
                "runc.v2\"\n",
                "runc.v2\"\n  pod_annotations = [\"io.eatmydata.*\"]\n  \
                 container_annotations = [\"io.eatmydata.*\"]\n"
            )
        );
        assert_eq!(register(&new, &Want::example(false, None)).unwrap(), new);
        // The user's own patterns stay, in their order; ours comes last.
        let theirs = format!(
            "version = 2\n{ours}\n  pod_annotations = [\"example.com/*\"] # ours\n  \
             container_annotations = []\n"
        );
        let new = register(&theirs, &Want::example(false, None)).unwrap();
        assert!(
            new.contains("  pod_annotations = [\"example.com/*\", \"io.eatmydata.*\"] # ours\n"),
            "{new}"
        );
        assert!(
            new.contains("  container_annotations = [\"io.eatmydata.*\"]\n"),
            "{new}"
        );
        assert_eq!(register(&new, &Want::example(false, None)).unwrap(), new);
        for bad in [
            "pod_annotations = \"io.eatmydata.*\"",
            "container_annotations = [1]",
        ] {
            let text = format!("version = 2\n{ours}\n{bad}\n");
            assert!(
                register(&text, &Want::example(false, None)).is_err(),
                "{text}"
            );
        }
    }

    #[test]
    fn a_removal_gives_back_the_bytes_it_took() {
        let theirs = "version = 3\n# ours\n[plugins.'io.containerd.cri.v1.runtime'.containerd]\n\
                      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.crun]\n\
                      runtime_type = \"io.containerd.runc.v2\"\n";
        for text in [theirs, "version = 2\n", "version = 2\n# only a comment\n"] {
            for default in [false, true] {
                let new = register(text, &Want::example(default, None)).unwrap();
                assert_eq!(remove(&new).unwrap(), text, "{new}");
                assert_eq!(remove(text).unwrap(), text);
            }
        }
        // A new file keeps the version it was given, and holds nothing else.
        let made = register("", &Want::example(true, None)).unwrap();
        let left = remove(&made).unwrap();
        assert_eq!(left, "version = 2\n");
        assert!(holds_nothing(&left));
        assert!(!holds_nothing("version = 2\n# ours\n"));
        assert!(remove("version = 9\n").is_err());
    }
}
