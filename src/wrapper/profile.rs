//! `eatmydata profile`: a seccomp profile that is an engine's own default,
//! rule for rule, with the sync calls answered 0 (`rules.rs`). Sent with a
//! container's create request (`docker run --security-opt seccomp=FILE`,
//! Compose's `security_opt`, Testcontainers), it reaches containers whose
//! engine nobody can register a runtime with: Docker Desktop's VM, a
//! remote engine, docker-in-docker, CI services. The kernel answers the
//! calls: `SCMP_ACT_ERRNO` with `errnoRet: 0` is a return of 0, which
//! runc and crun pass on and gVisor's runsc does not ([`drops_errno_ret`]).
//!
//! The default is the one of the engine version the client talks to
//! ([`daemon_version`]) or that the user names: the command carries each
//! engine's default for the versions this project tests (`defaults.rs`),
//! and for one it does not know takes the nearest older, saying so.
//! podman's default is a file, as its `containers.conf` names it
//! (`podman.rs`), read where podman would.
//!
//! The runtime's own rules (`runtime/edit/seccomp.rs`) are the same edit.

pub mod command;
pub mod daemon;
pub mod defaults;
mod podman;
pub mod rules;

use std::path::Path;

use serde_json::Value;

use crate::error::Error;
pub use daemon::{daemon_version, default_runtime};
use defaults::Embedded;
pub use rules::{Answered, add_sync_rules};

/// The engines a profile is made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Docker,
    Podman,
}

impl Engine {
    /// Its command's name: `docker`, `podman`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Docker => "docker",
            Engine::Podman => "podman",
        }
    }

    /// As prose names it.
    pub fn title(self) -> &'static str {
        match self {
            Engine::Docker => "Docker",
            Engine::Podman => "podman",
        }
    }

    /// The engine a command line names (`docker`, `podman`).
    pub fn from_name(name: &str) -> Option<Engine> {
        match name {
            "docker" => Some(Engine::Docker),
            "podman" => Some(Engine::Podman),
            _ => None,
        }
    }
}

/// A profile made, and which default it is made from.
#[derive(Debug)]
pub struct Chosen {
    /// The engine's default profile with the sync rules.
    pub json: Value,
    /// Which default, for stderr: a whole line starting `eatmydata:
    /// profile:`, without a full stop, to which a caller may add whence
    /// the version came (` (asked of the daemon)`).
    pub note: String,
    /// What the rules answer 0, and what the default left refused.
    pub answered: Answered,
}

/// The profile for `engine` at `version` (as the engine says it, `None`
/// when unknown). For podman, the file its `containers.conf` names on
/// this machine comes first (right for a local podman; for a remote one,
/// take [`embedded_default`]); else [`embedded_default`]. `Err` as there,
/// or for a podman configuration that cannot be read or asks for no
/// seccomp at all.
pub fn default_for(engine: Engine, version: Option<&str>) -> Result<Chosen, Error> {
    if engine == Engine::Podman
        && let Some(chosen) = podman_file()?
    {
        return Ok(chosen);
    }
    embedded_default(engine, version)
}

/// The profile made from the default this command carries for `engine`
/// at `version`: its own, the nearest older for a version not carried
/// (the note says so), the newest without a version. `Err` for a version
/// that is not one, or one older than any that passes `errnoRet` on.
pub fn embedded_default(engine: Engine, version: Option<&str>) -> Result<Chosen, Error> {
    let (embedded, how) = embedded_for(engine, version)?;
    let note = format!(
        "eatmydata: profile: {} {}'s default{how}",
        engine.title(),
        embedded.version_name()
    );
    Ok(made(embedded.json, note))
}

