//! containerd's `config.toml`: a runc-shim runtime named `eatmydata`
//! whose `options.BinaryName` is the runtime, in the CRI plugin's table
//! (what a Kubernetes RuntimeClass's handler names), and
//! `default_runtime_name` with `--default`. The plugin's name depends on
//! the file's `version`: 1 (containerd 1.x without the key), 2 (what
//! containerd 1.6's `containerd config default` writes) or 3 (containerd
//! 2.x). A new file is version 2, which containerd 2.x reads too.

use toml_edit::{Item, Value};

use super::toml;
use super::{REGISTERED, Want};

/// The shim that runs a runc-like binary.
const RUNC_SHIM: &str = "io.containerd.runc.v2";

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

/// The new text of `config.toml`.
pub fn edit(text: &str, want: &Want) -> Result<String, String> {
    let mut doc = toml::parse(text)?;
    let new = doc.is_empty();
    if new {
        doc.insert("version", toml_edit::value(2));
    }
    let version = match doc.get("version") {
        None => 1,
        Some(item) => item
            .as_integer()
            .ok_or_else(|| "its version is not a number".to_string())?,
    };
    let containerd = cri_table(version)?;
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
    toml::set(entry, "runtime_type", RUNC_SHIM.into())?;
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
        toml::set(
            toml::table(root, containerd)?,
            "default_runtime_name",
            REGISTERED.into(),
        )?;
    }
    Ok(doc.to_string())
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

    fn want(default: bool) -> Want {
        Want {
            path: "/usr/bin/eatmydata-runtime".into(),
            default,
            real: None,
        }
    }

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
            let new = edit(&text, &want(true)).unwrap();
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
            assert!(
                new.contains("  default_runtime_name = \"eatmydata\"\n"),
                "{new}"
            );
            assert!(new.starts_with(&format!("{version}# ours\n")), "{new}");
            assert!(new.contains("SystemdCgroup = true # the kubelet's\n"));
            assert_eq!(edit(&new, &want(true)).unwrap(), new);
        }
    }

    #[test]
    fn a_new_file_is_version_2_and_an_unknown_version_is_refused() {
        let new = edit("", &want(false)).unwrap();
        assert_eq!(
            new,
            "version = 2\n\n\
             [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.eatmydata]\n\
             runtime_type = \"io.containerd.runc.v2\"\n\n\
             [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.eatmydata.options]\n\
             BinaryName = \"/usr/bin/eatmydata-runtime\"\n"
        );
        for text in [
            "version = 4\n",
            "version = \"2\"\n",
            "version = 2\nplugins = 1\n",
        ] {
            assert!(edit(text, &want(false)).is_err(), "{text}");
        }
    }
}
