#!/bin/sh
# The container workloads' entry point (scripts/bench-db, incontainer.py):
# Debian 12's server in an image imported from a debootstrap tree, started
# as an image's own entry point starts it, reached from the host through a
# socket in /run/bench (a folder of the host's), no network.
#
#   server.sh mariadb    data in /var/lib/mysql, made if empty
#   server.sh postgres   data in /var/lib/postgresql/data, made if empty;
#                        fsync=off, as Testcontainers' PostgreSQL module sets
#
# The server replaces the shell (exec): it is the container's pid 1, and
# `docker stop` reaches it (the stop signal: SIGTERM for MariaDB, SIGINT
# for PostgreSQL, as the official images set).
set -eu
case "$1" in
  mariadb)
    data=/var/lib/mysql
    if [ ! -d "$data/mysql" ]; then
      mariadb-install-db --no-defaults --datadir="$data" --user=mysql \
        --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
        >/run/bench/install.log 2>&1 || { cat /run/bench/install.log >&2; exit 1; }
    fi
    exec mariadbd --no-defaults --datadir="$data" --socket=/run/bench/mysqld.sock \
      --pid-file=/run/bench/mysqld.pid --skip-networking --user=mysql \
      --log-error=/run/bench/mariadb.log
    ;;
  postgres)
    data=/var/lib/postgresql/data bin=$(ls -d /usr/lib/postgresql/*/bin | tail -n 1)
    mkdir -p "$data"
    chown postgres:postgres "$data"
    chmod 700 "$data"
    as_postgres="setpriv --reuid=postgres --regid=postgres --init-groups --"
    if [ ! -f "$data/PG_VERSION" ]; then
      $as_postgres "$bin/initdb" -D "$data" -U bench --auth=trust -E UTF8 \
        >/run/bench/initdb.log 2>&1 || { cat /run/bench/initdb.log >&2; exit 1; }
    fi
    exec $as_postgres "$bin/postgres" -D "$data" -c listen_addresses= \
      -c unix_socket_directories=/run/bench -c port=54329 -c fsync=off
    ;;
  *) echo "server.sh: mariadb | postgres" >&2; exit 2 ;;
esac
