#!/bin/sh
# The entry point of the tests' stand-in for the official `mariadb` image
# (no registry is reachable here), on Debian 12's MariaDB 10.11. It reads
# what the official image reads, under both prefixes:
# MARIADB_ROOT_PASSWORD (MYSQL_ROOT_PASSWORD), or
# MARIADB_ALLOW_EMPTY_ROOT_PASSWORD (MYSQL_ALLOW_EMPTY_PASSWORD) or
# MARIADB_RANDOM_ROOT_PASSWORD (MYSQL_RANDOM_ROOT_PASSWORD);
# MARIADB_DATABASE, MARIADB_USER and MARIADB_PASSWORD (MYSQL_...). An
# empty /var/lib/mysql is initialised with a server on the socket alone
# first. `mariadbd ARGS` (or `mysqld ARGS`) runs the server on every
# address, port 3306, with ARGS, as the user mysql; any other command
# runs as given.
set -eu
case "${1:-}" in
mariadbd | mysqld) shift ;;
*) exec "$@" ;;
esac
pick() { eval "printf '%s' \"\${MARIADB_$1:-\${MYSQL_$2:-}}\""; }
root_password=$(pick ROOT_PASSWORD ROOT_PASSWORD)
allow_empty=$(pick ALLOW_EMPTY_ROOT_PASSWORD ALLOW_EMPTY_PASSWORD)
random=$(pick RANDOM_ROOT_PASSWORD RANDOM_ROOT_PASSWORD)
database=$(pick DATABASE DATABASE)
user=$(pick USER USER)
password=$(pick PASSWORD PASSWORD)
datadir=/var/lib/mysql
socket=/run/mysqld/mysqld.sock
# The quoted form of $1 in SQL.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/\\\\/\\\\\\\\/g; s/'/''/g")"; }

mkdir -p "$datadir" /run/mysqld
chown mysql:mysql "$datadir" /run/mysqld
if [ ! -d "$datadir/mysql" ]; then
	if [ -z "$root_password" ] && [ -z "$allow_empty" ] && [ -z "$random" ]; then
		echo 'error: database is uninitialized and password option is not specified' >&2
		echo '  You need to specify one of MARIADB_ROOT_PASSWORD, MARIADB_ALLOW_EMPTY_ROOT_PASSWORD and MARIADB_RANDOM_ROOT_PASSWORD' >&2
		exit 1
	fi
	if [ -n "$random" ]; then
		root_password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
		echo "GENERATED ROOT PASSWORD: $root_password"
	fi
	mariadb-install-db --user=mysql --datadir="$datadir" --skip-test-db \
		--auth-root-authentication-method=normal >/dev/null
	mariadbd --user=mysql --datadir="$datadir" --skip-networking --socket="$socket" &
	started=$!
	# Asked every 0.1 s until it answers (mariadb-admin's own --wait
	# sleeps 5 s between tries), for 300 s at most; not once it has ended.
	deadline=$(($(date +%s) + 300))
	until mariadb-admin --socket="$socket" --connect-timeout=5 ping >/dev/null 2>&1; do
		if ! kill -0 "$started" 2>/dev/null || [ "$(date +%s)" -ge "$deadline" ]; then
			echo 'error: the server did not answer during initialisation' >&2
			exit 1
		fi
		sleep 0.1
	done
	{
		echo "create user 'root'@'%' identified by $(quote "$root_password");"
		echo "grant all on *.* to 'root'@'%' with grant option;"
		echo "alter user 'root'@'localhost' identified by $(quote "$root_password");"
		# As the official image does, for healthcheck.sh: may connect, no more.
		echo "create user 'healthcheck'@'127.0.0.1'; create user 'healthcheck'@'localhost';"
		if [ -n "$database" ]; then echo "create database \`$database\`;"; fi
		if [ -n "$user" ]; then
			echo "create user $(quote "$user")@'%' identified by $(quote "$password");"
			if [ -n "$database" ]; then echo "grant all on \`$database\`.* to $(quote "$user")@'%';"; fi
		fi
	} | mariadb --socket="$socket" -uroot
	mariadb-admin --socket="$socket" -uroot --password="$root_password" shutdown
	wait "$started"
	echo 'MariaDB init process done. Ready for start up.'
fi
exec mariadbd --user=mysql --datadir="$datadir" --socket="$socket" \
	--bind-address=0.0.0.0 --port=3306 "$@"
