"""How a workload's programs are run: the bench's run modes.

A mode is an argv put before every command of a workload, and whether the
program's own durability knobs are turned off (the workload says which
knobs: PostgreSQL's fsync=off, dpkg's --force-unsafe-io, ...). A variant of
the bench is a mode on a file system (see fs.py).

To add a mode, write a function `(ctx) -> Mode or None` (None: not
available on this machine, skipped with a note) and add it to MODES; list
its name in DEFAULT if every run should have it, and in PACKAGES the Debian
package it needs, if any (installed when missing). `ctx.eatmydata` and
`ctx.library` are the snapshots of the command and library being measured.
"""

import os
import re
from dataclasses import dataclass, field

# Debian's eatmydata package: the original libeatmydata, run side by side.
ORIGINAL = "/usr/lib/x86_64-linux-gnu/libeatmydata.so.1"


@dataclass
class Mode:
    name: str
    prefix: list  # argv put before each command of the workload
    knobs: bool = False  # the program's own durability knobs turned off
    library: str = ""  # the preloaded library, looked for in /proc/PID/maps
    engine: list = field(default_factory=list)  # `docker run` options (incontainer.py)
    traced: bool = True  # whether a short run under strace shows what reached the kernel


def plain(ctx):
    return Mode("plain", [])


def eatmydata(ctx):
    return Mode("eatmydata", [ctx.eatmydata], library=ctx.library)


def seccomp(ctx):
    """eatmydata --seccomp: the library and the supervised seccomp filter,
    which also makes io_uring's fsyncs free (fio's io_uring jobs)."""
    return Mode("seccomp", [ctx.eatmydata, "--seccomp"], library=ctx.library)


def seccomp_plain(ctx):
    """eatmydata --seccomp=plain: the seccomp filter without its supervisor,
    which answers every sync with 0 itself (a Go program's etcd row puts it
    beside the supervised default)."""
    return Mode("seccomp=plain", [ctx.eatmydata, "--seccomp=plain"], library=ctx.library)


def sync_at_exit(ctx):
    """eatmydata --sync-at-exit: the same, and the file systems where a sync
    was skipped flushed once the command and all it started have ended.
    The flush is inside the measured time (the command returns after it)."""
    return Mode("sync-at-exit", [ctx.eatmydata, "--sync-at-exit", "--verbose"],
                library=ctx.library)


FLUSHED = re.compile(r"eatmydata: sync-at-exit: flushed .* in ([0-9.]+) s$", re.M)


def flush_seconds(texts):
    """The flush time eatmydata --sync-at-exit --verbose reported, summed over
    `texts` (the stderr and server logs of one run); None if it said none."""
    seconds = [float(s) for text in texts for s in FLUSHED.findall(text)]
    return sum(seconds) if seconds else None


def original(ctx):
    if not os.path.exists(ORIGINAL):
        return None
    return Mode("libeatmydata", ["env", f"LD_PRELOAD={ORIGINAL}"], library=ORIGINAL)


def knobs(ctx):
    return Mode("db knobs", [], knobs=True)


def knobs_eatmydata(ctx):
    """Both: what eatmydata still adds where the knobs are already off."""
    return Mode("db knobs + eatmydata", [ctx.eatmydata], knobs=True, library=ctx.library)


MODES = {"plain": plain, "eatmydata": eatmydata, "seccomp": seccomp,
         "seccomp=plain": seccomp_plain,
         "sync-at-exit": sync_at_exit,
         "libeatmydata": original, "db knobs": knobs,
         "db knobs + eatmydata": knobs_eatmydata}
DEFAULT = ["plain", "eatmydata", "libeatmydata", "db knobs"]
# mode -> Debian package it needs. Only the library: Debian's `eatmydata`
# package would add its /usr/bin/eatmydata script, which the mode does not
# use (it preloads ORIGINAL by path) and which would shadow ours on PATH.
PACKAGES = {"libeatmydata": "libeatmydata1"}


def compared(spec):
    """A mode for `--compare [LABEL=]PATH.so`: another preload library."""
    label, _, path = spec.rpartition("=")
    path = os.path.abspath(path)
    label = label or os.path.basename(path).split(".so")[0]
    return Mode(label, ["env", f"LD_PRELOAD={path}"], library=path)


def chosen(ctx, names, compare):
    """The modes of this run, in order; `plain` always first (the baseline)."""
    modes = []
    for name in ["plain"] + [n for n in names if n != "plain"]:
        mode = MODES[name](ctx)
        if mode is None:
            ctx.note(f"mode {name} is not available on this machine: skipped")
        else:
            modes.append(mode)
    return modes + [compared(spec) for spec in compare]
