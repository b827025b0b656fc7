"""Where a run's CPU time goes: its own cgroup, and the whole machine.

Servers that daemonize are not children anyone waits for, so rusage misses
them. The bench puts itself in a cgroup of its own for the length of one
run: everything the run starts is born there and counted, servers included
(the bench's own process is too, but it only waits). Writeback, the loop
device and the journal work in kernel threads outside any cgroup, so the
machine-wide figure from /proc/stat is given beside it; on a shared machine
it includes other people's work and is read as an upper bound.

The v1 `cpuacct` controller is used where it is mounted, else cgroup v2's
cpu.stat; with neither, the cgroup figures are left out.
"""

import os
import time

CPUACCT = "/sys/fs/cgroup/cpuacct"
TICK = os.sysconf("SC_CLK_TCK")


def hierarchy():
    """(kind, mount point) of the cgroup tree we can count in, or None."""
    if os.path.exists(os.path.join(CPUACCT, "cpuacct.usage_user")):
        return "v1", CPUACCT
    with open("/proc/mounts") as mounts:
        for line in mounts:
            parts = line.split()
            if parts[2] == "cgroup2":
                return "v2", parts[1]
    return None


def own_path(kind, pid="self"):
    """The cgroup of process `pid` (ours by default), relative to the
    hierarchy's root."""
    with open(f"/proc/{pid}/cgroup") as groups:
        for line in groups:
            number, controllers, path = line.rstrip("\n").split(":", 2)
            if (kind == "v1" and "cpuacct" in controllers.split(",")) or \
                    (kind == "v2" and number == "0"):
                return path.lstrip("/")
    return ""


def machine():
    """Seconds of CPU, all CPUs together, from the `cpu` line of /proc/stat,
    and the machine's context switches (its `ctxt` line). Idle and steal
    tell a run that waited on its own round trips (a client and a server
    waking each other: idle CPUs, many switches) from one that waited for
    a CPU at all (another guest's, on a virtual machine: steal)."""
    with open("/proc/stat") as stat:
        lines = stat.read().splitlines()
    fields = [int(x) for x in lines[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq = fields[:7]
    steal = fields[7] if len(fields) > 7 else 0
    switches = next((int(line.split()[1]) for line in lines if line.startswith("ctxt ")), 0)
    return {"user": (user + nice) / TICK, "sys": (system + irq + softirq) / TICK,
            "iowait": iowait / TICK, "idle": idle / TICK, "steal": steal / TICK,
            "switches": switches}


class Accounting:
    """`with Accounting() as acct: ...` then `acct.figures`: CPU seconds of
    everything started inside (cgroup user/sys) and of the machine."""

    counter = 0

    def __init__(self):
        self.found = hierarchy()
        self.group = self.home = None
        self.figures = {}

    def __enter__(self):
        if self.found:
            kind, root = self.found
            Accounting.counter += 1
            self.home = os.path.join(root, own_path(kind))
            self.group = os.path.join(root, f"bench-db.{os.getpid()}.{Accounting.counter}")
            try:
                os.mkdir(self.group)
                join(self.group)
            except OSError:
                self.group = None  # no cgroup of our own here: machine figures only
        self.start = machine()
        return self

    def __exit__(self, *_):
        end = machine()
        self.figures = {f"machine {k}": end[k] - self.start[k] for k in end}
        if self.group:
            self.figures.update(self.read())
            join(self.home)
            for _ in range(40):  # a killed server may take a moment to go
                try:
                    os.rmdir(self.group)
                    break
                except OSError:
                    time.sleep(0.25)
        return False

    def read(self):
        return read(self.found[0], self.group)


def read(kind, group):
    """User and system CPU seconds of the cgroup folder `group` so far."""
    if kind == "v1":
        def ns(name):
            with open(os.path.join(group, name)) as file:
                return int(file.read()) / 1e9
        return {"cpu user": ns("cpuacct.usage_user"), "cpu sys": ns("cpuacct.usage_sys")}
    with open(os.path.join(group, "cpu.stat")) as stat:
        values = dict(line.split() for line in stat)
    return {"cpu user": int(values["user_usec"]) / 1e6,
            "cpu sys": int(values["system_usec"]) / 1e6}


def of_process(pid):
    """CPU seconds so far of the cgroup process `pid` is in, as Accounting
    counts its own: for a container, which its engine starts in a cgroup of
    its own outside the run's. None where no hierarchy can be read."""
    found = hierarchy()
    if not found:
        return None
    kind, root = found
    try:
        return read(kind, os.path.join(root, own_path(kind, pid)))
    except (OSError, KeyError, ValueError):
        return None


def join(group):
    with open(os.path.join(group, "cgroup.procs"), "w") as procs:
        procs.write(str(os.getpid()))
