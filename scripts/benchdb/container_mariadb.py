"""The MySQL story in a container: a MariaDB container importing a dump of
single-row INSERTs, one transaction each (the seed's `--tmpfs
/var/lib/mysql` case), under incontainer.py's variants: plain, `--tmpfs`
on the data directory, `--runtime=eatmydata`, and the same server on the
host under eatmydata.

The dump is mariadb-seed's (100,000 rows at full size), loaded by the
host's `mariadb` client through the container's socket; the server is
Debian 12's, in the image as on the host. Only when named in --only.
"""

import os

from . import common, incontainer, mariadb, mariadb_dump, mariadb_seed, modes
from .common import timed

NAME = "container-mariadb"
FULL_ONLY = True
ASKED_ONLY = True
PAGE = "docs/containers.md"  # where --record puts its table
PACKAGES = dict(mariadb.PACKAGES, dockerd="docker.io", runc="runc", debootstrap="debootstrap")
MEASURES = [("import", "MariaDB container importing {rows:,} single-row INSERTs, "
                       "one transaction each", "s")]


def ready(sockets):
    """As on the host (mariadb.start): the socket listens a moment before
    the pid file is written, and the server answers once both are there."""
    return (common.socket_answers(os.path.join(sockets, "mysqld.sock"))
            and os.path.exists(os.path.join(sockets, "mysqld.pid")))


SERVER = {"name": "mariadb", "image": ["mariadb-server"], "datadir": "/var/lib/mysql",
          "ready": ready, "stop": "SIGTERM",
          "stopping": "shutdown"}


def variants(ctx):
    return incontainer.variants(ctx, SERVER["datadir"], modes.eatmydata)


versions = incontainer.versions


def describe(ctx):
    return {"import": MEASURES[0][1].format(rows=mariadb_seed.rows(ctx))}


def prepare(ctx):
    mariadb_seed.prepare(ctx)
    incontainer.prepare(ctx, SERVER)


def tally(ctx):
    return mariadb_dump.tally(mariadb_seed.counts(ctx))


def counter(ctx):
    """What a server holds, read through its socket: each table's rows and
    the sum of their ids."""
    query = tally(ctx)[0]
    return lambda sockets: timed(mariadb.client(sockets) + ["-N", "-B", "-e", query])[1]


def run(ctx, variant, trace=None):
    if incontainer.on_host(variant):
        return mariadb_seed.run(ctx, variant, trace)
    sql = mariadb_seed.write_dump(ctx)

    def work(sockets):
        return {"import": timed(mariadb.client(sockets), stdin=sql)[0]}

    times, mapped, used = incontainer.run(ctx, variant, SERVER, work, counter(ctx),
                                          tally(ctx)[1])
    result = {"import": times["import"], **used}
    result.update({f"phase {name}": value for name, value in times.items()})
    return result, mapped


def check(ctx, variant):
    """Every row there after the restart (a new container, no runtime)."""
    if incontainer.on_host(variant):
        return mariadb_seed.check(ctx, variant)
    if "--tmpfs" in variant.mode.engine:
        return None  # counted by the same server before it stopped (incontainer.run)
    want = tally(ctx)[1]
    found = incontainer.recount(ctx, SERVER, counter(ctx))
    if found != want:
        raise RuntimeError(f"{NAME}: after restart found {found!r}, expected {want!r}")
    return None
