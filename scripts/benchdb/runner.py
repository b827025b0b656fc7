"""The matrix: which variants run, in which order, each on a file system of
its own, and what each run measured beside its own figures.

The headline file system (the first of --fs, a fresh ext4 by default) gets
every mode; tmpfs gets `plain` only (no disk: the speed limit every ratio
is taken against); the other file systems get `plain` and `eatmydata`, with
--side-reps repetitions. Repetitions are interleaved, each round in a
rotated order, and every run starts on a file system made for it, synced
(syncfs) before it starts, so that no variant pays for another's writeback
or deletions. Each
run's CPU time (its own cgroup, and the machine's) and its loop device's
writes and flushes are recorded beside its own figures: the flushes up to
its end, the bytes with what it left dirty (a syncfs after its end, outside
its time), so that writeback falling inside or after a run counts the same.
"""

import os
import subprocess
import time

from . import common, cpu, fs, latency, modes, proof
from .common import Variant, say, settle

SIDE_MODES = ("plain", "eatmydata")


def variants(ctx, modes):
    """The variants of this run, in the order of the report."""
    args, out = ctx.args, []
    headline = args.fs[0]
    for kind in args.fs:
        if kind == "tmpfs":
            base = "plain" if fs.latency_of(headline) is None else f"plain @{fs.label(headline)}"
            out.append(Variant("tmpfs", modes[0], kind, args.reps, base))
            continue
        # On a slow device (--latency), every latency is a headline: every
        # mode, every repetition, each named by its latency.
        slow = fs.latency_of(kind) is not None
        for mode in modes:
            if kind != headline and not slow and mode.name not in SIDE_MODES:
                continue
            plain = kind == headline and not slow
            name = mode.name if plain else f"{mode.name} @{fs.label(kind)}"
            base = "plain" if plain else f"plain @{fs.label(kind)}"
            reps = args.reps if kind == headline or slow else args.side_reps
            out.append(Variant(name, mode, kind, reps, base))
    return out


def full_matrix(ctx, module, chosen):
    """Under --full, the variants and the most repetitions of one workload.

    The seeds' workloads run on every file system (at most FULL_REPS times);
    the small ones, there for context at their quick sizes, run on the
    headline and tmpfs only, twice: so the whole matrix fits in half an hour.
    """
    if not ctx.args.full:
        return chosen, None
    if getattr(module, "FULL_ONLY", False):
        return chosen, getattr(module, "FULL_REPS", None)
    return [v for v in chosen if v.fs in (ctx.args.fs[0], "tmpfs")], 2


def size(ctx):
    """The loop file's size (sparse) or tmpfs limit: room for the biggest run."""
    return ctx.args.fs_size << 30


def server_logs(base):
    """The sizes of the servers' output files (`*.out` in the bench folder)."""
    return {name: os.path.getsize(os.path.join(base, name))
            for name in os.listdir(base) if name.endswith(".out")}


def since(base, sizes):
    """What each server output file gained since `sizes`, new files whole."""
    texts = []
    for name in server_logs(base):
        with open(os.path.join(base, name), "rb") as log:
            log.seek(sizes.get(name, 0))
            texts.append(log.read().decode(errors="replace"))
    return texts


def attempt(ctx, module, variant, failures, trace=None):
    """One run on a new file system; a failure is recorded and the bench goes on."""
    try:
        with fs.make(variant.fs, ctx.base, size(ctx)) as mounted:
            ctx.mounted = mounted
            try:
                if hasattr(module, "stage"):
                    # before the sync: not the run's writes
                    module.stage(ctx, variant, probe=trace is not None)
                settle(mounted.path)  # mkfs's, mount's and stage's writes are not the run's
                before = mounted.counters()
                logs = server_logs(ctx.base)
                common.STDERR.clear()
                with cpu.Accounting() as accounting:
                    result, mapped = module.run(ctx, variant, trace=trace)
                flush = modes.flush_seconds(common.STDERR + since(ctx.base, logs))
                if flush is not None:
                    result["phase flush"] = flush
                ended = mounted.counters()
                if ended is not None:
                    settle(mounted.path)  # what the run left dirty is its writing too
                device = fs.run_figures(before, ended, mounted.counters())
                for key, value in (device or {}).items():
                    result[f"device {key}"] = value
                if "fdatasync_ms" in mounted.about:  # a slow device's, measured before the run
                    result["device fdatasync ms"] = mounted.about["fdatasync_ms"]
                result.update(accounting.figures)
                for kind in ("user", "sys"):  # a container's own cgroup (incontainer.py)
                    if f"cpu {kind}" in result and f"container cpu {kind}" in result:
                        result[f"cpu {kind}"] += result.pop(f"container cpu {kind}")
                if trace is None and hasattr(module, "check"):
                    module.check(ctx, variant)
                ctx.fs_seen.setdefault(variant.fs, mounted.describe())
                return result, mapped
            finally:
                ctx.stop_all()
                ctx.unmount_all()
                ctx.mounted = None
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        say(f"{module.NAME} {variant.name}: FAILED: {str(error)[-300:]}")
        failures.append(str(error)[-4000:])
        return None, None


