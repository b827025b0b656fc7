"""fio: the same small writes, each followed by a sync, through every kind of
I/O submission a program can use: plain pwrite (psync), POSIX AIO
(aio_fsync runs in a glibc helper thread) and io_uring (the sync is a
request in the ring, not a system call of its own). Each job verifies what
it wrote (crc32c) after writing it.

This module is both a bench-db workload and the harness that
`scripts/fio-flushes` (the tests' oracle) runs one job with: `job()` builds
the fio command, `outcome()` reads its JSON report.
"""

import json
import os

from . import fs
from .common import output, settle, timed

NAME = "fio"
PACKAGES = {"fio": "fio"}
ENGINES = ("psync", "posixaio", "io_uring", "libaio", "sync", "pvsync2")
SYNCS = {  # how each write is made durable: fio's option for it
    "fsync": ["--fsync=1"],
    "fdatasync": ["--fdatasync=1"],
    "sync_file_range": ["--sync_file_range=write:1"],
    "none": [],
}
JOBS = [  # (key, engine, sync): the bench's jobs, one measure each
    ("psync-fsync", "psync", "fsync"),
    ("posixaio-fsync", "posixaio", "fsync"),
    ("io_uring-fsync", "io_uring", "fsync"),
    ("io_uring-fdatasync", "io_uring", "fdatasync"),
    ("io_uring-sync_file_range", "io_uring", "sync_file_range"),
]
CHART = ["psync-fsync", "io_uring-fsync"]  # the chart's panels in docs/benchmarks.md
MEASURES = [(key, f"fio {engine}, {{size}} in 4k writes, each + {sync}", "s")
            for key, engine, sync in JOBS]


def job(directory, engine, sync, size="1M", bs="4k", verify=True, iodepth=1, report=None):
    """The fio command for one job: sequential writes of `bs` up to `size` in
    a new file in `directory`, each followed by `sync`, then read back and
    checked when `verify`. `report` is where fio writes its JSON."""
    argv = ["fio", "--name=eatmydata", f"--directory={directory}", "--filename=fio.dat",
            "--rw=write", f"--bs={bs}", f"--size={size}", f"--ioengine={engine}",
            f"--iodepth={iodepth}", "--output-format=json"] + SYNCS[sync]
    if verify:
        argv += ["--verify=crc32c", "--do_verify=1", "--verify_fatal=1", "--verify_state_save=0"]
    if report:
        argv.append(f"--output={report}")
    return argv


def outcome(report):
    """fio's error count over its jobs, or None when it wrote no report."""
    try:
        with open(report) as file:
            text = file.read()
        # fio may print notes before the JSON object.
        data = json.loads(text[text.index("{"):])
    except (OSError, ValueError):
        return None
    return sum(int(j.get("error", 0)) for j in data.get("jobs", []))


def size(ctx, probe=False):
    if probe:
        return "64k"
    return "256k" if ctx.args.quick or ctx.args.full else "2M"


def versions():
    return [f"fio: {output(['fio', '--version'])}"]


def describe(ctx):
    return {key: title.format(size=size(ctx)) for key, title, _ in MEASURES}


def run(ctx, variant, trace=None):
    """Each job in turn, in its own directory; `db knobs` drops the sync."""
    result = {}
    for key, engine, sync in JOBS:
        directory = ctx.fresh_dir(variant, f"fio-{key}")
        report = os.path.join(ctx.base, "fio.json")
        argv = job(directory, engine, "none" if variant.knobs else sync,
                   size(ctx, trace is not None), report=report)
        before = ctx.mounted.counters()
        result[key], _ = timed((trace or []) + variant.prefix + argv)
        ended = ctx.mounted.counters()
        if ended is not None:
            settle(ctx.mounted.path)  # what the job left dirty is its writing too
        figures = fs.run_figures(before, ended, ctx.mounted.counters())
        for name, value in (figures or {}).items():
            result[f"device {name} {key}"] = value  # this job's own, for its row
        if outcome(report) != 0:
            raise RuntimeError(f"fio {key}: verification failed or no report")
    return result, None
