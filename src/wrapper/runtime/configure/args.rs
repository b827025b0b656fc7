//! The command line of `eatmydata-runtime configure ENGINE [OPTIONS]`.

use std::ffi::OsString;
use std::path::PathBuf;

use super::{Engine, Error};

pub const HELP: &str = "\
Usage: eatmydata-runtime configure ENGINE [OPTIONS]
Register eatmydata-runtime with a container engine under the name
eatmydata, so that `--runtime=eatmydata` (or every container, with
--default) runs with fsync and the other requests for durability made free.

ENGINE and the file it edits unless --config says another:
  docker      /etc/docker/daemon.json
  podman      /etc/containers/containers.conf (root), or
              $XDG_CONFIG_HOME/containers/containers.conf (a user)
  containerd  /etc/containerd/config.toml (config version 1, 2 or 3)
  crio        /etc/crio/crio.conf.d/99-eatmydata.conf

Options:
      --default       make eatmydata the engine's default runtime too
      --remove        take back what registering added (see below)
      --dry-run       print what would change, and write nothing
      --config FILE   edit FILE instead
      --runtime-path PATH
                      the eatmydata-runtime the engine is to run: this
                      command, there, and root's in root's folders (default:
                      the one beside this command, made as a link to it if
                      it is missing; or a copy, see below)
      --real-runtime NAME|PATH
                      the runtime eatmydata-runtime hands the container to
                      (default: runc in PATH, else crun), for docker, which
                      passes it as --eatmydata-runtime=; podman, containerd
                      and CRI-O pass a runtime nothing on every call
      --keep-binds    keep the syncs on binds of host folders outside the
                      engine's own storage in every container (docker,
                      which passes it as --eatmydata-keep-binds); the
                      rootfs, volumes and tmpfs stay eaten
      --pid-file FILE dockerd's pid file, to tell it to reload (default: its
                      \"pidfile\" setting, else /var/run/docker.pid)
      --docker-version VERSION
                      Docker's version (default: what `dockerd --version` says)
      --systemd-dir DIR
                      where systemd's units are (default: /etc/systemd/system)
  -h, --help          print this help and exit

Only eatmydata's own keys change; every other key, comment and the layout
stay. The file is replaced in one rename, the old one kept as
FILE.bak-eatmydata; a second run finds nothing to change and says so. A
missing file is made with eatmydata's keys alone. A default that
registering replaced is noted in a comment after it (TOML).

The runtime registered must be this command (a link to it, or a copy),
and a file root may run: root's (or, for a user's podman, the user's), in
a chain of folders no one else may write, with no control character in its
path. Where this command is not such a file (run from /tmp, a user's
~/.cargo/bin), it is copied to /usr/local/eatmydata/bin/ (EATMYDATA_HOME/bin/
when set), the library placed beside the copy, and the copy registered,
said. Before any file changes, the file to register runs its own
`eatmydata-runtime check` (the real runtime, the library, a spec edited as
create would); when that fails, nothing changes.

After a change, dockerd is told to reload (SIGHUP to the pid in its pid
file, checked to be a dockerd reading FILE), which stops no container;
when none is found, it says to run `systemctl reload docker`. containerd
and CRI-O read their files only when they start: it says so.

docker --default, on Docker 26 or later, also writes the systemd drop-in
/etc/systemd/system/docker.service.d/eatmydata-buildkit.conf, which sets
DOCKER_BUILDKIT_RUNC_COMMAND so that BuildKit's RUN steps go through the
runtime too; dockerd reads it at its next restart.

--remove takes back what registering added and leaves every other byte:
the default as it was (docker: set to \"runc\" in so many words, since
dockerd keeps a missing key on reload), the eatmydata entry gone, and the
drop-in. docker and podman keep the eatmydata entry as an alias of runc,
and name them, while containers made with it exist, so that they can
start again; run --remove once more when they are gone. A file left with nothing in it
is removed (its backup kept). The library placed for the runtime stays.

