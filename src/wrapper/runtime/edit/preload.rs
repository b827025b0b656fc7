//! `LD_PRELOAD` in a process's environment (`process.env`, `"NAME=value"`
//! strings), for `create` and `exec`: whether eatmydata is switched off
//! there; whether the program started can take the library ([`takes`]:
//! a dynamic program of this machine, whose loader is glibc's or a musl
//! that fits, linking no sanitizer that must come first); the library
//! first in the list; and the hooks runc runs with `process.env` given
//! that environment as it was before the edit ([`keep_hooks`]).

use serde_json::{Value, json};

use super::library::MOUNTED;
use crate::elf::{self, Foreign, Kind};
use crate::protocol;

const PRELOAD: &str = "LD_PRELOAD";

/// The value of each `NAME=` entry of `env`, in order.
fn values<'a>(env: &'a [Value], name: &'a str) -> impl Iterator<Item = &'a str> {
    env.iter().filter_map(move |entry| {
        let entry = entry.as_str()?;
        entry.strip_prefix(name)?.strip_prefix('=')
    })
}

/// Whether `EATMYDATA_DISABLE` is on in `env` (any of its entries: runc
/// keeps the last one, crun passes them all).
pub fn disabled(env: &[Value]) -> bool {
    values(env, protocol::DISABLE).any(|value| protocol::switch_on(value.as_bytes()))
}

/// `value` of `LD_PRELOAD` with the library first, or `None` if it is
/// already in the list. The dynamic loader splits the list at spaces and
/// colons alike; ours is joined with the separator the list already uses.
pub fn with_ours(value: &str) -> Option<String> {
    let mut entries = value.split([' ', ':']).filter(|e| !e.is_empty());
    if entries.any(|entry| entry == MOUNTED) {
        return None;
    }
    if value.trim_matches([' ', ':']).is_empty() {
        return Some(MOUNTED.to_owned());
    }
    let separator = if value.contains(':') && !value.contains(' ') {
        ':'
    } else {
        ' '
    };
    Some(format!("{MOUNTED}{separator}{value}"))
}

/// Puts the library first in every `LD_PRELOAD` entry of `env`, or adds
/// one. Returns whether anything changed.
pub fn preload(env: &mut Vec<Value>) -> bool {
    let mut found = false;
    let mut changed = false;
    for entry in env.iter_mut() {
        let Some(value) = entry
            .as_str()
            .and_then(|e| e.strip_prefix(PRELOAD)?.strip_prefix('='))
        else {
            continue;
        };
        found = true;
        if let Some(value) = with_ours(value) {
            *entry = Value::String(format!("{PRELOAD}={value}"));
            changed = true;
        }
    }
    if !found {
        env.push(Value::String(format!("{PRELOAD}={MOUNTED}")));
        changed = true;
    }
    changed
}

/// What the process's program is, as the runtime read it inside the
/// rootfs: its path there, and the ELF reader's facts, or why it could not
/// be read.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub path: String,
    pub facts: Result<elf::Program, String>,
}

/// Whether `program` can take the library: `Err` says why not, for the
/// log. A 32-bit or foreign program, or one linking a sanitizer, would
/// print the loader's complaint or refuse to start: it gets none, and the
/// seccomp rules answer its syncs. A static program reads no `LD_PRELOAD`,
/// but what it starts does (tini, dumb-init or a static shell starting
/// the real server), so it is set for them. A program that cannot be read
/// in the rootfs (on a volume) or is no ELF is taken as one of this
/// machine's, the usual case, as before this rule.
pub fn takes(program: &Program) -> Result<(), String> {
    let path = &program.path;
    let Ok(facts) = &program.facts else {
        return Ok(());
    };
    let what = match facts.kind {
        Kind::Dynamic | Kind::EntersUring | Kind::Go | Kind::Static | Kind::Unknown => {
            return Ok(());
        }
        Kind::Foreign(Foreign::Bits32) => {
            "a 32-bit program, which the 64-bit library cannot load into"
        }
        Kind::Foreign(Foreign::Machine) => "built for another architecture",
        Kind::Foreign(Foreign::Sanitizer) => {
            "linked with a sanitizer runtime that must come first in the library list"
        }
        Kind::Foreign(Foreign::UnknownLoader) => {
            "run by a loader that is neither glibc's nor musl's"
        }
        Kind::Foreign(Foreign::LibraryNotForMusl) => {
            "a musl program, and the library needs a name musl does not have"
        }
    };
    Err(format!("{path} is {what}"))
}

