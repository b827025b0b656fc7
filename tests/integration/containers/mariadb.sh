#!/bin/sh
# Runs inside a Debian image with mariadb-server, for the container tests
# and the container benchmark: a server of its own on a data folder under
# /data, reached by a socket only, stopped cleanly at the end.
#
#   mariadb.sh write NAME ROWS   new data folder /data/NAME, ROWS inserts,
#                                each its own transaction (its own fsync)
#   mariadb.sh check NAME        prints "rows|sum" of what NAME holds
#
# MARIADB_OPTIONS, if set, is added to the server's options (the bench's
# "db knobs": the server's own durability switches).
set -eu
options=${MARIADB_OPTIONS:-}
mode=$1 data=/data/$2
start() {
  mariadbd --user=root --datadir="$data" --skip-networking --socket=/tmp/db.sock \
    --pid-file=/tmp/db.pid --log-error=/tmp/db.err $options &
  server=$!
  # Asked every 0.1 s until it answers (mariadb-admin's own --wait sleeps
  # 5 s between tries), for 300 s at most; not at all once it has ended.
  deadline=$(($(date +%s) + 300))
  until mariadb-admin -S /tmp/db.sock --connect-timeout=5 ping >/dev/null 2>&1; do
    if ! kill -0 "$server" 2>/dev/null || [ "$(date +%s)" -ge "$deadline" ]; then
      cat /tmp/db.err >&2
      exit 1
    fi
    sleep 0.1
  done
}
stop() {
  mariadb-admin -S /tmp/db.sock shutdown
  wait
}
case "$mode" in
  write)
    rows=$3
    mariadb-install-db --user=root --datadir="$data" --skip-test-db $options >/tmp/install.log 2>&1 \
      || { cat /tmp/install.log >&2; exit 1; }
    start
    mariadb -S /tmp/db.sock -e "create database t; create table t.t (x int primary key) engine=innodb"
    i=0
    while [ "$i" -lt "$rows" ]; do
      echo "insert into t.t values($i);"
      i=$((i + 1))
    done | mariadb -S /tmp/db.sock
    stop
    ;;
  check)
    start
    mariadb -S /tmp/db.sock -N -B -e "select count(*), sum(x) from t.t" | tr '\t' '|'
    stop
    ;;
  *) echo "mariadb.sh: write NAME ROWS | check NAME" >&2; exit 2 ;;
esac
