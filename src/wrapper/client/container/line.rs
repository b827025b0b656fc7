//! A container client's command line, read: which client, its global
//! options, and the verb past them (`container run`, `image build` too).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{Call, Client, Verb, options};

/// Global options that take a value, of docker, podman and nerdctl.
const VALUED: &[&str] = &[
    "-c",
    "--context",
    "-H",
    "--host",
    "--config",
    "-l",
    "--log-level",
    "--tlscacert",
    "--tlscert",
    "--tlskey",
    "--cgroup-manager",
    "--conmon",
    "--connection",
    "--events-backend",
    "--hooks-dir",
    "--identity",
    "--imagestore",
    "--module",
    "--network-cmd-path",
    "--network-config-dir",
    "--out",
    "--root",
    "--runroot",
    "--runtime",
    "--runtime-flag",
    "--ssh",
    "--storage-driver",
    "--storage-opt",
    "--tmpdir",
    "--url",
    "--volumepath",
    "-a",
    "--address",
    "-n",
    "--namespace",
    "--snapshotter",
    "--cni-path",
    "--cni-netconfpath",
    "--data-root",
    "--host-gateway-ip",
    "--hosts-dir",
];

/// The call, if `command` is a container client.
pub fn read(command: &OsStr, args: &[OsString]) -> Option<Call> {
    let name = Path::new(command).file_name()?.to_str()?;
    let client = match name {
        "docker" => Client::Docker,
        "podman" => Client::Podman,
        "nerdctl" => Client::Nerdctl,
        "docker-compose" => Client::Compose("docker"),
        "podman-compose" => Client::Compose("podman"),
        _ => return None,
    };
    if let Client::Compose(_) = client {
        return Some(Call {
            client,
            verb: Verb::Compose,
            globals: vec![],
        });
    }
    let mut i = 0;
    while let Some(arg) = args.get(i).map(|a| a.as_bytes()) {
        if arg.first() != Some(&b'-') {
            break;
        }
        let takes = VALUED.iter().any(|v| v.as_bytes() == arg);
        i += if takes { 2 } else { 1 };
    }
    let globals = args[..i.min(args.len())].to_vec();
    let mut at = i;
    if args.get(at).is_some_and(|a| a == "container") {
        at += 1;
    }
    let verb = match args.get(at).map(|a| a.as_bytes()) {
        Some(b"run" | b"create") => {
            let mut options = options::read(args, at + 1);
            // podman's global --runtime, when the run names none.
            options.runtime = options.runtime.or_else(|| given_runtime(&globals));
            Verb::Start { at, options }
        }
        Some(b"compose") => Verb::Compose,
        Some(b"buildx") => Verb::Build { buildx: true },
        Some(b"build" | b"builder") => Verb::Build { buildx: false },
        Some(b"image") if args.get(at + 1).is_some_and(|a| a == "build") => {
            Verb::Build { buildx: false }
        }
        _ => Verb::Other(args.get(at).cloned().unwrap_or_default()),
    };
    Some(Call {
        client,
        verb,
        globals,
    })
}

/// A `--runtime` among the global options `args`.
fn given_runtime(args: &[OsString]) -> Option<OsString> {
    args.iter().enumerate().find_map(|(i, arg)| {
        let arg = arg.as_bytes();
        match arg.strip_prefix(b"--runtime") {
            Some(b"") => Some(args.get(i + 1).cloned().unwrap_or_default()),
            Some([b'=', value @ ..]) => Some(OsStr::from_bytes(value).to_owned()),
            _ => None,
        }
    })
}
