//! What a build's RUN steps run under, and so what `eatmydata docker
//! build` (podman, nerdctl) can do or must say. docker's legacy builder
//! runs each step as a container of the daemon's default runtime;
//! BuildKit, docker's default builder, runs them with its own runc, which
//! dockerd 26 and later take from `DOCKER_BUILDKIT_RUNC_COMMAND` in its
//! environment (a client cannot see it); podman build runs them under
//! podman's runtime, which its global `--runtime` names; nerdctl's
//! buildkitd under its worker's binary.

use std::ffi::OsString;

use super::{
    AS_ASKED, Call, Client, Facts, Outcome, as_it_was, configure, inserted, missing_runtime,
    podman_remote, unchanged,
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
            let legacy = facts.legacy_builder && !buildx;
            match (facts.docker.default, legacy) {
                (true, true) => as_it_was(args),
                (true, false) => unchanged(
                    args,
                    format!(
                        "BuildKit runs RUN steps with its own runc, not with the daemon's \
                         default runtime (eatmydata): they get eatmydata where dockerd has \
                         DOCKER_BUILDKIT_RUNC_COMMAND naming eatmydata-runtime (Docker 26 and \
                         later; {configure} docker --default writes it, taken at dockerd's \
                         next restart), and with the legacy builder (DOCKER_BUILDKIT=0). The \
                         command runs as asked."
                    ),
                ),
                (false, _) => unchanged(
                    args,
                    format!(
                        "docker build's RUN steps run under the daemon's default runtime (the \
                         legacy builder, DOCKER_BUILDKIT=0) or BuildKit's own runc \
                         (DOCKER_BUILDKIT_RUNC_COMMAND in dockerd's environment, Docker 26 and \
                         later), which eatmydata cannot reach from the client: {configure} \
                         docker --default sets both, {INSIDE}. {AS_ASKED}"
                    ),
                ),
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
