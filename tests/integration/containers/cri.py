"""A CRI client for the engine tests: runs one container in a pod of its
own through containerd's CRI plugin, as the kubelet does for a pod whose
RuntimeClass names HANDLER, and passes on what the container did.

  cri.py SOCKET HANDLER IMAGE LOGS SOURCE:DEST [--env K=V]...
         [--pod-annotation K=V]... [--container-annotation K=V]... -- COMMAND...

The pod uses the node's network (no CNI here); SOURCE is mounted at DEST.
A pod annotation is one a pod's metadata.annotations gives (the kubelet
passes those to the CRI); a container annotation is one only a CRI client
can give.
Prints the container's stdout and stderr (read back from its CRI log in
LOGS) on ours, and exits with its exit status. Messages are encoded by hand
(field numbers of k8s.io/cri-api's runtime.v1), so only grpcio is needed.
"""

import os
import sys
import time

import grpc


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def text(number, value):
    """A string or nested message field (wire type 2)."""
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def integer(number, value):
    """A varint field (wire type 0)."""
    return varint(number << 3) + varint(value)


def annotations(number, pairs):
    """A map<string, string> field from K=V words: one entry per pair."""
    entries = (pair.split("=", 1) for pair in pairs)
    return b"".join(text(number, text(1, k) + text(2, v)) for k, v in entries)


def fields(data):
    """The fields of a message: number -> list of ints or bytes."""
    found, i = {}, 0
    while i < len(data):
        key, i = read_varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(data, i)
        elif wire == 2:
            size, i = read_varint(data, i)
            value, i = data[i : i + size], i + size
        elif wire == 1:
            value, i = data[i : i + 8], i + 8
        elif wire == 5:
            value, i = data[i : i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        found.setdefault(number, []).append(value)
    return found


def read_varint(data, i):
    shift = result = 0
    while True:
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, i
        shift += 7


def main(argv):
    socket, handler, image, logs, mount = argv[:5]
    rest = argv[5:]
    split = rest.index("--")
    options = {"--env": [], "--pod-annotation": [], "--container-annotation": []}
    for i in range(0, split, 2):
        options[rest[i]].append(rest[i + 1])
    envs = options["--env"]
    command = rest[split + 1 :]
    source, dest = mount.split(":", 1)
    channel = grpc.insecure_channel(f"unix://{socket}")

    def call(method, request):
        stub = channel.unary_unary(f"/runtime.v1.RuntimeService/{method}")
        return fields(stub(request, timeout=120))

    name = f"p{os.getpid()}"
    metadata = text(1, name) + text(2, name) + text(3, "eatmydata-test")
    # linux.security_context.namespace_options.network = NODE
    node_network = text(2, text(1, integer(1, 2)))
    pod = text(1, metadata) + text(3, logs)
    pod += annotations(7, options["--pod-annotation"]) + text(8, node_network)
    sandbox = call("RunPodSandbox", text(1, pod) + text(2, handler))[1][0].decode()
    try:
        config = text(1, text(1, "job")) + text(2, text(1, image))
        config += b"".join(text(3, word) for word in command)
        for env in envs:
            key, value = env.split("=", 1)
            config += text(6, text(1, key) + text(2, value))
        config += text(7, text(1, dest) + text(2, source))
        config += annotations(10, options["--container-annotation"])
        config += text(11, "job.log")
        request = text(1, sandbox) + text(2, config) + text(3, pod)
        container = call("CreateContainer", request)[1][0].decode()
        call("StartContainer", text(1, container))
        while True:
            status = fields(call("ContainerStatus", text(1, container))[1][0])
            if status.get(3, [0])[0] == 2:  # CONTAINER_EXITED
                code = status.get(7, [0])[0]
                break
            time.sleep(0.05)
        replay(os.path.join(logs, "job.log"))
        call("RemoveContainer", text(1, container))
    finally:
        call("StopPodSandbox", text(1, sandbox))
        call("RemovePodSandbox", text(1, sandbox))
    # exit_code is an int32: a negative one comes as a 64-bit varint.
    return code - (1 << 64) if code >= 1 << 63 else code


def replay(log):
    """Writes a CRI log's lines (TIME STREAM P|F TEXT) back to their streams."""
    with open(log, "rb") as lines:
        for line in lines:
            _, stream, tag, content = line.split(b" ", 3)
            content = content[:-1] if content.endswith(b"\n") else content
            out = sys.stdout.buffer if stream == b"stdout" else sys.stderr.buffer
            out.write(content + (b"\n" if tag == b"F" else b""))
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
