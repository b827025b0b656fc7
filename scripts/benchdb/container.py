"""MariaDB in a container, as a user runs a database image they did not
build: Debian 12's mariadb-server in an image imported offline from a
debootstrap tree (scripts/debian-rootfs), run with podman, its data on the
variant's file system mounted at /data. A mode with a library gets it the
way the README's recipe puts it in: mounted read-only, LD_PRELOAD set (ours,
or Debian's original); "db knobs" passes the server's own switches. The
run is tests/integration/containers/mariadb.sh: install, start, single-row
INSERTs (one commit each), clean shutdown. Then a container without any
library or knob counts every row.

The proof column counts the whole `podman run`: what is left under a
library is podman's and runc's own syncs, outside the container.

Podman needs this machine's settings (runc, cgroupfs, limits): the tests'
containers.conf, through CONTAINERS_CONF.
"""

import os
import subprocess

from . import mariadb
from .common import output, timed
from .mariadb import KNOBS

NAME = "container"
PACKAGES = {"podman": "podman", "runc": "runc", "debootstrap": "debootstrap"}
MEASURES = [
    ("total", "MariaDB in a podman container: install + start + {rows:,} INSERTs + shutdown",
     "s"),
]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
CONTAINERS = os.path.join(ROOT, "tests/integration/containers")
IMAGE = "localhost/eatmydata-test/bookworm-mariadb-server"
MOUNTED = "/opt/eatmydata/libeatmydata.so"
ENV = dict(os.environ, CONTAINERS_CONF=os.path.join(CONTAINERS, "containers.conf"))


def rows(ctx, probe=False):
    # As the host's mariadb workload, so that the two compare side by side.
    return mariadb.rows(ctx, probe)


def versions():
    return [f"podman: {output(['podman', '--version'])}",
            f"runc: {output(['runc', '--version']).splitlines()[0]}"]


def prepare(ctx):
    """The image, imported once (the tests use the same one)."""
    tree = subprocess.run([os.path.join(ROOT, "scripts/debian-rootfs"), "--include",
                           "mariadb-server", "none"], check=True, capture_output=True,
                          text=True).stdout.strip()
    imported = (f"podman image exists {IMAGE} || tar -C '{tree}' "
                f"--exclude=./.eatmydata-complete -c . | podman import --quiet - {IMAGE}")
    subprocess.run(["flock", f"{tree}.lock", "sh", "-c", imported], check=True, env=ENV,
                   stdout=subprocess.DEVNULL)


def describe(ctx):
    return {"total": MEASURES[0][1].format(rows=rows(ctx))}


def podman_run(data, script_args, library=None, knobs=False, trace=None):
    argv = (trace or []) + ["podman", "run", "--rm", "-v", f"{data}:/data",
                            "-v", f"{CONTAINERS}/mariadb.sh:/mariadb.sh:ro"]
    if library:
        argv += ["-v", f"{library}:{MOUNTED}:ro", "-e", f"LD_PRELOAD={MOUNTED}"]
    if knobs:
        argv += ["-e", "MARIADB_OPTIONS=" + " ".join(KNOBS)]
    return timed(argv + [IMAGE, "sh", "/mariadb.sh"] + script_args, env=ENV)


def run(ctx, variant, trace=None):
    if "--sync-at-exit" in variant.prefix:
        raise RuntimeError("container: --sync-at-exit needs the command inside the image")
    count = rows(ctx, probe=trace is not None)
    data = ctx.fresh_dir(variant, "container-data")
    seconds, _ = podman_run(data, ["write", "db", str(count)], variant.library or None,
                            variant.knobs, trace)
    if trace is None:
        _, found = podman_run(data, ["check", "db"])
        expected = f"{count}|{count * (count - 1) // 2}"
        if found.strip() != expected:
            raise RuntimeError(f"container: after restart found {found.strip()!r}, "
                               f"expected {expected!r}")
    return {"total": seconds}, None
