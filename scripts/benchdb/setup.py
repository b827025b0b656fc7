"""What the bench needs on the machine, and what it records about it.

On Debian or Ubuntu, as root, missing packages (databases, tools, file systems) are installed with
apt-get. A package's maintainer scripts would start the system's own
service; a policy-rc.d that refuses is put in place for the install (and
removed after, if we created it), so no system service is started.
"""

import glob
import hashlib
import os
import platform
import shutil
import subprocess

from .common import output, say
from .modes import PACKAGES as MODE_PACKAGES

ALWAYS = {"strace": "strace", "losetup": "mount", "mkfs.ext4": "e2fsprogs",
          "mkfs.xfs": "xfsprogs"}
POLICY = "/usr/sbin/policy-rc.d"


def present(program):
    """On PATH, or in a versioned PostgreSQL directory (Debian's layout)."""
    return bool(shutil.which(program) or glob.glob(f"/usr/lib/postgresql/*/bin/{program}"))


def installed(package):
    done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                          capture_output=True, text=True, check=False)
    return "install ok installed" in done.stdout


def ensure(workloads, modes, install):
    """Install what the workloads, the modes and the file systems need."""
    needs = dict(ALWAYS)
    for module in workloads:
        needs.update(module.PACKAGES)
    missing = {package for program, package in needs.items() if not present(program)}
    missing |= {MODE_PACKAGES[m] for m in modes if m in MODE_PACKAGES
                and not installed(MODE_PACKAGES[m])}
    missing = sorted(missing)
    if not missing:
        return
    if not install or os.geteuid() != 0 or not shutil.which("apt-get"):
        raise SystemExit(f"bench-db: missing packages: {' '.join(missing)} "
                         "(run as root on Debian/Ubuntu to install them, or install them)")
    say(f"installing {' '.join(missing)}")
    created = not os.path.exists(POLICY)
    if created:
        with open(POLICY, "w") as policy:
            policy.write("#!/bin/sh\n# bench-db: no service starts during its install\nexit 101\n")
        os.chmod(POLICY, 0o755)
    try:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing,
                       check=True, env=env, stdout=subprocess.DEVNULL)
    finally:
        if created:
            os.remove(POLICY)


def package_version(path):
    owner = output(["dpkg-query", "-S", os.path.realpath(path)]).split(":")[0]
    if owner in ("?", "") or " " in owner:
        return os.path.basename(path)
    return f"{owner} {output(['dpkg-query', '-W', '-f=${Version}', owner])}"


def digest(path):
    with open(path, "rb") as file:
        return hashlib.sha256(file.read()).hexdigest()


def machine(ctx, workloads, modes):
    """Date, machine and versions, one line each, for the report."""
    cpu = "?"
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as info:
        memory = int(info.readline().split()[1]) // 1024 // 1024
    lines = [
        f"date: {output(['date', '-u', '+%Y-%m-%d %H:%M UTC'])}",
        f"machine: {cpu}, {os.cpu_count()} CPUs, {memory} GiB RAM, kernel {platform.release()}",
        f"os: {output(['sh', '-c', '. /etc/os-release; echo $PRETTY_NAME'])}",
        f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
        f" (1, 5, 15 minutes, on {os.cpu_count()} CPUs)",
        f"eatmydata: {output(['git', '-C', ctx.root, 'describe', '--always', '--dirty'])},"
        f" libeatmydata.so sha256 {digest(ctx.library)[:12]} ({output(['rustc', '--version'])})",
    ]
    for module in workloads:
        lines += [line for line in module.versions() if line not in lines]
    for mode in modes:
        if mode.library and mode.library != ctx.library:
            lines.append(f"{mode.name}: {mode.library} ({package_version(mode.library)})")
    return lines
