"""PostgreSQL as a test suite uses it (a seed's case: a Testcontainers suite
that spent 17% of its time in TRUNCATE between tests).

A fresh cluster is made and started, the schema of 50 tables created once
(as a migration tool would), then hundreds of "tests" run in one session,
each first emptying all 50 tables with one TRUNCATE (as DatabaseCleaner's
truncation strategy and Spring's test utilities do), then creating data in
a handful of them (single-row and multi-row INSERTs, one explicit
transaction, an UPDATE, a query). Each test also records itself in a table
that is never truncated; after the run the server is started again without
any library or knob, and every test's row must be there.

The "db knobs" variant is what Testcontainers' PostgreSQL module sets:
`fsync=off`, nothing more.
"""

import os
import signal
import time

from . import postgres
from .common import as_user, library_mapped, stop, timed

NAME = "postgres-suite"
LATENCY_KNOB = "fsync=off"  # --latency shows fsync=off -> fsync=off + eatmydata too
FULL_ONLY = True
PACKAGES = postgres.PACKAGES
KNOBS = ["-c", "fsync=off"]  # Testcontainers' PostgreSQLContainer
MEASURES = [("suite", "PostgreSQL test suite: {tests} tests, each first truncating {tables} "
                      "tables", "s")]
DOMAIN = ("customer", "account", "orders", "item", "event")
OTHERS = tuple(f"other_{n:02}" for n in range(len(DOMAIN) + 1, 51))
TABLES = DOMAIN + OTHERS  # the 50 tables each test empties
SCHEMA = """
CREATE TABLE customer (id bigserial PRIMARY KEY, name text NOT NULL, email text UNIQUE NOT NULL);
CREATE TABLE account (id bigserial PRIMARY KEY,
                      customer_id bigint NOT NULL REFERENCES customer(id),
                      balance numeric(12,2) NOT NULL DEFAULT 0);
CREATE TABLE orders (id bigserial PRIMARY KEY,
                     customer_id bigint NOT NULL REFERENCES customer(id),
                     status text NOT NULL, created timestamptz NOT NULL DEFAULT now());
CREATE INDEX orders_customer ON orders (customer_id);
CREATE TABLE item (id bigserial PRIMARY KEY, order_id bigint NOT NULL REFERENCES orders(id),
                   sku text NOT NULL, qty int NOT NULL);
CREATE INDEX item_order ON item (order_id);
CREATE TABLE event (id bigserial PRIMARY KEY, kind text NOT NULL, payload jsonb NOT NULL);
CREATE TABLE test_run (test int PRIMARY KEY, finished timestamptz NOT NULL DEFAULT now());
""" + "".join(f"CREATE TABLE {name} (id bigserial PRIMARY KEY, "
              "customer_id bigint REFERENCES customer(id), label text NOT NULL, "
              "created timestamptz NOT NULL DEFAULT now());\n" for name in OTHERS)


def tests(ctx, probe=False):
    if probe:
        return 5
    if ctx.args.latency:  # each test's new files cost a checkpoint's fsyncs at 25 ms
        return 10
    return 300 if ctx.args.full else (30 if ctx.args.quick else 100)


def one_test(n):
    """One test: the cleanup first, then fixtures, the code under test and
    assertions; it touches a few of the other tables, in turn."""
    customers = ", ".join(f"('user {n}-{k}', 'u{n}-{k}@example.org')" for k in range(5))
    items = ", ".join(f"(currval('orders_id_seq'), 'SKU-{k}', {k + 1})" for k in range(8))
    others = "".join(f"INSERT INTO {OTHERS[(n + k) % len(OTHERS)]} (customer_id, label) "
                     f"SELECT min(id), 'test {n}' FROM customer;\n" for k in range(3))
    return f"""
TRUNCATE {", ".join(TABLES)} RESTART IDENTITY CASCADE;
INSERT INTO customer (name, email) VALUES {customers};
INSERT INTO account (customer_id, balance) SELECT id, 100 FROM customer;
BEGIN;
INSERT INTO orders (customer_id, status) SELECT min(id), 'new' FROM customer;
INSERT INTO item (order_id, sku, qty) VALUES {items};
COMMIT;
UPDATE account SET balance = balance - 10 WHERE customer_id = (SELECT min(id) FROM customer);
UPDATE orders SET status = 'paid';
INSERT INTO event (kind, payload) VALUES ('order.paid', '{{"test": {n}}}');
{others}SELECT o.status, sum(i.qty) FROM orders o JOIN item i ON i.order_id = o.id GROUP BY o.status;
INSERT INTO test_run (test) VALUES ({n});
"""


def script(ctx, count):
    path = os.path.join(ctx.base, f"suite-{count}.sql")
    if not os.path.exists(path):
        with open(path, "w") as out:
            for n in range(1, count + 1):
                out.write(one_test(n))
        os.chmod(path, 0o644)  # psql runs as the postgres user
    return path


def prepare(ctx):
    script(ctx, tests(ctx))


def versions():
    return []  # the postgres workload's line says which server


def describe(ctx):
    return {"suite": MEASURES[0][1].format(tests=tests(ctx), tables=len(TABLES))}


def psql(sockets, *argv):
    return [f"{postgres.bindir()}/psql", "-X", "-q", "-h", sockets, "-p", postgres.PORT,
            "-U", "bench", "-d", "postgres", "-v", "ON_ERROR_STOP=1"] + list(argv)


def run(ctx, variant, trace=None):
    count = tests(ctx, probe=trace is not None)
    bin_ = postgres.bindir()
    data = ctx.fresh_dir(variant, "pgdata", owner=postgres.USER)
    sockets = ctx.fresh_dir(variant, "pgsock", owner=postgres.USER)
    pre = (trace or []) + as_user(postgres.USER) + variant.prefix
    client = as_user(postgres.USER) + variant.prefix
    times = {}
    times["initdb"], _ = timed(pre + postgres.initdb(bin_, data, variant.knobs))
    process, pid, times["start"] = postgres.start(ctx, pre, data, sockets,
                                                  KNOBS if variant.knobs else [])
    mapped = library_mapped(pid, variant.library) if variant.library else None
    times["schema"], _ = timed(client + psql(sockets, "-c", SCHEMA))
    times["suite"], _ = timed(client + psql(sockets, "-o", "/dev/null", "-f",
                                            script(ctx, count)))
    begin = time.perf_counter()
    stop(process, pid, signal.SIGINT)
    times["stop"] = time.perf_counter() - begin
    result = {"suite": times["suite"]}
    result.update({f"phase {name}": value for name, value in times.items()})
    return result, mapped


TALLY = "SELECT count(*), sum(test) FROM test_run"  # every test's row, after a restart


def tallied(count):
    """What `psql -A -t -c TALLY` prints when all `count` tests left their row."""
    return f"{count}|{count * (count + 1) // 2}"


def check(ctx, variant):
    """Restart without the library: every test's row is there."""
    data, sockets = (os.path.join(ctx.mounted.path, name) for name in ("pgdata", "pgsock"))
    pre = as_user(postgres.USER)
    process, pid, _ = postgres.start(ctx, pre, data, sockets, knobs=[])
    _, out = timed(pre + psql(sockets, "-A", "-t", "-c", TALLY))
    stop(process, pid, signal.SIGINT)
    count = tests(ctx)
    if out.strip() != tallied(count):
        raise RuntimeError(f"postgres-suite: after restart found {out.strip()!r} "
                           f"of {count} tests")
