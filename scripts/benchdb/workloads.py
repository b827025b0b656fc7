"""The workloads the bench knows, in the order they run.

To add one, write a module in this directory and add its name here (a
`-` in the name is a `_` in the module's). A
workload module has:

- NAME: its name for `--only`;
- MEASURES: [(key, title, unit)], unit "s" (shorter is better) or "tps"
  (higher is better); a title may use fields that `describe` fills in;
- PACKAGES: {program: Debian package} it needs (installed when missing);
- CHART (optional): the MEASURES keys the chart of docs/benchmarks.md shows (default all);
- describe(ctx) -> {key: title}: the titles at this run's sizes;
- versions() -> [str]: lines for the report ("sqlite3: 3.40.1");
- run(ctx, variant, trace=None) -> (result, mapped): one run. `result` has
  a number for each MEASURES key (and "phase NAME" entries for the phases
  table; "device flushes KEY", "device bytes KEY" for a measure's own
  device figures, where one run has several measures; "container cpu
  user", "container cpu sys" for CPU seconds spent outside the run's own
  cgroup, a container's, which the runner adds to the run's); `mapped`
  whether variant.library was seen mapped in the server (None if not
  checked). Data goes under ctx.fresh_dir(variant, name);
  every command is prefixed with `(trace or []) + variant.prefix`;
  variant.knobs means the program's own durability knobs are off. A run
  that fails raises RuntimeError; servers are started with ctx.start and
  recorded with ctx.server, so that they are stopped whatever happens.

A workload may also have EXTRA_MODES: mode names run on the headline
file system for it whatever --modes says (etcd: seccomp=plain, the
speed the supervised default is held to); has_knobs() -> bool: False skips the modes that
turn the program's own durability knobs off (its version has none); and
prepare(ctx): called once before its runs, to
make input files outside every run's time and CPU accounting;
stage(ctx, variant, probe): called on each run's new file system before
the sync that starts the run, to put files in place that are not the run's
work (probe: for the short strace run; mounts made with ctx.bind are undone
after the run); and
check(ctx, variant): called after each timed run, outside its accounting,
on the same file system, to verify what the run left (raise RuntimeError);
and summary(outcome) -> [str]: lines the report prints after the table,
for a figure its columns do not give (build: its time as a ratio of plain's).

Under --latency (ctx.args.latency), each run's file system is on a device
whose flushes take a chosen time, up to 25 ms: a workload keeps its quick
size there unless its plain run at 25 ms would then take more than a few
minutes, or make too few flushes to judge by (postgres-suite 10 tests,
apt build-essential).

Sizes follow ctx.args.quick (CI: seconds), the default, and ctx.args.full
(the seeds' workloads at full size; the small workloads keep their quick
sizes there, so that the whole matrix fits in half an hour). A workload
that only makes sense at full size sets FULL_ONLY = True: it runs with
--full, or when named in --only. One too big to repeat within the full
run's half hour sets FULL_REPS (the most repetitions of a variant there).
One that runs only when named in --only (it starts a Docker daemon) sets
ASKED_ONLY = True.

A workload whose variants are not modes on file systems (the container
workloads: incontainer.py) has variants(ctx) -> [common.Variant], run
whatever --modes and --fs say; PAGE names the docs page whose table a
--record run of it replaces (default docs/benchmarks.md).
"""

import importlib

NAMES = ["sqlite", "postgres", "mariadb", "container", "fio", "etcd", "mariadb-dump",
         "mariadb-seed", "postgres-suite", "apt", "container-mariadb", "container-postgres",
         "build"]


def load(names=None):
    """The workload modules, all of them or those named, in NAMES order."""
    return [importlib.import_module(f"benchdb.{name.replace('-', '_')}") for name in NAMES
            if names is None or name in names]
