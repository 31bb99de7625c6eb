#!/usr/bin/env bash
# A throwaway PostgreSQL 15 cluster on a loopback port, for the River
# comparison in `make bench`: installed from Debian's packages when missing,
# started in a temporary directory with fsync on (the default), and removed by
# `stop`. Usage:
#   scripts/postgres-throwaway.sh start DIR PORT   # prints the DSN
#   scripts/postgres-throwaway.sh stop DIR
set -euo pipefail
PGBIN=/usr/lib/postgresql/15/bin

ensure_installed() {
	if [ ! -x "$PGBIN/initdb" ]; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >&2
		apt-get install -y -qq postgresql-15 >&2
	fi
}

# as_owner runs a command as the cluster's owner: initdb refuses root.
as_owner() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
start)
	dir=$2 port=$3
	ensure_installed
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown postgres "$dir"
	as_owner "$PGBIN/initdb" -D "$dir/data" -U bench --auth=trust -E UTF8 >/dev/null
	as_owner "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w \
		-o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=256MB -c fsync=on -c synchronous_commit=on" start >/dev/null
	as_owner "$PGBIN/createdb" -h 127.0.0.1 -p "$port" -U bench riverbench
	echo "postgres://bench@127.0.0.1:$port/riverbench?sslmode=disable"
	;;
stop)
	dir=$2
	if [ -d "$dir/data" ]; then
		as_owner "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
	fi
	rm -rf "$dir"
	;;
*)
	echo "usage: $0 start DIR PORT | stop DIR" >&2
	exit 2
	;;
esac
