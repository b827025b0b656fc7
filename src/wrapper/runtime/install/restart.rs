//! The engine told of a change: containerd and CRI-O restarted (neither
//! reloads its CRI config; some containerd releases exit on SIGHUP),
//! dockerd reloaded (SIGHUP takes `runtimes` with no container stopped).
//!
//! Through the host's systemd: `systemctl` run in pid 1's mount namespace
//! (setns here, so that the installer's image needs no nsenter), which
//! needs the host's pid namespace (`--pid=host`). Or by a pid file, for
//! tests and machines without systemd: the pid checked to be the engine
//! (/proc/PID/comm) before it is signalled, SIGTERM, then `--start` or
//! someone else starts it again, and the file names a new, live pid.

use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::args::{Engine, Request, Restart};
use super::host::Host;
use super::{Error, engine_name};
use crate::runtime::configure::reload::Dockerd;

/// How long an engine may take to stop on SIGTERM.
const STOP: Duration = Duration::from_secs(60);

pub fn engine(engine: Engine, host: &Host, request: &Request) -> Result<(), Error> {
    let name = engine_name(engine);
    let reload = engine == Engine::Docker;
    match &request.restart {
        // Said by the caller, which waits for nothing then.
        Restart::None => Ok(()),
        Restart::Systemd => systemd(engine),
        Restart::PidFile { file, start } => {
            if reload {
                // configure's reload: the pid checked through a pidfd to be
                // a dockerd, then SIGHUP, once it answers.
                let dockerd = Dockerd::find(file).map_err(Error::Engine)?;
                super::wait::until_answers(engine, host, request)?;
                dockerd.reload().map_err(|error| {
                    Error::Engine(format!("cannot signal {}: {error}", dockerd.pid))
                })?;
                say!("Reloaded {name} (SIGHUP to {}).", dockerd.pid);
                return Ok(());
            }
            let pid = live_pid(file, engine)?.ok_or_else(|| {
                Error::Engine(format!("{}: no running {name} to restart", file.display()))
            })?;
            signal(pid, libc::SIGTERM)?;
            let deadline = Instant::now() + STOP;
            while alive(pid) {
                if Instant::now() > deadline {
                    return Err(Error::Engine(format!(
                        "{name} ({pid}) did not stop on SIGTERM"
                    )));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            if let Some(start) = start {
                spawn(start)?;
            }
            // Nothing is signalled from here on: a pid that is not the
            // engine yet (the start command's shell writes its pid, then
            // executes the engine) is waited on, not refused.
            let deadline = Instant::now() + Duration::from_secs(request.timeout);
            loop {
                let now = live_pid(file, engine);
                match now {
                    Ok(Some(new)) if new != pid => {
                        say!("Restarted {name} ({pid}, now {new}).");
                        return Ok(());
                    }
                    _ if Instant::now() > deadline => {
                        let last = match now {
                            Err(why) => format!(" ({why})"),
                            Ok(_) => String::new(),
                        };
                        return Err(Error::Engine(format!(
                            "{name} did not start again within {} s{last}",
                            request.timeout
                        )));
                    }
                    _ => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        }
    }
}

/// How `engine` takes a change: dockerd reloads, the others restart.
pub fn verb(engine: Engine) -> &'static str {
    match engine {
        Engine::Docker => "reload",
        Engine::Containerd | Engine::Crio => "restart",
    }
}

/// The engine's systemd unit.
pub fn unit(engine: Engine) -> &'static str {
    match engine {
        Engine::Containerd => "containerd",
        Engine::Crio => "crio",
        Engine::Docker => "docker",
    }
}

/// `systemctl restart|reload UNIT` in pid 1's mount namespace.
fn systemd(engine: Engine) -> Result<(), Error> {
    let comm = fs::read_to_string("/proc/1/comm").unwrap_or_default();
    if comm.trim_end() != "systemd" {
        return Err(Error::Engine(format!(
            "pid 1 here is '{}', not systemd: run the installer with the host's pid \
             namespace (--pid=host, hostPID: true), or give --restart pid-file FILE or none",
            comm.trim_end()
        )));
    }
    let (unit, verb) = (unit(engine), verb(engine));
    let namespace = File::open("/proc/1/ns/mnt").map_err(Error::io("open", "/proc/1/ns/mnt"))?;
    let fd = namespace.as_raw_fd();
    let mut systemctl = Command::new("systemctl");
    systemctl.args([verb, unit]).stdin(Stdio::null());
    // SAFETY: setns and chdir are async-signal-safe; the descriptor is
    // open until the child has been spawned.
    unsafe {
        systemctl.pre_exec(move || {
            if libc::setns(fd, libc::CLONE_NEWNS) != 0 || libc::chdir(c"/".as_ptr()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let status = systemctl
        .status()
        .map_err(Error::io("run the host's", "systemctl"))?;
    if !status.success() {
        return Err(Error::Engine(format!("systemctl {verb} {unit}: {status}")));
    }
    say!("systemctl {verb} {unit}: done.");
    Ok(())
}

/// The pid `file` names when that process is alive and is the engine.
fn live_pid(file: &Path, engine: Engine) -> Result<Option<i32>, Error> {
    let text = match fs::read(file) {
        Ok(bytes) if bytes.len() < 32 => String::from_utf8(bytes).unwrap_or_default(),
        Ok(_) => String::new(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(Error::io("read", file)(error)),
    };
    let Some(pid) = text.trim_end().parse::<i32>().ok().filter(|p| *p > 1) else {
        return Ok(None);
    };
    if !alive(pid) {
        return Ok(None);
    }
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let want = match engine {
        Engine::Containerd => "containerd",
        Engine::Crio => "crio",
        Engine::Docker => "dockerd",
    };
    if comm.trim_end() != want {
        return Err(Error::Engine(format!(
            "{} names {pid}, which is '{}', not {want}: not signalled",
            file.display(),
            comm.trim_end()
        )));
    }
    Ok(Some(pid))
}

/// Whether `pid` runs (a zombie does not).
fn alive(pid: i32) -> bool {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the command's closing parenthesis.
    match stat.rsplit_once(") ") {
        Some((_, rest)) => !rest.starts_with(['Z', 'X']),
        None => false,
    }
}

fn signal(pid: i32, signal: i32) -> Result<(), Error> {
    // SAFETY: a signal to a pid checked just now to be the engine.
    if unsafe { libc::kill(pid, signal) } != 0 {
        return Err(Error::Engine(format!(
            "cannot signal {pid}: {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

/// `/bin/sh -c COMMAND` in a session of its own, not waited for.
fn spawn(command: &str) -> Result<(), Error> {
    let mut sh = Command::new("/bin/sh");
    sh.args(["-c", command])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        sh.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    sh.spawn().map_err(Error::io("run", "/bin/sh -c --start"))?;
    Ok(())
}

#[cfg(test)]
mod tests;
