"""A C build: `make -j2` of BusyBox, a Debian source package of some 800 C
files (about 600 objects in its default configuration), the case of issue
46's item 4: a build syncs nothing, so what eatmydata costs there is its
exec check in each of the build's thousand-odd execs (make, the compiler's
driver, cc1, as, ld, the shell).

The source comes once from Debian's own archive (`apt-get source`, through
a deb-src list, package lists and apt cache of its own beside the source:
the machine's apt sources and cache are neither read nor changed): apt
checks the archive's signed Release file against debian-archive-keyring
and the .dsc and tarballs against the signed Sources index, and
dpkg-source, unpacking, the tarballs against the .dsc. It is kept under
--dir, which every user may write (/var/tmp): the folder must be root's
alone (scripts/own-path), or the bench refuses it rather than build, as
root, a tree another user put there; a fetch is made beside it and renamed
into place whole, so a failed one is never taken for the source. Each run
gets a fresh copy on its own file system, configured there (`make
defconfig`) before the run's sync: the timed part is the build alone.
After the run the built busybox must answer `busybox true`. Only when
named in --only; no knob (a compiler has none to turn off).

The proof run (strace, outside the timed runs) also counts the build's
execve calls, a note per mode; the summary after the table gives
eatmydata's median time and CPU as ratios of plain's, and the CPU it adds
per exec.
"""

import glob
import os
import re
import shutil
import statistics
import subprocess

from .common import output, say, timed

NAME = "build"
FULL_ONLY = True
ASKED_ONLY = True
PACKAGES = {"make": "make", "gcc": "gcc", "dpkg-source": "dpkg-dev", "bzip2": "bzip2"}
MEASURES = [("build", "make -j2 of {source} (defconfig, {objects} objects)", "s")]
SOURCE = "busybox"
SOURCES = ("Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n"
           "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C.UTF-8"}
OWN_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "own-path")
EXECS = {}  # mode name -> execve calls of one build (its proof run's)


def environment():
    """ENV, and the bench's own EATMYDATA_HOME (common.Context.snapshot):
    what the eatmydata command keeps goes there, not to the machine's."""
    home = os.environ.get("EATMYDATA_HOME")
    return dict(ENV, EATMYDATA_HOME=home) if home else dict(ENV)


def has_knobs():
    return False


def cache(ctx):
    return os.path.join(ctx.args.dir, f"eatmydata-bench-{SOURCE}")


def own(folder):
    """`folder` (under --dir, which every user may write) made root's, or
    refused when another user made it first (scripts/own-path)."""
    done = subprocess.run([OWN_PATH, "dir", folder], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"build: {done.stderr.strip()}")


