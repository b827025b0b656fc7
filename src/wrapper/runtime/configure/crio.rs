//! CRI-O's config: `[crio.runtime.runtimes.eatmydata]` with the runtime's
//! `runtime_path` and `runtime_type = "oci"`, and `[crio.runtime]
//! default_runtime` with `--default`. By default in a drop-in of its own
//! (`crio.conf.d/99-eatmydata.conf`), which CRI-O reads after crio.conf.
//!
//! No `allowed_annotations`: that list only opens CRI-O's own
//! experimental annotations (`io.kubernetes.cri-o.*` and a few more), and
//! CRI-O refuses to start with a name not among them. Others, `io.eatmydata.disable`
//! included, need nothing: CRI-O copies a pod's annotations into the spec
//! of each of its containers (since 1.20), as it does the container's own.

use super::toml;
use super::{REGISTERED, Want};

/// The new text of a CRI-O config file.
pub fn register(text: &str, want: &Want) -> Result<String, String> {
    let mut doc = toml::parse(text)?;
    let root = doc.as_item_mut();
    let ours = toml::table(root, &["crio", "runtime", "runtimes", REGISTERED])?;
    toml::set(ours, "runtime_path", want.path.as_str().into())?;
    toml::set(ours, "runtime_type", "oci".into())?;
    if want.default {
        let runtime = toml::table(root, &["crio", "runtime"])?;
        toml::set_noting(runtime, "default_runtime", REGISTERED)?;
    }
    Ok(doc.to_string())
}

/// The text of a CRI-O config file without what [`register`] added.
pub fn remove(text: &str) -> Result<String, String> {
    let mut doc = toml::parse(text)?;
    let root = doc.as_item_mut();
    let restored = toml::restore(root, &["crio", "runtime"], "default_runtime", REGISTERED)?;
    let removed = toml::remove_pruning(root, &["crio", "runtime", "runtimes"], REGISTERED);
    Ok(match restored || removed {
        true => doc.to_string(),
        false => text.to_owned(),
    })
}

/// Whether nothing is left in the file: the drop-in made for eatmydata.
pub fn holds_nothing(text: &str) -> bool {
    toml::holds_nothing(text, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_handler_and_the_default_keeping_the_rest() {
        let theirs = "[crio.runtime]\n# crun here\ndefault_runtime = \"crun\"\n\n\
                      [crio.runtime.runtimes.crun]\nruntime_path = \"/usr/bin/crun\"\n";
        let new = register(theirs, &Want::example(true, None)).unwrap();
        assert_eq!(
            new,
            "[crio.runtime]\n# crun here\ndefault_runtime = \"eatmydata\" \
             # eatmydata-runtime configure replaced: \"crun\"\n\n\
             [crio.runtime.runtimes.crun]\nruntime_path = \"/usr/bin/crun\"\n\n\
             [crio.runtime.runtimes.eatmydata]\n\
             runtime_path = \"/usr/bin/eatmydata-runtime\"\nruntime_type = \"oci\"\n"
        );
        assert_eq!(register(&new, &Want::example(true, None)).unwrap(), new);
        assert!(
            register(
                "[crio.runtime.runtimes]\neatmydata = 1\n",
                &Want::example(false, None)
            )
            .is_err()
        );
    }

    #[test]
    fn a_removal_gives_back_the_bytes_it_took() {
        let theirs = "[crio.runtime]\n# crun here\ndefault_runtime = 'crun' # theirs\n\n\
                      [crio.runtime.runtimes.crun]\nruntime_path = \"/usr/bin/crun\"\n";
        for text in [
            theirs,
            "",
            "# a drop-in of our own\n",
            "[crio.runtime]\n[crio.image]\n",
        ] {
            for default in [false, true] {
                let new = register(text, &Want::example(default, None)).unwrap();
                assert_ne!(new, text);
                let back = remove(&new).unwrap();
                assert_eq!(back, text, "{new}");
                assert_eq!(remove(&back).unwrap(), back);
            }
        }
        // The drop-in made for the runtime is left with nothing in it.
        assert!(holds_nothing(""));
        assert!(!holds_nothing("# a drop-in of our own\n"));
    }
}
