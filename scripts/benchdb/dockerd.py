"""A Docker daemon of the bench's own, for the container workloads.

Started once, the first time a container workload needs it, and stopped by
its pid when the bench exits (Ctrl-C and SIGTERM too: Context.cleanup). It
never touches the host's network or the system's Docker: no bridge, no
iptables rules, its own data root, exec root, pid file, socket and
daemon.json, all under the bench's private directory. Containers run with
`--network=none`.

The runtime under test is registered the way docs/containers.md tells a
user to: `eatmydata-runtime configure docker`, on the private daemon.json.
Images are made offline: `docker import` of a Debian 12 tree from
scripts/debian-rootfs (the trees the container tests cache under /var/tmp).

CPU standing: with cgroup v1's `cpu` controller mounted apart (as on this
project's machine, where everyone's processes are in its root), a
container's threads share the one CPU weight of their cgroup against every
process of the machine, while a server run on the host has a weight per
thread: on a busy machine the container then runs up to several times
slower for that alone. So the bench, the daemon and the host variants'
servers go into one `cpu` cgroup of the bench's own, and the containers
below it (`--cgroup-parent`): every variant stands the same.
"""

import json
import os
import signal
import subprocess
import time

from .common import say, socket_answers, timed, wait_until

CPU = "/sys/fs/cgroup/cpu"  # cgroup v1's cpu controller, when mounted on its own
RUNTIME = "eatmydata"  # the name the engines register it under (TEAM.md)
IMAGES = "localhost/eatmydata-bench/bookworm"  # + "-" + the packages


class Dockerd:
    """The private daemon: `docker(...)` runs the client against it."""

    def __init__(self, ctx):
        self.root = os.path.join(ctx.base, "docker")
        os.makedirs(self.root)
        self.socket = os.path.join(self.root, "docker.sock")
        self.config = os.path.join(self.root, "daemon.json")
        self.env = dict(os.environ, DOCKER_HOST=f"unix://{self.socket}",
                        DOCKER_CONFIG=os.path.join(self.root, "client"))
        self.register(ctx)
        argv = ["dockerd", "--config-file", self.config, "--host", f"unix://{self.socket}",
                "--data-root", os.path.join(self.root, "data"),
                "--exec-root", os.path.join(self.root, "exec"),
                "--pidfile", os.path.join(self.root, "dockerd.pid"),
                "--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-masq=false"]
        self.group = cpu_group(ctx)
        if self.group:
            argv += ["--cgroup-parent", "/" + os.path.basename(self.group)]
        log = os.path.join(ctx.base, "dockerd.log")
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                        stdout=open(log, "ab"), stderr=subprocess.STDOUT)
        say(f"dockerd started, pid {self.process.pid}, log {log}")
        self.images = {}

    def wait(self):
        wait_until(lambda: socket_answers(self.socket) and self.answers(), self.process,
                   "dockerd", timeout=120)

    def register(self, ctx):
        """`eatmydata-runtime configure docker --config` on our daemon.json,
        as a user registers it (the daemon is not started yet: nothing to
        reload); its real exit status and what it registered are reported."""
        done = subprocess.run([ctx.runtime, "configure", "docker", "--config", self.config,
                               "--pid-file", os.path.join(self.root, "dockerd.pid")],
                              capture_output=True, text=True, check=False)
        try:
            with open(self.config) as file:
                registered = json.load(file).get("runtimes", {}).get(RUNTIME)
        except (OSError, ValueError):
            registered = None
        if done.returncode != 0 or not registered:
            # The variants that use it fail then, each with docker's own message.
            ctx.note(f"dockerd: `eatmydata-runtime configure docker` did not register the "
                     f"runtime (exit {done.returncode}): {done.stderr.strip()[-300:]}")
        else:
            say(f"registered {RUNTIME} with `eatmydata-runtime configure docker`: {registered}")

    def answers(self):
        return self.docker("version", "--format", "{{.Server.Version}}", check=False)[0] == 0

    def docker(self, *argv, check=True, stdin=None):
        """(status, stdout) of `docker ARGV...` against our daemon."""
        done = subprocess.run(["docker", *argv], capture_output=True, text=True, env=self.env,
                              stdin=stdin, check=False)
        if check and done.returncode != 0:
            raise RuntimeError(f"docker {' '.join(argv)} exited with {done.returncode}: "
                               f"{done.stderr.strip()[-2000:]}")
        return done.returncode, done.stdout.strip()

    def timed(self, *argv):
        """Seconds a `docker ARGV...` took, and its output (failing loudly)."""
        return timed(["docker", *argv], env=self.env)

    def image(self, root, packages):
        """The image of Debian 12 with `packages`, imported once from the tree
        scripts/debian-rootfs keeps for them."""
        name = f"{IMAGES}-{'-'.join(packages)}"
        if name not in self.images:
            tree = subprocess.run([os.path.join(root, "scripts/debian-rootfs"), "--include",
                                   ",".join(packages), "none"], check=True,
                                  capture_output=True, text=True).stdout.strip()
            tar = subprocess.Popen(["tar", "-C", tree, "--exclude=./.eatmydata-complete",
                                    "-c", "."], stdout=subprocess.PIPE)
            try:
                self.docker("import", "-", name, stdin=tar.stdout)
            finally:
                tar.stdout.close()
                tar.wait()
            self.images[name] = tree
        return name

    def stop(self):
        """SIGTERM to our daemon's pid (it stops its containers), then wait."""
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        # Its overlay and shm mounts, if it left any, before the folder goes.
        with open("/proc/mounts") as mounts:
            left = [line.split()[1] for line in mounts if self.root in line.split()[1]]
        for path in sorted(left, reverse=True):
            subprocess.run(["umount", "-l", path], check=False)
        if self.group:
            join(CPU)  # back where the bench was
            name = os.path.basename(self.group)
            # The group, and those docker made for it under the other controllers.
            for group in [self.group] + [os.path.join(os.path.dirname(CPU), c, name)
                                         for c in os.listdir(os.path.dirname(CPU))]:
                for _ in range(20):
                    if not os.path.isdir(group):
                        break
                    try:
                        os.rmdir(group)
                    except OSError:
                        time.sleep(0.25)


def join(group):
    with open(os.path.join(group, "cgroup.procs"), "w") as procs:
        procs.write(str(os.getpid()))


def cpu_group(ctx):
    """A `cpu` cgroup of the bench's own, which the bench joins (so do the
    daemon and every server it starts after), or None where the `cpu`
    controller is not mounted on its own, or the bench is not in its root."""
    try:
        with open("/proc/self/cgroup") as groups:
            mine = [line.rstrip("\n").split(":", 2) for line in groups]
    except OSError:
        return None
    if not any(controllers == "cpu" and path == "/" for _, controllers, path in mine):
        ctx.note("dockerd: no cgroup v1 cpu controller of its own here: the containers' "
                 "CPU weight is not made the same as the host variants'")
        return None
    group = os.path.join(CPU, f"bench-db.{os.getpid()}.docker")
    os.mkdir(group)
    join(group)
    return group


def daemon(ctx):
    """The bench's dockerd, started on first use."""
    if "dockerd" not in ctx.daemons:
        ctx.daemons["dockerd"] = Dockerd(ctx)  # stopped at exit, even if it never answers
        ctx.daemons["dockerd"].wait()
    return ctx.daemons["dockerd"]