def fetch(folder):
    """apt-get source into `folder`, with apt's sources, lists and cache its own."""
    for sub in ("lists/partial", "cache/archives/partial", "sources.list.d"):
        os.makedirs(os.path.join(folder, sub))
    with open(os.path.join(folder, "sources.list.d/debian-src.sources"), "w") as out:
        out.write(SOURCES)
    apt = ["apt-get", "-q", "-o", "APT::Sandbox::User=root",
           "-o", "Dir::Etc::sourcelist=/dev/null",
           "-o", f"Dir::Etc::sourceparts={folder}/sources.list.d",
           "-o", f"Dir::State::Lists={folder}/lists", "-o", f"Dir::Cache={folder}/cache"]
    subprocess.run(apt + ["update"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(apt + ["source", SOURCE], check=True, cwd=folder, stdout=subprocess.DEVNULL)
    for sub in ("lists", "cache"):  # only the fetch needs them
        shutil.rmtree(os.path.join(folder, sub))


def tree(ctx):
    """The unpacked source, fetched from Debian once and kept."""
    folder = cache(ctx)
    if os.path.lexists(folder):
        own(folder)
        found = sorted(glob.glob(os.path.join(folder, f"{SOURCE}-*/")))
        if found:
            return found[-1].rstrip("/")
    say(f"build: fetching Debian's {SOURCE} source once into {folder}")
    part = folder + ".part"
    own(part)  # refused if another user's; else ours, emptied
    shutil.rmtree(part)
    own(part)
    fetch(part)
    if os.path.lexists(folder):  # ours (checked above), without a tree
        shutil.rmtree(folder)
    os.rename(part, folder)
    return tree(ctx)


def prepare(ctx):
    tree(ctx)


def versions():
    return [f"gcc: {output(['gcc', '--version'])}, make: {output(['make', '--version'])}"]


def describe(ctx):
    objects = getattr(ctx, "build_objects", None)  # counted by check()
    return {"build": MEASURES[0][1].format(source=f"Debian's {os.path.basename(tree(ctx))}",
                                           objects=f"{objects:,}" if objects else "about 600")}


def work(ctx):
    return os.path.join(ctx.mounted.path, "build")


def stage(ctx, variant, probe=False):
    """A fresh copy of the source, configured, on this run's file system."""
    shutil.copytree(tree(ctx), work(ctx), symlinks=True)
    timed(["make", "-C", work(ctx), "defconfig"], env=environment())


def traced(trace):
    """The proof run's strace prefix, also tracing execve, and stopping the
    build only at the calls it traces (--seccomp-bpf: under a plain
    `strace -f` a build stops at each of its millions of calls and takes
    three times as long). A call a seccomp filter answers is then not seen:
    none under the library modes, whose calls reach no kernel."""
    out = [word + ",execve" if word.startswith("trace=") else word for word in trace]
    return out[:1] + ["--seccomp-bpf"] + out[1:]


def execs(trace):
    """execve calls in the proof run's strace output (the file after -o)."""
    with open(trace[trace.index("-o") + 1], errors="replace") as lines:
        return sum(bool(re.match(r"^(?:\[pid\s+)?\d+\]?\s+execve\(", line)) for line in lines)


def run(ctx, variant, trace=None):
    argv = ((traced(trace) if trace else []) + variant.prefix
            + ["make", "-C", work(ctx), "-j2"])
    seconds, _ = timed(argv, env=environment())
    if trace:
        EXECS[variant.mode.name] = execs(trace)
        ctx.note(f"build: {EXECS[variant.mode.name]:,} execve calls in one build under "
                 f"{variant.mode.name} (its strace run, outside the timed runs)")
    return {"build": seconds}, None


def check(ctx, variant):
    """The build made a busybox that runs, from all its objects."""
    built = os.path.join(work(ctx), "busybox")
    done = subprocess.run([built, "true"], check=False)
    objects = sum(1 for _, _, files in os.walk(work(ctx)) for f in files if f.endswith(".o"))
    if done.returncode != 0 or objects < 300:
        raise RuntimeError(f"build: {built} true exited {done.returncode}, {objects} objects")
    ctx.build_objects = objects


def summary(outcome):
    """eatmydata's median time and CPU against plain's, and the issue's 2%."""
    def medians(name):
        runs = outcome.get(name, {}).get("runs", [])
        cpu = [r["cpu user"] + r["cpu sys"] for r in runs if "cpu user" in r]
        return (statistics.median(r["build"] for r in runs) if runs else None,
                statistics.median(cpu) if cpu else None, len(runs))
    plain, eaten = medians("plain"), medians("eatmydata")
    if not plain[0] or not eaten[0]:
        return []
    ratio = eaten[0] / plain[0]
    line = (f"build: eatmydata's median {eaten[0]:.2f} s against plain's {plain[0]:.2f} s "
            f"({eaten[2]} and {plain[2]} runs): **{ratio:.3f}x** plain's time, "
            f"{'within' if ratio <= 1.02 else 'NOT within'} the issue's 2%")
    if plain[1] and eaten[1]:
        line += (f"; CPU (user + sys) {eaten[1]:.2f} s against {plain[1]:.2f} s, "
                 f"{eaten[1] / plain[1]:.3f}x")
        if EXECS.get("eatmydata"):
            extra = (eaten[1] - plain[1]) / EXECS["eatmydata"] * 1e6
            line += f" ({extra:+,.1f} µs of CPU per exec)"
    return ["", line + "."]
