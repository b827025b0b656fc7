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
import signal
import time

from . import mariadb
from .common import timed

NAME = "mariadb-seed"
FULL_ONLY = True
PACKAGES = mariadb.PACKAGES
KNOBS = ["--innodb-flush-log-at-trx-commit=0", "--sync-binlog=0"]  # the seed's, as given
MEASURES = [("import", "MariaDB import of a dump of {rows:,} single-row INSERTs, "
                       "one transaction each", "s")]
TABLES = {  # name -> (share of the rows, CREATE TABLE body, one row's values from its id)
    "customer": (0.2, """  `id` int NOT NULL,
  `name` varchar(64) NOT NULL,
  `email` varchar(96) NOT NULL,
  `city` varchar(32) NOT NULL,
  `created` datetime NOT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `email` (`email`),
  KEY `city` (`city`)""", lambda i: f"({i},'Customer {i}','c{i * 7919 % 1000003}.{i}@example.org',"
                                     f"'City {i % 997}','2024-{i % 12 + 1:02}-{i % 28 + 1:02} "
                                     f"{i % 24:02}:{i % 60:02}:{i * 7 % 60:02}')"),
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
    20,000, quick 1,000; the strace run 200."""
    if probe:
        return 200
    return 100_000 if ctx.args.full else (1_000 if ctx.args.quick else 20_000)


def counts(ctx, probe=False):
    total = rows(ctx, probe)
    return {name: int(total * share) for name, (share, _, _) in TABLES.items()}


def write_dump(ctx, probe=False):
    target = os.path.join(ctx.base, f"seed-{rows(ctx, probe)}.sql")
    if os.path.exists(target):
        return target
    with open(target + ".part", "w") as out:
        out.write("-- MySQL dump 10.19  Distrib 10.11, for debian-linux-gnu (x86_64)\n--\n"
                  "-- Host: localhost    Database: bench\n\n"
                  "/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;\n"
                  "/*!40101 SET NAMES utf8mb4 */;\n"
                  "/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;\n"
                  "/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, "
                  "FOREIGN_KEY_CHECKS=0 */;\n"
                  "CREATE DATABASE /*!32312 IF NOT EXISTS*/ `bench`;\nUSE `bench`;\n")
        for name, count in counts(ctx, probe).items():
            _, body, row = TABLES[name]
            out.write(f"\nDROP TABLE IF EXISTS `{name}`;\nCREATE TABLE `{name}` (\n{body}\n)"
                      " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;\n\n"
                      f"LOCK TABLES `{name}` WRITE;\n"
                      f"/*!40000 ALTER TABLE `{name}` DISABLE KEYS */;\n")
            for i in range(1, count + 1):
                out.write(f"INSERT INTO `{name}` VALUES {row(i)};\n")
            out.write(f"/*!40000 ALTER TABLE `{name}` ENABLE KEYS */;\nUNLOCK TABLES;\n")
        out.write("\n/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;\n"
                  "/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;\n"
                  "/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;\n"
                  "-- Dump completed\n")
    os.rename(target + ".part", target)
    return target


def prepare(ctx):
    write_dump(ctx)


def versions():
    return []  # the mariadb workload's line says which server


def describe(ctx):
    return {"import": MEASURES[0][1].format(rows=rows(ctx))}


def run(ctx, variant, trace=None):
    sql = write_dump(ctx, probe=trace is not None)
    data = ctx.fresh_dir(variant, "mariadb-data", owner="mysql")
    sockets = ctx.fresh_dir(variant, "mariadb-sock", owner="mysql")
    pre = (trace or []) + variant.prefix
    knobs = KNOBS if variant.knobs else []
    times = {}
    times["install"], _ = timed(pre + mariadb.install(data, knobs))
    begin = time.perf_counter()
    process, pid = mariadb.start(ctx, pre + mariadb.server(ctx, data, sockets, knobs), sockets)
    times["start"] = time.perf_counter() - begin
    mapped = mariadb.library_mapped(pid, variant.library) if variant.library else None
    times["import"], _ = timed(variant.prefix + mariadb.client(sockets), stdin=sql)
    begin = time.perf_counter()
    mariadb.stop(process, pid, signal.SIGTERM)
    times["shutdown"] = time.perf_counter() - begin
    result = {"import": times["import"]}
    result.update({f"phase {name}": value for name, value in times.items()})
    return result, mapped


def check(ctx, variant):
    """Restart without the library or knobs; every table has all its rows."""
    data, sockets = (os.path.join(ctx.mounted.path, name)
                     for name in ("mariadb-data", "mariadb-sock"))
    expected = counts(ctx)
    query = " UNION ALL ".join(f"SELECT '{name}', COUNT(*), SUM(id) FROM bench.`{name}`"
                               for name in expected)
    found = mariadb.query(ctx, data, sockets, query)
    want = "\n".join(f"{name}\t{n}\t{n * (n + 1) // 2}" for name, n in expected.items())
    if found.strip() != want:
        raise RuntimeError(f"mariadb-seed: after restart found {found.strip()!r}, "
                           f"expected {want!r}")
