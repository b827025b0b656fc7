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
      --dry-run       print what would change, and write nothing
      --config FILE   edit FILE instead
      --runtime-path PATH
                      the eatmydata-runtime the engine is to run (default:
                      the one beside this command, made as a link to it if
                      it is missing)
      --real-runtime NAME|PATH
                      the runtime eatmydata-runtime hands the container to
                      (default: runc in PATH, else crun), for docker, which
                      passes it as --eatmydata-runtime=; podman, containerd
                      and CRI-O pass a runtime nothing on every call
  -h, --help          print this help and exit

Only eatmydata's own keys change; every other key, comment and the layout
stay. The file is replaced in one rename, the old one kept as
FILE.bak-eatmydata; a second run finds nothing to change and says so. A
missing file is made with eatmydata's keys alone.

Exit status: 0 when the file says what was asked (changed or not); 2 for
bad usage; 65 when the file cannot be parsed (it is left as it was); 125
when it cannot be read or written.
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
    pub default: bool,
    pub dry_run: bool,
    pub config: Option<PathBuf>,
    pub runtime_path: Option<PathBuf>,
    pub real_runtime: Option<String>,
}

/// Reads the arguments after `configure`.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Asked, Error> {
    let mut engine = None;
    let mut request = Request {
        engine: Engine::Docker,
        default: false,
        dry_run: false,
        config: None,
        runtime_path: None,
        real_runtime: None,
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
            "--default" => request.default = true,
            "--dry-run" => request.dry_run = true,
            "--config" => request.config = Some(value("--config")?.into()),
            "--runtime-path" => request.runtime_path = Some(value("--runtime-path")?.into()),
            "--real-runtime" => {
                let real = value("--real-runtime")?;
                request.real_runtime = Some(real.to_string_lossy().into_owned());
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
                default: true,
                dry_run: true,
                config: Some("/tmp/d.json".into()),
                runtime_path: Some("/opt/bin/eatmydata-runtime".into()),
                real_runtime: Some("crun".into()),
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
        ] {
            let error = parsed(args).expect_err(&format!("{args:?} accepted"));
            assert_eq!(error.exit_code(), 2, "{args:?}: {error}");
        }
        assert_eq!(parsed(&["--help"]).unwrap(), Asked::Help);
    }
}
