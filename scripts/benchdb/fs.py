"""File systems made for one run, and what the block device saw during it.

The machine's own disk is whatever it has become: on a CI or cloud machine
often an ext4 without a journal, mounted with `discard`, after thousands of
files were created and deleted on it, and file creation there gets slower
the more was deleted. A user's machine has a journaled ext4 or xfs. So each
run gets a file system made just for it, on a loop device over a file on
the machine's disk, and gone after it:

- `ext4`: `mkfs.ext4` with its default options (journaled), inode tables
  and journal written at mkfs time (`lazy_itable_init=0,lazy_journal_init=0`)
  so that no background initialisation runs during the measurement;
- `xfs`: `mkfs.xfs` with its defaults (Debian's xfsprogs);
- `tmpfs`: a private tmpfs mount, no disk at all: the speed limit;
- `disk`: a directory on the machine's own disk as it is (under /var/tmp);
- `slow:MS`: the same ext4 as `ext4`, on a device whose every flush takes
  MS milliseconds (slowdisk.py, `scripts/slow-disk`): the disks users have,
  from a data-centre SSD to Docker Desktop's VM. Each is checked before
  its run (dd oflag=dsync writes take their latencies; the server answered
  every flush the kernel counted) and the latency a user sees there (one
  fdatasync of a rewritten page) is measured and kept in its description.

Each is a context manager that yields a `Mounted`: where to put data, what
the file system is (type, journal, mount options) and, on a loop device, the
device's counters from /proc/diskstats. Whatever it made is undone on the
way out (umount, losetup -d, rm), on failure and Ctrl-C too. Never read the
counters of the machine's own disk: other programs write to it.
"""

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field

from . import slowdisk

KINDS = ("ext4", "xfs", "disk", "tmpfs")
MKFS = {
    "ext4": ["mkfs.ext4", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
    "xfs": ["mkfs.xfs", "-q", "-f"],
}
SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the device's own size


@dataclass
class Mounted:
    """A file system ready for a run: `path` is an empty directory on it."""

    kind: str
    path: str
    device: str = ""  # "loop3" for a loop device; "" when there is none of our own
    about: dict = field(default_factory=dict)
    slow: str = ""  # the slow device's folder (slowdisk.py), "" for any other

    def counters(self):
        """Flushes, writes and bytes written so far on our loop device, or
        None; on a slow device also the flushes its server answered."""
        if not self.device:
            return None
        if not self.slow:
            return device_counters(self.device)
        # The server counts a flush as it answers, the kernel as it
        # completes: read both when no flush is between the two (a
        # journal commit of its own may be), else a run's counts differ
        # by one that neither made.
        deadline = time.monotonic() + 5
        while True:
            first = slowdisk.counts(self.slow)
            counted = device_counters(self.device)
            again = slowdisk.counts(self.slow)
            if (first == again and first[0] == first[1]) or time.monotonic() > deadline:
                # Since the device was made, the server's count less the kernel's.
                counted["served"] = counted["flushes"] + again[0] - again[1]
                return counted
            time.sleep(0.01)

    def describe(self):
        """One line: file system, journal, mount options (and the device)."""
        about = self.about
        text = f"{about.get('type', '?')}, journal {about.get('journal', '?')}"
        text += f", mounted {about.get('options', '?')}"
        return text + (f", on {about['source']}" if about.get("source") else "")


def device_counters(name):
    """The line of /proc/diskstats for `name`, as the three figures we use.

    The line is `major minor name` and then the kernel's fields (see the
    kernel's Documentation/admin-guide/iostats.rst): the 5th is writes
    completed, the 7th sectors written, the 16th flush requests completed.
    """
    with open("/proc/diskstats") as stats:
        for line in stats:
            parts = line.split()
            if len(parts) >= 19 and parts[2] == name:
                return {"flushes": int(parts[3 + 15]), "writes": int(parts[3 + 4]),
                        "bytes": int(parts[3 + 6]) * SECTOR}
    raise RuntimeError(f"fs: no line for {name} in /proc/diskstats")


def difference(before, after):
    """What a run added to the counters (None where there are none)."""
    if before is None or after is None:
        return None
    return {key: after[key] - before[key] for key in before}


def run_figures(before, ended, settled):
    """What a run did to its loop device (None where there is none): the
    flushes completed from its start to its end, and the writes and bytes
    including what it left dirty, counted after a syncfs that follows its
    end (`settled`, outside its time).

    Bytes read at the end alone count only the writeback the kernel
    happened to do within the run: it writes a page back once it has been
    dirty for vm.dirty_expire_centisecs (30 s), or earlier when the machine
    as a whole holds too much dirty memory. So the same import (its data
    directory made at its start) wrote 2.7 MB in a 27 s run and 37 MB in a
    31 s one; with what it left dirty, 47 MB either way."""
    if before is None or ended is None or settled is None:
        return None
    figures = {"flushes": ended["flushes"] - before["flushes"],
               "writes": settled["writes"] - before["writes"],
               "bytes": settled["bytes"] - before["bytes"]}
    if "served" in before:
        # The slow device's server must have answered every flush counted.
        served = ended["served"] - before["served"]
        if served != figures["flushes"]:
            raise RuntimeError(f"fs: the slow device's server answered {served} flushes, "
                               f"the kernel counted {figures['flushes']}")
        figures["served"] = served
    return figures


def describe_mount(path):
    """Type, journal and mount options of the file system holding `path`."""
    done = subprocess.run(["findmnt", "-n", "-o", "SOURCE,FSTYPE,OPTIONS", "-T", path],
                          capture_output=True, text=True, check=False)
    source, fstype, options = (done.stdout.split() + ["?", "?", "?"])[:3]
    return {"type": fstype, "options": options, "source": source,
            "journal": journal(source, fstype)}


def journal(source, fstype):
    """"yes"/"no" for ext4 (a running jbd2 journal), xfs always has its log."""
    if fstype == "xfs":
        return "yes"
    if fstype in ("ext3", "ext4"):
        name = os.path.basename(os.path.realpath(source))
        present = os.path.isdir("/proc/fs/jbd2") and any(
            entry.rsplit("-", 1)[0] == name for entry in os.listdir("/proc/fs/jbd2"))
        return "yes" if present else "no"
    return "no" if fstype == "tmpfs" else "?"


def run(argv):
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"fs: {' '.join(argv)} exited with {done.returncode}: "
                           f"{done.stderr.strip()[:300]}")
    return done.stdout.strip()


