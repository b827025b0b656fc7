#!/bin/sh
# The Action's Docker step, and its undoing in the post step.
#
#   docker.sh apply  PREFIX CONFIG PIDFILE BUILDS [SYSTEMD_DIR]
#   docker.sh remove PREFIX CONFIG PIDFILE BUILDS [SYSTEMD_DIR]
#   docker.sh keep   PREFIX CONFIG PIDFILE BUILDS [SYSTEMD_DIR]
#
# apply: the runtime registered as Docker's default by `configure docker
# --default`, which reloads dockerd (SIGHUP through its pid file, or
# `systemctl reload docker` here when it found none): every running
# container is left as it is. Prints "eatmydata: N container(s) were
# running before the runtime became Docker's default", those running
# then (a job's `services:`), which main reads for the summary. With
# BUILDS=true, for BuildKit (Docker 26 and later read
# DOCKER_BUILDKIT_RUNC_COMMAND at start only):
# live-restore turned on and reloaded first, then docker.service
# restarted, which running containers survive.
# remove: `configure docker --remove`, reloaded the same way, and
# live-restore taken back when apply turned it on. dockerd keeps a key
# that has gone missing from the file at a reload, so configure writes
# "default-runtime": "runc" in so many words; once dockerd has taken that,
# the file is put back as it was before apply (kept root's, beside it),
# byte for byte, unless a step changed it meanwhile (then configure's
# edit stays, and this says so). keep: forgets what apply kept.
# DOCKER_HOST is honoured; PIDFILE empty: daemon.json's "pidfile", else
# /var/run/docker.pid.
set -eu
verb=$1 prefix=$2 config=$3 pidfile=$4 builds=$5 systemd=${6:-}
runtime=$prefix/bin/eatmydata-runtime
kept=$config.eatmydata-action
marker=$kept/live-restore

if [ -z "$pidfile" ]; then
	pidfile=$(sed -n 's/.*"pidfile"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$config" 2>/dev/null | head -n 1)
fi
pidfile=${pidfile:-/var/run/docker.pid}

dockerd_pid() {
	pid=$(cat "$pidfile" 2>/dev/null || true)
	if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ]; then
		echo "$pid"
	fi
}

# configure reloads a dockerd it finds through the pid file; one that
# runs under systemd without it is reloaded here.
reload_if_systemd() {
	if [ -z "$(dockerd_pid)" ] && command -v systemctl >/dev/null && systemctl is-active --quiet docker; then
		systemctl reload docker
	fi
}

# The reload is taken asynchronously: wait (10 s at most) until Docker's
# default runtime is (=) or is not (!=) eatmydata.
wait_default() {
	tries=0
	while :; do
		now=$(docker info --format '{{.DefaultRuntime}}' 2>/dev/null || true)
		if { [ "$1" = "=" ] && [ "$now" = eatmydata ]; } || { [ "$1" = "!=" ] && [ -n "$now" ] && [ "$now" != eatmydata ]; }; then
			return 0
		fi
		tries=$((tries + 1))
		if [ "$tries" -gt 100 ]; then
			echo "eatmydata: Docker's default runtime is still '$now' 10 s after the reload" >&2
			exit 1
		fi
		sleep 0.1
	done
}

configure() {
	if [ -n "$systemd" ]; then
		"$runtime" configure docker "$@" --config "$config" --pid-file "$pidfile" --systemd-dir "$systemd" >&2
	else
		"$runtime" configure docker "$@" --config "$config" --pid-file "$pidfile" >&2
	fi
}

live_restore() {
	python3 - "$config" "$1" <<'PY'
import json, os, sys
path, on = sys.argv[1], sys.argv[2] == "on"
with open(path) as f:
    config = json.load(f)
if on:
    config["live-restore"] = True
else:
    config.pop("live-restore", None)
with open(path + ".tmp", "w") as f:
    json.dump(config, f, indent=2)
    f.write("\n")
os.replace(path + ".tmp", path)
PY
}

sum() { sha256sum "$1" 2>/dev/null | cut -c1-64 || true; }

case "$verb" in
apply)
	echo "eatmydata: $(docker ps --quiet | wc -l) container(s) were running before the runtime became Docker's default"
	rm -rf "$kept"
	mkdir -m 0700 "$kept"
	if [ -e "$config" ]; then cp -p "$config" "$kept/before"; fi
	if [ -e "$config.bak-eatmydata" ]; then : >"$kept/had-backup"; fi
	configure --default
	sum "$config" >"$kept/after"
	reload_if_systemd
	wait_default =
	echo "eatmydata: every container Docker starts from now on runs under the eatmydata runtime (reloaded; nothing stopped)" >&2
	if [ "$builds" = true ]; then
		if ! grep -q '"live-restore"[[:space:]]*:[[:space:]]*true' "$config"; then
			live_restore on
			: >"$marker"
		fi
		if [ -n "$(dockerd_pid)" ]; then kill -HUP "$(dockerd_pid)"; else systemctl reload docker; fi
		systemctl daemon-reload
		systemctl restart docker
		wait_default =
		echo "eatmydata: builds: docker.service restarted with live-restore on (running containers kept)" >&2
	fi
	;;
remove)
	if [ -e "$marker" ]; then
		live_restore off
		rm -f "$marker"
		sum "$config" >"$kept/after"
	fi
	untouched=false
	if [ -d "$kept" ] && [ "$(sum "$config")" = "$(cat "$kept/after" 2>/dev/null)" ]; then
		untouched=true
	fi
	configure --remove
	reload_if_systemd
	wait_default !=
	if [ "$builds" = true ] && command -v systemctl >/dev/null; then
		systemctl daemon-reload
	fi
	if [ "$untouched" = true ] && ! grep -q eatmydata "$config" 2>/dev/null; then
		if [ -e "$kept/before" ]; then
			cp -p "$kept/before" "$config.eatmydata-action-new"
			mv -f "$config.eatmydata-action-new" "$config"
		else
			rm -f "$config"
		fi
		if [ ! -e "$kept/had-backup" ]; then rm -f "$config.bak-eatmydata"; fi
		echo "eatmydata: $config is as it was before the job" >&2
	elif [ "$untouched" = false ]; then
		echo "eatmydata: $config was changed after the action's edit: configure's removal stays (default-runtime runc)" >&2
	fi
	rm -rf "$kept"
	echo "eatmydata: Docker's default runtime is $(docker info --format '{{.DefaultRuntime}}') again (reloaded; nothing stopped)" >&2
	;;
keep)
	rm -rf "$kept"
	;;
*)
	echo "eatmydata: docker.sh: apply or remove, not '$verb'" >&2
	exit 2
	;;
esac
