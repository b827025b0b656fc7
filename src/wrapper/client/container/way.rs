//! The way in for one `run`/`create`, chosen once: the `eatmydata`
//! runtime where the engine has it; else eatmydata's seccomp profile,
//! sent with the request (the client reads `--security-opt seccomp=FILE`
//! and sends its JSON, so it reaches a daemon nothing of ours is
//! installed beside: Docker Desktop's VM, a remote host, dind); else
//! nothing, and why. The profile is refused wherever it would not do
//! what it says or would break the container: a keep asked (a profile
//! cannot tell one mount from another), `--privileged` (no profile is
//! applied), seccomp turned off for the container or the whole daemon, a
//! daemon whose own default profile is not the engine's, and gVisor,
//! which drops `errnoRet` and so turns every sync into `EPERM`.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

use super::options::{RunOptions, SeccompOption};
use super::{AS_ASKED, Call, Client, Engine, Facts, configure, missing_runtime, podman_remote};

/// The way in.
#[derive(Debug, PartialEq)]
pub enum Way {
    /// This `--runtime=...` inserted after the verb.
    Runtime(String),
    /// The profile sent with the request.
    Profile(Profile),
    /// The line as it was; what to say, if anything.
    Nothing(Option<String>),
}

/// The profile to send.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    pub engine: Engine,
    /// The engine's version, for its default profile.
    pub version: Option<String>,
    /// The user's own profile, merged with rather than replaced.
    pub user: Option<SeccompOption>,
    /// Why not the runtime, for the line that says the way.
    pub instead: String,
}

/// The way in for `call`, whose options are `options`, given `facts`.
pub fn choose(call: &Call, options: &RunOptions, facts: &Facts) -> Way {
    let asked = options.runtime.as_ref();
    if asked.is_some_and(|r| r.as_bytes().windows(9).any(|w| w == b"eatmydata")) {
        return Way::Nothing(None);
    }
    let (engine, instead) = match call.client {
        Client::Docker if !facts.docker.answered => {
            return Way::Nothing(Some(format!(
                "docker's daemon did not answer (docker info failed), so eatmydata cannot tell \
                 whether it has the eatmydata runtime or which profile it takes. {AS_ASKED}"
            )));
        }
        Client::Docker if facts.docker.registered && asked.is_none() => {
            return Way::Runtime("--runtime=eatmydata".to_owned());
        }
        Client::Docker => (
            Engine::Docker,
            match asked {
                Some(r) => format!("--runtime={} was asked", r.to_string_lossy()),
                None => "the daemon has no eatmydata runtime".to_owned(),
            },
        ),
        Client::Podman if podman_remote(&call.globals) => {
            return Way::Nothing(Some(format!(
                "podman talks to a service elsewhere here, whose runtime eatmydata cannot name, \
                 and podman-remote sends a profile's path, not its content: {} podman there \
                 and pass --runtime=eatmydata. {AS_ASKED}",
                configure(facts)
            )));
        }
        Client::Podman => match (asked, &facts.runtime) {
            (None, Some(path)) => return Way::Runtime(format!("--runtime={}", path.display())),
            (Some(r), _) => (
                Engine::Podman,
                format!("--runtime={} was asked", r.to_string_lossy()),
            ),
            (None, None) => (
                Engine::Podman,
                "eatmydata-runtime is neither beside eatmydata nor in PATH".to_owned(),
            ),
        },
        Client::Nerdctl => {
            return match (asked, &facts.runtime) {
                (None, Some(path)) => Way::Runtime(format!("--runtime={}", path.display())),
                (Some(r), _) => Way::Nothing(Some(format!(
                    "nerdctl was given --runtime={}: the container runs with it, without \
                     eatmydata, as asked.",
                    r.to_string_lossy()
                ))),
                (None, None) => Way::Nothing(Some(missing_runtime("nerdctl"))),
            };
        }
        Client::Compose(_) => return Way::Nothing(None),
    };
    match refused(engine, options, facts) {
        Some(why) => Way::Nothing(Some(format!(
            "{why}: eatmydata's seccomp profile is not sent ({instead}). {AS_ASKED}"
        ))),
        None => Way::Profile(Profile {
            engine,
            version: match engine {
                Engine::Docker => Some(facts.docker.version.clone()),
                Engine::Podman => Some(facts.podman.version.clone()),
            }
            .filter(|v| !v.is_empty()),
            user: options
                .seccomp
                .clone()
                .filter(|s| !matches!(s.value.as_bytes(), b"builtin" | b"default")),
            instead,
        }),
    }
}

