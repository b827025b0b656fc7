"""PostgreSQL: a fresh cluster's whole life, as a test suite lives it.

initdb, server start, `pgbench -i`, a fixed-length `pgbench` run (its tps is
reported), fast shutdown. The server listens on a Unix socket in a private
directory only (listen_addresses=''), and runs as the `postgres` user:
PostgreSQL refuses root.
"""

import glob
import os
import shutil
import subprocess
import time

from .common import as_user, library_mapped, output, read_pid, stop, timed, wait_until

NAME = "postgres"
PORT = "54329"
USER = "postgres"
KNOBS = ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
PACKAGES = {"pgbench": "postgresql-contrib", "initdb": "postgresql"}
MEASURES = [
    ("lifecycle", "PostgreSQL initdb + start + pgbench -i -s {scale} + stop", "s"),
    ("tps", "PostgreSQL pgbench -c 4 -j 2, {seconds} s run", "tps"),
]


def bindir():
    """The newest installed server's directory (Debian keeps them versioned)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=version_key)
    if found:
        return os.path.dirname(found[-1])
    postgres = shutil.which("postgres")
    if postgres:
        return os.path.dirname(os.path.realpath(postgres))
    raise RuntimeError("postgres: no PostgreSQL server found")


def version_key(path):
    return int(path.split("/")[4]) if path.split("/")[4].isdigit() else 0


def sizes(ctx, probe=False):
    if probe or ctx.args.quick:
        return 1, 2
    return (2, 4) if ctx.args.full else (5, 8)


def versions():
    return [f"postgresql: {output([bindir() + '/postgres', '--version'])}"]


def describe(ctx):
    scale, seconds = sizes(ctx)
    return {
        "lifecycle": MEASURES[0][1].format(scale=scale),
        "tps": MEASURES[1][1].format(seconds=seconds),
    }


def initdb(bin_, data, knobs):
    """initdb of a fresh cluster that trusts local connections of user `bench`."""
    argv = [f"{bin_}/initdb", "-D", data, "-U", "bench", "--auth=trust", "-E", "UTF8"]
    return argv + (["--no-sync"] if knobs else [])


def start(ctx, pre, data, sockets, knobs):
    """Start the server on a private socket with the server options `knobs`
    (a list, KNOBS for the "db knobs" variant); (process, pid, seconds to
    ready)."""
    bin_ = bindir()
    server = pre + [f"{bin_}/postgres", "-D", data, "-c", "listen_addresses=",
                    "-c", f"unix_socket_directories={sockets}", "-c", f"port={PORT}"]
    begin = time.perf_counter()
    process = ctx.start(server + knobs, os.path.join(ctx.base, "postgres.log"))
    ready = [f"{bin_}/pg_isready", "-q", "-h", sockets, "-p", PORT, "-U", "bench"]
    wait_until(lambda: subprocess.run(ready, check=False).returncode == 0, process, "postgres")
    seconds = time.perf_counter() - begin
    return process, ctx.server(read_pid(os.path.join(data, "postmaster.pid"))), seconds


def run(ctx, variant, trace=None):
    scale, seconds = sizes(ctx, probe=trace is not None)
    bin_ = bindir()
    data = ctx.fresh_dir(variant, "pgdata", owner=USER)
    sockets = ctx.fresh_dir(variant, "pgsock", owner=USER)
    pre = (trace or []) + as_user(USER) + variant.prefix
    client = as_user(USER) + variant.prefix
    times = {}

    times["initdb"], _ = timed(pre + initdb(bin_, data, variant.knobs))
    process, pid, times["start"] = start(ctx, pre, data, sockets,
                                             KNOBS if variant.knobs else [])
    mapped = library_mapped(pid, variant.library) if variant.library else None

    connect = ["-h", sockets, "-p", PORT, "-U", "bench"]
    times["init"], _ = timed(client + [f"{bin_}/pgbench", "-i", "-q", "-s", str(scale)]
                           + connect + ["postgres"])
    _, report = timed(client + [f"{bin_}/pgbench", "-c", "4", "-j", "2", "-T", str(seconds),
                              "-n"] + connect + ["postgres"])
    begin = time.perf_counter()
    stop(process, pid)
    times["stop"] = time.perf_counter() - begin

    result = {"tps": tps(report)}
    result["lifecycle"] = times["initdb"] + times["start"] + times["init"] + times["stop"]
    result.update({f"phase {name}": value for name, value in times.items()})
    return result, mapped


def tps(report):
    for line in report.splitlines():
        if line.startswith("tps ="):
            return float(line.split()[2])
    raise RuntimeError(f"pgbench: no tps in its report:\n{report}")
