"""The markdown report: medians, spread, speedup against plain, ratio to tmpfs.

"speedup vs plain" is against `plain` on the same file system (tmpfs: the
headline's plain). "ratio to tmpfs" is the variant's cost divided by the
tmpfs variant's (time, or 1/tps): 1.00 is as fast as having no disk at all,
1.05 is 5% slower. "CPU" is the user / system seconds of everything the
run started (its own cgroup, servers included), "machine" the same for the
whole machine (writeback, loop device and journal threads, and anyone else's
work); "flushes" are what the run's own loop device completed, "written"
the same with what the run left dirty (DEVICE_NOTE).
All are medians per run, so that a gap is explained by a column.
"""

import statistics

PROOF_NOTE = (
    "proof: a short run of the same workload under `strace -f` counted the durability "
    "requests that still reached the kernel; \"library mapped\" is read from the "
    "server's /proc/PID/maps during the timed runs."
)
DEVICE_NOTE = (
    "CPU: user / system seconds of everything the run started, servers included (a cgroup "
    "of its own; a container's own cgroup added, up to its stop); machine: the same for the whole machine from /proc/stat (kernel threads "
    "for writeback, the loop device and the journal, and other people's work on a shared "
    "machine). flushes: what the run's own loop device completed from the run's start to "
    "its end (/proc/diskstats); written: the bytes it wrote from the run's start to a syncfs "
    "of its file system right after the run's end (outside its time), so that what the run "
    "left dirty counts whether writeback came within the run or after it; none on tmpfs, "
    "and not read on the machine's own disk, which other programs share. All medians per "
    "run."
)


def figures(values, higher_is_better):
    """Median, min, max, and the cost (time, or 1/throughput) of the median."""
    median = statistics.median(values)
    cost = 1 / median if higher_is_better else median
    return {"median": median, "min": min(values), "max": max(values), "cost": cost}


def measure_rows(results, key, unit):
    """One row per variant for measure `key`, with speedups filled in."""
    higher = unit == "tps"
    rows = {}
    for variant, outcome in results.items():
        values = [run[key] for run in outcome["runs"]]
        if values:  # every run of a variant can fail; the others still count
            rows[variant] = figures(values, higher)
    tmpfs = rows.get("tmpfs", {}).get("cost")
    for variant, row in rows.items():
        plain = rows.get(results[variant]["baseline"], {}).get("cost")
        row["speedup"] = plain / row["cost"] if plain else None
        row["to_tmpfs"] = row["cost"] / tmpfs if tmpfs else None
    return rows


def device(outcome, key):
    """The median bytes written and flushes of a variant's runs, as two cells:
    measure `key`'s own where the workload counted them apart, else the run's."""
    suffix = f" {key}" if any(f"device flushes {key}" in r for r in outcome["runs"]) else ""
    runs = [r for r in outcome["runs"] if f"device flushes{suffix}" in r]
    if not runs:
        return "–", "–"
    written = statistics.median(r[f"device bytes{suffix}"] for r in runs) / 1e6
    flushes = statistics.median(r[f"device flushes{suffix}"] for r in runs)
    return f"{written:,.0f} MB" if written >= 10 else f"{written:.1f} MB", f"{flushes:,.0f}"


def cpu_cells(outcome):
    """Median CPU seconds of a variant's runs: its cgroup's and the machine's."""
    def pair(user, sys_):
        runs = [r for r in outcome["runs"] if user in r]
        if not runs:
            return "–"
        return (f"{statistics.median(r[user] for r in runs):.2f} / "
                f"{statistics.median(r[sys_] for r in runs):.2f}")
    return pair("cpu user", "cpu sys"), pair("machine user", "machine sys")


def file_systems(kinds, seen):
    """One line per file system of the run: type, journal, mount options."""
    names = {"ext4": "fresh ext4 on a loop device (made for each run)",
             "xfs": "fresh xfs on a loop device (made for each run)",
             "disk": "the machine's own disk as it is", "tmpfs": "a private tmpfs"}
    for kind in kinds:
        if kind.startswith("slow:"):
            names[kind] = (f"fresh ext4 on a slow device made for each run, every flush "
                           f"{kind.split(':', 1)[1]} ms (scripts/slow-disk)")
    return [f"file system {kind}{' (headline)' if i == 0 else ''}: {names[kind]}: "
            f"{seen.get(kind, 'no run finished on it')}" for i, kind in enumerate(kinds)]


