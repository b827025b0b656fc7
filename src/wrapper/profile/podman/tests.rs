use super::*;

fn tree(files: &[(&str, &str)]) -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let root = std::env::temp_dir().join(format!("emd-podman-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    root
}

#[test]
fn the_last_containers_conf_that_names_a_profile_wins() {
    let root = tree(&[
        ("a.conf", "[containers]\nseccomp_profile = \"/a.json\"\n"),
        ("b.conf", "# nothing here\n[engine]\nx = 1\n"),
        ("c.conf", "[containers]\nseccomp_profile = \"/c.json\"\n"),
        ("usr/share/containers/seccomp.json", "{}"),
    ]);
    let files = |names: &[&str]| names.iter().map(|n| root.join(n)).collect::<Vec<_>>();
    let named = source_in(
        &files(&["a.conf", "missing.conf", "c.conf", "b.conf"]),
        &root,
    );
    assert_eq!(
        named.unwrap(),
        Source::Named {
            conf: root.join("c.conf"),
            profile: "/c.json".into()
        }
    );
    // None names one: the file podman looks for next.
    let found = source_in(&files(&["b.conf"]), &root).unwrap();
    assert_eq!(
        found,
        Source::Found(root.join("usr/share/containers/seccomp.json"))
    );
    assert_eq!(
        source_in(&[], &root.join("nowhere")).unwrap(),
        Source::BuiltIn
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_conf_that_is_not_toml_is_named() {
    let root = tree(&[
        ("bad.conf", "[containers\n"),
        ("num.conf", "[containers]\nseccomp_profile = 3\n"),
    ]);
    for name in ["bad.conf", "num.conf"] {
        let why = source_in(&[root.join(name)], &root).unwrap_err();
        assert!(
            why.starts_with(&root.join(name).display().to_string()),
            "{why}"
        );
    }
    std::fs::remove_dir_all(&root).unwrap();
}
