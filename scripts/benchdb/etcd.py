"""etcd: sequential puts to a fresh single-member cluster, a Go program.

Go makes its system calls itself, so LD_PRELOAD never reaches etcd: the
eatmydata command turns seccomp mode on for it (the supervised filter by
default; `--modes seccomp=plain` for the filter alone). Each put is one
write-ahead-log append and fdatasync before etcd answers: what a test
suite that stores fixtures in etcd one by one pays. The puts go over one
kept-alive HTTP connection to etcd's JSON gateway (/v3/kv/put), one at a
time; the result is puts per second. etcd listens on loopback ports of its
own and is stopped at the end of each run.
"""

import base64
import http.client
import json
import os
import socket
import subprocess
import time

from .common import output, stop, wait_until

NAME = "etcd"
PACKAGES = {"etcd": "etcd-server"}
MEASURES = [("puts", "etcd {puts:,} sequential puts", "tps")]
# The filter without its supervisor, beside the default: the speed the
# default is held to for a Go program.
EXTRA_MODES = ["seccomp=plain"]


def puts(ctx, probe=False):
    if probe:
        return 100
    return 500 if ctx.args.quick else 1_500


def versions():
    return [f"etcd: {output(['etcd', '--version'])}"]


def describe(ctx):
    return {"puts": MEASURES[0][1].format(puts=puts(ctx))}


def knob():
    """etcd's own switch for its fsyncs (3.5 on); None before."""
    help_text = subprocess.run(["etcd", "--help"], capture_output=True, text=True).stdout
    return "--unsafe-no-fsync" if "--unsafe-no-fsync" in help_text else None


def has_knobs():
    return knob() is not None


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_pid(top):
    """etcd's pid: `top` itself, or its descendant named etcd (under the
    eatmydata command, which stays as its parent, and strace)."""
    todo = [top]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip() == "etcd":
                    return pid
            with open(f"/proc/{pid}/task/{pid}/children") as children:
                todo.extend(int(child) for child in children.read().split())
        except OSError:
            continue
    return 0


def call(connection, path, body):
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    if response.status != 200:
        raise RuntimeError(f"etcd {path}: HTTP {response.status}: {data[:200]!r}")
    return json.loads(data)


def encoded(text):
    return base64.b64encode(text.encode()).decode()


def healthy(port):
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        connection.request("GET", "/health")
        return b'"true"' in connection.getresponse().read()
    except OSError:
        return False


def run(ctx, variant, trace=None):
    count = puts(ctx, probe=trace is not None)
    flag = knob()
    data = ctx.fresh_dir(variant, "etcd")
    client, peer = free_port(), free_port()
    client_url, peer_url = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
    argv = (trace or []) + variant.prefix + [
        "etcd", f"--data-dir={data}", "--name=bench",
        f"--listen-client-urls={client_url}", f"--advertise-client-urls={client_url}",
        f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
        f"--initial-cluster=bench={peer_url}", "--log-level=error",
    ] + ([flag] if variant.knobs else [])
    process = ctx.start(argv, os.path.join(ctx.base, "etcd.log"))
    wait_until(lambda: healthy(client), process, "etcd")
    pid = ctx.server(server_pid(process.pid))
    connection = http.client.HTTPConnection("127.0.0.1", client, timeout=60)
    begin = time.perf_counter()
    for i in range(count):
        call(connection, "/v3/kv/put", {"key": encoded(f"key{i}"), "value": encoded(f"value{i}")})
    seconds = time.perf_counter() - begin
    last = call(connection, "/v3/kv/range", {"key": encoded(f"key{count - 1}")})
    if int(last.get("count", 0)) != 1:
        raise RuntimeError(f"etcd: key{count - 1} not found after the puts: {last}")
    connection.close()
    stop(process, pid)
    return {"puts": count / seconds}, None

