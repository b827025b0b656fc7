//! `eatmydata-runtime --help` (and the runtime alone): what the runtime
//! is, its own options and commands, and that every other verb goes to
//! runc; and the word a caller that is not root needs.

use super::edit::DISABLE;
use super::edit::library::MOUNTED;
use super::{KEEP_BINDS_OPTION, NAME, RUNTIME_OPTION, RUNTIME_VARIABLE};

/// The runtime's own commands; every other verb goes to the real runtime.
pub const COMMANDS: [&str; 5] = ["configure", "report", "install", "uninstall", "check"];

/// For a caller that is not root, what to do instead; `None` for root.
/// The command is named as this one was called, by a path sudo finds
/// (its PATH is not the user's: no `~/.cargo/bin`).
pub fn as_root() -> Option<String> {
    // SAFETY: geteuid cannot fail and touches no memory.
    let uid = unsafe { libc::geteuid() };
    let called = std::env::args_os().next().unwrap_or_default();
    let how = match super::is_its_name(&called) {
        true => format!("sudo \"$(command -v {NAME})\" ..."),
        false => "sudo \"$(command -v eatmydata)\" --runtime ...".to_owned(),
    };
    (uid != 0).then(|| format!("you are not root (uid {uid}): run it as root, as {how}"))
}

/// `why`, and for a caller that is not root refused by the kernel, what
/// to do instead.
pub fn with_root_hint(why: String, error: Option<&std::io::Error>) -> String {
    let refused = error.is_some_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied);
    match as_root().filter(|_| refused) {
        Some(hint) => format!("{why}; {hint}"),
        None => why,
    }
}

/// The help, with the names the runtime uses filled in.
pub fn text() -> String {
    format!(
        "\
Usage: {NAME} [{RUNTIME_OPTION}=NAME|PATH] RUNC-ARGS...
       {NAME} configure ENGINE [OPTIONS]
       {NAME} report [--since TIME] [--json | --markdown]
       {NAME} install|uninstall [OPTIONS]
An OCI runtime that runs containers with fsync and the other requests for
durability made free, for engines that start containers with runc's
command line (Docker, podman, containerd, CRI-O).

On create and run it edits the bundle's config.json: libeatmydata.so
mounted read-only at {MOUNTED}
(inside the container's /dev tmpfs: nothing is left in its files), put
first in LD_PRELOAD when the program started can load it, and the sync
calls answered by the container's seccomp profile, which reaches static,
Go, 32-bit and foreign programs too; on exec --process, the same
LD_PRELOAD. Then it runs the real runtime
with its arguments byte for byte; every other verb goes straight to it.
A spec it cannot parse fails the verb, the container not started.

The real runtime is runc (else crun), found in PATH, or the one named
below: 'runc --help' lists the verbs it passes on (create, start, state,
kill, delete, ...). A verb neither knows still goes to it; where it is
refused, a line names this command's own.

Options (before runc's own):
      {RUNTIME_OPTION}=NAME|PATH
                      the real runtime (default: runc in PATH, else crun)
      {KEEP_BINDS_OPTION}
                      keep the syncs on binds of host folders outside the
                      engine's storage (configure docker --keep-binds)
  -h, --help          print this help and exit

Commands:
  configure ENGINE    register the runtime with docker, podman, containerd
                      or crio under the name eatmydata; see
                      '{NAME} configure --help'
  report              what the containers it served skipped, and the time
                      that saved (an estimate); see
                      '{NAME} report --help'
  install, uninstall  the node installer: copy, register, restart the
                      engine if that changed, wait for the handler; and
                      every step back; see '{NAME} install --help'
  check               prove this runtime can work here before an engine
                      runs it (changes no engine file); see
                      '{NAME} check --help'
These need root: sudo \"$(command -v {NAME})\" COMMAND ...

Environment:
  {RUNTIME_VARIABLE}=NAME|PATH  the real runtime, as {RUNTIME_OPTION}=
                      names it, for a caller that cannot pass options
  EATMYDATA_ACCOUNT=DIR  the account's folder (default EATMYDATA_HOME when
                      set, else /var/lib/eatmydata)
  EATMYDATA_DISABLE=1 in a container's environment, or the annotation
                      {DISABLE}=1: leave that container as it is

Exit status: the real runtime's; 2 for bad usage, 125 when a spec cannot
be edited, 126 or 127 when the real runtime cannot be run or found.
"
    )
}