def probe(ctx, module, variant, failures):
    """A short run under strace: the durability requests that reached the kernel."""
    output = os.path.join(ctx.base, "strace.out")
    if os.path.exists(output):
        os.remove(output)
    result, _ = attempt(ctx, module, variant, failures, trace=proof.strace_prefix(output))
    return proof.count(output) if result else None


def with_extra_modes(ctx, module, chosen):
    """`chosen`, and on the headline file system the modes the workload
    always wants beside them (EXTRA_MODES), if not chosen already."""
    names = {v.mode.name for v in chosen}
    extra = []
    for name in getattr(module, "EXTRA_MODES", []):
        mode = modes.MODES[name](ctx)
        if mode is not None and name not in names:
            extra.append(Variant(name, mode, ctx.args.fs[0], ctx.args.reps, "plain"))
    # Beside the other modes of the headline, before tmpfs and the rest.
    at = max((i + 1 for i, v in enumerate(chosen) if v.fs == ctx.args.fs[0]), default=0)
    return chosen[:at] + extra + chosen[at:]


def repetitions(ctx, module, chosen, cap):
    """{variant name: how many runs}: --reps each, at most `cap` (--full);
    in a --latency run, once for a variant no issue's number judges (not
    in one of latency.pairs: libeatmydata, the knobs of a program without
    LATENCY_KNOB, tmpfs). bench() also stops repeating a variant whose run
    took longer than --long seconds: a plain run at 25 ms is long because
    of its flushes, and its speed-up needs no median, while a short eaten
    run is where the machine's noise shows."""
    judged = {mode for base, eaten, _ in latency.pairs(module) for mode in (base, eaten)}
    reps = {}
    for v in chosen:
        count = min(v.reps, cap or v.reps)
        if ctx.args.latency and (v.mode.name not in judged or v.fs == "tmpfs"):
            count = 1
        reps[v.name] = count
    return reps


def bench(ctx, module, chosen):
    """Every variant's runs of one workload: {variant name: outcome}."""
    if hasattr(module, "variants"):
        chosen = module.variants(ctx)  # its own, whatever --modes and --fs say
    else:
        chosen = with_extra_modes(ctx, module, chosen)
    chosen, cap = full_matrix(ctx, module, chosen)
    if any(v.mode.knobs for v in chosen) and not getattr(module, "has_knobs", lambda: True)():
        ctx.note(f"{module.NAME}: no durability knob in this version: the db knobs modes skipped")
        chosen = [v for v in chosen if not v.mode.knobs]
    outcome = {v.name: {"runs": [], "mapped": [], "failures": [], "fs": v.fs,
                        "mode": v.mode.name, "baseline": v.baseline} for v in chosen}
    traced = {}  # mode -> strace counts: a mode's proof holds on every file system
    if hasattr(module, "prepare"):
        module.prepare(ctx)  # input files made once, outside every run's accounting
    for variant in chosen:
        data = outcome[variant.name]
        if not ctx.args.no_proof and variant.mode.traced and variant.mode.name not in traced:
            traced[variant.mode.name] = probe(ctx, module, variant, data["failures"])
            say(f"{module.NAME} {variant.mode.name}: "
                f"{proof.describe(traced[variant.mode.name])}")
        data["strace"] = traced.get(variant.mode.name)
    reps = repetitions(ctx, module, chosen, cap)
    for rep in range(max(reps.values())):
        due = [v for v in chosen if reps[v.name] > rep]
        if not due:
            break
        turn = rep % len(due)
        for variant in due[turn:] + due[:turn]:
            data = outcome[variant.name]
            began = time.monotonic()
            result, mapped = attempt(ctx, module, variant, data["failures"])
            ctx.loads.append(os.getloadavg()[0])
            if ctx.args.long and time.monotonic() - began > ctx.args.long:
                reps[variant.name] = min(reps[variant.name], rep + 1)  # long: its runs so far
            if result is None:
                continue
            data["runs"].append(result)
            if mapped is not None:
                data["mapped"].append(mapped)
            shown = ", ".join(f"{k} {v:.2f}" for k, v in result.items() if " " not in k)
            say(f"{module.NAME} rep {rep + 1}/{reps[variant.name]} {variant.name}: {shown}")
    for data in outcome.values():
        mapped = all(data["mapped"]) if data["mapped"] else None
        data["proof"] = proof.describe(data["strace"], mapped)
        if data["failures"]:
            data["proof"] += f"; {len(data['failures'])} run(s) FAILED (see results.json)"
    return outcome
