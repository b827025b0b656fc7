"""Package installation: `apt-get install` of real packages into a Debian 12
chroot, from a warm apt cache (a seed's case, and the package issue's).

The chroot is a copy of the bookworm tree that scripts/debian-rootfs keeps
under /var/tmp (debootstrap, made once), with the .deb files already in its
apt cache (downloaded once, kept beside it), so that the run is dpkg's work
alone: no network. Each run gets its own copy on its own file system, made
before the run's sync and not counted. The mode's prefix runs inside the
chroot: the files it names (the eatmydata command and its library, an
LD_PRELOAD library) are bind-mounted at the same paths. The program's own
knob is `dpkg --force-unsafe-io`. After the run, dpkg must list every
package as installed.
"""

import glob
import os
import shutil
import subprocess

from .common import output, say, timed

NAME = "apt"
FULL_ONLY = True
PACKAGES = {"debootstrap": "debootstrap", "chroot": "coreutils"}
MEASURES = [("install", "apt-get install {packages} into a Debian 12 chroot", "s")]
ROOTFS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "debian-rootfs")
OWN_PATH = os.path.join(os.path.dirname(ROOTFS), "own-path")
POLICY = "#!/bin/sh\n# bench-db: no service starts in the chroot\nexit 101\n"
ENV = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
       "LC_ALL": "C.UTF-8"}


def packages(ctx, probe=False):
    if probe or (ctx.args.quick and not ctx.args.latency):
        return ["make"]
    return ["build-essential"]


def tree():
    """The cached bookworm tree (made on first use by scripts/debian-rootfs)."""
    done = subprocess.run([ROOTFS, "none"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"apt: {ROOTFS} none failed: {done.stderr.strip()[-500:]}")
    return done.stdout.strip()


def own(folder):
    """`folder` (in /var/tmp, which every user may write) made root's, or
    refused when another user made it first (scripts/own-path)."""
    done = subprocess.run([OWN_PATH, "dir", folder], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"apt: {done.stderr.strip()}")


def archives(ctx, names):
    """A directory of the .deb files `names` need, downloaded once and kept."""
    cache = f"{tree()}.debs-{'+'.join(sorted(names))}"
    if os.path.lexists(cache):
        own(cache)
    if glob.glob(os.path.join(cache, "*.deb")):
        return cache
    say(f"apt: downloading {' '.join(names)} once into {cache}")
    scratch = os.path.join(ctx.base, "download-root")
    subprocess.run([ROOTFS, scratch], check=True, stdout=subprocess.DEVNULL)
    try:
        subprocess.run(["chroot", scratch, "apt-get", "install", "-y", "-q", "--download-only",
                        "--no-install-recommends"] + names, env=ENV, check=True,
                       stdout=subprocess.DEVNULL)
        own(cache + ".part")
        for deb in glob.glob(os.path.join(scratch, "var/cache/apt/archives/*.deb")):
            shutil.copy2(deb, cache + ".part")
        os.rename(cache + ".part", cache)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return cache


def prepare(ctx):
    archives(ctx, packages(ctx))
    archives(ctx, packages(ctx, probe=True))


def versions():
    return [f"apt: {output(['apt-get', '--version'])}, dpkg: {output(['dpkg', '--version'])}"]


def describe(ctx):
    return {"install": MEASURES[0][1].format(packages=" ".join(packages(ctx)))}


def root(ctx):
    return os.path.join(ctx.mounted.path, "root")


def host_files(ctx, prefix):
    """The files a mode's prefix names, which must exist inside the chroot."""
    files = []
    for word in prefix:
        path = word.split("=", 1)[-1]
        if os.path.isabs(path) and os.path.isfile(path):
            files.append(path)
            if path == ctx.eatmydata:
                files.append(ctx.library)  # found next to the command
    return files


def stage(ctx, variant, probe=False):
    """A fresh copy of the tree with the .debs in its cache, on this run's file system."""
    dest = root(ctx)
    subprocess.run([ROOTFS, dest], check=True, stdout=subprocess.DEVNULL)
    for deb in glob.glob(os.path.join(archives(ctx, packages(ctx, probe)), "*.deb")):
        shutil.copy2(deb, os.path.join(dest, "var/cache/apt/archives"))
    with open(os.path.join(dest, "usr/sbin/policy-rc.d"), "w") as policy:
        policy.write(POLICY)
    os.chmod(os.path.join(dest, "usr/sbin/policy-rc.d"), 0o755)
    ctx.bind("/proc", os.path.join(dest, "proc"))
    for path in host_files(ctx, variant.prefix):
        ctx.bind(path, dest + path)


def run(ctx, variant, trace=None):
    probe = trace is not None
    knobs = ["-o", "Dpkg::Options::=--force-unsafe-io"] if variant.knobs else []
    argv = ((trace or []) + ["chroot", root(ctx)] + variant.prefix
            + ["apt-get", "install", "-y", "-q", "--no-download", "--no-install-recommends"]
            + knobs + packages(ctx, probe))
    seconds, _ = timed(argv, env=ENV)
    return {"install": seconds}, None


def check(ctx, variant):
    """dpkg lists every package asked for as installed, and nothing half-done."""
    names = packages(ctx)
    _, out = timed(["chroot", root(ctx), "dpkg-query", "-W", "-f=${Status}\n"] + names,
                   env=ENV)
    _, audit = timed(["chroot", root(ctx), "dpkg", "--audit"], env=ENV)
    if out.split("\n")[:len(names)] != ["install ok installed"] * len(names) or audit.strip():
        raise RuntimeError(f"apt: after the run dpkg says {out!r} {audit!r}")
