"""The seeds' workloads in a Docker container, side by side in one run.

Each container workload (container_mariadb.py, container_postgres.py) runs
the same work as its host workload (the same dump, the same suite, from
the host's client through a socket) against Debian 12's server in an image
imported from a debootstrap tree, under four variants:

- `plain`: `docker run`, the data directory a bind-mounted folder on the
  run's fresh ext4 (a loop device made for each run: its flush counter is
  the run's);
- `tmpfs`: `docker run --tmpfs DATADIR`, the users' usual answer: the data
  in RAM, gone with the container;
- `--runtime=eatmydata`: as plain, started through the runtime registered
  with `eatmydata-runtime configure docker`;
- `host, eatmydata`: the same server on the host, under the eatmydata
  command, on the same kind of file system: what the runtime is held to.

Docker's own storage (the image's layers, the container's overlay) is on
the machine's disk under the bench's folder: nothing the server writes to
its data directory goes there. Docker starts a container in a cgroup of
its own, outside the run's: its CPU until its stop is read there and added
to the run's (runner.py), so that the CPU column counts the server in every
variant, as on the host.
Every run ends with a clean stop, then the rows are counted by a server
started without any library: in a new container without the runtime on
the same folder, and for tmpfs (whose data goes with its container) by the
same server just before it stops.
"""

import os
import re
import time

from . import cpu, dockerd, fs, modes
from .common import Variant, library_mapped, output

SCRIPT = os.path.join(os.path.dirname(os.path.realpath(__file__)), "server.sh")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
# Where the runtime binds the library in a container: read from the
# runtime's own constant, so that the proof can never look where the
# runtime no longer puts it (it did, at /opt, for a round).
RUNTIME_CONSTANT = os.path.join(ROOT, "src/wrapper/runtime/edit/library.rs")
HOST = "host, eatmydata"


def mounted():
    """The runtime's `MOUNTED`, as its source defines it."""
    with open(RUNTIME_CONSTANT) as source:
        found = re.search(r'^pub const MOUNTED: &str = "([^"]+)";$', source.read(), re.M)
    if not found:
        raise SystemExit(f"bench-db: no `pub const MOUNTED` in {RUNTIME_CONSTANT}: "
                         "the proof would not know where the runtime puts the library")
    return found.group(1)


def variants(ctx, datadir, host_mode):
    """The four variants; `host_mode` the modes.py mode of the host variant."""
    headline, reps = ctx.args.fs[0], ctx.args.reps
    host = host_mode(ctx)
    host.name = HOST
    tmpfs = Variant("tmpfs", modes.Mode("docker run --tmpfs", [], engine=["--tmpfs", datadir],
                                        traced=False), "tmpfs", reps, "plain")
    if fs.latency_of(headline) is None:
        return on_disk(headline, "", host, reps) + [tmpfs]
    # --latency: the three on each slow device, tmpfs once.
    kinds = [kind for kind in ctx.args.fs if fs.latency_of(kind) is not None]
    out = [v for kind in kinds for v in on_disk(kind, f" @{fs.label(kind)}", host, reps)]
    tmpfs.baseline = f"plain @{fs.label(kinds[0])}"
    return out + [tmpfs]


def on_disk(kind, suffix, host, reps):
    """The variants on a disk: plain, under the runtime, on the host under eatmydata."""
    return [
        Variant(f"plain{suffix}", modes.Mode("docker run", [], traced=False), kind, reps,
                f"plain{suffix}"),
        Variant(f"--runtime={dockerd.RUNTIME}{suffix}",
                modes.Mode("docker run --runtime", [], library=mounted(), traced=False,
                           engine=[f"--runtime={dockerd.RUNTIME}"]), kind, reps,
                f"plain{suffix}"),
        Variant(f"{HOST}{suffix}", host, kind, reps, f"plain{suffix}"),
    ]


def prepare(ctx, server):
    """The daemon and the image, before any run: outside every run's time
    and CPU accounting (a daemon started in a run would count in its cgroup)."""
    dockerd.daemon(ctx).image(ctx.root, server["image"])


def on_host(variant):
    return variant.name.split(" @")[0] == HOST


