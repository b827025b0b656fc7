//! `LD_PRELOAD` in a process's environment (`process.env`, `"NAME=value"`
//! strings), for `create` and `exec`: whether eatmydata is switched off
//! there; where the library goes in the list of the program started
//! ([`placed`]: the rule of `durability/exec.rs`, which the library's exec
//! wrapper applies to everything that program starts); and the hooks runc
//! runs with `process.env` given that environment as it was before the
//! edit ([`keep_hooks`]).

use serde_json::{Value, json};

use super::library::MOUNTED;
use crate::durability::exec::{self, Context, Image, Loader, Place, Why};
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

/// `value` of `LD_PRELOAD` with the library where `place` puts it, or
/// `None` if it is there already.
pub fn with_ours(value: &str, place: Place) -> Option<String> {
    let mut out = vec![0u8; value.len() + MOUNTED.len() + 1];
    let len = exec::arranged(value.as_bytes(), MOUNTED.as_bytes(), place, &mut out)?;
    out.truncate(len);
    String::from_utf8(out).ok()
}

/// Puts the library where `place` says in every `LD_PRELOAD` entry of
/// `env`, or adds one. Returns whether anything changed.
pub fn preload(env: &mut Vec<Value>, place: Place) -> bool {
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
        if let Some(value) = with_ours(value, place) {
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
/// be read. Under a static init (`durability/init.rs`), the program it runs,
/// and the init's path. For a static program, whether every loader of the
/// rootfs takes the library (`program/loaders.rs`), or why not.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub path: String,
    pub facts: Result<elf::Program, String>,
    pub init: Option<String>,
    pub root_fits: Result<(), String>,
}

/// What the ELF reader's facts say in the rule's terms, and whether the
/// library fits musl's loader (`None`: nothing read, taken as this
/// machine's). The reader's kinds come in the rule's order, each the
/// first reason it found.
fn image(facts: &elf::Program) -> Option<(Image, bool)> {
    let loader = facts.loader.as_ref().map(|loader| match loader {
        elf::Loader::Glibc => Loader::Glibc,
        elf::Loader::Musl => Loader::Musl,
        elf::Loader::Other(_) => Loader::Other,
    });
    let native = Image {
        bits64: true,
        native: true,
        loader,
        sanitizer: false,
    };
    let image = match facts.kind {
        Kind::Unknown => return None,
        Kind::Dynamic | Kind::EntersUring | Kind::Go | Kind::Static => native,
        Kind::Foreign(Foreign::Bits32) => Image {
            bits64: false,
            ..native
        },
        Kind::Foreign(Foreign::Machine) => Image {
            native: false,
            ..native
        },
        Kind::Foreign(Foreign::Sanitizer) => Image {
            sanitizer: true,
            ..native
        },
        Kind::Foreign(Foreign::UnknownLoader) => Image {
            loader: Some(Loader::Other),
            ..native
        },
        Kind::Foreign(Foreign::LibraryNotForMusl) => return Some((native, false)),
    };
    Some((image, true))
}

/// Where the library goes in `program`'s `LD_PRELOAD`, started with `env`
/// (as the engine wrote it): `Err` says why nowhere, for the log. A 32-bit
/// or foreign program, one linking a sanitizer (unless the user preloads
/// one, which then comes first), a static one (whose children would
/// inherit the entry with no check) unless every loader of its rootfs
/// takes the library, `ldd`, go without; the seccomp rules
/// answer their syncs. A program that cannot be read in the rootfs or its
/// binds, or is no ELF, is taken as one of this machine's.
pub fn placed(program: &Program, env: &[Value]) -> Result<Place, String> {
    let facts = program.facts.as_ref().ok();
    let read = facts.and_then(image);
    let user = values(env, PRELOAD).any(|list| exec::has_sanitizer(list.as_bytes()));
    let context = Context {
        user_sanitizer: user,
        tracing: values(env, "LD_TRACE_LOADED_OBJECTS").next().is_some(),
        here: true,
        fits_musl: read.is_none_or(|(_, fits)| fits),
        launcher: exec::launches(
            program.path.as_bytes(),
            values(env, "VALGRIND_LAUNCHER").next().is_some(),
        ),
        root_fits: program.root_fits.is_ok(),
    };
    let by = match &program.init {
        Some(init) => format!(", run by {init},"),
        None => String::new(),
    };
    let path = &program.path;
    match (
        exec::place(read.map(|(image, _)| image), context),
        &program.root_fits,
    ) {
        (Place::Out(why @ Why::Static), Err(root)) => {
            Err(format!("{path}{by} is {}, and {root}", why.words()))
        }
        (Place::Out(why), _) => Err(format!("{path}{by} is {}", why.words())),
        (place, _) => Ok(place),
    }
}

/// The hooks runc runs with the container's `process.env` when they have
/// no `env` of their own (or an empty one): `startContainer` always
/// (runc's `SetDefaultEnv`), `createContainer` before runc 1.3, whose init
/// set the process's variables in its own environment before running them.
pub const INHERITING_HOOKS: [&str; 2] = ["createContainer", "startContainer"];

/// The one entry of an environment with no variables that runc does not
/// take for none: an empty string, which names no variable (`getenv`, the
/// loader and the shells pass it over; `env` prints it as an empty line).
pub const NO_VARIABLES: &str = "";

/// Gives each hook of `hooks` (the spec's `hooks` object) that would
/// inherit `process.env` an explicit `env`, equal to `env` (as it was
/// before the edit), so that it sees what it would see under runc alone.
/// When `env` is empty, runc would read an empty list as none and give
/// the hook the edited `process.env` (our `LD_PRELOAD` in it): the hook
/// gets [`NO_VARIABLES`] instead.
pub fn keep_hooks(hooks: &mut Value, env: &[Value]) -> Result<(), String> {
    let empty = [json!(NO_VARIABLES)];
    let env = if env.is_empty() { &empty[..] } else { env };
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
        let first = Place::First;
        assert_eq!(with_ours("", first).as_deref(), Some(MOUNTED));
        assert_eq!(with_ours(" ", first).as_deref(), Some(MOUNTED));
        assert_eq!(
            with_ours("/lib/a.so", first).unwrap(),
            format!("{MOUNTED} /lib/a.so")
        );
        assert_eq!(
            with_ours("/lib/a.so:/lib/b.so", first).unwrap(),
            format!("{MOUNTED}:/lib/a.so:/lib/b.so")
        );
        assert_eq!(
            with_ours("/lib/a.so /lib/b.so", first).unwrap(),
            format!("{MOUNTED} /lib/a.so /lib/b.so")
        );
        assert_eq!(with_ours(MOUNTED, first), None);
        assert_eq!(with_ours(&format!("{MOUNTED}:/lib/a.so"), first), None);
        // Found later in the list: put first.
        assert_eq!(
            with_ours(&format!("/lib/a.so:{MOUNTED}"), first).unwrap(),
            format!("{MOUNTED}:/lib/a.so")
        );
        // A name that only contains ours is another file.
        assert!(with_ours(&format!("{MOUNTED}.1"), first).is_some());
        // The user's sanitizer comes first.
        assert_eq!(
            with_ours("libasan.so.8", Place::AfterSanitizer).unwrap(),
            format!("libasan.so.8 {MOUNTED}")
        );
    }

    #[test]
    fn preload_is_added_or_merged_in_place() {
        let first = Place::First;
        let mut plain = env(&["PATH=/bin", "HOME=/root"]);
        assert!(preload(&mut plain, first));
        assert_eq!(
            plain,
            env(&["PATH=/bin", "HOME=/root", &format!("LD_PRELOAD={MOUNTED}")])
        );
        assert!(!preload(&mut plain, first), "a second edit changes nothing");

        let mut image = env(&["LD_PRELOAD=/usr/lib/libjemalloc.so", "PATH=/bin"]);
        assert!(preload(&mut image, first));
        assert_eq!(
            image,
            env(&[
                &format!("LD_PRELOAD={MOUNTED} /usr/lib/libjemalloc.so"),
                "PATH=/bin"
            ])
        );
        // LD_PRELOADX is another variable.
        let mut other = env(&["LD_PRELOADX=1"]);
        preload(&mut other, first);
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
    use serde_json::json;

    fn program(kind: Kind, loader: Option<Loader>) -> Program {
        Program {
            path: "/bin/p".into(),
            facts: Ok(elf::Program { kind, loader }),
            init: None,
            root_fits: Err("the rootfs holds /lib/ld-linux.so.2, a loader of another class".into()),
        }
    }

    #[test]
    fn only_a_program_that_would_refuse_it_or_show_it_goes_without_the_library() {
        let glibc = Some(Loader::Glibc);
        let plain = [json!("PATH=/bin")];
        let placed = |program: &Program| placed(program, &plain);
        assert_eq!(
            placed(&program(Kind::Dynamic, glibc.clone())),
            Ok(Place::First)
        );
        let musl = program(Kind::Dynamic, Some(Loader::Musl));
        assert_eq!(placed(&musl), Ok(Place::First));
        let uring = program(Kind::EntersUring, glibc.clone());
        assert_eq!(placed(&uring), Ok(Place::First));
        assert_eq!(placed(&program(Kind::Go, glibc.clone())), Ok(Place::First));
        assert_eq!(placed(&program(Kind::Unknown, None)), Ok(Place::First));
        for (kind, loader, words) in [
            (Kind::Go, None, "static"),
            (Kind::Static, None, "static"),
            (Kind::Foreign(Foreign::Bits32), glibc.clone(), "32-bit"),
            (
                Kind::Foreign(Foreign::Machine),
                glibc.clone(),
                "another architecture",
            ),
            (
                Kind::Foreign(Foreign::Sanitizer),
                glibc.clone(),
                "sanitizer",
            ),
            (
                Kind::Foreign(Foreign::UnknownLoader),
                Some(Loader::Other("/x".into())),
                "neither glibc's",
            ),
            (
                Kind::Foreign(Foreign::LibraryNotForMusl),
                Some(Loader::Musl),
                "musl",
            ),
        ] {
            let why = placed(&program(kind, loader)).unwrap_err();
            assert!(
                why.starts_with("/bin/p is ") && why.contains(words),
                "{why}"
            );
        }
        let unreadable = Program {
            path: "/bin/p".into(),
            facts: Err("No such file or directory".into()),
            init: None,
            root_fits: Err("not read".into()),
        };
        assert_eq!(placed(&unreadable), Ok(Place::First));
        // A static program whose rootfs holds only loaders that take the
        // library keeps it, for what it starts; else the log says what
        // the rootfs holds.
        let shell = program(Kind::Static, None);
        let why = placed(&shell).unwrap_err();
        assert!(
            why.ends_with(", and the rootfs holds /lib/ld-linux.so.2, a loader of another class"),
            "{why}"
        );
        let fits = Program {
            root_fits: Ok(()),
            ..shell
        };
        assert_eq!(placed(&fits), Ok(Place::First));
        let ldd = [json!("LD_TRACE_LOADED_OBJECTS=1")];
        assert!(super::placed(&fits, &ldd).is_err());
        // The program a static init runs: the log names the init too.
        let under = Program {
            init: Some("/sbin/docker-init".into()),
            ..program(Kind::Foreign(Foreign::Bits32), glibc.clone())
        };
        let why = placed(&under).unwrap_err();
        assert!(
            why.starts_with("/bin/p, run by /sbin/docker-init, is a 32-bit"),
            "{why}"
        );
        // The user's own sanitizer, and ldd, in the environment.
        let asan = program(Kind::Foreign(Foreign::Sanitizer), glibc.clone());
        let user = [json!("LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libasan.so.8")];
        assert_eq!(super::placed(&asan, &user), Ok(Place::AfterSanitizer));
        let dynamic = program(Kind::Dynamic, glibc);
        let ldd = [json!("LD_TRACE_LOADED_OBJECTS=1")];
        let why = super::placed(&dynamic, &ldd).unwrap_err();
        assert!(why.contains("ldd"), "{why}");
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
        // No variables to keep: none, said so that runc takes it.
        let mut empty =
            json!({"createContainer": [{"path": "/c"}, {"path": "/d", "env": ["B=2"]}]});
        keep_hooks(&mut empty, &[]).unwrap();
        assert_eq!(
            empty,
            json!({"createContainer": [{"path": "/c", "env": [""]}, {"path": "/d", "env": ["B=2"]}]})
        );
        let before = empty.clone();
        keep_hooks(&mut empty, &[json!("LD_PRELOAD=/x")]).unwrap();
        assert_eq!(empty, before, "a second edit changes nothing");
        for bad in [
            json!([]),
            json!({"startContainer": {}}),
            json!({"startContainer": [1]}),
        ] {
            assert!(keep_hooks(&mut bad.clone(), &env).is_err(), "{bad}");
        }
    }
}
