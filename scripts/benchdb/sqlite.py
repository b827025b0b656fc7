"""SQLite: single-row INSERTs, each its own transaction, synchronous=FULL.

Each commit in the default rollback-journal mode writes and syncs a journal,
then the database, then deletes the journal: several syncs per row, which
is what a test suite that inserts fixtures one by one pays.
"""

import os

from .common import output, timed

NAME = "sqlite"
PACKAGES = {"sqlite3": "sqlite3"}
MEASURES = [("total", "SQLite {rows:,} autocommit INSERTs", "s")]


def rows(ctx, probe=False):
    if probe:
        return 300
    return 500 if ctx.args.quick or ctx.args.full else 2_000


def script(ctx, count, synchronous):
    path = os.path.join(ctx.base, f"sqlite-{count}-{synchronous}.sql")
    if not os.path.exists(path):
        with open(path, "w") as out:
            out.write(f"PRAGMA synchronous={synchronous};\n")
            out.write("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, value INTEGER);\n")
            for i in range(count):
                out.write(f"INSERT INTO t VALUES ({i}, 'name-{i}', {i * 7919 % 100000});\n")
            out.write("SELECT count(*) FROM t;\n")
    return path


def versions():
    return [f"sqlite3: {output(['sqlite3', '--version']).split()[0]}"]


def prepare(ctx):
    script(ctx, rows(ctx), "FULL")
    script(ctx, rows(ctx), "OFF")


def describe(ctx):
    return {"total": MEASURES[0][1].format(rows=rows(ctx))}


def run(ctx, variant, trace=None):
    count = rows(ctx, probe=trace is not None)
    sql = script(ctx, count, "OFF" if variant.knobs else "FULL")
    directory = ctx.fresh_dir(variant, "sqlite")
    argv = (trace or []) + variant.prefix + ["sqlite3", os.path.join(directory, "bench.db")]
    seconds, out = timed(argv, stdin=sql)
    if out.strip() != str(count):
        raise RuntimeError(f"sqlite: expected {count} rows, found {out.strip()!r}")
    return {"total": seconds}, None