/// The hooks runc runs with the container's `process.env` when they have
/// no `env` of their own (or an empty one): `startContainer` always
/// (runc's `SetDefaultEnv`), `createContainer` before runc 1.3, whose init
/// set the process's variables in its own environment before running them.
pub const INHERITING_HOOKS: [&str; 2] = ["createContainer", "startContainer"];

/// Gives each hook of `hooks` (the spec's `hooks` object) that would
/// inherit `process.env` an explicit `env`, equal to `env` (as it was
/// before the edit), so that it sees what it would see under runc alone.
/// Nothing when `env` is empty: runc reads an empty list as none.
pub fn keep_hooks(hooks: &mut Value, env: &[Value]) -> Result<(), String> {
    if env.is_empty() {
        return Ok(());
    }
    let hooks = hooks.as_object_mut().ok_or("hooks is not an object")?;
    for name in INHERITING_HOOKS {
        let Some(list) = hooks.get_mut(name) else {
            continue;
        };
        let list = list
            .as_array_mut()
            .ok_or_else(|| format!("hooks.{name} is not a list"))?;
        for hook in list {
            let hook = hook
                .as_object_mut()
                .ok_or_else(|| format!("a hook of hooks.{name} is not an object"))?;
            let none = hook
                .get("env")
                .is_none_or(|e| e.is_null() || e.as_array().is_some_and(Vec::is_empty));
            if none {
                hook.insert("env".into(), json!(env));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(entries: &[&str]) -> Vec<Value> {
        entries.iter().map(|e| json!(e)).collect()
    }

    #[test]
    fn ours_goes_first_and_once() {
        assert_eq!(with_ours("").as_deref(), Some(MOUNTED));
        assert_eq!(with_ours(" ").as_deref(), Some(MOUNTED));
        assert_eq!(
            with_ours("/lib/a.so").unwrap(),
            format!("{MOUNTED} /lib/a.so")
        );
        assert_eq!(
            with_ours("/lib/a.so:/lib/b.so").unwrap(),
            format!("{MOUNTED}:/lib/a.so:/lib/b.so")
        );
        assert_eq!(
            with_ours("/lib/a.so /lib/b.so").unwrap(),
            format!("{MOUNTED} /lib/a.so /lib/b.so")
        );
        assert_eq!(with_ours(&format!("/lib/a.so:{MOUNTED}")), None);
        assert_eq!(with_ours(MOUNTED), None);
        // A name that only contains ours is another file.
        assert!(with_ours(&format!("{MOUNTED}.1")).is_some());
    }

    #[test]
    fn preload_is_added_or_merged_in_place() {
        let mut plain = env(&["PATH=/bin", "HOME=/root"]);
        assert!(preload(&mut plain));
        assert_eq!(
            plain,
            env(&["PATH=/bin", "HOME=/root", &format!("LD_PRELOAD={MOUNTED}")])
        );
        assert!(!preload(&mut plain), "a second edit changes nothing");

        let mut image = env(&["LD_PRELOAD=/usr/lib/libjemalloc.so", "PATH=/bin"]);
        assert!(preload(&mut image));
        assert_eq!(
            image,
            env(&[
                &format!("LD_PRELOAD={MOUNTED} /usr/lib/libjemalloc.so"),
                "PATH=/bin"
            ])
        );
        // LD_PRELOADX is another variable.
        let mut other = env(&["LD_PRELOADX=1"]);
        preload(&mut other);
        assert_eq!(other.len(), 2);
    }

    #[test]
    fn the_switch_follows_the_librarys_rule() {
        assert!(disabled(&env(&["EATMYDATA_DISABLE=1"])));
        assert!(disabled(&env(&["A=1", "EATMYDATA_DISABLE=yes"])));
        assert!(!disabled(&env(&["EATMYDATA_DISABLE=0"])));
        assert!(!disabled(&env(&["EATMYDATA_DISABLE="])));
        assert!(!disabled(&env(&["EATMYDATA_DISABLED=1", "PATH=/bin"])));
        assert!(!disabled(&[]));
    }
}

#[cfg(test)]
mod program_tests {
    use super::*;
    use crate::elf::Loader;

    fn program(kind: Kind, loader: Option<Loader>) -> Program {
        Program {
            path: "/bin/p".into(),
            facts: Ok(elf::Program { kind, loader }),
        }
    }

    #[test]
    fn only_a_program_that_would_refuse_it_goes_without_the_library() {
        let glibc = Some(Loader::Glibc);
        assert_eq!(takes(&program(Kind::Dynamic, glibc.clone())), Ok(()));
        assert_eq!(takes(&program(Kind::Dynamic, Some(Loader::Musl))), Ok(()));
        assert_eq!(takes(&program(Kind::EntersUring, glibc.clone())), Ok(()));
        assert_eq!(takes(&program(Kind::Go, glibc)), Ok(()));
        // Read by none of these, but by what they start.
        assert_eq!(takes(&program(Kind::Go, None)), Ok(()));
        assert_eq!(takes(&program(Kind::Static, None)), Ok(()));
        assert_eq!(takes(&program(Kind::Unknown, None)), Ok(()));
        for (kind, words) in [
            (Kind::Foreign(Foreign::Bits32), "32-bit"),
            (Kind::Foreign(Foreign::Machine), "another architecture"),
            (Kind::Foreign(Foreign::Sanitizer), "sanitizer"),
            (Kind::Foreign(Foreign::UnknownLoader), "neither glibc's"),
            (Kind::Foreign(Foreign::LibraryNotForMusl), "musl"),
        ] {
            let why = takes(&program(kind, None)).unwrap_err();
            assert!(
                why.starts_with("/bin/p is ") && why.contains(words),
                "{why}"
            );
        }
        let unreadable = Program {
            path: "/bin/p".into(),
            facts: Err("No such file or directory".into()),
        };
        assert_eq!(takes(&unreadable), Ok(()));
    }

    #[test]
    fn hooks_that_inherit_the_environment_get_it_as_it_was() {
        let env = [json!("PATH=/bin"), json!("A=1")];
        let mut hooks = json!({
            "prestart": [{"path": "/p"}],
            "createContainer": [{"path": "/c"}, {"path": "/d", "env": ["B=2"]}, {"path": "/e", "env": []}],
            "startContainer": [{"path": "/s", "env": null}],
            "poststart": [{"path": "/q"}]
        });
        keep_hooks(&mut hooks, &env).unwrap();
        assert_eq!(
            hooks,
            json!({
                "prestart": [{"path": "/p"}],
                "createContainer": [{"path": "/c", "env": env}, {"path": "/d", "env": ["B=2"]},
                                    {"path": "/e", "env": env}],
                "startContainer": [{"path": "/s", "env": env}],
                "poststart": [{"path": "/q"}]
            })
        );
        let before = hooks.clone();
        keep_hooks(&mut hooks, &env).unwrap();
        assert_eq!(hooks, before, "a second edit changes nothing");
        let mut empty = json!({"createContainer": [{"path": "/c"}]});
        keep_hooks(&mut empty, &[]).unwrap();
        assert_eq!(empty, json!({"createContainer": [{"path": "/c"}]}));
        for bad in [
            json!([]),
            json!({"startContainer": {}}),
            json!({"startContainer": [1]}),
        ] {
            assert!(keep_hooks(&mut bad.clone(), &env).is_err(), "{bad}");
        }
    }
}
