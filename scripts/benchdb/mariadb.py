"""MariaDB: the classic libeatmydata case, a dump of single-row INSERTs.

A fresh data directory (mariadb-install-db), server start, the import with
autocommit (one commit, one redo-log flush per row), clean shutdown. Then
the server is started again without any library or knob and every row is
counted: a fast import that lost rows would be no result.

The server listens on a private socket only (--skip-networking), runs as
the `mysql` user, and is stopped by its pid; the system's own MariaDB
service is never touched.
"""

import os
import signal
import time

from .common import library_mapped, output, read_pid, socket_answers, stop, timed, wait_until

NAME = "mariadb"
KNOBS = [
    "--innodb-flush-log-at-trx-commit=0",
    "--skip-innodb-doublewrite",
    "--innodb-flush-method=nosync",
]
PACKAGES = {"mariadbd": "mariadb-server", "mariadb": "mariadb-client"}
CHART = ["import"]  # the chart's panel in docs/benchmarks.md
MEASURES = [
    ("total", "MariaDB install + start + import + shutdown", "s"),
    ("import", "MariaDB {rows:,}-row single-INSERT import", "s"),
]


def rows(ctx, probe=False):
    if probe:
        return 300
    return 2_000 if ctx.args.quick or ctx.args.full else 10_000


def dump(ctx, count):
    path = os.path.join(ctx.base, f"mariadb-{count}.sql")
    if not os.path.exists(path):
        with open(path, "w") as out:
            out.write("CREATE DATABASE bench;\nUSE bench;\n")
            out.write("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(40), value INT)"
                      " ENGINE=InnoDB;\n")
            for i in range(count):
                out.write(f"INSERT INTO t VALUES ({i},'name-{i}',{i * 7919 % 100000});\n")
    return path


def versions():
    return [f"mariadb: {output(['mariadbd', '--version'])}"]


def prepare(ctx):
    dump(ctx, rows(ctx))


def describe(ctx):
    return {"total": MEASURES[0][1], "import": MEASURES[1][1].format(rows=rows(ctx))}


def install(data, knobs):
    """mariadb-install-db for a fresh data directory."""
    return ["mariadb-install-db", "--no-defaults", f"--datadir={data}", "--user=mysql",
            "--auth-root-authentication-method=normal", "--skip-test-db",
            "--skip-name-resolve"] + knobs


def server(ctx, data, sockets, extra):
    return ["mariadbd", "--no-defaults", f"--datadir={data}",
            f"--socket={sockets}/mysqld.sock", f"--pid-file={sockets}/mysqld.pid",
            "--skip-networking", "--user=mysql",
            f"--log-error={os.path.join(ctx.base, 'mariadb.log')}"] + extra


def start(ctx, argv, sockets):
    process = ctx.start(argv, os.path.join(ctx.base, "mariadb.out"))
    # The socket listens a moment before the pid file is written.
    pidfile = f"{sockets}/mysqld.pid"
    wait_until(lambda: socket_answers(f"{sockets}/mysqld.sock") and read_pid(pidfile),
               process, "mariadbd")
    return process, ctx.server(read_pid(pidfile))


def client(sockets):
    return ["mariadb", "--no-defaults", "-S", f"{sockets}/mysqld.sock", "-u", "root"]


def run(ctx, variant, trace=None):
    count = rows(ctx, probe=trace is not None)
    sql = dump(ctx, count)
    data = ctx.fresh_dir(variant, "mariadb-data", owner="mysql")
    sockets = ctx.fresh_dir(variant, "mariadb-sock", owner="mysql")
    pre = (trace or []) + variant.prefix
    knobs = KNOBS if variant.knobs else []
    times = {}

    times["install"], _ = timed(pre + install(data, knobs))
    begin = time.perf_counter()
    process, pid = start(ctx, pre + server(ctx, data, sockets, knobs), sockets)
    times["start"] = time.perf_counter() - begin
    mapped = library_mapped(pid, variant.library) if variant.library else None
    times["import"], _ = timed(variant.prefix + client(sockets), stdin=sql)
    begin = time.perf_counter()
    stop(process, pid, signal.SIGTERM)
    times["shutdown"] = time.perf_counter() - begin

    result = {"total": sum(times.values()), "import": times["import"]}
    result.update({f"phase {name}": value for name, value in times.items()})
    return result, mapped


def query(ctx, data, sockets, sql):
    """Start the server without any library or knob, run `sql`, stop it."""
    process, pid = start(ctx, server(ctx, data, sockets, []), sockets)
    _, out = timed(client(sockets) + ["-N", "-B", "-e", sql])
    stop(process, pid, signal.SIGTERM)
    return out


def check(ctx, variant):
    """Restart without the library and count every row."""
    data, sockets = (os.path.join(ctx.mounted.path, name)
                     for name in ("mariadb-data", "mariadb-sock"))
    count = rows(ctx)
    out = query(ctx, data, sockets, "SELECT COUNT(*), SUM(id) FROM bench.t")
    expected = f"{count}\t{count * (count - 1) // 2}"
    if out.strip() != expected:
        raise RuntimeError(f"mariadb: after restart found {out.strip()!r}, expected {expected!r}")
