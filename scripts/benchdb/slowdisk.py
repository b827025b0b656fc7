"""A block device whose every flush takes as long as we say.

A loop device over `disk`, the one file of a small FUSE file system
(crates/slowdisk, the server `eatmydata-slowdisk`) whose `fsync` answers
after the latency. The loop driver turns each flush request it gets into a
`vfs_fsync` of its backing file: REQ_OP_FLUSH, and the flushes the block
layer makes of FUA writes (a loop device offers no FUA: its
queue/fua is 0), so a journal commit (a preflush and a FUA commit block)
waits twice. It is the block flush that waits, never a call: `O_DSYNC`
writes and journal commits pay it as they would on a disk.

The loop device reads and writes its file buffered (the kernel's default,
`dio` 0): FUSE without a writeback cache sends each write through at once,
so no page of the FUSE file is ever dirty and each flush is exactly one
`FSYNC` with nothing to write back first. With `--direct-io=on` the counts
are the same (20 of 20 either way) but bulk writes run at a fifth of the
speed (56 against 286 MB/s here), so buffered it is. The loop driver
serves one request at a time per cgroup, so a flush holds back the
requests queued behind it on the same worker, as a SATA disk's FLUSH
CACHE (a non-queued command) does; the server itself answers reads and
writes on other threads while a flush waits.

The server counts the flushes it answered; that count (less the one
`fsync` losetup's setup makes outside any request) equals the device's
flush counter in /proc/diskstats, and `counts()` gives both.

Writes go to a sparse file in DIR (this disk), or with `ram=True` to a
tmpfs of the device's size. The server runs with a real-time priority, so
a busy machine delays a flush's answer no more than a disk would.

    dev = start(dir, 10)           # a device, its first checks passed
    mnt = make_ext4(dir)            # ext4 on it, the user's latency measured
    stop(dir)                       # everything gone
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
SERVER = "eatmydata-slowdisk"
SECTOR = 512
MKFS_EXT4 = ["mkfs.ext4", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0"]
CHECK_WRITES = 20  # dd oflag=dsync writes of 4 KiB in each self-check
SAMPLES = 24  # fdatasyncs of a rewritten page timed for the user's latency


class SlowDiskError(RuntimeError):
    pass


def state_path(dir):
    return os.path.join(dir, "state.json")


def read_state(dir):
    try:
        with open(state_path(dir)) as file:
            return json.load(file)
    except FileNotFoundError:
        raise SlowDiskError(f"slow-disk: no device started in {dir}") from None


def write_state(dir, state):
    temporary = state_path(dir) + ".new"
    with open(temporary, "w") as file:
        json.dump(state, file, indent=1)
    os.replace(temporary, state_path(dir))


def run(argv, **kwargs):
    done = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)
    if done.returncode != 0:
        raise SlowDiskError(f"slow-disk: {' '.join(argv)} exited with {done.returncode}: "
                            f"{done.stderr.strip()[:400]}")
    return done.stdout.strip()


def server_binary():
    """The FUSE server: $EATMYDATA_SLOWDISK, or built here (a workspace
    member left out of the default build, so built only when needed)."""
    given = os.environ.get("EATMYDATA_SLOWDISK")
    if given:
        return given
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    run(["nice", "cargo", "build", "-q", "-p", SERVER], cwd=ROOT)
    return os.path.join(target, "debug", SERVER)


def kernel_flushes(device):
    """Flush requests completed, the 16th field after the name in /proc/diskstats."""
    name = os.path.basename(device)
    with open("/proc/diskstats") as stats:
        for line in stats:
            parts = line.split()
            if len(parts) >= 19 and parts[2] == name:
                return int(parts[3 + 15])
    raise SlowDiskError(f"slow-disk: no line for {name} in /proc/diskstats")


def served_flushes(dir):
    with open(os.path.join(dir, "fuse", "flushes")) as file:
        return int(file.read().strip())


def counts(dir):
    """Flushes since the device was made: (served by the server, counted by the kernel)."""
    state = read_state(dir)
    return (served_flushes(dir) - state["served_base"],
            kernel_flushes(state["device"]) - state["kernel_base"])


def wait_for(ready, what, process=None, timeout=15):
    deadline = time.monotonic() + timeout
    while not ready():
        if process is not None and process.poll() is not None:
            raise SlowDiskError(f"slow-disk: the server exited with {process.returncode} "
                                f"before {what}")
        if time.monotonic() > deadline:
            raise SlowDiskError(f"slow-disk: no {what} after {timeout} s")
        time.sleep(0.05)


def start(dir, latency_ms, size=8 << 30, ram=False):
    """Makes the device and checks its flushes; returns its path (/dev/loopN)."""
    if os.geteuid() != 0:
        raise SlowDiskError("slow-disk: run as root (it mounts FUSE and makes loop devices)")
    if latency_ms < 0:
        raise SlowDiskError("slow-disk: the latency cannot be negative")
    os.makedirs(dir, exist_ok=True)
    if os.path.exists(state_path(dir)):
        raise SlowDiskError(f"slow-disk: {dir} already has a device: stop it first")
    binary = server_binary()
    state = {"latency_ms": latency_ms, "size": size, "ram": ram}
    write_state(dir, state)  # from here on, stop() undoes what is recorded
    try:
        backing = os.path.join(dir, "backing")
        if ram:
            os.makedirs(os.path.join(dir, "ram"), exist_ok=True)
            run(["mount", "-t", "tmpfs", "-o", f"size={size + (1 << 20)},mode=0700",
                 "slowdisk-ram", os.path.join(dir, "ram")])
            state["ram_mounted"] = True
            write_state(dir, state)
            backing = os.path.join(dir, "ram", "backing")
        with open(backing, "wb") as file:
            file.truncate(size)
        state["backing"] = backing
        mountpoint = os.path.join(dir, "fuse")
        os.makedirs(mountpoint, exist_ok=True)
        with open(os.path.join(dir, "server.log"), "wb") as log:
            argv = [binary, mountpoint, backing, str(round(latency_ms * 1000))]
            # A real-time priority when the machine grants one: a flush's
            # answer then waits for no other program's time slice.
            if subprocess.run(["chrt", "-f", "1", "true"], capture_output=True).returncode == 0:
                argv = ["chrt", "-f", "1"] + argv
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=log, start_new_session=True)
        state["pid"] = process.pid
        write_state(dir, state)
        wait_for(lambda: os.path.ismount(mountpoint), "FUSE mount", process)
        state["device"] = run(["losetup", "--direct-io=off", "-f", "--show",
                               os.path.join(mountpoint, "disk")])
        write_state(dir, state)
        # Setting the device up syncs its file once, outside any request.
        state["served_base"] = served_flushes(dir)
        state["kernel_base"] = kernel_flushes(state["device"])
        write_state(dir, state)
        state["check"] = check(dir, state["device"], latency_ms, raw=True)
        write_state(dir, state)
        return state["device"]
    except BaseException:
        stop(dir)
        raise


def dsync_writes(path, count, raw):
    """Seconds for `count` dd oflag=dsync writes of 4 KiB to `path`."""
    argv = ["dd", "if=/dev/zero", f"of={path}", "bs=4k", f"count={count}", "oflag=dsync",
            "status=none"]
    if not raw:
        argv.append("conv=notrunc")
    began = time.monotonic()
    run(argv)
    return time.monotonic() - began


def check(dir, device, latency_ms, raw, path=None):
    """The self-check: N dd oflag=dsync writes take at least N latencies,
    and the server answered exactly the flushes the kernel counted."""
    before = counts(dir)
    seconds = dsync_writes(device if raw else path, CHECK_WRITES, raw)
    after = counts(dir)
    served, kernel = after[0] - before[0], after[1] - before[1]
    floor = CHECK_WRITES * latency_ms / 1000
    result = {"writes": CHECK_WRITES, "seconds": round(seconds, 4), "floor": floor,
              "served": served, "kernel": kernel, "on": "device" if raw else "ext4"}
    if seconds < floor * 0.999:
        raise SlowDiskError(f"slow-disk: {CHECK_WRITES} dsync writes took {seconds:.3f} s, "
                            f"less than {CHECK_WRITES} x {latency_ms} ms: flushes are not slow")
    if served != kernel or kernel < CHECK_WRITES:
        raise SlowDiskError(f"slow-disk: {CHECK_WRITES} dsync writes: the server answered "
                            f"{served} flushes, the kernel counted {kernel}")
    return result


def cpu_wait():
    """Seconds this thread has waited for a CPU while runnable (schedstat)."""
    try:
        with open("/proc/thread-self/schedstat") as stat:
            return int(stat.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def fdatasync_latency(path, samples=SAMPLES):
    """Milliseconds of one fdatasync of a rewritten 4 KiB page of a file in
    `path`: the latency a user sees, which may cost more than one device
    flush. The mean of `samples` less the slowest eighth, each less the
    time it waited for a CPU, as the report's estimate takes it
    (src/wrapper/estimate/timing.rs): what a run of them costs each, one
    that waited for a journal commit left out, the machine's load too."""
    name = os.path.join(path, ".slow-disk-probe")
    fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        page = b"\xa5" * 4096
        os.pwrite(fd, page, 0)
        os.fsync(fd)  # allocated and committed: what follows only rewrites
        times = []
        for _ in range(samples):
            os.pwrite(fd, page, 0)
            waited = cpu_wait()
            began = time.monotonic()
            os.fdatasync(fd)
            took = time.monotonic() - began
            times.append((took - (cpu_wait() - waited)) * 1000)
        kept = sorted(times)[:len(times) - len(times) // 8]
        return statistics.mean(kept)
    finally:
        os.close(fd)
        os.unlink(name)


def make_ext4(dir, mountpoint=None):
    """A journaled ext4 on the device, mounted (at DIR/mnt unless told),
    checked there and its fdatasync latency recorded. Returns the mount point."""
    state = read_state(dir)
    mountpoint = mountpoint or os.path.join(dir, "mnt")
    os.makedirs(mountpoint, exist_ok=True)
    run(MKFS_EXT4 + [state["device"]])
    run(["mount", "-t", "ext4", state["device"], mountpoint])
    state["mounted"] = mountpoint
    write_state(dir, state)
    probe = os.path.join(mountpoint, ".slow-disk-check")
    with open(probe, "wb") as file:
        file.write(b"\0" * 4096 * CHECK_WRITES)
    os.sync()
    state["ext4_check"] = check(dir, state["device"], state["latency_ms"], raw=False, path=probe)
    os.unlink(probe)
    state["fdatasync_ms"] = round(fdatasync_latency(mountpoint), 3)
    write_state(dir, state)
    return mountpoint


def unmount(path):
    for _ in range(40):
        if not os.path.ismount(path):
            return
        if subprocess.run(["umount", path], capture_output=True).returncode == 0:
            return
        time.sleep(0.25)
    subprocess.run(["umount", "-l", path], capture_output=True)


def stop(dir):
    """Takes away what start() and make_ext4() made, in reverse order."""
    try:
        state = read_state(dir)
    except SlowDiskError:
        return
    if state.get("mounted"):
        unmount(state["mounted"])
    if state.get("device"):
        subprocess.run(["losetup", "-d", state["device"]], capture_output=True)
        # The device lets go of its file asynchronously.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and subprocess.run(
                ["losetup", "-j", os.path.join(dir, "fuse", "disk")],
                capture_output=True, text=True).stdout.strip():
            time.sleep(0.1)
    unmount(os.path.join(dir, "fuse"))
    pid = state.get("pid")
    if pid:
        stop_server(pid)
    if state.get("backing") and os.path.exists(state["backing"]):
        os.unlink(state["backing"])
    if state.get("ram_mounted"):
        unmount(os.path.join(dir, "ram"))
    log = os.path.join(dir, "server.log")
    if os.path.exists(log):
        os.unlink(log)
    for name in ("fuse", "mnt", "ram"):
        if os.path.isdir(os.path.join(dir, name)) and not os.path.ismount(os.path.join(dir, name)):
            os.rmdir(os.path.join(dir, name))
    os.unlink(state_path(dir))


def stop_server(pid):
    """The server ends when its mount goes; a signal if it does not."""
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return
            except ChildProcessError:  # not our child: watch /proc
                if not os.path.exists(f"/proc/{pid}") or zombie(pid):
                    return
            time.sleep(0.05)
    print(f"slow-disk: the server {pid} did not end", file=sys.stderr)


def zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