Exit status: 0 when the file says what was asked (changed or not); 2 for
bad usage; 65 when the file cannot be parsed (it is left as it was); 69
when the runtime's check fails; 78 when the runtime to register is not
this command or not one root may run; 125 when a file cannot be read or
written, or is no regular file, or the copy cannot be made.
";

/// What `configure` was asked to do.
#[derive(Debug, PartialEq)]
pub enum Asked {
    Help,
    Configure(Request),
}

/// A registration, as asked.
#[derive(Debug, PartialEq)]
pub struct Request {
    pub engine: Engine,
    /// `--remove`: take the registration back.
    pub remove: bool,
    pub default: bool,
    pub dry_run: bool,
    pub config: Option<PathBuf>,
    pub runtime_path: Option<PathBuf>,
    pub real_runtime: Option<String>,
    /// `--keep-binds`: binds of the user's host folders stay durable.
    pub keep_binds: bool,
    /// dockerd's pid file, when not the one its settings name.
    pub pid_file: Option<PathBuf>,
    /// Docker's version, when not the one `dockerd --version` says.
    pub docker_version: Option<String>,
    /// Where systemd's units are, when not `/etc/systemd/system`.
    pub systemd_dir: Option<PathBuf>,
}

/// Reads the arguments after `configure`.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Asked, Error> {
    let mut engine = None;
    let mut request = Request {
        engine: Engine::Docker,
        remove: false,
        default: false,
        dry_run: false,
        config: None,
        runtime_path: None,
        real_runtime: None,
        keep_binds: false,
        pid_file: None,
        docker_version: None,
        systemd_dir: None,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str() else {
            return Err(Error::Usage(format!(
                "configure: '{}' is not text",
                arg.to_string_lossy()
            )));
        };
        let (option, inline) = match text.split_once('=') {
            Some((option, value)) if option.starts_with("--") => (option, Some(value.to_owned())),
            _ => (text, None),
        };
        let mut value = |what: &str| -> Result<OsString, Error> {
            match inline.clone().map(OsString::from).or_else(|| args.next()) {
                Some(value) if !value.is_empty() => Ok(value),
                _ => Err(Error::Usage(format!("configure: {what} needs a value"))),
            }
        };
        match option {
            "-h" | "--help" => return Ok(Asked::Help),
            "--remove" => request.remove = true,
            "--default" => request.default = true,
            "--dry-run" => request.dry_run = true,
            "--keep-binds" => request.keep_binds = true,
            "--config" => request.config = Some(value("--config")?.into()),
            "--runtime-path" => request.runtime_path = Some(value("--runtime-path")?.into()),
            "--real-runtime" => {
                let real = value("--real-runtime")?;
                request.real_runtime = Some(real.to_string_lossy().into_owned());
            }
            "--pid-file" => request.pid_file = Some(value("--pid-file")?.into()),
            "--systemd-dir" => request.systemd_dir = Some(value("--systemd-dir")?.into()),
            "--docker-version" => {
                let version = value("--docker-version")?;
                request.docker_version = Some(version.to_string_lossy().into_owned());
            }
            _ if option.starts_with('-') => {
                return Err(Error::Usage(format!("configure: unknown option '{text}'")));
            }
            _ if engine.is_some() => {
                return Err(Error::Usage(format!(
                    "configure: one engine at a time, not also '{text}'"
                )));
            }
            _ => engine = Some(Engine::named(text)?),
        }
    }
    request.engine = engine.ok_or_else(|| {
        Error::Usage("configure: which engine? docker, podman, containerd or crio".into())
    })?;
    if let Some(path) = &request.runtime_path
        && !path.is_absolute()
    {
        return Err(Error::Usage(format!(
            "configure: --runtime-path must be an absolute path, not '{}'",
            path.display()
        )));
    }
    if request.remove
        && (request.default
            || request.real_runtime.is_some()
            || request.runtime_path.is_some()
            || request.keep_binds)
    {
        return Err(Error::Usage(
            "configure: --remove takes back the whole registration: no --default, \
             --real-runtime or --runtime-path with it"
                .into(),
        ));
    }
    let docker_only = [
        ("--pid-file", request.pid_file.is_some()),
        ("--docker-version", request.docker_version.is_some()),
        ("--systemd-dir", request.systemd_dir.is_some()),
    ];
    if let Some((option, _)) = docker_only.iter().find(|(_, given)| *given)
        && request.engine != Engine::Docker
    {
        return Err(Error::Usage(format!(
            "configure: {option} is for docker alone, not {}",
            request.engine.name()
        )));
    }
    if request.keep_binds && !request.engine.passes_real_runtime() {
        return Err(Error::Usage(format!(
            "configure: {} cannot pass an option to every call of a runtime from its \
             config, so --keep-binds cannot be written there; name the mounts to keep \
             per container instead (EATMYDATA_KEEP=/data, or the annotation \
             io.eatmydata.keep)",
            request.engine.name()
        )));
    }
    if request.real_runtime.is_some() && !request.engine.passes_real_runtime() {
        return Err(Error::Usage(format!(
            "configure: {} cannot pass an option or a variable to every call of a \
             runtime from its config, so --real-runtime cannot be written there; \
             without it, eatmydata-runtime runs runc from PATH, else crun",
            request.engine.name()
        )));
    }
    Ok(Asked::Configure(request))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Result<Asked, Error> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn reads_the_engine_and_every_option_in_both_spellings() {
        let Ok(Asked::Configure(request)) = parsed(&[
            "docker",
            "--default",
            "--dry-run",
            "--config=/tmp/d.json",
            "--runtime-path",
            "/opt/bin/eatmydata-runtime",
            "--real-runtime",
            "crun",
        ]) else {
            panic!("not parsed");
        };
        assert_eq!(
            request,
            Request {
                engine: Engine::Docker,
                remove: false,
                default: true,
                dry_run: true,
                config: Some("/tmp/d.json".into()),
                runtime_path: Some("/opt/bin/eatmydata-runtime".into()),
                real_runtime: Some("crun".into()),
                keep_binds: false,
                pid_file: None,
                docker_version: None,
                systemd_dir: None,
            }
        );
    }

    #[test]
    fn refuses_what_it_cannot_do_as_usage() {
        for args in [
            &[][..],
            &["kubernetes"],
            &["docker", "podman"],
            &["docker", "--force"],
            &["docker", "--config"],
            &["docker", "--runtime-path", "bin/eatmydata-runtime"],
            &["containerd", "--real-runtime", "crun"],
            &["crio", "--real-runtime=crun"],
            &["podman", "--real-runtime", "crun"],
            &["docker", "--remove", "--default"],
            &[
                "docker",
                "--remove",
                "--runtime-path",
                "/usr/bin/eatmydata-runtime",
            ],
            &["containerd", "--pid-file", "/run/docker.pid"],
            &["podman", "--docker-version", "26.1.5"],
            &["crio", "--systemd-dir", "/etc/systemd/system"],
        ] {
            let error = parsed(args).expect_err(&format!("{args:?} accepted"));
            assert_eq!(error.exit_code(), 2, "{args:?}: {error}");
        }
        assert_eq!(parsed(&["--help"]).unwrap(), Asked::Help);
        let Ok(Asked::Configure(request)) = parsed(&[
            "docker",
            "--remove",
            "--pid-file=/run/d.pid",
            "--docker-version",
            "26.1.5",
            "--systemd-dir",
            "/tmp/systemd",
        ]) else {
            panic!("not parsed");
        };
        assert!(request.remove);
        assert_eq!(request.pid_file, Some("/run/d.pid".into()));
        assert_eq!(request.docker_version.as_deref(), Some("26.1.5"));
        assert_eq!(request.systemd_dir, Some("/tmp/systemd".into()));
    }
}
