#!/bin/sh
# Runs inside the engine tests' Debian image (postgresql): a server of its
# own on a data folder under /data, reached by a socket only, stopped
# cleanly (a shutdown checkpoint) at the end. As the user postgres.
#
#   postgres.sh write NAME ROWS   new cluster in /data/NAME, ROWS inserts,
#                                 each its own transaction (its own WAL flush)
#   postgres.sh check NAME        prints "rows|sum" of what NAME holds
set -eu
bin=/usr/lib/postgresql/15/bin
mode=$1 data=/data/$2
as() { runuser -u postgres -- "$@"; }
start() {
  as "$bin/pg_ctl" -D "$data" -l /tmp/pg.log -w -t 120 \
    -o "-c listen_addresses='' -c unix_socket_directories=/tmp" start >/dev/null \
    || { cat /tmp/pg.log >&2; exit 1; }
}
stop() { as "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null; }
sql() { as psql -h /tmp -d postgres -X -q -v ON_ERROR_STOP=1 "$@"; }
case "$mode" in
  write)
    rows=$3
    mkdir "$data" && chown postgres "$data"
    as "$bin/initdb" -D "$data" >/tmp/initdb.log 2>&1 || { cat /tmp/initdb.log >&2; exit 1; }
    start
    sql -c "create table t (x int primary key)"
    i=0
    while [ "$i" -lt "$rows" ]; do
      echo "insert into t values($i);"
      i=$((i + 1))
    done | sql
    stop
    ;;
  check)
    start
    sql -A -t -c "select count(*), sum(x) from t"
    stop
    ;;
  *) echo "postgres.sh: write NAME ROWS | check NAME" >&2; exit 2 ;;
esac
