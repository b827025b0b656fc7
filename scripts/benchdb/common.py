"""The bench's machinery: variants, private directories, processes, cleanup.

A variant is a run mode (modes.py: how each command is prefixed, whether the
program's own durability knobs are off) on a file system (fs.py: made anew
for each run). Every workload runs the same steps under each variant.
Whatever the bench starts or mounts is recorded here and undone on exit,
even on Ctrl-C.
"""

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from ctypes import CDLL
from dataclasses import dataclass

LIBC = CDLL(None, use_errno=True)


def say(message):
    print(f"bench-db: {message}", file=sys.stderr, flush=True)


@dataclass
class Variant:
    name: str  # as reported: "eatmydata", "plain @xfs", "tmpfs"
    mode: object  # modes.Mode
    fs: str  # one of fs.KINDS
    reps: int
    baseline: str  # the variant whose time its speedup is against

    @property
    def prefix(self):
        return self.mode.prefix

    @property
    def knobs(self):
        return self.mode.knobs

    @property
    def library(self):
        return self.mode.library


class Context:
    """One bench run: its private directory, the artefacts, what to undo."""

    def __init__(self, args, root):
        self.args = args
        self.root = root
        self.built = os.path.join(root, "target/release")
        self.processes = []
        self.servers = []
        self.notes = []
        self.mounts = []  # bind mounts of the run in progress, undone after it
        self.mounted = None  # the fs.Mounted of the run in progress
        self.fs_seen = {}  # file system kind -> its description, from a run on it
        self.loads = []  # the 1-minute load average after each timed run
        self.daemons = {}  # name -> a daemon started once (dockerd), stopped at exit
        self.base = tempfile.mkdtemp(prefix="bench-db.", dir=args.dir)
        os.chmod(self.base, 0o755)  # the servers run as their own users
        try:
            self.eatmydata, self.library = self.snapshot()
            # The OCI runtime: the same command under the name eatmydata-runtime.
            self.runtime = os.path.join(os.path.dirname(self.eatmydata), "eatmydata-runtime")
            os.symlink("eatmydata", self.runtime)
        except BaseException:
            self.cleanup()
            raise

    def note(self, message):
        """Something the report must say (a mode skipped, a file system left out)."""
        say(message)
        self.notes.append(message)

    def snapshot(self):
        """Copies of the command and library as built now: a rebuild in the
        working tree during the run cannot change or break what is measured.
        The command finds the library next to itself, as when installed.

        As root, in a folder of root's own under /var/lib (removed at the
        end), not under --dir: root takes an installed library, and
        registers a runtime, only where no other user can change them
        (src/wrapper/library/mod.rs), and /var/tmp is everyone's. Root's
        home (EATMYDATA_HOME, unless set already) is a folder there too,
        inherited by everything the bench starts: the runtime's account and
        its containers' reports go there, not into the machine's own
        /run/eatmydata or /var/lib/eatmydata."""
        if os.geteuid() == 0:
            self.installed = tempfile.mkdtemp(prefix="eatmydata-bench.", dir="/var/lib")
            os.chmod(self.installed, 0o755)
            if "EATMYDATA_HOME" not in os.environ:
                home = os.path.join(self.installed, "home")
                os.mkdir(home)
                os.chmod(home, 0o755)
                os.environ["EATMYDATA_HOME"] = home
        else:
            self.installed = self.base
        bin_ = os.path.join(self.installed, "bin")
        os.mkdir(bin_)
        copies = []
        for name in ("eatmydata", "libeatmydata.so"):
            built = os.path.join(self.built, name)
            if not os.path.exists(built):
                raise SystemExit(f"bench-db: {built} is missing: run `cargo build --release`")
            copies.append(shutil.copy2(built, os.path.join(bin_, name)))
        return copies

    def fresh_dir(self, variant, name, owner=None):
        """An empty directory for one run, on the run's own file system."""
        if self.mounted is None:
            raise RuntimeError(f"fresh_dir({name}) outside a run")
        path = os.path.join(self.mounted.path, name)
        remove(path)
        os.mkdir(path, 0o755)
        if owner:
            user = pwd.getpwnam(owner)
            os.chown(path, user.pw_uid, user.pw_gid)
        return path

    def bind(self, source, target):
        """Bind-mount `source` (a file or directory) on `target`, created if
        missing; undone after the run, before its file system goes."""
        if not os.path.lexists(target):
            if os.path.isdir(source):
                os.makedirs(target)
            else:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                open(target, "w").close()
        subprocess.run(["mount", "--bind", source, target], check=True)
        self.mounts.append(target)

    def unmount_all(self):
        while self.mounts:
            subprocess.run(["umount", "-l", self.mounts.pop()], check=False)

    def start(self, argv, log, **kwargs):
        """Start a server in the background; it is stopped on exit if still up."""
        with open(log, "ab") as out:
            process = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, **kwargs
            )
        self.processes.append(process)
        return process

    def server(self, pid):
        """Record a server's own pid (under strace it is not our child's)."""
        if not pid:
            raise RuntimeError("server started without writing its pid file")
        self.servers.append(pid)
        return pid

    def stop_all(self):
        """Stop every server and child still running: after a run, or at exit."""
        for pid in self.servers:
            if ours(pid, self.base):
                say(f"stopping leftover server {pid}")
                os.kill(pid, signal.SIGKILL)
        self.servers.clear()
        for process in self.processes:
            if process.poll() is None:
                say(f"stopping leftover process {process.pid}")
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.processes.clear()

    def cleanup(self):
        self.stop_all()
        for daemon in self.daemons.values():
            daemon.stop()
        self.daemons.clear()
        self.unmount_all()
        remove(self.base)
        if getattr(self, "installed", self.base) != self.base:
            remove(self.installed)