def unmount(path):
    """umount, retried while something lets go of it; lazily as the last resort."""
    for _ in range(20):
        if subprocess.run(["umount", path], capture_output=True, check=False).returncode == 0:
            return
        if not os.path.ismount(path):
            return
        time.sleep(0.25)
    subprocess.run(["umount", "-l", path], check=False)


@contextlib.contextmanager
def loop_fs(kind, parent, size):
    """A fresh `kind` file system on a loop device over a sparse file in `parent`."""
    work = tempfile.mkdtemp(prefix=f"fs-{kind}.", dir=parent)
    image, mountpoint = os.path.join(work, "image"), os.path.join(work, "mnt")
    device = ""
    try:
        os.chmod(work, 0o755)  # servers run as their own users
        os.mkdir(mountpoint)
        with open(image, "wb") as file:
            file.truncate(size)
        device = run(["losetup", "-f", "--show", image])
        run(MKFS[kind] + [device])
        run(["mount", "-t", kind, device, mountpoint])
        try:
            data = os.path.join(mountpoint, "data")
            os.mkdir(data)
            os.chmod(data, 0o755)
            yield Mounted(kind, data, os.path.basename(device), describe_mount(mountpoint))
        finally:
            unmount(mountpoint)
    finally:
        if device:
            subprocess.run(["losetup", "-d", device], capture_output=True, check=False)
        shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def tmpfs(parent, size):
    work = tempfile.mkdtemp(prefix="fs-tmpfs.", dir=parent)
    try:
        run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "bench-tmpfs", work])
        try:
            yield Mounted("tmpfs", work, "", describe_mount(work))
        finally:
            unmount(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def own_disk(parent):
    work = tempfile.mkdtemp(prefix="fs-disk.", dir=parent)
    try:
        os.chmod(work, 0o755)
        yield Mounted("disk", work, "", describe_mount(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def slow_ext4(latency_ms, parent, size):
    """A fresh ext4 on a slow device (slowdisk.py) whose flushes take `latency_ms`."""
    work = tempfile.mkdtemp(prefix=f"fs-slow{latency_ms:g}.", dir=parent)
    try:
        os.chmod(work, 0o755)  # servers run as their own users
        device = slowdisk.start(work, latency_ms, size)
        mountpoint = slowdisk.make_ext4(work)
        state = slowdisk.read_state(work)
        data = os.path.join(mountpoint, "data")
        os.mkdir(data)
        os.chmod(data, 0o755)
        about = describe_mount(mountpoint)
        about["source"] = f"{device}, flushes {latency_ms:g} ms"
        about["fdatasync_ms"] = state["fdatasync_ms"]
        about["checks"] = [state["check"], state["ext4_check"]]
        yield Mounted(slow_kind(latency_ms), data, os.path.basename(device), about, work)
    except slowdisk.SlowDiskError as error:
        raise RuntimeError(str(error)) from None
    finally:
        slowdisk.stop(work)
        shutil.rmtree(work, ignore_errors=True)


def slow_kind(latency_ms):
    """"slow:25" for a device whose flushes take 25 ms."""
    return f"slow:{latency_ms:g}"


def latency_of(kind):
    """The latency in ms of a slow kind ("slow:1.6" -> 1.6), None for any other."""
    if not kind.startswith("slow:"):
        return None
    try:
        return float(kind.split(":", 1)[1])
    except ValueError:
        return None


def label(kind):
    """How a variant's name says where it ran: "25 ms" for slow:25, else the kind."""
    latency = latency_of(kind)
    return kind if latency is None else f"{latency:g} ms"


def make(kind, parent="/var/tmp", size=2 << 30):
    """A context manager for a new file system of `kind` (one of KINDS).

    `parent` is a directory on the machine's disk: the loop device's file,
    the own-disk directory and the tmpfs mount point go there. `size` is
    the loop file's (sparse) size or the tmpfs limit, in bytes (xfs needs
    at least 300 MiB).
    """
    if kind in MKFS:
        return loop_fs(kind, parent, size)
    if kind == "tmpfs":
        return tmpfs(parent, size)
    if kind == "disk":
        return own_disk(parent)
    if latency_of(kind) is not None:
        return slow_ext4(latency_of(kind), parent, size)
    raise ValueError(f"fs: unknown file system {kind!r} (known: {', '.join(KINDS)})")