def number(value, unit):
    if unit == "tps":
        return f"{value:,.0f}"
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def ratio(value):
    return "–" if value is None else f"{value:.2f}x"


def table(workloads, results, describe_all):
    """The whole report for the workloads that ran, as markdown lines."""
    lines = ["| workload | variant | file system | median | spread (min–max) "
             "| speedup vs plain | ratio to tmpfs | CPU user / sys | machine user / sys "
             "| written | flushes | proof |",
             "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    for module in workloads:
        outcome = results.get(module.NAME)
        if not outcome:
            continue
        titles = describe_all[module.NAME]
        for key, _, unit in module.MEASURES:
            rows = measure_rows(outcome, key, unit)
            for variant, row in rows.items():
                suffix = " tps" if unit == "tps" else " s"
                spread = f"{number(row['min'], unit)}–{number(row['max'], unit)}"
                written, flushes = device(outcome[variant], key)
                own, whole = cpu_cells(outcome[variant])
                lines.append(
                    f"| {titles[key]} | {variant} | {outcome[variant]['fs']} "
                    f"| {number(row['median'], unit)}{suffix} "
                    f"| {spread} | {ratio(row['speedup'])} | {ratio(row['to_tmpfs'])} "
                    f"| {own} | {whole} | {written} | {flushes} | {outcome[variant]['proof']} |"
                )
    return lines


def summaries(workloads, results):
    """What each workload says of its own outcome beyond the table's columns
    (its optional `summary(outcome)`: build's ratio to plain)."""
    return [line for module in workloads if module.NAME in results
            and hasattr(module, "summary") for line in module.summary(results[module.NAME])]


def phases(workloads, results):
    """Median seconds of each phase, per variant: where the time goes."""
    lines = []
    for module in workloads:
        outcome = results.get(module.NAME)
        if not outcome:
            continue
        runs = [run for data in outcome.values() for run in data["runs"]]
        # Every phase any run has, in order of first appearance: the
        # sync-at-exit mode adds "flush" (a part of the phases it ends).
        names = list(dict.fromkeys(k for run in runs for k in run if k.startswith("phase ")))
        if not names:
            continue
        lines += ["", f"{module.NAME} phases (median seconds):", "",
                  "| variant | " + " | ".join(n[6:] for n in names) + " |",
                  "|---|" + "--:|" * len(names)]
        for variant, data in outcome.items():
            if not data["runs"]:
                continue
            cells = [f"{statistics.median(r[n] for r in data['runs'] if n in r):.2f}"
                     if any(n in r for r in data["runs"]) else "–" for n in names]
            lines.append(f"| {variant} | " + " | ".join(cells) + " |")
    return lines


def waits(workloads, results):
    """Each run of each variant: its time, the CPU seconds (user and
    system) of what it started, and what the machine did over the whole
    run (idle and steal CPU seconds, context switches). Medians hide a run
    of two speeds; this shows which runs were slow and whether they worked
    more (CPU), waited on wake-ups (idle) or were taken (steal: the host
    gave the CPUs to someone else)."""
    lines = []
    for module in workloads:
        outcome = results.get(module.NAME)
        if not outcome:
            continue
        key, _, unit = module.MEASURES[0]
        rows = []
        for variant, data in outcome.items():
            for run in data["runs"]:
                if key not in run or "machine idle" not in run:
                    continue
                used = (f"{run['cpu user'] + run['cpu sys']:.2f}" if "cpu user" in run
                        else "–")
                rows.append(f"| {variant} | {number(run[key], unit)} | {used} "
                            f"| {run['machine idle']:.2f} | {run.get('machine steal', 0):.2f} "
                            f"| {run.get('machine switches', 0):,.0f} |")
        if rows:
            lines += ["", f"{module.NAME}, each run: {key}, its CPU, and the machine over the run:", "",
                      f"| variant | {key} | CPU s | machine idle s | steal s | switches |",
                      "|---|--:|--:|--:|--:|--:|"] + rows
            if unit != "tps":
                lines += steal_fits(outcome, key)
    return lines


def steal_fit(points):
    """(intercept, slope) of the least-squares line through (steal, time)
    points, or None where steal does not explain the times: fewer than
    three runs, steal that hardly varied (under a second), a line that
    leaves much of the spread unexplained (r² under 0.9), or one that
    no CPU taken away can make (a negative slope, or above 2 s a second)."""
    if len(points) < 3:
        return None
    steals = [steal for steal, _ in points]
    if max(steals) - min(steals) < 1.0:
        return None
    mean_steal = statistics.fmean(steals)
    mean_time = statistics.fmean(time for _, time in points)
    spread = sum((time - mean_time) ** 2 for _, time in points)
    slope = (sum((steal - mean_steal) * (time - mean_time) for steal, time in points)
             / sum((steal - mean_steal) ** 2 for steal in steals))
    intercept = mean_time - slope * mean_steal
    unexplained = sum((time - intercept - slope * steal) ** 2 for steal, time in points)
    if spread == 0 or 1 - unexplained / spread < 0.9 or not 0 < slope <= 2:
        return None
    return intercept, slope


def steal_fits(outcome, key):
    """Each variant's time against the steal of its runs: a virtual
    machine's CPUs taken by the host lengthen a run of round trips by
    about the time taken, so two variants are compared fairly at the
    same steal. The line through each variant's runs, and where it
    meets no steal; a variant whose times steal does not explain
    ([`steal_fit`]) is left out."""
    rows = []
    for variant, data in outcome.items():
        points = [(run["machine steal"], run[key]) for run in data["runs"]
                  if key in run and "machine steal" in run]
        fitted = steal_fit(points)
        if fitted:
            at_none, slope = fitted
            rows.append(f"| {variant} | {len(points)} | {slope:.2f} | {number(at_none, 's')} |")
    if not rows:
        return []
    return ["", f"{key} against steal, per variant whose times steal explains "
            "(least squares over its runs, r² at least 0.9):", "",
            "| variant | runs | seconds per second of steal | at no steal |",
            "|---|--:|--:|--:|"] + rows


def chart_data(workloads, results, describe_all, everything=True):
    """(title, unit, [(variant, median, min, max, speedup)]) for each measure;
    with everything=False only the headline's variants and tmpfs, and only a
    workload's CHART measures (if it names them)."""
    panels = []
    for module in workloads:
        outcome = results.get(module.NAME)
        if not outcome:
            continue
        for key, _, unit in module.MEASURES:
            if not everything and key not in getattr(module, "CHART", [key]):
                continue
            rows = measure_rows(outcome, key, unit)
            bars = [(v, r["median"], r["min"], r["max"], r["speedup"]) for v, r in rows.items()
                    if everything or outcome[v]["baseline"] == "plain"]
            if bars:  # none on the headline when every disk is a slow one (--latency)
                panels.append((describe_all[module.NAME][key], unit, bars))
    return panels


def headline_table(workloads, results, describe_all, name):
    """The table of docs/benchmarks.md: the headline file system's modes and tmpfs, each
    as plain's figure and the others' speedups, for the workloads that ran."""
    columns = []
    for outcome in (results[m.NAME] for m in workloads if m.NAME in results):
        for variant, data in outcome.items():
            if (data["baseline"] == "plain" and variant not in columns):
                columns.append(variant)
    lines = ["| workload | " + " | ".join(columns) + " |",
             "|---|" + "--:|" * len(columns)]
    for module in workloads:
        outcome = results.get(module.NAME)
        if not outcome:
            continue
        for key, _, unit in module.MEASURES:
            rows = measure_rows(outcome, key, unit)
            cells = []
            for variant in columns:
                row = rows.get(variant)
                if row is None:
                    cells.append("–")
                elif variant == "plain":
                    cells.append(number(row["median"], unit) + (" tps" if unit == "tps" else " s"))
                else:
                    cells.append(ratio(row["speedup"]))
            lines.append(f"| {describe_all[module.NAME][key]} | " + " | ".join(cells) + " |")
    return lines + ["", f"Medians, in run [{name}](benchmarks/{name}.md): plain's "
                        "time (or tps), the others' speedup against it, all on the headline "
                        "file system except tmpfs."]