/// The embedded default that stands for `version` of `engine`, and how it
/// was chosen, as the end of a note (`, the nearest older one known to
/// Docker 28.0.1`).
pub fn embedded_for(
    engine: Engine,
    version: Option<&str>,
) -> Result<(&'static Embedded, String), Error> {
    let Some(given) = version else {
        let newest = defaults::newest(engine);
        return Ok((
            newest,
            ", the newest known (no engine version known)".into(),
        ));
    };
    let bad = |why: String| Error::Profile(format!("{} {given}: {why}", engine.title()));
    let asked = defaults::parse_version(given)
        .ok_or_else(|| bad("not an engine version (as 26.1, or 20.10.24)".into()))?;
    let first = match engine {
        Engine::Docker => defaults::DOCKER_ERRNO_RET,
        Engine::Podman => defaults::PODMAN_ERRNO_RET,
    };
    if asked < first {
        return Err(bad(format!(
            "older than {} {}.{}, the first to pass a rule's errnoRet on: every sync \
             would fail EPERM",
            engine.title(),
            first.0,
            first.1
        )));
    }
    let embedded = defaults::nearest(engine, asked).unwrap_or_else(|| defaults::oldest(engine));
    let how = match (embedded.version == asked, asked.1 == u32::MAX) {
        (true, _) => format!(", for {} {given}", engine.title()),
        (false, true) => format!(", the newest known of {} {given}", engine.title()),
        (false, false) if embedded.version < asked => format!(
            ", the nearest older one known: {} {given}'s is not carried by this command",
            engine.title()
        ),
        (false, false) => format!(
            ", the oldest known: {} {given}'s is not carried by this command",
            engine.title()
        ),
    };
    Ok((embedded, how))
}

/// `json` with the sync rules, and the note.
fn made(json: &str, note: String) -> Chosen {
    // The embedded files are JSON (their unit test parses each).
    let mut json: Value = serde_json::from_str(json).unwrap_or(Value::Null);
    let answered = add_sync_rules(&mut json);
    Chosen {
        json,
        note,
        answered,
    }
}

/// podman's default as this machine's configuration names it, when it
/// names a file that exists; `None` for podman's built-in one.
fn podman_file() -> Result<Option<Chosen>, Error> {
    let bad = |why: String| Error::Profile(format!("podman: {why}"));
    let (path, whence) = match podman::source().map_err(bad)? {
        podman::Source::BuiltIn => return Ok(None),
        podman::Source::Found(path) => (path, String::new()),
        podman::Source::Named { conf, profile } if profile == "unconfined" => {
            return Err(bad(format!(
                "{} sets seccomp_profile = \"unconfined\": podman applies no seccomp \
                 filter by default, and a profile would add one",
                conf.display()
            )));
        }
        // Empty: podman's own choice, as if unset.
        podman::Source::Named { profile, .. } if profile.is_empty() => return Ok(None),
        podman::Source::Named { conf, profile } => {
            (profile.into(), format!(", as {} names it", conf.display()))
        }
    };
    let path: &Path = &path;
    let text = match podman::read_bounded(path, podman::PROFILE_MAX) {
        // podman falls back to its built-in profile too.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            let why = crate::error::plain(&e);
            return Err(bad(format!("{}{whence}: {why}", path.display())));
        }
        Ok(text) => text,
    };
    let mut json: Value = serde_json::from_slice(&text)
        .map_err(|e| bad(format!("{}{whence}: not JSON: {e}", path.display())))?;
    let answered = add_sync_rules(&mut json);
    if let Some(why) = &answered.malformed {
        return Err(bad(format!("{}{whence}: {why}", path.display())));
    }
    let note = format!(
        "eatmydata: profile: podman's default, {}{whence}",
        path.display()
    );
    Ok(Some(Chosen {
        json,
        note,
        answered,
    }))
}

/// Whether an OCI runtime, by the name an engine gives it (`runsc`, or a
/// path to it), is known to drop a rule's `errnoRet`, turning every sync
/// the profile answers 0 into `EPERM`: gVisor's `runsc` (`runsc-kvm`,
/// `runsc-debug`, ...). PostgreSQL panics on `EPERM` from `fsync`, so the
/// profile must not go to it. A name says only what it says: a runtime
/// registered under another name is not known by this.
pub fn drops_errno_ret(runtime_name: &str) -> bool {
    let base = runtime_name.rsplit('/').next().unwrap_or(runtime_name);
    base.starts_with("runsc") || base.contains("gvisor")
}

#[cfg(test)]
mod tests;
