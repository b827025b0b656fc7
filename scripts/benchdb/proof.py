"""Proof that a variant did what it claims: what reached the kernel.

A short run of each workload under `strace -f` lists every durability
request that got past the variant: sync calls, and opens, `fcntl(F_SETFL)`
and `pwritev2` carrying sync or direct-I/O flags. Under a working preload
library both counts are zero; under the plain variant they are not, which
is the control that keeps the check from passing trivially.
"""

import re

SYNC_CALLS = ("fsync", "fdatasync", "sync", "syncfs", "sync_file_range", "msync")
TRACED = SYNC_CALLS + ("open", "openat", "openat2", "fcntl", "pwritev2")
CALL = re.compile(r"^(?:\[pid\s+)?\d+\]?\s+(\w+)\((.*)$")
SYNC_FLAG = re.compile(r"\bO_(?:D)?SYNC\b|\bRWF_(?:D)?SYNC\b")
DIRECT_FLAG = re.compile(r"\bO_DIRECT\b")


def strace_prefix(output):
    return ["strace", "-f", "-qq", "-A", "-o", output, "-e", "trace=" + ",".join(TRACED)]


def count(output):
    """Sync calls, sync-flag and direct-I/O requests that reached the kernel."""
    syncs = sync_flags = direct = 0
    with open(output, errors="replace") as trace:
        for line in trace:
            match = CALL.match(line)
            if not match:
                continue  # "<... resumed>" halves, signals, exits
            call, rest = match.groups()
            if call == "msync":
                syncs += "MS_SYNC" in rest
            elif call in SYNC_CALLS:
                syncs += 1
            elif call == "fcntl" and "F_SETFL" not in rest:
                continue
            else:
                sync_flags += bool(SYNC_FLAG.search(rest))
                direct += bool(DIRECT_FLAG.search(rest))
    return {"syncs": syncs, "sync_flags": sync_flags, "direct": direct}


def describe(counts, mapped=None):
    """One table cell: what reached the kernel, and whether the library loaded."""
    if counts is None:
        text = "not probed"
    else:
        text = f"{counts['syncs']:,} syncs, {counts['sync_flags']:,} O_SYNC/O_DSYNC"
        text += f", {counts['direct']:,} O_DIRECT"
    if mapped is not None:
        text += "; library mapped" if mapped else "; library NOT mapped"
    return text
