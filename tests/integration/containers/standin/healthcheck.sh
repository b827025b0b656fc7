#!/bin/sh
# The stand-in MariaDB image's healthcheck.sh, as the official image's is
# called from a health check (`healthcheck.sh --connect
# --innodb_initialized`): healthy once the server answers on its TCP port
# (it accepts connections once InnoDB has started) to the user
# `healthcheck` the entry point made; refused, on a data folder made
# elsewhere, it answered too. The official script's options are taken and
# not read.
said=$(mariadb --protocol=tcp --host=127.0.0.1 --port=3306 --user=healthcheck \
	--skip-password --connect-timeout=2 -e 'select 1' 2>&1) && exit 0
case "$said" in
*"Access denied"*) exit 0 ;;
*) echo "$said" >&2; exit 1 ;;
esac
