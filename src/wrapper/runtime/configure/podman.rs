//! podman's `containers.conf`: `[engine.runtimes] eatmydata = [PATH]`,
//! `[engine] runtime = "eatmydata"` with `--default`, and, since podman
//! passes a runtime no arguments, the real runtime as
//! `EATMYDATA_RUNTIME=...` in `[engine] env` (podman's own environment,
//! which conmon and the runtime inherit).

use std::path::PathBuf;

use toml_edit::Value;

use super::toml::{self, strings};
use super::{REGISTERED, RUNTIME_VARIABLE, Want};

/// `/etc/containers/containers.conf` for root; a user's own otherwise,
/// where rootless podman reads it.
pub fn default_config() -> PathBuf {
    // SAFETY: geteuid cannot fail and touches no memory.
    if unsafe { libc::geteuid() } == 0 {
        return "/etc/containers/containers.conf".into();
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".config")
        });
    config.join("containers/containers.conf")
}

/// The new text of `containers.conf`.
pub fn edit(text: &str, want: &Want) -> Result<String, String> {
    let mut doc = toml::parse(text)?;
    let root = doc.as_item_mut();
    let runtimes = toml::table(root, &["engine", "runtimes"])?;
    toml::set(runtimes, REGISTERED, strings([want.path.as_str()]))?;
    let engine = toml::table(root, &["engine"])?;
    if want.default {
        toml::set(engine, "runtime", REGISTERED.into())?;
    }
    set_env(engine, want.real.as_deref())?;
    Ok(doc.to_string())
}

/// Puts `EATMYDATA_RUNTIME=REAL` in `[engine] env` in place of any earlier
/// one, or takes that out without `real`; the other entries stay.
fn set_env(engine: &mut toml_edit::Item, real: Option<&str>) -> Result<(), String> {
    let prefix = format!("{RUNTIME_VARIABLE}=");
    let ours = |value: &Value| value.as_str().is_some_and(|s| s.starts_with(&prefix));
    let Some(table) = engine.as_table_like_mut() else {
        return Err("engine is not a table".into());
    };
    let entry = real.map(|real| format!("{prefix}{real}"));
    let Some(env) = table.get_mut("env") else {
        if let Some(entry) = entry {
            table.insert("env", toml_edit::Item::Value(strings([entry.as_str()])));
        }
        return Ok(());
    };
    let Some(env) = env.as_array_mut() else {
        return Err("engine.env is not an array".into());
    };
    let at = env.iter().position(ours);
    match (at, entry) {
        (Some(at), Some(entry)) => {
            if env.get(at).and_then(Value::as_str) != Some(entry.as_str()) {
                env.replace(at, entry);
            }
        }
        (None, Some(entry)) => env.push(entry),
        (Some(at), None) => {
            env.remove(at);
        }
        (None, None) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want(default: bool, real: Option<&str>) -> Want {
        Want {
            path: "/usr/bin/eatmydata-runtime".into(),
            default,
            real: real.map(str::to_owned),
        }
    }

    const THEIRS: &str = "\
# the machine's own settings
[containers]
log_driver = \"k8s-file\"   # kept

[engine]
# crun is faster here
runtime = \"crun\"
env = [\"http_proxy=http://proxy.example:3128\"]

[engine.runtimes]
crun = [\"/usr/bin/crun\"]

# plugins follow
[engine.volume_plugins]
";

    #[test]
    fn adds_its_keys_among_the_users_and_keeps_their_comments() {
        let new = edit(THEIRS, &want(true, Some("crun"))).unwrap();
        assert_eq!(
            new,
            "\
# the machine's own settings
[containers]
log_driver = \"k8s-file\"   # kept

[engine]
# crun is faster here
runtime = \"eatmydata\"
env = [\"http_proxy=http://proxy.example:3128\", \"EATMYDATA_RUNTIME=crun\"]

[engine.runtimes]
crun = [\"/usr/bin/crun\"]
eatmydata = [\"/usr/bin/eatmydata-runtime\"]

# plugins follow
[engine.volume_plugins]
"
        );
        assert_eq!(edit(&new, &want(true, Some("crun"))).unwrap(), new);
        let plain = edit(&new, &want(true, None)).unwrap();
        assert!(
            plain.contains("env = [\"http_proxy=http://proxy.example:3128\"]\n"),
            "{plain}"
        );
    }

    #[test]
    fn makes_only_its_own_table_in_a_new_file_and_refuses_bad_toml() {
        assert_eq!(
            edit("", &want(false, None)).unwrap(),
            "[engine.runtimes]\neatmydata = [\"/usr/bin/eatmydata-runtime\"]\n"
        );
        for text in ["[engine\n", "engine = 3\n", "[engine]\nenv = \"x\"\n"] {
            assert!(edit(text, &want(false, Some("crun"))).is_err(), "{text}");
        }
    }
}
