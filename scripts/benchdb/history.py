"""The results history: each recorded run (--record) leaves its whole report
in docs/benchmarks/, named by its date and commit, and the table and chart
of docs/benchmarks.md become that run's (of docs/containers.md, for the
container workloads: their PAGE). A regression then shows up as a
diff between two files of the history.
"""

import os
import re
import shutil

START, END = "<!-- bench-db: table -->", "<!-- /bench-db: table -->"


def stamp(about, commit):
    """"2026-12-01-0215-55f1463" from the report's date line and the commit."""
    date = re.sub(r"[^0-9]", "", about[0].split(":", 1)[1])[:12]
    return f"{date[:4]}-{date[4:6]}-{date[6:8]}-{date[8:12]}-{commit}"


def record(root, name, about, body, chart):
    """Write the run's report (`about` lines, then `body`) and chart into the
    history; return the report's path."""
    folder = os.path.join(root, "docs/benchmarks")
    os.makedirs(folder, exist_ok=True)
    report = os.path.join(folder, f"{name}.md")
    with open(report, "w") as out:
        out.write(f"# bench-db run {name}\n\n![chart]({name}.svg)\n\n"
                  + "\n".join(f"- {line}" for line in about) + "\n\n" + "\n".join(body) + "\n")
    shutil.copyfile(chart, os.path.join(folder, f"{name}.svg"))
    return report


def show(root, page, name, table):
    """Make `table` and run `name`'s chart those of `page` (docs/benchmarks.md,
    or the page its workloads name), between its START and END lines."""
    path = os.path.join(root, page)
    with open(path) as file:
        text = file.read()
    if START not in text or END not in text:
        raise SystemExit(f"bench-db: {path} has no {START} ... {END} to replace")
    before, rest = text.split(START, 1)
    after = rest.split(END, 1)[1]
    block = "\n".join([START, ""] + table + ["", f"![bars per workload and variant]"
                                                 f"(benchmarks/{name}.svg)", "", END])
    with open(path, "w") as file:
        file.write(before + block + after)


LATENCY = ("<!-- bench-db: latency -->", "<!-- /bench-db: latency -->")


def show_latency(root, page, chart, name):
    """Make the chart between `page`'s LATENCY lines run `name`'s (a --latency run)."""
    path = os.path.join(root, page)
    with open(path) as file:
        text = file.read()
    start, end = LATENCY
    if start not in text or end not in text:
        raise SystemExit(f"bench-db: {path} has no {start} ... {end} to replace")
    before, rest = text.split(start, 1)
    after = rest.split(end, 1)[1]
    block = "\n".join([start, f"![speed-up against the flush latency, one line a workload: "
                               f"run {name}]({chart})", end])
    with open(path, "w") as file:
        file.write(before + block + after)
