//! Seccomp mode, for the programs `LD_PRELOAD` cannot reach, in floors:
//! each module imports only those on the floors below it.
//!
//! - floor 7: `handoff.rs`, the listener passed from child to parent;
//! - floor 6: `notify.rs`, the listener and the supervisor's dispatch;
//! - floor 5: `uring.rs`, rings learnt at set-up and rewritten at submission;
//! - floor 4: the answers: `sync.rs` (sync calls, msync), `sqe.rs` (one
//!   ring entry), `registered.rs` (the files a ring registered); and
//!   `compat.rs` (another ABI's call read as its native twin);
//! - floor 3: `fdinfo.rs` (does a descriptor reach a disk?), `openat2.rs`
//!   (the caller's `open_how` rewritten), `rules.rs` (the supervised
//!   filter: what is sent to the supervisor);
//! - floor 2: `call.rs` (a call and its answer), `mountinfo.rs` (file
//!   systems by mount), `layout.rs` (where a ring keeps things),
//!   `filter.rs` (the plain filter, the ABI tables, installing either);
//! - floor 1: `caller.rs` (the caller's memory and `/proc` files),
//!   `maps.rs` (its mappings), `mapping.rs` (a ring mapped), `bpf.rs` (the
//!   BPF assembler), `decide.rs` (when seccomp mode is on); and
//!   `crate::durability`, the decisions shared with the library.
//!
//! The supervisor's one rule: it inspects, rewrites what the kernel will
//! read from the program's own memory, answers, or lets the call go on;
//! it never makes a program's file operation itself. See docs/seccomp.md.

mod bpf;
mod call;
mod caller;
mod compat;
pub mod decide;
mod fdinfo;
pub mod filter;
pub mod handoff;
mod layout;
mod mapping;
mod maps;
mod mountinfo;
mod notify;
mod openat2;
mod registered;
pub mod rules;
mod sqe;
mod sync;
mod uring;

#[cfg(test)]
mod tests {
    /// Each module and its floor, as the list above has them.
    const FLOORS: &[(&str, u8)] = &[
        ("handoff", 7),
        ("notify", 6),
        ("uring", 5),
        ("sync", 4),
        ("sqe", 4),
        ("registered", 4),
        ("compat", 4),
        ("fdinfo", 3),
        ("openat2", 3),
        ("rules", 3),
        ("call", 2),
        ("mountinfo", 2),
        ("layout", 2),
        ("filter", 2),
        ("caller", 1),
        ("maps", 1),
        ("mapping", 1),
        ("bpf", 1),
        ("decide", 1),
    ];

    fn floor(name: &str) -> u8 {
        FLOORS.iter().find(|(n, _)| *n == name).map_or(0, |f| f.1)
    }

    /// The seccomp modules a module's source names as `super::NAME` or
    /// in `super::{NAME, ...}`.
    fn imports(source: &str) -> Vec<String> {
        let mut names = Vec::new();
        for (at, _) in source.match_indices("super::") {
            let rest = &source[at + "super::".len()..];
            let paths = match rest.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or_default(),
                None => rest,
            };
            let first = |path: &str| {
                let path = path.trim();
                let end = path
                    .find(|c: char| !c.is_alphanumeric() && c != '_')
                    .unwrap_or(path.len());
                path[..end].to_owned()
            };
            let found: Vec<String> = if rest.starts_with('{') {
                paths.split(',').map(first).collect()
            } else {
                vec![first(paths)]
            };
            names.extend(found.into_iter().filter(|name| floor(name) > 0));
        }
        names
    }

    #[test]
    fn each_module_imports_only_from_the_floors_below_it() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/wrapper/seccomp");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            assert!(floor(name) > 0, "{name}.rs is on no floor of seccomp.rs");
            let source = std::fs::read_to_string(&path).unwrap();
            // The unit tests below `mod tests` may reach anywhere.
            let source = source.split("#[cfg(test)]").next().unwrap_or_default();
            for import in imports(source) {
                assert!(
                    floor(&import) < floor(name),
                    "{name}.rs (floor {}) imports {import}.rs (floor {})",
                    floor(name),
                    floor(&import)
                );
                seen += 1;
            }
        }
        // Control: the scan finds imports at all.
        assert!(seen > 30, "only {seen} imports found");
    }

    #[test]
    fn the_scan_reads_both_forms_of_use() {
        let source = "use super::call::{Answer, Call};\nuse super::{openat2, rules};\n";
        assert_eq!(imports(source), ["call", "openat2", "rules"]);
        assert_eq!(
            imports("let x = super::notify::Listener::new();"),
            ["notify"]
        );
        assert!(imports("use super::*;").is_empty());
    }
}
