//! What is found out for one call before the way in is chosen: the
//! engine's account of itself, only as much as the verb needs; where
//! `eatmydata-runtime` is; and what asks to keep syncs outside the line
//! itself (eatmydata's own `--keep`/`--only` and variables, the files of
//! `--env-file` and `--label-file`).

use std::ffi::OsString;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::info::{self, DockerRuntimes, PodmanInfo};
use super::machine::{self, Builder, BuildkitRunc};
use super::options::{self, RunOptions};
use super::{Call, Client, Verb};
use crate::protocol;

/// What was found on the machine for a call.
#[derive(Debug, Default)]
pub struct Facts {
    /// docker: what the daemon says of itself.
    pub docker: DockerRuntimes,
    /// podman: what it says of itself (asked only where a profile may go).
    pub podman: PodmanInfo,
    /// docker: the builder its client picks.
    pub builder: Builder,
    /// docker: what dockerd's environment says of BuildKit's runc.
    pub buildkit_runc: BuildkitRunc,
    /// `eatmydata-runtime`'s path, beside this program or in `PATH`.
    pub runtime: Option<PathBuf>,
    /// What asks to keep syncs besides the line's own options: eatmydata's
    /// `--keep`/`--only`, its environment, an `--env-file`, a
    /// `--label-file` (or one of those that cannot be read).
    pub asked_here: Option<String>,
}

/// What eatmydata itself was asked: its `--keep` and `--only` given.
pub struct Here {
    pub keep: bool,
    pub only: bool,
}

/// The most bytes of an `--env-file` or `--label-file` read.
const FILE_MAX: u64 = 4 << 20;

/// Finds out what `call`, run by `program`, needs.
pub fn gather(call: &Call, program: &Path, here: &Here) -> Facts {
    let mut facts = Facts::default();
    let start = match &call.verb {
        Verb::Start { options, .. } => Some(options),
        Verb::Build { .. } | Verb::Compose => None,
        Verb::Other(_) => return facts,
    };
    facts.runtime = machine::runtime_path();
    let docker = match call.client {
        Client::Docker => Some((program.to_owned(), call.globals.as_slice())),
        // docker-compose reaches the daemon docker reaches.
        Client::Compose("docker") => crate::search::resolve(std::ffi::OsStr::new("docker"))
            .ok()
            .map(|docker| (docker, &[][..])),
        _ => None,
    };
    if let Some((docker, globals)) = docker {
        facts.docker = info::docker_runtimes(&docker, globals);
        if matches!(call.verb, Verb::Build { .. }) {
            let host = std::env::var_os("DOCKER_HOST");
            if let Some(socket) = machine::docker_socket(globals, host.as_deref()) {
                facts.buildkit_runc = machine::buildkit_runc(&socket);
            }
        }
    }
    let buildkit = std::env::var_os("DOCKER_BUILDKIT");
    facts.builder = machine::builder(buildkit.as_deref(), facts.docker.buildx);
    if let Some(options) = start {
        let podman_profile =
            call.client == Client::Podman && (options.runtime.is_some() || facts.runtime.is_none());
        if podman_profile {
            facts.podman = info::podman_info(program, &call.globals);
        }
        facts.asked_here = asked_here(here).or_else(|| asked_in_files(options));
        // The image's own config, where the profile may go (the runtime
        // reads it itself).
        let runtime_way = match call.client {
            Client::Docker => facts.docker.registered && options.runtime.is_none(),
            _ => !podman_profile,
        };
        if facts.asked_here.is_none()
            && !runtime_way
            && let Some(image) = &options.image
        {
            facts.asked_here = info::image_asks(program, &call.globals, image);
        }
    }
    facts
}

/// What eatmydata's own options and environment ask to keep.
fn asked_here(here: &Here) -> Option<String> {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let disabled = std::env::var_os(protocol::DISABLE)
        .is_some_and(|v| protocol::switch_on(v.as_encoded_bytes()));
    if here.keep || here.only {
        let option = if here.keep { "--keep" } else { "--only" };
        Some(format!("eatmydata's {option}"))
    } else if let Some(name) = [protocol::KEEP, protocol::ONLY]
        .into_iter()
        .find(|&n| set(n))
    {
        Some(format!("{name} in eatmydata's environment"))
    } else {
        disabled.then(|| format!("{} in eatmydata's environment", protocol::DISABLE))
    }
}

/// What the line's `--env-file` and `--label-file` files ask to keep; a
/// file that cannot be read is as one that asks (docker then says why).
fn asked_in_files(options: &RunOptions) -> Option<String> {
    let files = (options.env_files.iter().map(|f| (f, "--env-file")))
        .chain(options.label_files.iter().map(|f| (f, "--label-file")));
    for (file, option) in files {
        let shown = Path::new(file).display();
        let Some(text) = read_bounded(file) else {
            return Some(format!("{option} {shown}, which eatmydata cannot read,"));
        };
        for line in text.split(|&b| b == b'\n') {
            let line = line.trim_ascii();
            let found = match option {
                "--env-file" => options::keeping_variable(line),
                _ => options::keeping_name(line),
            };
            if let Some(name) = found {
                return Some(format!("{name} in {option} {shown}"));
            }
        }
    }
    None
}

fn read_bounded(file: &OsString) -> Option<Vec<u8>> {
    let mut text = Vec::new();
    let file = std::fs::File::open(file);
    file.and_then(|f| f.take(FILE_MAX).read_to_end(&mut text))
        .ok()?;
    Some(text)
}
