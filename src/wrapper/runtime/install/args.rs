//! The command line of `eatmydata-runtime install|uninstall [OPTIONS]`.

use std::ffi::OsString;
use std::path::PathBuf;

use super::Error;

pub const HELP: &str = "\
Usage: eatmydata-runtime install|uninstall [OPTIONS]
Install eatmydata-runtime on a machine, as a Kubernetes node installer
does, or take every step of that back. Run as root, usually in a privileged
container with the machine's root mounted (--host-root /host).

install, under one lock for the whole machine (HOST/var/lib/eatmydata/):
  copies this command to HOST/usr/local/eatmydata/bin/eatmydata, with the
  link eatmydata-runtime beside it and the library placed in
  HOST/usr/local/eatmydata/lib/eatmydata/; runs that eatmydata-runtime's
  check before changing any engine file; registers it with the engine as
  `configure` does (containerd 1.x: config.toml; containerd 2.x, config
  version 3 importing conf.d/*.toml: a drop-in there; CRI-O: a drop-in in
  crio.conf.d; dockerd: daemon.json), keeping the files as they were in
  HOST/var/lib/eatmydata/install.json; restarts (dockerd: reloads) the
  engine when a file changed or the engine does not report the handler
  (a run whose restart failed is healed by the next); waits until the
  engine answers again (dockerd, containerd: until it lists the handler).
uninstall: puts every file back byte for byte, restarts the engine if it
  changed one (or still reports the handler), then removes what install
  copied.
A second run of either finds nothing to do and restarts nothing.
--restart none registers (or puts back) and exits at once, saying what to
restart; it waits for nothing.

Options:
      --host-root DIR    the machine's root as seen here (default /)
      --engine containerd|crio|docker|auto
                         the engine to register with (default auto: the
                         one whose config file or socket is there)
      --restart systemd|none|pid-file FILE
                         how the engine takes the change: through the
                         machine's systemd (nsenter into pid 1's mount
                         namespace: run with --pid=host; the default),
                         by the pid in FILE (SIGTERM, then --start, or
                         wait for another to start it; dockerd: SIGHUP),
                         or not at all (said)
      --start COMMAND    with --restart pid-file: how to start the engine
                         again (run by /bin/sh -c, in a session of its own)
      --address SOCKET   the engine's socket as seen here (default: where
                         its config says, under DIR)
      --timeout SECONDS  how long to wait for the engine (default 120)
      --keep-binds       register the runtime to keep the syncs on binds of
                         host folders outside the engine's storage in every
                         container (docker only: its runtimeArgs)
  -h, --help             print this help and exit

Exit status: 0 when done (or nothing was to do); 2 for bad usage; 65 when
the engine's file cannot be parsed or was changed since install (it is
left alone); 69 when the copied runtime fails its check (no engine file
changed); 125 for anything else that failed.
";

/// The engines the installer knows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Engine {
    Containerd,
    Crio,
    Docker,
}

/// How the engine is told of a change.
#[derive(Debug, Clone, PartialEq)]
pub enum Restart {
    Systemd,
    PidFile {
        file: PathBuf,
        start: Option<String>,
    },
    None,
}

/// What was asked.
#[derive(Debug, PartialEq)]
pub struct Request {
    pub uninstall: bool,
    pub root: PathBuf,
    /// `None`: found on the machine.
    pub engine: Option<Engine>,
    pub restart: Restart,
    pub address: Option<PathBuf>,
    pub timeout: u64,
    /// `--keep-binds`: the runtime registered to keep the syncs on binds of
    /// the user's host folders (Docker alone passes it on).
    pub keep_binds: bool,
}

/// Reads the arguments after the verb; `None` for help.
pub fn parse(
    uninstall: bool,
    args: impl IntoIterator<Item = OsString>,
) -> Result<Option<Request>, Error> {
    let verb = if uninstall { "uninstall" } else { "install" };
    let usage = |message: String| Error::Usage(format!("{verb}: {message}"));
    let mut request = Request {
        uninstall,
        root: "/".into(),
        engine: None,
        restart: Restart::Systemd,
        address: None,
        timeout: 120,
        keep_binds: false,
    };
    let mut start = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str() else {
            return Err(usage(format!("'{}' is not text", arg.to_string_lossy())));
        };
        let (option, inline) = match text.split_once('=') {
            Some((option, value)) if option.starts_with("--") => (option, Some(value.to_owned())),
            _ => (text, None),
        };
        let mut value = |what: &str| -> Result<String, Error> {
            match inline.clone().map(OsString::from).or_else(|| args.next()) {
                Some(value) if !value.is_empty() => value
                    .into_string()
                    .map_err(|v| usage(format!("'{}' is not text", v.to_string_lossy()))),
                _ => Err(usage(format!("{what} needs a value"))),
            }
        };
        match option {
            "-h" | "--help" => return Ok(None),
            "--host-root" => request.root = value("--host-root")?.into(),
            "--engine" => {
                request.engine = match value("--engine")?.as_str() {
                    "containerd" => Some(Engine::Containerd),
                    "crio" | "cri-o" => Some(Engine::Crio),
                    "docker" => Some(Engine::Docker),
                    "auto" => None,
                    other => {
                        return Err(usage(format!(
                            "unknown engine '{other}' (containerd, crio, docker or auto)"
                        )));
                    }
                }
            }
            "--restart" => {
                request.restart = match value("--restart")?.as_str() {
                    "systemd" => Restart::Systemd,
                    "none" => Restart::None,
                    "pid-file" => Restart::PidFile {
                        file: value("--restart pid-file")?.into(),
                        start: None,
                    },
                    other => {
                        return Err(usage(format!(
                            "unknown restart '{other}' (systemd, pid-file FILE or none)"
                        )));
                    }
                }
            }
            "--start" => start = Some(value("--start")?),
            "--address" => request.address = Some(value("--address")?.into()),
            "--keep-binds" => request.keep_binds = true,
            "--timeout" => {
                let text = value("--timeout")?;
                request.timeout = text
                    .parse()
                    .ok()
                    .filter(|s| (1..=3600).contains(s))
                    .ok_or_else(|| usage(format!("--timeout '{text}' is not 1 to 3600 seconds")))?;
            }
            _ => return Err(usage(format!("unknown argument '{text}'"))),
        }
    }
    if !request.root.is_absolute() {
        return Err(usage("--host-root must be an absolute path".into()));
    }
    match (&mut request.restart, start) {
        (Restart::PidFile { start, .. }, command) => *start = command,
        (_, Some(_)) => return Err(usage("--start goes with --restart pid-file FILE".into())),
        (_, None) => {}
    }
    Ok(Some(request))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Result<Option<Request>, Error> {
        parse(false, args.iter().map(OsString::from))
    }

    #[test]
    fn reads_every_option() {
        let request = parsed(&[
            "--host-root=/host",
            "--engine",
            "containerd",
            "--restart",
            "pid-file",
            "/run/c.pid",
            "--start",
            "containerd -c x",
            "--address",
            "/host/run/c.sock",
            "--timeout=30",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            request,
            Request {
                uninstall: false,
                root: "/host".into(),
                engine: Some(Engine::Containerd),
                restart: Restart::PidFile {
                    file: "/run/c.pid".into(),
                    start: Some("containerd -c x".into())
                },
                address: Some("/host/run/c.sock".into()),
                timeout: 30,
                keep_binds: false,
            }
        );
        let plain = parsed(&[]).unwrap().unwrap();
        assert_eq!(
            (plain.root, plain.engine, plain.restart),
            ("/".into(), None, Restart::Systemd)
        );
    }

    #[test]
    fn refuses_what_it_cannot_do_as_usage() {
        for args in [
            &["--engine", "podman"][..],
            &["--restart", "pid-file"],
            &["--restart", "kill"],
            &["--start", "x"],
            &["--host-root", "host"],
            &["--timeout", "0"],
            &["extra"],
        ] {
            let error = parsed(args).expect_err(&format!("{args:?} accepted"));
            assert_eq!(error.exit_code(), 2, "{args:?}: {error}");
        }
        assert!(parsed(&["-h"]).unwrap().is_none());
    }
}
