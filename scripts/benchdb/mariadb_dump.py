"""MariaDB: importing a mysqldump file of a few million rows (a seed's case:
a dump import that took 166 minutes).

At full size, two million rows. The file is shaped as mysqldump writes it: the session settings it saves and
restores, and for each table DROP/CREATE, LOCK TABLES, DISABLE KEYS, then
extended INSERTs of up to about 1 MB each (mysqldump's default
net_buffer_length), each its own autocommit transaction. Four tables with
primary keys and seven secondary indexes (two unique). After the import the
server is started again without any library or knob and every table's rows
are counted and summed: an import that lost rows would be no result.

The writer, the timed import and that check serve mariadb-seed too
(mariadb_seed.py), whose file has one row per INSERT.
"""

import os
import signal
import time

from . import mariadb
from .common import timed

NAME = "mariadb-dump"
FULL_ONLY = True
FULL_REPS = 1  # about a minute a run: once per variant keeps --full in its half hour
PACKAGES = mariadb.PACKAGES
MEASURES = [("import", "MariaDB import of a mysqldump file, {rows:,} rows in 4 tables", "s")]
STATEMENT = 1 << 20  # bytes per extended INSERT, as mysqldump's default
TABLES = {  # name -> (rows at full size, CREATE TABLE body, one row's values from its id)
    "customer": (150_000, """  `id` int NOT NULL,
  `name` varchar(64) NOT NULL,
  `email` varchar(96) NOT NULL,
  `city` varchar(32) NOT NULL,
  `created` datetime NOT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `email` (`email`),
  KEY `city` (`city`)""", lambda i: f"({i},'Customer {i}','c{i * 7919 % 1000003}.{i}@example.org',"
                                     f"'City {i % 997}','2024-{i % 12 + 1:02}-{i % 28 + 1:02} "
                                     f"{i % 24:02}:{i % 60:02}:{i * 7 % 60:02}')"),
    "product": (20_000, """  `id` int NOT NULL,
  `sku` char(12) NOT NULL,
  `title` varchar(80) NOT NULL,
  `price` decimal(10,2) NOT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `sku` (`sku`)""", lambda i: f"({i},'SKU{i:09}','Product number {i} of the catalogue',"
                                   f"{i * 37 % 10000 / 100:.2f})"),
    "orders": (530_000, """  `id` int NOT NULL,
  `customer_id` int NOT NULL,
  `status` varchar(12) NOT NULL,
  `total` decimal(12,2) NOT NULL,
  `created` datetime NOT NULL,
  PRIMARY KEY (`id`),
  KEY `customer_id` (`customer_id`),
  KEY `status_created` (`status`,`created`)""",
               lambda i: f"({i},{i * 7919 % 150000 + 1},'{('new', 'paid', 'shipped', 'done')[i % 4]}',"
                         f"{i * 131 % 100000 / 100:.2f},'2025-{i % 12 + 1:02}-{i % 28 + 1:02} "
                         f"{i % 24:02}:{i * 11 % 60:02}:{i * 13 % 60:02}')"),
    "order_item": (1_300_000, """  `id` bigint NOT NULL,
  `order_id` int NOT NULL,
  `product_id` int NOT NULL,
  `qty` smallint NOT NULL,
  `price` decimal(10,2) NOT NULL,
  PRIMARY KEY (`id`),
  KEY `order_id` (`order_id`),
  KEY `product_id` (`product_id`)""",
                   lambda i: f"({i},{i * 2 // 5},{i * 6007 % 20000},{i % 5 + 1},"
                             f"{i * 37 % 10000 / 100:.2f})"),
}


def scale(ctx):
    """Fraction of the full size: quick 1/100, default 1/10, --full all."""
    return 1 if ctx.args.full else (0.01 if ctx.args.quick else 0.1)


def counts(ctx, probe=False):
    factor = 0.001 if probe else scale(ctx)
    return {name: max(int(rows * factor), 10) for name, (rows, _, _) in TABLES.items()}


def path(ctx, probe=False):
    return os.path.join(ctx.base, f"dump-{sum(counts(ctx, probe).values())}.sql")


