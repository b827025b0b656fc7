"""The Testcontainers story in a container: a PostgreSQL container with
`fsync=off` (what Testcontainers' PostgreSQL module sets) running
postgres-suite's test suite, each test first emptying 50 tables, under
incontainer.py's variants: plain, `--tmpfs` on the data directory,
`--runtime=eatmydata`, and the same server on the host under eatmydata,
`fsync=off` there too.

The suite runs from the host's `psql` through the container's socket; the
server is Debian 12's, in the image as on the host. Only when named in
--only.
"""

import subprocess

from . import incontainer, modes, postgres, postgres_suite
from .common import timed

NAME = "container-postgres"
FULL_ONLY = True
ASKED_ONLY = True
PAGE = "docs/containers.md"  # where --record puts its table
PACKAGES = dict(postgres.PACKAGES, dockerd="docker.io", runc="runc", debootstrap="debootstrap")
MEASURES = [("suite", "PostgreSQL container with fsync=off: {tests} tests, each first "
                      "truncating {tables} tables", "s")]


def ready(sockets):
    """pg_isready: the socket takes connections while the server still
    refuses them ("the database system is starting up")."""
    argv = [f"{postgres.bindir()}/pg_isready", "-q", "-h", sockets, "-p", postgres.PORT,
            "-U", "bench"]
    return subprocess.run(argv, check=False).returncode == 0


SERVER = {"name": "postgres", "image": ["postgresql"], "datadir": "/var/lib/postgresql/data",
          "ready": ready, "stop": "SIGINT",
          "stopping": "stop"}


def variants(ctx):
    # fsync=off on the host too: the same server as in the containers.
    return incontainer.variants(ctx, SERVER["datadir"], modes.knobs_eatmydata)


versions = incontainer.versions


def describe(ctx):
    return {"suite": MEASURES[0][1].format(tests=postgres_suite.tests(ctx),
                                           tables=len(postgres_suite.TABLES))}


def prepare(ctx):
    postgres_suite.prepare(ctx)
    incontainer.prepare(ctx, SERVER)


def counted(sockets):
    return timed(postgres_suite.psql(sockets, "-A", "-t", "-c", postgres_suite.TALLY))[1]


def run(ctx, variant, trace=None):
    if incontainer.on_host(variant):
        return postgres_suite.run(ctx, variant, trace)
    script = postgres_suite.script(ctx, postgres_suite.tests(ctx))

    def work(sockets):
        schema, _ = timed(postgres_suite.psql(sockets, "-c", postgres_suite.SCHEMA))
        suite, _ = timed(postgres_suite.psql(sockets, "-o", "/dev/null", "-f", script))
        return {"schema": schema, "suite": suite}

    want = postgres_suite.tallied(postgres_suite.tests(ctx))
    times, mapped, used = incontainer.run(ctx, variant, SERVER, work, counted, want)
    result = {"suite": times["suite"], **used}
    result.update({f"phase {name}": value for name, value in times.items()})
    return result, mapped


def check(ctx, variant):
    """Every test's row there after the restart (a new container, no runtime)."""
    if incontainer.on_host(variant):
        return postgres_suite.check(ctx, variant)
    if "--tmpfs" in variant.mode.engine:
        return None  # counted by the same server before it stopped (incontainer.run)
    found = incontainer.recount(ctx, SERVER, counted)
    want = postgres_suite.tallied(postgres_suite.tests(ctx))
    if found != want:
        raise RuntimeError(f"{NAME}: after restart found {found!r}, expected {want!r}")
    return None
