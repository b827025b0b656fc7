//! podman's `containers.conf`: `[engine.runtimes] eatmydata = [PATH]`, and
//! `[engine] runtime = "eatmydata"` with `--default`. podman passes a
//! runtime no argument and not its environment on every call (`delete`
//! runs without `[engine] env`, `conmon_env_vars` or `--runtime-flag`), so
//! the real runtime is the runtime's own choice.

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
pub fn edit(text: &str, want: &Want) -> Result<String, String> {
    let mut doc = toml::parse(text)?;
    let root = doc.as_item_mut();
    let runtimes = toml::table(root, &["engine", "runtimes"])?;
    toml::set(runtimes, REGISTERED, strings([want.path.as_str()]))?;
    if want.default {
        let engine = toml::table(root, &["engine"])?;
        toml::set(engine, "runtime", REGISTERED.into())?;
    }
    Ok(doc.to_string())
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
    fn adds_its_keys_among_the_users_and_keeps_their_comments() {
        let new = edit(THEIRS, &Want::example(true, None)).unwrap();
        assert_eq!(
            new,
            "\
# the machine's own settings
[containers]
log_driver = \"k8s-file\"   # kept

[engine]
# crun is faster here
runtime = \"eatmydata\"
env = [\"http_proxy=http://proxy.example:3128\"]

[engine.runtimes]
crun = [\"/usr/bin/crun\"]
eatmydata = [\"/usr/bin/eatmydata-runtime\"]

# plugins follow
[engine.volume_plugins]
"
        );
        assert_eq!(edit(&new, &Want::example(true, None)).unwrap(), new);
    }

    #[test]
    fn makes_only_its_own_table_in_a_new_file_and_refuses_bad_toml() {
        assert_eq!(
            edit("", &Want::example(false, None)).unwrap(),
            "[engine.runtimes]\neatmydata = [\"/usr/bin/eatmydata-runtime\"]\n"
        );
        for text in ["[engine\n", "engine = 3\n", "[engine]\nruntimes = 1\n"] {
            assert!(edit(text, &Want::example(true, None)).is_err(), "{text}");
        }
    }
}