def write(target, tables, counts, statement=STATEMENT):
    """Write to `target`, unless it is there, a dump of `tables` ({name: (_,
    CREATE TABLE body, one row's values from its id)}) with counts[name]
    rows each, and return `target`. Extended INSERTs of up to `statement`
    bytes, as mysqldump writes them; 0 writes one row per INSERT, as
    `mysqldump --skip-extended-insert` does (mariadb-seed)."""
    if os.path.exists(target):
        return target
    with open(target + ".part", "w") as out:
        out.write("-- MariaDB dump 10.19  Distrib 10.11, for debian-linux-gnu (x86_64)\n--\n"
                  "-- Host: localhost    Database: bench\n\n"
                  "/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;\n"
                  "/*!40101 SET NAMES utf8mb4 */;\n"
                  "/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;\n"
                  "/*!40103 SET TIME_ZONE='+00:00' */;\n"
                  "/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;\n"
                  "/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, "
                  "FOREIGN_KEY_CHECKS=0 */;\n"
                  "/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;\n"
                  "CREATE DATABASE /*!32312 IF NOT EXISTS*/ `bench`;\nUSE `bench`;\n")
        for name, count in counts.items():
            _, body, row = tables[name]
            out.write(f"\n--\n-- Table structure for table `{name}`\n--\n\n"
                      f"DROP TABLE IF EXISTS `{name}`;\nCREATE TABLE `{name}` (\n{body}\n)"
                      " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;\n\n"
                      f"LOCK TABLES `{name}` WRITE;\n"
                      f"/*!40000 ALTER TABLE `{name}` DISABLE KEYS */;\n")
            values, size = [], 0
            for i in range(1, count + 1):
                value = row(i)
                values.append(value)
                size += len(value) + 1
                if size >= statement or i == count:
                    out.write(f"INSERT INTO `{name}` VALUES " + ",".join(values) + ";\n")
                    values, size = [], 0
            out.write(f"/*!40000 ALTER TABLE `{name}` ENABLE KEYS */;\nUNLOCK TABLES;\n")
        out.write("\n/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;\n"
                  "/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;\n"
                  "/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;\n"
                  "/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;\n"
                  "/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;\n"
                  "-- Dump completed\n")
    os.rename(target + ".part", target)
    return target


def write_dump(ctx, probe=False):
    return write(path(ctx, probe), TABLES, counts(ctx, probe))


def prepare(ctx):
    write_dump(ctx)


def versions():
    return []  # the mariadb workload's line says which server


def describe(ctx):
    return {"import": MEASURES[0][1].format(rows=sum(counts(ctx).values()))}


def load(ctx, variant, sql, knobs, trace=None):
    """One run of a dump workload: a fresh server (with `knobs` where
    variant.knobs says) imports the file `sql`, timed, then stops."""
    data = ctx.fresh_dir(variant, "mariadb-data", owner="mysql")
    sockets = ctx.fresh_dir(variant, "mariadb-sock", owner="mysql")
    pre = (trace or []) + variant.prefix
    knobs = knobs if variant.knobs else []
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


def run(ctx, variant, trace=None):
    return load(ctx, variant, write_dump(ctx, probe=trace is not None), mariadb.KNOBS, trace)


def tally(expected):
    """The query that counts and sums each table of `expected` ({name: n}),
    and what the client prints (-N -B) when every row is there."""
    query = " UNION ALL ".join(f"SELECT '{name}', COUNT(*), SUM(id) FROM bench.`{name}`"
                               for name in expected)
    return query, "\n".join(f"{name}\t{n}\t{n * (n + 1) // 2}" for name, n in expected.items())


def verify(ctx, workload, expected):
    """Restart the run's server without the library or knobs: each table of
    `expected` ({name: n}) has its n rows, ids 1..n summed."""
    data, sockets = (os.path.join(ctx.mounted.path, name)
                     for name in ("mariadb-data", "mariadb-sock"))
    query, want = tally(expected)
    found = mariadb.query(ctx, data, sockets, query)
    if found.strip() != want:
        raise RuntimeError(f"{workload}: after restart found {found.strip()!r}, "
                           f"expected {want!r}")


def check(ctx, variant):
    """Restart without the library; every table has all its rows, ids 1..n."""
    verify(ctx, NAME, counts(ctx))
