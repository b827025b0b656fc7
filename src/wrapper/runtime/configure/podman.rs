//! podman's `containers.conf`: `[engine.runtimes] eatmydata = [PATH]`, and
//! `[engine] runtime = "eatmydata"` with `--default`. podman passes a
//! runtime no argument and not its environment on every call (`delete`
//! runs without `[engine] env`, `conmon_env_vars` or `--runtime-flag`), so
//! the real runtime is the runtime's own choice.
//!
//! podman starts a container again with the runtime it was made with, by
//! name, and refuses when the name is gone ("runtime eatmydata is
//! missing"): so a removal keeps the name as an alias of runc while such
//! a container exists, as docker's does.

use std::path::PathBuf;

use super::toml::{self, strings};
use super::{REGISTERED, Want};

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
pub fn register(text: &str, want: &Want) -> Result<String, String> {
    let mut doc = toml::parse(text)?;
    let root = doc.as_item_mut();
    let runtimes = toml::table(root, &["engine", "runtimes"])?;
    toml::set(runtimes, REGISTERED, strings([want.path.as_str()]))?;
    if want.default {
        let engine = toml::table(root, &["engine"])?;
        toml::set_noting(engine, "runtime", REGISTERED)?;
    }
    Ok(doc.to_string())
}

/// Where podman looks for runc: the alias a removal leaves is this list,
/// as podman's own `runc` entry has it.
const RUNC: [&str; 7] = [
    "/usr/bin/runc",
    "/usr/sbin/runc",
    "/usr/local/bin/runc",
    "/usr/local/sbin/runc",
    "/sbin/runc",
    "/bin/runc",
    "/usr/lib/cri-o-runc/sbin/runc",
];

/// The text of `containers.conf` without what [`register`] added; the
/// entry kept as an alias of runc when `alias` (a container made with
/// it still exists).
pub fn remove(text: &str, alias: bool) -> Result<String, String> {
    let mut doc = toml::parse(text)?;
    let root = doc.as_item_mut();
    let restored = toml::restore(root, &["engine"], "runtime", REGISTERED)?;
    let path = ["engine", "runtimes"];
    let has = toml::find_mut(root, &path).is_some_and(|t| t.get(REGISTERED).is_some());
    let removed = match (alias, has) {
        (true, true) => {
            let runtimes = toml::table(root, &path)?;
            toml::set(runtimes, REGISTERED, strings(RUNC))?;
            true
        }
        _ => toml::remove_pruning(root, &path, REGISTERED),
    };
    Ok(match restored || removed {
        true => doc.to_string(),
        false => text.to_owned(),
    })
}

/// Whether `text` makes the runtime podman's default (`engine.runtime`).
pub fn names_default(text: &str) -> bool {
    let doc = toml::parse(text);
    let runtime = doc
        .as_ref()
        .ok()
        .and_then(|d| d.get("engine")?.get("runtime")?.as_str());
    runtime == Some(REGISTERED)
}

/// Whether nothing is left in the file.
pub fn holds_nothing(text: &str) -> bool {
    toml::holds_nothing(text, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_default_made_before_is_read_back() {
        let default = register(THEIRS, &Want::example(true, None)).unwrap();
        let again = register(&default, &Want::example(false, None)).unwrap();
        assert!(names_default(&again), "{again}");
        assert!(!names_default(
            &register(THEIRS, &Want::example(false, None)).unwrap()
        ));
        assert!(!names_default(&remove(&again, false).unwrap()));
    }

    #[test]
    fn adds_its_keys_among_the_users_and_keeps_their_comments() {
        let new = register(THEIRS, &Want::example(true, None)).unwrap();
        assert_eq!(
            new,
            "\
# the machine's own settings
[containers]
log_driver = \"k8s-file\"   # kept

[engine]
# crun is faster here
runtime = \"eatmydata\" # eatmydata-runtime configure replaced: \"crun\"
env = [\"http_proxy=http://proxy.example:3128\"]

[engine.runtimes]
crun = [\"/usr/bin/crun\"]
eatmydata = [\"/usr/bin/eatmydata-runtime\"]

# plugins follow
[engine.volume_plugins]
"
        );
        assert_eq!(register(&new, &Want::example(true, None)).unwrap(), new);
    }

    #[test]
    fn makes_only_its_own_table_in_a_new_file_and_refuses_bad_toml() {
        assert_eq!(
            register("", &Want::example(false, None)).unwrap(),
            "[engine.runtimes]\neatmydata = [\"/usr/bin/eatmydata-runtime\"]\n"
        );
        for text in ["[engine\n", "engine = 3\n", "[engine]\nruntimes = 1\n"] {
            assert!(
                register(text, &Want::example(true, None)).is_err(),
                "{text}"
            );
        }
    }

    #[test]
    fn a_removal_gives_back_the_bytes_it_took() {
        for text in [
            THEIRS,
            "",
            "[engine]\nruntime = \"runc\" # why\n",
            "[engine]\n[engine.runtimes]\n\n[engine.volume_plugins]\n",
        ] {
            for default in [false, true] {
                let new = register(text, &Want::example(default, None)).unwrap();
                let back = remove(&new, false).unwrap();
                assert_eq!(remove(&back, false).unwrap(), back);
                assert_eq!(back, text, "{new}");
            }
        }
        // An empty header last in the file, as registration would have
        // made it, goes with the entry.
        let alone = "[engine.runtimes]\n";
        let new = register(alone, &Want::example(false, None)).unwrap();
        assert_eq!(remove(&new, false).unwrap(), "");
        for _ in [()] {
            {}
        }
    }

    #[test]
    fn a_removal_keeps_the_name_as_an_alias_of_runc_while_asked() {
        let new = register(THEIRS, &Want::example(true, None)).unwrap();
        let kept = remove(&new, true).unwrap();
        assert!(kept.contains("\nruntime = \"crun\"\n"), "{kept}");
        assert!(
            kept.contains("\neatmydata = [\"/usr/bin/runc\", "),
            "{kept}"
        );
        assert_eq!(remove(&kept, true).unwrap(), kept);
        assert_eq!(remove(&kept, false).unwrap(), THEIRS);
        assert_eq!(remove(THEIRS, true).unwrap(), THEIRS);
    }
}
