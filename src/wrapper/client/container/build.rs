//! What a build's RUN steps run under, and so what `eatmydata docker
//! build` (podman, nerdctl) can do or must say. docker's client picks its
//! builder as its own CLI does (`machine.rs`): the legacy builder runs
//! each step as a container of the daemon's default runtime; BuildKit,
//! with its own runc, which dockerd 26 and later take from
//! `DOCKER_BUILDKIT_RUNC_COMMAND` in its environment (read where this
//! user may: root, or dockerd's own). Nothing is said when the builder
//! that will run reaches the runtime; the one that will not is named.
//! podman build runs them under podman's runtime, which its global
//! `--runtime` names; nerdctl's buildkitd under its worker's binary.

use std::ffi::OsString;

use super::{
    AS_ASKED, Builder, BuildkitRunc, Call, Client, Facts, Outcome, as_it_was, configure, inserted,
    missing_runtime, podman_remote, unchanged,
};

/// Where the static command inside the image is described.
const INSIDE: &str =
    "or run the static eatmydata inside the image (RUN eatmydata ..., docs/containers.md)";

/// The line to run and the note for a build; `buildx`: BuildKit whatever
/// the environment says.
pub fn decide(call: &Call, args: &[OsString], facts: &Facts, buildx: bool) -> Outcome {
    let configure = configure(facts);
    match call.client {
        Client::Docker | Client::Compose(_) => {
            let builder = if buildx {
                Builder::BuildKit
            } else {
                facts.builder
            };
            match builder {
                // docker says why itself: BuildKit asked for, no buildx.
                Builder::Refused => as_it_was(args),
                Builder::Legacy { .. } if facts.docker.default => as_it_was(args),
                Builder::Legacy { asked } => unchanged(args, legacy(facts, asked)),
                Builder::BuildKit => match &facts.buildkit_runc {
                    BuildkitRunc::Set(runc) if names_runtime(runc, facts) => as_it_was(args),
                    known => unchanged(args, buildkit(facts, known)),
                },
            }
        }
        Client::Podman if podman_remote(&call.globals) => unchanged(
            args,
            format!(
                "podman talks to a service elsewhere here, whose runtime eatmydata cannot \
                 name: {configure} podman --default there. {AS_ASKED}"
            ),
        ),
        Client::Podman => match &facts.runtime {
            Some(path) => {
                let runtime = format!("--runtime={}", path.display());
                let said = format!("running podman with {runtime} before the build");
                inserted(args, call.globals.len(), runtime, said)
            }
            None => unchanged(args, missing_runtime("podman")),
        },
        Client::Nerdctl => unchanged(
            args,
            format!(
                "nerdctl build runs RUN steps in buildkitd, with its worker's own runc, \
                 which eatmydata cannot reach from the client: start buildkitd with \
                 --oci-worker-binary=eatmydata-runtime, {INSIDE}. {AS_ASKED}"
            ),
        ),
    }
}

/// Whether `runc`, dockerd's `DOCKER_BUILDKIT_RUNC_COMMAND`, is the
/// runtime: a program named `eatmydata-runtime`, or the one found here.
fn names_runtime(runc: &std::ffi::OsStr, facts: &Facts) -> bool {
    let path = std::path::Path::new(runc);
    let named = path.file_name() == Some(std::ffi::OsStr::new(crate::runtime::NAME));
    let same = facts.runtime.as_ref().is_some_and(|ours| {
        let real = |p: &std::path::Path| p.canonicalize().ok();
        real(ours).is_some() && real(ours) == real(path)
    });
    named || same
}

/// The note for the legacy builder on a daemon whose default runtime is
/// another: `asked` by `DOCKER_BUILDKIT` false, else for want of buildx.
fn legacy(facts: &Facts, asked: bool) -> String {
    let why = if asked {
        "DOCKER_BUILDKIT is false"
    } else {
        "docker has no buildx component"
    };
    let default = match facts.docker.default_name.as_str() {
        "" => "default runtime".to_owned(),
        name => format!("default runtime, {name}"),
    };
    format!(
        "docker build runs the legacy builder here ({why}), whose RUN steps run under \
         dockerd's {default}, not eatmydata: {} docker --default makes eatmydata the \
         default, {INSIDE}. {AS_ASKED}",
        configure(facts)
    )
}

/// The note for BuildKit, whose runc is `known` to be another, or not
/// known.
fn buildkit(facts: &Facts, known: &BuildkitRunc) -> String {
    let configure = configure(facts);
    let runs = match known {
        BuildkitRunc::Set(runc) => format!(
            "BuildKit runs RUN steps with {} (dockerd's DOCKER_BUILDKIT_RUNC_COMMAND), not \
             eatmydata-runtime",
            runc.to_string_lossy()
        ),
        BuildkitRunc::Unset => "BuildKit runs RUN steps with its own runc (dockerd's \
             environment has no DOCKER_BUILDKIT_RUNC_COMMAND), not eatmydata"
            .to_owned(),
        BuildkitRunc::Unknown => "BuildKit runs RUN steps with its own runc, which gets \
             eatmydata only where dockerd's environment has DOCKER_BUILDKIT_RUNC_COMMAND \
             naming eatmydata-runtime (Docker 26 and later), which cannot be read from here"
            .to_owned(),
    };
    let legacy = if facts.docker.default {
        " or DOCKER_BUILDKIT=0, whose legacy builder runs them under the daemon's default \
         runtime, eatmydata"
    } else {
        ""
    };
    format!(
        "{runs}: {configure} docker --default writes it (Docker 26 and later, taken at \
         dockerd's next restart){legacy}; {INSIDE}. {AS_ASKED}"
    )
}
