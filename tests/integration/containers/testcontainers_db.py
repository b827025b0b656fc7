"""The Testcontainers recipe of docs/containers.md for Python, run by the
container tests with the PostgreSQL and MySQL modules as their users call
them.

usage: testcontainers_db.py postgres|mariadb IMAGE DATA ROWS recipe|plain
Starts IMAGE with the module, its data folder bound from DATA, with the
recipe unless "plain" (the profile, eatmydata-docker.json, in the working
folder); makes ROWS inserts, each its own transaction, with the server's
own client in the container; prints "rows|sum" of the table, and on
stderr the way the container was created ("way: runtime|profile|plain",
from the daemon's record). Needs DOCKER_HOST and
TESTCONTAINERS_RYUK_DISABLED=true.
"""
import pathlib
import sys

import docker
from testcontainers.community.mysql import MySqlContainer
from testcontainers.community.postgres import PostgresContainer


# The recipe, as docs/containers.md shows it.
def eatmydata():
    """Keywords for the container's create call that eat its syncs:
    eatmydata's runtime where the daemon has it, else eatmydata's seccomp
    profile, whose JSON text (not a path) the Docker API takes."""
    if "eatmydata" in docker.from_env().info().get("Runtimes", {}):
        return {"runtime": "eatmydata"}
    profile = pathlib.Path("eatmydata-docker.json").read_text()
    return {"security_opt": [f"seccomp={profile}"]}


# The end of the recipe.

INSERTS = 'i=0; while [ "$i" -lt {rows} ]; do echo "insert into t values($i);"; i=$((i+1)); done'
SERVERS = {
    # module, data folder, client command (the user and database the
    # modules make: test/test)
    "postgres": (
        PostgresContainer,
        "/var/lib/postgresql/data",
        "psql -X -q -A -t -v ON_ERROR_STOP=1 -U test -d test",
    ),
    "mariadb": (MySqlContainer, "/var/lib/mysql", "mariadb -N -B -utest -ptest test"),
}


def way(container):
    """How the daemon made the container: under eatmydata's runtime, with
    a seccomp profile of the client's, or plainly."""
    host = container.get_wrapped_container().attrs["HostConfig"]
    if host.get("Runtime") == "eatmydata":
        return "runtime"
    if any(opt.startswith("seccomp=") for opt in host.get("SecurityOpt") or []):
        return "profile"
    return "plain"


def main():
    kind, image, data, rows, how = sys.argv[1:]
    module, folder, client = SERVERS[kind]
    kwargs = eatmydata() if how == "recipe" else {}
    with module(image, **kwargs).with_volume_mapping(data, folder, "rw") as server:
        print(f"way: {way(server)}", file=sys.stderr)
        script = (
            f"echo 'create table t (x int primary key);' | {client} && "
            f"{INSERTS.format(rows=int(rows))} | {client} && "
            f"echo \"select concat(count(*), '|', sum(x)) from t;\" | {client}"
        )
        status, output = server.exec(["sh", "-c", script])
        sys.stdout.write(output.decode())
        return status


if __name__ == "__main__":
    sys.exit(main())
