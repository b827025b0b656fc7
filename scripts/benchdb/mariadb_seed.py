"""MariaDB: the seed's own workload, a dump of single-row INSERTs loaded with
one transaction per statement.

The seed that started this project loaded "a 218MB test file of single row
inserts" into MySQL: 166 minutes plain, 5.5 with
`--innodb_flush_log_at_trx_commit=0 --sync-binlog=0`, 3.2 under
libeatmydata. The file here is shaped as `mysqldump --skip-extended-insert`
writes it: the saved session settings, DROP/CREATE, LOCK TABLES, then one
INSERT per row, each its own autocommit transaction (one redo-log flush per
row without a knob: the device's flush count shows it). At full size,
100,000 rows in two tables, an 11 MB file: several minutes plain on a
fresh journaled ext4 on this project's shared machine, where a commit
through the loop device costs from a quarter of a millisecond (a quiet
disk) to 4 ms (other people's I/O on it). The "db knobs" variant is exactly
the seed's pair of options, nothing more.

After the import the server is started again without any library or knob
and every table's rows are counted and summed: an import that lost rows
would be no result.
"""

import os

from . import mariadb
from . import mariadb_dump as dump

NAME = "mariadb-seed"
FULL_ONLY = True
PACKAGES = mariadb.PACKAGES
KNOBS = ["--innodb-flush-log-at-trx-commit=0", "--sync-binlog=0"]  # the seed's, as given
MEASURES = [("import", "MariaDB import of a dump of {rows:,} single-row INSERTs, "
                       "one transaction each", "s")]
TABLES = {  # name -> (share of the rows, CREATE TABLE body, one row's values from its id)
    "customer": (0.2, *dump.TABLES["customer"][1:]),
    "orders": (0.8, """  `id` int NOT NULL,
  `customer_id` int NOT NULL,
  `status` varchar(12) NOT NULL,
  `total` decimal(12,2) NOT NULL,
  `created` datetime NOT NULL,
  PRIMARY KEY (`id`),
  KEY `customer_id` (`customer_id`)""",
               lambda i: f"({i},{i * 7919 % 10000 + 1},'{('new', 'paid', 'shipped', 'done')[i % 4]}',"
                         f"{i * 131 % 100000 / 100:.2f},'2025-{i % 12 + 1:02}-{i % 28 + 1:02} "
                         f"{i % 24:02}:{i * 11 % 60:02}:{i * 13 % 60:02}')"),
}


def rows(ctx, probe=False):
    """All tables' rows: full 100,000 (several minutes plain), default
    20,000, quick 1,000, quick --latency 3,000 (under two minutes plain at
    25 ms; at 1,000 the eaten import took 0.07 s, too short to time); the
    strace run 200."""
    if probe:
        return 200
    if ctx.args.quick and ctx.args.latency:
        return 3_000
    return 100_000 if ctx.args.full else (1_000 if ctx.args.quick else 20_000)


def counts(ctx, probe=False):
    total = rows(ctx, probe)
    return {name: int(total * share) for name, (share, _, _) in TABLES.items()}


def write_dump(ctx, probe=False):
    target = os.path.join(ctx.base, f"seed-{rows(ctx, probe)}.sql")
    return dump.write(target, TABLES, counts(ctx, probe), statement=0)


def prepare(ctx):
    write_dump(ctx)


def versions():
    return []  # the mariadb workload's line says which server


def describe(ctx):
    return {"import": MEASURES[0][1].format(rows=rows(ctx))}


def run(ctx, variant, trace=None):
    return dump.load(ctx, variant, write_dump(ctx, probe=trace is not None), KNOBS, trace)


def check(ctx, variant):
    """Restart without the library or knobs; every table has all its rows."""
    dump.verify(ctx, NAME, counts(ctx))