class Container:
    """One server container of a run: started, its socket folder, stopped."""

    def __init__(self, ctx, server, data, engine, stop_signal):
        self.docker = dockerd.daemon(ctx)
        self.image = self.docker.image(ctx.root, server["image"])
        self.sockets = ctx.fresh_dir(None, "sockets")
        os.chmod(self.sockets, 0o777)  # the server's own user makes its socket there
        argv = ["run", "-d", "--rm", "--network=none", f"--stop-signal={stop_signal}",
                "-v", f"{self.sockets}:/run/bench", "-v", f"{SCRIPT}:/bench/server.sh:ro"]
        if data:
            argv += ["-v", f"{data}:{server['datadir']}"]
        self.id = self.docker.docker(*argv, *engine, self.image, "sh", "/bench/server.sh",
                                     server["name"])[1]
        try:
            self.wait(lambda: server["ready"](self.sockets))
        except BaseException:
            self.remove()
            raise

    def wait(self, ready, timeout=300):
        """Until `ready()`, asking docker whether the container still runs
        once a second: each ask is a `docker inspect`, whose CPU counts in
        the run's."""
        deadline = time.monotonic() + timeout
        asked = time.monotonic()
        while not ready():
            if time.monotonic() - asked >= 1:
                asked = time.monotonic()
                if not self.running():
                    logs = self.docker.docker("logs", self.id, check=False)
                    raise RuntimeError(f"container {self.id[:12]} ended while starting: {logs}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"container {self.id[:12]}: no server within {timeout} s")
            time.sleep(0.05)

    def running(self):
        status, out = self.docker.docker("inspect", "-f", "{{.State.Running}}", self.id,
                                         check=False)
        return status == 0 and out == "true"

    def pid(self):
        """The container's pid 1, the server, as the host numbers it."""
        return int(self.docker.docker("inspect", "-f", "{{.State.Pid}}", self.id)[1])

    def mapped(self, library):
        """Whether the server has `library` mapped: `library` as the
        container sees it, not resolved on the host."""
        return library_mapped(self.pid(), library, resolve=False)

    def cpu(self):
        """CPU seconds of the container's cgroup so far, as "container cpu
        user" and "container cpu sys" (runner.py adds them to the run's), or
        {} where they cannot be read."""
        used = cpu.of_process(self.pid())
        return {f"container {key}": value for key, value in (used or {}).items()}

    def stop(self):
        """A clean stop (the stop signal, then up to 5 minutes); seconds taken."""
        seconds, _ = self.docker.timed("stop", "-t", "300", self.id)
        return seconds

    def remove(self):
        self.docker.docker("rm", "-f", self.id, check=False)


def run(ctx, variant, server, work, count, want):
    """One container run: start (with the data directory's making, as an
    image's entry point does it), `work(sockets) -> {phase: seconds}`, the
    rows counted by `count(sockets)` (checked against `want` on tmpfs, where
    nothing outlives the container), clean stop. Returns the phases' times,
    whether the library was mapped, and the container's CPU up to its stop
    (Container.cpu; its cgroup goes with it)."""
    data = None
    if "--tmpfs" not in variant.mode.engine:
        data = ctx.fresh_dir(variant, "data")
    begin = time.perf_counter()
    container = Container(ctx, server, data, variant.mode.engine, server["stop"])
    times = {"start": time.perf_counter() - begin}
    try:
        mapped = container.mapped(variant.library) if variant.library else None
        times.update(work(container.sockets))
        found = count(container.sockets)
        used = container.cpu()
        times[server["stopping"]] = container.stop()
    finally:
        container.remove()
    if data is None and found.strip() != want:
        raise RuntimeError(f"{server['name']} on tmpfs: before the stop found "
                           f"{found.strip()!r}, expected {want!r}")
    return times, mapped, used


def recount(ctx, server, count):
    """After a run on a folder: a new container, without the runtime, on the
    same data; what `count(sockets)` finds there."""
    data = os.path.join(ctx.mounted.path, "data")
    container = Container(ctx, server, data, [], server["stop"])
    try:
        found = count(container.sockets)
        container.stop()
    finally:
        container.remove()
    return found.strip()


def versions():
    """The engine the container workloads run under."""
    return [f"docker: {output(['dockerd', '--version'])}"]
