#!/bin/sh
# The Action's Docker step: the runtime registered as Docker's default,
# then a reload (SIGHUP), which takes runtimes and default-runtime with
# every running container left as it is. With BUILDS=true, for BuildKit
# (Docker 26 and later read DOCKER_BUILDKIT_RUNC_COMMAND at start only):
# live-restore turned on and reloaded first, then docker.service
# restarted, which running containers survive.
# usage: docker.sh PREFIX CONFIG PIDFILE BUILDS [SYSTEMD_DIR]   (DOCKER_HOST is honoured)
set -eu
prefix=$1 config=$2 pidfile=$3 builds=$4 systemd=${5:-}
runtime=$prefix/bin/eatmydata-runtime

echo "running before: $(docker ps --quiet | wc -l)"
if [ -n "$systemd" ]; then
	"$runtime" configure docker --default --config "$config" --systemd-dir "$systemd" >&2
else
	"$runtime" configure docker --default --config "$config" >&2
fi

# dockerd's pid: the pid file given, daemon.json's "pidfile", or Docker's own.
if [ -z "$pidfile" ]; then
	pidfile=$(sed -n 's/.*"pidfile"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$config" | head -n 1)
fi
pidfile=${pidfile:-/var/run/docker.pid}
reload() {
	pid=$(cat "$pidfile" 2>/dev/null || true)
	if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ]; then
		kill -HUP "$pid"
	elif command -v systemctl >/dev/null && systemctl is-active --quiet docker; then
		systemctl reload docker
	else
		echo "eatmydata: no dockerd found to reload (pid file $pidfile): run 'systemctl reload docker'" >&2
		exit 1
	fi
}
reload
# The reload is taken asynchronously: wait until Docker says so.
tries=0
until [ "$(docker info --format '{{.DefaultRuntime}}' 2>/dev/null)" = eatmydata ]; do
	tries=$((tries + 1))
	if [ "$tries" -gt 100 ]; then
		echo "eatmydata: Docker did not take the eatmydata runtime as its default" >&2
		exit 1
	fi
	sleep 0.1
done
echo "eatmydata: every container Docker starts from now on runs under the eatmydata runtime (reloaded; nothing stopped)" >&2

if [ "$builds" = true ]; then
	if ! command -v systemctl >/dev/null || ! systemctl is-active --quiet docker; then
		echo "eatmydata: builds: no docker.service here to restart; BuildKit takes the runtime at dockerd's next start" >&2
		exit 0
	fi
	python3 - "$config" <<'PY'
import json, sys
path = sys.argv[1]
with open(path) as f:
    config = json.load(f)
if config.get("live-restore") is not True:
    config["live-restore"] = True
    with open(path + ".tmp", "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    import os
    os.replace(path + ".tmp", path)
PY
	reload
	systemctl daemon-reload
	systemctl restart docker
	echo "eatmydata: builds: docker.service restarted with live-restore on (running containers kept)" >&2
fi
