"""The Testcontainers recipes of docs/containers.md, run by the container tests:
a container started through the eatmydata runtime, or with eatmydata's
library mounted read-only and LD_PRELOAD set.

usage: testcontainers_recipe.py IMAGE LIBRARY|runtime|none DATA COMMAND...
Runs COMMAND in IMAGE with DATA mounted at /data, waits for it to end,
prints its output and exits with its status. With "runtime" the container
is created with the runtime registered as eatmydata; with LIBRARY, a path,
that library is mounted; "none" is the control run, without eatmydata.
Needs DOCKER_HOST (a dockerd, or podman system service, which serves the
Docker API) and TESTCONTAINERS_RYUK_DISABLED=true.
"""
import sys

from testcontainers.core.container import DockerContainer

MOUNTED = "/opt/eatmydata/libeatmydata.so"


def main():
    image, library, data, *command = sys.argv[1:]
    # The runtime's recipe: one keyword, which goes to Docker's create call
    # (PostgresContainer and the other classes take it the same way).
    runtime = {"runtime": "eatmydata"} if library == "runtime" else {}
    container = DockerContainer(image, **runtime).with_command(command)
    container.with_volume_mapping(data, "/data", "rw")
    if library not in ("none", "runtime"):
        # The recipe: these two lines are all a test suite adds.
        container.with_volume_mapping(library, MOUNTED, "ro")
        container.with_env("LD_PRELOAD", MOUNTED)
    with container:
        status = container.get_wrapped_container().wait()["StatusCode"]
        stdout, stderr = container.get_logs()
    sys.stdout.write(stdout.decode())
    sys.stderr.write(stderr.decode())
    return status


if __name__ == "__main__":
    sys.exit(main())
