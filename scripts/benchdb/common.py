"""The bench's machinery: variants, private directories, processes, cleanup.

Every workload runs the same steps under each variant; a variant only says
where the data lives (disk or a private tmpfs), what each command is prefixed
with (nothing, the `eatmydata` command, `env LD_PRELOAD=...`), and whether
the database's own durability knobs are turned off. Whatever the bench
starts or mounts is recorded here and undone on exit, even on Ctrl-C.
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
from dataclasses import dataclass


def say(message):
    print(f"bench-db: {message}", file=sys.stderr, flush=True)


@dataclass
class Variant:
    name: str
    prefix: list  # argv put before each command of the workload
    tmpfs: bool = False
    knobs: bool = False
    library: str = ""  # the preloaded library, to look for in /proc/PID/maps


class Context:
    """One bench run: its directories, its variants, what to undo."""

    def __init__(self, args, root):
        self.args = args
        self.root = root
        self.built = os.path.join(root, "target/release")
        self.processes = []
        self.servers = []
        self.mounted = None
        self.base = tempfile.mkdtemp(prefix="bench-db.", dir=args.dir)
        os.chmod(self.base, 0o755)  # the servers run as their own users
        self.disk = os.path.join(self.base, "disk")
        os.mkdir(self.disk)
        self.memory = os.path.join(self.base, "tmpfs")
        os.mkdir(self.memory)
        try:
            self.mount_tmpfs()
            self.eatmydata, self.library = self.snapshot()
            self.variants = self.make_variants()
        except BaseException:
            self.cleanup()
            raise

    def snapshot(self):
        """Copies of the command and library as built now: a rebuild in the
        working tree during the run cannot change or break what is measured.
        The command finds the library next to itself, as when installed."""
        bin_ = os.path.join(self.base, "bin")
        os.mkdir(bin_)
        copies = []
        for name in ("eatmydata", "libeatmydata.so"):
            built = os.path.join(self.built, name)
            if not os.path.exists(built):
                raise SystemExit(f"bench-db: {built} is missing: run `cargo build --release`")
            copies.append(shutil.copy2(built, os.path.join(bin_, name)))
        return copies

    def mount_tmpfs(self):
        if os.geteuid() == 0:
            subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=4g,mode=0755", "bench-db", self.memory],
                check=True,
            )
            self.mounted = self.memory
        else:
            os.rmdir(self.memory)
            self.memory = tempfile.mkdtemp(prefix="bench-db.", dir="/dev/shm")
            os.chmod(self.memory, 0o755)

    def make_variants(self):
        variants = [
            Variant("plain", []),
            Variant("eatmydata", [self.eatmydata], library=self.library),
            Variant("tmpfs", [], tmpfs=True),
            Variant("db knobs", [], knobs=True),
        ]
        for spec in self.args.compare:
            label, _, path = spec.rpartition("=")
            path = os.path.abspath(path)
            label = label or os.path.basename(path).split(".so")[0]
            variants.append(Variant(label, ["env", f"LD_PRELOAD={path}"], library=path))
        return variants

    def fresh_dir(self, variant, name, owner=None):
        """An empty directory for one run, on disk or on the tmpfs."""
        parent = self.memory if variant.tmpfs else self.disk
        path = os.path.join(parent, name)
        remove(path)
        os.mkdir(path, 0o755)
        if owner:
            user = pwd.getpwnam(owner)
            os.chown(path, user.pw_uid, user.pw_gid)
        return path

    def clear(self):
        """Remove the previous run's data, before the sync that precedes a run."""
        for parent in (self.disk, self.memory):
            for name in os.listdir(parent):
                remove(os.path.join(parent, name))

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
        """Stop every server and child still running: after a failure, or at exit."""
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
        if self.mounted:
            subprocess.run(["umount", self.mounted], check=False)
            self.mounted = None
        remove(self.memory)
        remove(self.base)


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


def timed(argv, stdin=None, env=None, check=True, timeout=1800):
    """Run a command to its end and return its wall-clock seconds."""
    start = time.perf_counter()
    with open(stdin if stdin else os.devnull, "rb") as source:
        result = subprocess.run(
            argv, stdin=source, capture_output=True, env=env, timeout=timeout
        )
    elapsed = time.perf_counter() - start
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


def library_mapped(pid, library):
    """Whether `library` is mapped in process `pid`: the preload really took."""
    try:
        real = os.path.realpath(library)
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


def settle():
    """Write back what earlier runs left dirty, so no run pays for another."""
    os.sync()
