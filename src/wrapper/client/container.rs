//! Container clients: `eatmydata docker run ...` preloads the library into
//! the client, which starts nothing itself (dockerd, or podman's conmon
//! and runtime, or containerd, start the container). What reaches the
//! container is its OCI runtime, so the command line is given one:
//! `--runtime=eatmydata` after `run`/`create` where docker has that
//! runtime registered, the path of `eatmydata-runtime` for podman and
//! nerdctl (both take a runtime's path: podman's `--runtime`, nerdctl's as
//! the runc shim's binary); podman's global `--runtime` before `build`,
//! whose RUN steps run under it. Where nothing can be inserted (Compose,
//! docker's builds, any other verb, an unregistered docker), a note says
//! once what to do, unless the daemon's default runtime already reaches
//! what runs (`build.rs` for builds), and the client runs as asked,
//! without the library or a filter.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

mod build;
mod line;
mod machine;
pub use line::read;
pub use machine::{
    Builder, BuildkitRunc, DockerRuntimes, builder, buildkit_runc, docker_runtimes, docker_socket,
    runtime_path,
};
#[cfg(test)]
use machine::{read_runtimes, runc_of};

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
    /// arguments; `runtime`: a `--runtime` the user gave.
    Start {
        at: usize,
        runtime: Option<OsString>,
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

/// What was found on the machine for a call.
#[derive(Debug, Default)]
pub struct Facts {
    /// docker: what the daemon's runtimes are.
    pub docker: DockerRuntimes,
    /// docker: the builder its client picks.
    pub builder: Builder,
    /// docker: what dockerd's environment says of BuildKit's runc.
    pub buildkit_runc: BuildkitRunc,
    /// `eatmydata-runtime`'s path, beside this program or in `PATH`.
    pub runtime: Option<PathBuf>,
}

/// What the client runs with, and what to say first.
#[derive(Debug, PartialEq)]
pub struct Outcome {
    pub args: Vec<OsString>,
    pub notice: Option<String>,
    /// For `--verbose`.
    pub inserted: Option<String>,
}

/// How to run `configure`: through `eatmydata-runtime` where that link
/// exists, else through this command (which makes the link).
fn configure(facts: &Facts) -> &'static str {
    match facts.runtime {
        Some(_) => "sudo eatmydata-runtime configure",
        None => "sudo eatmydata --runtime configure",
    }
}

/// The line as it was, with a note.
fn unchanged(args: &[OsString], notice: String) -> Outcome {
    Outcome {
        args: args.to_vec(),
        notice: Some(notice),
        inserted: None,
    }
}

/// The line as it was, nothing said.
fn as_it_was(args: &[OsString]) -> Outcome {
    Outcome {
        args: args.to_vec(),
        notice: None,
        inserted: None,
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
    let register = format!("register the runtime once ({} {engine}", configure(facts));
    let start = match &call.verb {
        Verb::Start { at, runtime: None } => *at,
        Verb::Start {
            runtime: Some(runtime),
            ..
        } => {
            if runtime.as_bytes().windows(9).any(|w| w == b"eatmydata") {
                return as_it_was(args);
            }
            return unchanged(
                args,
                format!(
                    "{engine} was given --runtime={}: the container runs with it, without \
                     eatmydata, as asked.",
                    runtime.to_string_lossy()
                ),
            );
        }
        Verb::Compose if engine == "docker" && facts.docker.default => return as_it_was(args),
        Verb::Compose => {
            return unchanged(
                args,
                format!(
                    "Compose starts its containers through {engine}, which eatmydata cannot \
                     reach from the client: {register}) and give each service `runtime: \
                     eatmydata`, or make it the default runtime of every container \
                     ({} {engine} --default). {AS_ASKED}",
                    configure(facts)
                ),
            );
        }
        Verb::Build { buildx } => return build::decide(call, args, facts, *buildx),
        Verb::Other(verb) => {
            return unchanged(
                args,
                format!(
                    "only {engine} run and create start a container that eatmydata can reach \
                     (with its runtime); a container keeps the runtime it was created with, and \
                     {engine} exec into one made so has eatmydata too. '{}' runs as asked.",
                    verb.to_string_lossy()
                ),
            );
        }
    };
    let runtime = match (call.client, &facts.runtime) {
        (Client::Docker, _) if facts.docker.registered => "--runtime=eatmydata".to_owned(),
        (Client::Docker, _) => {
            return unchanged(
                args,
                format!(
                    "docker starts the container in its daemon, which eatmydata cannot reach \
                     from the client: {register}, then reload dockerd), and eatmydata \
                     docker run adds --runtime=eatmydata itself; or mount the library \
                     (docs/containers.md). {AS_ASKED}"
                ),
            );
        }
        (Client::Podman, _) if podman_remote(&call.globals) => {
            return unchanged(
                args,
                format!(
                    "podman talks to a service elsewhere here, whose runtime eatmydata cannot \
                     name: {register}) there and pass --runtime=eatmydata. {AS_ASKED}"
                ),
            );
        }
        (_, Some(path)) => format!("--runtime={}", path.display()),
        (_, None) => return unchanged(args, missing_runtime(engine)),
    };
    let verb = args[start].to_string_lossy().into_owned();
    let said = format!("running {engine} with {runtime} inserted after '{verb}'");
    inserted(args, start + 1, runtime, said)
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
