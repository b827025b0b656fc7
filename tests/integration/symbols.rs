//! The library exports exactly the hooks listed in `src/preload/hooks.rs`,
//! plus the `eatmydata_*` functions the shim calls, unversioned, and needs
//! no glibc newer than 2.17.

use std::collections::BTreeSet;
use std::process::Command;

use crate::common::library;

/// The names in the `trampolines!` list of hooks.rs.
pub fn listed_hooks() -> BTreeSet<String> {
    let source = include_str!("../../src/preload/hooks.rs");
    let list = source
        .split("trampolines! {")
        .nth(1)
        .and_then(|rest| rest.split('}').next())
        .expect("a trampolines! list");
    list.split_whitespace().map(str::to_owned).collect()
}

/// The hooks the C shim defines: each `HOOK(name)(` that opens a definition.
fn shim_hooks() -> BTreeSet<String> {
    let sources = [
        include_str!("../../src/preload/c/shim.c"),
        include_str!("../../src/preload/c/aio.c"),
        include_str!("../../src/preload/c/uring.c"),
        include_str!("../../src/preload/c/exec.c"),
        include_str!("../../src/preload/c/spawn.c"),
    ];
    sources
        .concat()
        .split("HOOK(")
        .skip(1)
        .filter_map(|rest| rest.split_once(")("))
        .map(|(name, _)| name.to_owned())
        .filter(|name| name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()))
        .collect()
}

#[test]
fn the_shim_defines_exactly_the_listed_hooks() {
    assert_eq!(shim_hooks(), listed_hooks());
}

fn nm(args: &[&str]) -> String {
    let output = Command::new("nm")
        .args(args)
        .arg(library())
        .output()
        .expect("run nm");
    assert!(output.status.success());
    String::from_utf8(output.stdout).expect("nm prints text")
}

#[test]
fn exports_exactly_the_listed_hooks() {
    let defined: BTreeSet<String> = nm(&["-D", "--defined-only"])
        .lines()
        .filter_map(|line| line.split_whitespace().nth(2))
        .map(str::to_owned)
        .collect();
    let hooks = listed_hooks();
    assert!(hooks.len() >= 19, "hooks.rs lists the hooks: {hooks:?}");
    let ours: BTreeSet<String> = defined
        .iter()
        .filter(|n| n.starts_with("eatmydata_"))
        .cloned()
        .collect();
    let others: BTreeSet<String> = defined.difference(&ours).cloned().collect();
    assert_eq!(
        others, hooks,
        "exported names other than eatmydata_* must be the hooks"
    );
}

#[test]
fn hooks_are_unversioned_so_versioned_references_bind_to_them() {
    // fsync@@SOMETHING would not satisfy a program's fsync@GLIBC_2.2.5.
    let listing = nm(&["-D", "--defined-only", "--with-symbol-versions"]);
    for line in listing.lines() {
        assert!(!line.contains('@'), "a versioned export: {line}");
    }
}

#[test]
fn needs_no_glibc_newer_than_2_17() {
    let output = Command::new("objdump")
        .arg("-T")
        .arg(library())
        .output()
        .expect("run objdump");
    let table = String::from_utf8(output.stdout).expect("objdump prints text");
    let mut versions = 0;
    for version in table.split(['(', ')']).filter(|s| s.starts_with("GLIBC_")) {
        versions += 1;
        let numbers: Vec<u32> = version["GLIBC_".len()..]
            .split('.')
            .map(|n| n.parse().expect("a number"))
            .collect();
        assert!(numbers.as_slice() <= [2, 17].as_slice(), "needs {version}");
    }
    assert!(
        versions > 0,
        "objdump -T shows the glibc versions:\n{table}"
    );
}