/// Why the profile cannot be sent, if it cannot.
fn refused(engine: Engine, options: &RunOptions, facts: &Facts) -> Option<String> {
    if let Some(keep) = options.keep.as_ref().or(facts.asked_here.as_ref()) {
        return Some(format!(
            "{keep} asks to keep syncs, and a seccomp profile cannot tell one mount from \
             another, so it would eat the kept ones too"
        ));
    }
    if options.privileged {
        return Some(
            "--privileged was given, and the engine applies no seccomp profile to a \
             privileged container"
                .to_owned(),
        );
    }
    if let Some(seccomp) = &options.seccomp
        && seccomp.value == "unconfined"
    {
        return Some("--security-opt seccomp=unconfined was asked".to_owned());
    }
    let (name, daemon_seccomp) = match engine {
        Engine::Docker => ("dockerd", facts.docker.seccomp.as_deref()),
        Engine::Podman => ("podman", facts.podman.seccomp.as_deref()),
    };
    match daemon_seccomp {
        None if engine == Engine::Podman && !facts.podman.answered => {
            return Some("podman info did not answer".to_owned());
        }
        None => return Some(format!("{name} applies no seccomp profile here")),
        Some("unconfined") => {
            return Some(format!("{name} runs every container unconfined (seccomp)"));
        }
        Some("builtin" | "default") => {}
        // podman's default is whatever its containers.conf names, which
        // the profile is made from; dockerd's own file is not seen here.
        Some(_) if engine == Engine::Podman => {}
        Some(file) if options.seccomp.is_none() => {
            return Some(format!(
                "dockerd's default profile is its own ({file}), which eatmydata's would \
                 replace"
            ));
        }
        Some(_) => {}
    }
    let (runtime, program) = runtime_of(engine, options, facts);
    if [&runtime, &program].iter().any(|r| gvisor(r)) {
        return Some(format!(
            "the container's runtime, {runtime}, is gVisor's runsc, which drops a profile's \
             errnoRet and would fail every sync with EPERM"
        ));
    }
    None
}

/// The runtime the container will get, by name, and its program.
fn runtime_of(engine: Engine, options: &RunOptions, facts: &Facts) -> (String, String) {
    let asked = options.runtime.as_ref().map(|r| r.to_string_lossy());
    match engine {
        Engine::Docker => {
            let name = asked.map_or_else(|| facts.docker.default_name.clone(), Into::into);
            let program = facts.docker.runtimes.iter().find(|(n, _)| *n == name);
            let program = program.map(|(_, p)| p.clone()).unwrap_or_default();
            (name, program)
        }
        Engine::Podman => match asked {
            Some(asked) => (asked.clone().into(), asked.into()),
            None => facts.podman.runtime.clone(),
        },
    }
}

/// Whether a runtime's name or program is gVisor's: `runsc` or a path to
/// it (the profile's rule), or its containerd shim `io.containerd.runsc.v1`.
fn gvisor(name: &str) -> bool {
    super::profile::drops_errno_ret(name) || name.contains(".runsc.")
}

/// The line with the user's `--security-opt seccomp=...` now naming
/// `path`, or with `--security-opt seccomp=PATH` after the verb at `at`.
pub fn with_profile(
    args: &[OsString],
    at: usize,
    user: Option<&SeccompOption>,
    path: &str,
) -> Vec<OsString> {
    let mut args = args.to_vec();
    match user {
        Some(option) => {
            let mut word = args[option.word].as_bytes()[..option.prefix].to_vec();
            word.extend_from_slice(path.as_bytes());
            args[option.word] = std::ffi::OsStr::from_bytes(&word).to_owned();
        }
        None => {
            args.insert(at + 1, format!("seccomp={path}").into());
            args.insert(at + 1, "--security-opt".into());
        }
    }
    args
}

#[cfg(test)]
mod tests;
