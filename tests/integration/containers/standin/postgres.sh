#!/bin/sh
# The entry point of the tests' stand-in for the official `postgres`
# image (no registry is reachable here), on Debian 12's PostgreSQL 15. It
# reads what the official image reads: POSTGRES_PASSWORD (needed unless
# POSTGRES_HOST_AUTH_METHOD=trust), POSTGRES_USER (postgres),
# POSTGRES_DB (the user's name), POSTGRES_INITDB_ARGS, PGDATA; an empty
# PGDATA is initialised with a server on the socket alone, so that, as
# there, "database system is ready to accept connections" is said twice
# on a first start and once on a later one. `postgres ARGS` runs the
# server on every address, port 5432, with ARGS (`-c fsync=off`, say),
# as the user postgres; any other command runs as given.
set -eu
bin=/usr/lib/postgresql/15/bin
: "${PGDATA:=/var/lib/postgresql/data}"
export PGDATA
if [ "${1:-}" != postgres ]; then
	exec "$@"
fi
shift
user=${POSTGRES_USER:-postgres}
database=${POSTGRES_DB:-$user}
method=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
as() { setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; }

mkdir -p "$PGDATA" /var/run/postgresql
chown postgres:postgres "$PGDATA" /var/run/postgresql
chmod 0700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$method" != trust ]; then
		echo 'Error: Database is uninitialized and superuser password is not specified.' >&2
		echo '       Give POSTGRES_PASSWORD, or POSTGRES_HOST_AUTH_METHOD=trust.' >&2
		exit 1
	fi
	password=$(mktemp)
	printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$password"
	chown postgres "$password"
	# shellcheck disable=SC2086 # the official image splits them too
	as "$bin/initdb" --username="$user" --pwfile="$password" ${POSTGRES_INITDB_ARGS:-}
	rm -f "$password"
	printf 'host all all all %s\n' "$method" >>"$PGDATA/pg_hba.conf"
	as "$bin/pg_ctl" -D "$PGDATA" -w -o "-c listen_addresses=''" start
	if [ "$database" != postgres ]; then
		as psql -v ON_ERROR_STOP=1 -X -q --username="$user" --dbname=postgres \
			-c "create database \"$database\""
	fi
	as "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop
	echo 'PostgreSQL init process complete; ready for start up.'
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups -- \
	"$bin/postgres" -D "$PGDATA" -c listen_addresses='*' "$@"