def remove(path):
    if os.path.lexists(path):
        shutil.rmtree(path, ignore_errors=True)


def ours(pid, base):
    """Whether `pid` is alive and runs on our private directories."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return base.encode() in cmdline.read()
    except OSError:
        return False


def as_user(user):
    """The argv prefix that runs a command as `user` (for servers that refuse root)."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--"]


# What the commands run by timed() said on stderr, for the runner to read
# (the sync-at-exit mode's flush times); cleared before each run.
STDERR = []


def timed(argv, stdin=None, env=None, check=True, timeout=1800):
    """Run a command to its end and return its wall-clock seconds."""
    start = time.perf_counter()
    with open(stdin if stdin else os.devnull, "rb") as source:
        result = subprocess.run(
            argv, stdin=source, capture_output=True, env=env, timeout=timeout
        )
    elapsed = time.perf_counter() - start
    STDERR.append(result.stderr.decode(errors="replace"))
    if check and result.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv)} exited with {result.returncode}:\n"
            + result.stderr.decode(errors="replace")[-4000:]
        )
    return elapsed, result.stdout.decode(errors="replace")


def wait_until(ready, process, what, timeout=120):
    """Poll `ready()` until it holds; fail early if `process` died."""
    deadline = time.monotonic() + timeout
    while not ready():
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode} while starting")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start within {timeout} s")
        time.sleep(0.02)


def socket_answers(path):
    if not os.path.exists(path):
        return False
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.connect(path)
            return True
        except OSError:
            return False


def read_pid(path):
    try:
        with open(path) as file:
            return int(file.readline().strip() or 0)
    except (OSError, ValueError):
        return 0


def library_mapped(pid, library, resolve=True):
    """Whether `library` is mapped in process `pid`: the preload really took.
    `resolve`: the path is the host's, links resolved as the loader does;
    not for a path inside a container's own mount namespace."""
    try:
        real = os.path.realpath(library) if resolve else library
        with open(f"/proc/{pid}/maps") as maps:
            return any(line.rstrip().endswith(real) for line in maps)
    except OSError:
        return False


def stop(process, pid, sig=signal.SIGINT, timeout=120):
    """Stop a server we started: signal its pid and wait for our child to end."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
    process.wait(timeout)


def output(argv):
    """The first line a command prints (its version, say), or "?"."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return (done.stdout or done.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "?"


def settle(path):
    """Write back what is dirty on the file system holding `path` (syncfs(2)),
    so that the run starts clean. Only that file system: a machine-wide sync
    on a shared machine would wait for everyone else's writeback."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if LIBC.syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)
