"""A C build: `make -j2` of BusyBox, a Debian source package of some 800 C
files (about 600 objects in its default configuration), the case of issue
46's item 4: a build syncs nothing, so what eatmydata costs there is its
exec check in each of the build's thousand-odd execs (make, the compiler's
driver, cc1, as, ld, the shell).

The source comes once from Debian's own archive (`apt-get source`, through
a deb-src list of its own beside the cache: the machine's apt sources are
not touched) and is kept under --dir. Each run gets a fresh copy on its own
file system, configured there (`make defconfig`) before the run's sync:
the timed part is the build alone. After the run the built busybox must
answer `busybox true`. Only when named in --only; no knob (a compiler has
none to turn off).
"""

import glob
import os
import shutil
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


def has_knobs():
    return False


def cache(ctx):
    return os.path.join(ctx.args.dir, f"eatmydata-bench-{SOURCE}")


def tree(ctx):
    """The unpacked source, fetched from Debian once and kept."""
    found = sorted(glob.glob(os.path.join(cache(ctx), f"{SOURCE}-*/")))
    if found:
        return found[-1].rstrip("/")
    folder = cache(ctx)
    say(f"build: fetching Debian's {SOURCE} source once into {folder}")
    for sub in ("lists/partial", "sources.list.d"):
        os.makedirs(os.path.join(folder, sub), exist_ok=True)
    with open(os.path.join(folder, "sources.list.d/debian-src.sources"), "w") as out:
        out.write(SOURCES)
    apt = ["apt-get", "-q", "-o", "APT::Sandbox::User=root",
           "-o", "Dir::Etc::sourcelist=/dev/null",
           "-o", f"Dir::Etc::sourceparts={folder}/sources.list.d",
           "-o", f"Dir::State::Lists={folder}/lists"]
    subprocess.run(apt + ["update"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(apt + ["source", SOURCE], check=True, cwd=folder, stdout=subprocess.DEVNULL)
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
    timed(["make", "-C", work(ctx), "defconfig"], env=ENV)


def run(ctx, variant, trace=None):
    argv = (trace or []) + variant.prefix + ["make", "-C", work(ctx), "-j2"]
    seconds, _ = timed(argv, env=ENV)
    return {"build": seconds}, None


def check(ctx, variant):
    """The build made a busybox that runs, from all its objects."""
    built = os.path.join(work(ctx), "busybox")
    done = subprocess.run([built, "true"], check=False)
    objects = sum(1 for _, _, files in os.walk(work(ctx)) for f in files if f.endswith(".o"))
    if done.returncode != 0 or objects < 300:
        raise RuntimeError(f"build: {built} true exited {done.returncode}, {objects} objects")
    ctx.build_objects = objects
