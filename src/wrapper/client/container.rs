//! Container clients: `eatmydata docker run ...` preloads nothing into
//! the client, which starts nothing itself (dockerd, or podman's conmon
//! and runtime, or containerd, start the container). What reaches the
//! container is chosen once per run (`way.rs`): its OCI runtime where the
//! engine has ours (`--runtime=eatmydata` after `run`/`create` where
//! docker has it registered, the path of `eatmydata-runtime` for podman
//! and nerdctl, which take a runtime's path), else a seccomp profile sent
//! with the request (`send.rs`), else nothing and why. podman's global
//! `--runtime` goes before `build`, whose RUN steps run under it. Where
//! nothing can be inserted (Compose, docker's builds, any other verb), a
//! note says once what to do, unless the daemon's default runtime already
//! reaches what runs (`build.rs` for builds), and the client runs as
//! asked, without the library or a filter.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

mod build;
mod facts;
mod info;
mod line;
mod machine;
mod options;
mod send;
mod way;
use crate::profile;
pub use crate::profile::Engine;
pub use facts::{Facts, Here, gather};
#[cfg(test)]
use info::DockerRuntimes;
pub use line::read;
pub use machine::{Builder, BuildkitRunc};
use options::RunOptions;
pub use send::send;
pub use way::Profile;
#[cfg(test)]
use {
    info::read_runtimes,
    machine::{builder, docker_socket, runc_of},
};

/// The clients, by the name they are run by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Client {
    Docker,
    Podman,
    Nerdctl,
    /// `docker-compose`, `podman-compose`.
    Compose(&'static str),
}

/// What the line asks the client for.
#[derive(Debug, PartialEq)]
pub enum Verb {
    /// `run` or `create` (also as `container run`), at this index of the
    /// arguments, with its options read.
    Start {
        at: usize,
        options: RunOptions,
    },
    Compose,
    /// `build` (also `image build`, `builder ...`), or `buildx ...`
    /// (BuildKit whatever the environment says).
    Build {
        buildx: bool,
    },
    Other(OsString),
}

/// A container client's line, read.
#[derive(Debug, PartialEq)]
pub struct Call {
    pub client: Client,
    pub verb: Verb,
    /// The client's global options, before the verb (for `docker info`).
    pub globals: Vec<OsString>,
}

/// Options that make podman talk to a service elsewhere, whose runtime
/// path would be another machine's.
const PODMAN_REMOTE: &[&str] = &["-r", "--remote", "--url", "--connection", "-c"];

/// What the client runs with, and what to say first.
#[derive(Debug, PartialEq)]
pub struct Outcome {
    pub args: Vec<OsString>,
    pub notice: Option<String>,
    /// For `--verbose`.
    pub inserted: Option<String>,
    /// The profile to send with the request (`send.rs` makes it, and the
    /// line to run with it, from `args`).
    pub profile: Option<(usize, Profile)>,
}

/// How to run `configure`: through `eatmydata-runtime` where that link
/// exists, else through this command (which makes the link); by the path
/// the user's shell finds, since sudo's PATH has no `~/.cargo/bin`.
fn configure(facts: &Facts) -> &'static str {
    match facts.runtime {
        Some(_) => "sudo \"$(command -v eatmydata-runtime)\" configure",
        None => "sudo \"$(command -v eatmydata)\" --runtime configure",
    }
}

/// The line as it was, with a note.
fn unchanged(args: &[OsString], notice: String) -> Outcome {
    Outcome {
        args: args.to_vec(),
        notice: Some(notice),
        inserted: None,
        profile: None,
    }
}

/// The line as it was, nothing said.
fn as_it_was(args: &[OsString]) -> Outcome {
    Outcome {
        args: args.to_vec(),
        notice: None,
        inserted: None,
        profile: None,
    }
}

/// The line with `option` inserted at `at`.
fn inserted(args: &[OsString], at: usize, option: String, said: String) -> Outcome {
    let mut args = args.to_vec();
    args.insert(at, option.into());
    Outcome {
        args,
        notice: None,
        inserted: Some(said),
        profile: None,
    }
}

/// What every note that leaves the line as it was ends with.
const AS_ASKED: &str = "The command runs as asked, without eatmydata.";

/// The engine a client talks to.
fn engine(client: Client) -> &'static str {
    match client {
        Client::Docker => "docker",
        Client::Podman => "podman",
        Client::Nerdctl => "nerdctl",
        Client::Compose(engine) => engine,
    }
}

/// Whether `globals` make podman talk to a service elsewhere.
fn podman_remote(globals: &[OsString]) -> bool {
    globals.iter().any(|g| {
        PODMAN_REMOTE
            .iter()
            .any(|r| g.as_bytes().split(|&b| b == b'=').next() == Some(r.as_bytes()))
    })
}

/// The line to run and the note, for `call` with `args`, given `facts`.
pub fn decide(call: &Call, args: &[OsString], facts: &Facts) -> Outcome {
    let engine = engine(call.client);
    let register = format!("{} {engine}", configure(facts));
    let (at, options) = match &call.verb {
        Verb::Start { at, options } => (*at, options),
        Verb::Compose if engine == "docker" && facts.docker.default => return as_it_was(args),
        Verb::Compose => {
            return unchanged(
                args,
                format!(
                    "Compose starts its containers through {engine}, which eatmydata cannot \
                     reach from the client: make eatmydata {engine}'s default runtime \
                     ({register} --default), give each service `runtime: eatmydata` where \
                     {engine} has it, or `security_opt: [\"seccomp=FILE\"]` naming \
                     eatmydata's profile (eatmydata profile {engine} > FILE; \
                     docs/containers.md). {AS_ASKED}"
                ),
            );
        }
        Verb::Build { buildx } => return build::decide(call, args, facts, *buildx),
        Verb::Other(verb) => {
            return unchanged(
                args,
                format!(
                    "only {engine} run and create start a container that eatmydata can reach \
                     (with its runtime or its profile); a container keeps the runtime it was \
                     created with, and {engine} exec into one made so has eatmydata too. '{}' \
                     runs as asked.",
                    verb.to_string_lossy()
                ),
            );
        }
    };
    match way::choose(call, options, facts) {
        way::Way::Runtime(runtime) => {
            let verb = args[at].to_string_lossy().into_owned();
            let said = format!("running {engine} with {runtime} inserted after '{verb}'");
            inserted(args, at + 1, runtime, said)
        }
        way::Way::Profile(profile) => Outcome {
            profile: Some((at, profile)),
            ..as_it_was(args)
        },
        way::Way::Nothing(Some(notice)) => unchanged(args, notice),
        way::Way::Nothing(None) => as_it_was(args),
    }
}

/// The note for podman or nerdctl when `eatmydata-runtime` is nowhere.
fn missing_runtime(engine: &str) -> String {
    format!(
        "{engine} needs eatmydata-runtime, which is neither beside eatmydata nor in PATH: make \
         it beside the command, a link to eatmydata named so (ln -s eatmydata \
         eatmydata-runtime; scripts/install.sh and the packages do). {AS_ASKED}"
    )
}

#[cfg(test)]
mod tests;
