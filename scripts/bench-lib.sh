# shellcheck shell=bash
# The machinery the end-to-end benchmarks share (sourced by bench.sh,
# bench-river.sh and bench-sqlserver.sh): a work directory cleaned up on
# exit, the binaries, the gateway simulator, a service on a new database of
# the store under test, readiness, CPU accounting, and the readers of
# loadgen's markdown reports. The store is STORE: "sqlite" (the embedded
# default, a new file per database) or "sqlserver" (the T-SQL server that
# SQLSERVER_DSN names, by default the Babelfish server of
# ../shared/babelfish, started when it does not answer; a new database per
# call, created over Babelfish's PostgreSQL port in its T-SQL dialect and
# migrated by the service's --migrate, and dropped on exit).

STORE=${STORE:-sqlite}
SQLSERVER_DSN=${SQLSERVER_DSN:-sqlserver://babelfish_user:12345678@127.0.0.1:1433?database=master}
BABELFISH_DIR=${BABELFISH_DIR:-../shared/babelfish}
BABELFISH_PG_PORT=${BABELFISH_PG_PORT:-5433}
BABELFISH_PSQL=${BABELFISH_PSQL:-/opt/babelfish/bin/psql}
BABELFISH_PGDATA=${BABELFISH_PGDATA:-/var/tmp/babelfish/pgdata}

log() { printf '== %s\n' "$*" >&2; }

# bench_setup makes $work, builds the commands into $bin and arranges that
# every process in pids is stopped, every database made is dropped and
# $work is removed on exit (after bench_cleanup_extra, if the script
# defines it).
bench_setup() {
	work=$(mktemp -d)
	chmod 755 "$work"
	pids=()
	databases=()
	trap bench_cleanup EXIT
	log "building binaries"
	go build -o "$work/bin/" ./cmd/...
	bin=$work/bin
}

bench_cleanup() {
	# CONT after TERM: a process a phase froze (takeover_run) takes no
	# signal but KILL until it runs again.
	for p in "${pids[@]:-}"; do [ -n "$p" ] && { kill "$p" 2>/dev/null; kill -CONT "$p" 2>/dev/null; } || true; done
	wait 2>/dev/null || true
	if declare -F bench_cleanup_extra >/dev/null; then bench_cleanup_extra || true; fi
	for d in "${databases[@]:-}"; do [ -n "$d" ] && tsql_exec "DROP DATABASE $d" >/dev/null 2>&1 || true; done
	rm -rf "$work"
}

# ------------------------------------------------------------------ stores
# sqlserver_up starts the Babelfish server when nothing answers on the
# DSN's port (its start script is idempotent and needs root).
sqlserver_up() {
	local hostport host port
	hostport=${SQLSERVER_DSN#sqlserver://*@}
	hostport=${hostport%%[/?]*}
	host=${hostport%:*} port=${hostport##*:}
	if ! (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
		log "$BABELFISH_DIR/start"
		"$BABELFISH_DIR/start" >/dev/null
	fi
}

# babelfish_psql ARGS... runs psql on Babelfish's PostgreSQL port, quiet and
# unaligned, stopping at the first error; ARGS are its -c statements.
babelfish_psql() {
	PGPASSWORD=12345678 PGOPTIONS='--client-min-messages=warning' "$BABELFISH_PSQL" -h 127.0.0.1 -p "$BABELFISH_PG_PORT" \
		-U babelfish_user -d babelfish_db -qAt -v ON_ERROR_STOP=1 "$@"
}

# tsql_exec runs one T-SQL statement on the server, through Babelfish's
# PostgreSQL port with the session in its T-SQL dialect (CREATE and DROP
# DATABASE there make T-SQL databases, which the TDS port serves).
tsql_exec() {
	babelfish_psql -c "SET babelfishpg_tsql.sql_dialect = 'tsql'" -c "$1"
}

# pg_exec runs one statement on the server's PostgreSQL side (not the
# T-SQL dialect), where a T-SQL database's dbo is the schema <database>_dbo.
pg_exec() {
	babelfish_psql -c "$1"
}

# new_database NAME sets database_flags to the serve flags of a new, empty
# database of the store under test. On SQL Server it first drops the
# databases the run made before (their services are stopped by then), so
# each phase has the server to itself, as a production database would:
# Babelfish's autovacuum of an earlier phase's tens of thousands of rows,
# and its sp_updatestats (an ANALYZE of every database on the server),
# otherwise cost the later phases more the further the run got.
new_database() {
	case "$STORE" in
	sqlite)
		rm -f "$work/$1".db*
		database_flags="--database sqlite:$work/$1.db"
		;;
	sqlserver)
		local name="smbench_$$_$1" d
		for d in "${databases[@]:-}"; do [ -n "$d" ] && tsql_exec "DROP DATABASE IF EXISTS $d" >/dev/null 2>&1 || true; done
		databases=()
		tsql_exec "DROP DATABASE IF EXISTS $name" >/dev/null 2>&1 || true
		tsql_exec "CREATE DATABASE $name" >/dev/null
		databases+=("$name")
		database_flags="--database ${SQLSERVER_DSN/database=master/database=$name} --migrate"
		;;
	*)
		echo "STORE=$STORE: want sqlite or sqlserver" >&2
		return 1
		;;
	esac
}

# store_label names the store under test in reports.
store_label() {
	case "$STORE" in
	sqlite) echo "embedded SQLite (mattn/go-sqlite3, cgo), WAL, synchronous=FULL (default)" ;;
	sqlserver) echo "SQL Server over TDS: $(tsql_exec "SELECT @@VERSION" | head -1 | cut -c1-60)" ;;
	esac
}

# ----------------------------------------------------------------- processes
# write_registry FILE SMS_PORT [MAX_ACCEPTANCE_SECONDS]: one realtime SMS
# target, sms.realtime, on the simulator.
write_registry() {
	cat >"$1" <<JSON
{"targets": [
  {"submissionTarget": "sms.realtime", "gatewayType": "sms", "gatewayUrl": "http://127.0.0.1:$2",
   "mode": "realtime", "policy": "deadline", "maxAcceptanceSeconds": ${3:-30},
   "terminalOutcomes": ["invalid_request", "invalid_recipient", "invalid_message"]}
]}
JSON
}

# start_sim SMS_PORT PUSH_PORT: the gateway simulator at 5 ms; sets sim_pid
# and sim_cmd.
start_sim() {
	sim_cmd="gateway-sim --sms-listen 127.0.0.1:$1 --push-listen 127.0.0.1:$2 --latency 5ms"
	log "$sim_cmd"
	"$bin"/gateway-sim --sms-listen "127.0.0.1:$1" --push-listen "127.0.0.1:$2" --latency 5ms 2>"$work/sim.log" &
	sim_pid=$!
	pids+=($sim_pid)
}

wait_ready() { # url, wanted body substring
	for _ in $(seq 1 600); do
		if curl -fsS "$1/readyz" 2>/dev/null | grep -q "$2"; then return 0; fi
		sleep 0.1
	done
	echo "service at $1 never reported '$2'" >&2
	return 1
}

# cpu_ticks PID: the CPU time (user + system, in clock ticks) a process used;
# 0, quietly, for one that has exited.
cpu_ticks() { [ -n "$1" ] && [ -r "/proc/$1/stat" ] && awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# reaped_ticks PID: cpu_ticks with the children the process reaped; 0 when
# it has exited.
reaped_ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# db_server_ticks: the CPU time the database server used, for a server
# outside the service (Babelfish: postmaster_ticks of its data directory);
# 0 for SQLite, which runs inside the service.
db_server_ticks() {
	if [ "$STORE" != sqlserver ]; then
		echo 0
		return
	fi
	postmaster_ticks "$BABELFISH_PGDATA"
}

# postmaster_ticks PGDATA: the CPU time a PostgreSQL server used (the
# postmaster of the data directory PGDATA, the children it reaped and the
# live ones); 0 when none runs there.
#
# The reading is taken again until the postmaster's reaped time is the same
# before and after its live children are read. A backend reaped in between
# would otherwise be counted in neither, and its whole life's CPU would land
# in the next reading's difference: the backends of an instance stopped just
# before a phase (the backlog's API-only intake) put their intake's CPU into
# the drain's figure that way, about three times the drain's own.
postmaster_ticks() {
	local pm before after live
	if [ ! -r "$1/postmaster.pid" ]; then
		echo 0
		return
	fi
	pm=$(head -1 "$1/postmaster.pid")
	after=$(reaped_ticks "$pm")
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		before=$after
		live=$(for c in $(cat "/proc/$pm/task/$pm/children" 2>/dev/null); do cpu_ticks "$c"; done | awk '{ s += $1 } END { print s + 0 }')
		after=$(reaped_ticks "$pm")
		[ "$before" = "$after" ] && break
		sleep 0.05
	done
	echo $((after + live))
}

# drain_poll prints how often a backlog phase's loadgen --await-drain asks
# whether an intent is pending (DRAIN_POLL, when set): rarely where the
# phase reads its end from the store (drain_ended_at), else every 20 ms,
# its figure's granularity. Asked at each phase, as a run may change STORE
# for one.
drain_poll() {
	if [ "$STORE" = sqlserver ]; then echo "${DRAIN_POLL:-250ms}"; else echo "${DRAIN_POLL:-20ms}"; fi
}

# drain_ended_at prints when a backlog phase's drain ended (Unix seconds):
# on SQL Server when the newest database's last result was written (the
# last_modified_at that the results' procedure sets from the server's
# clock just before it commits), read through Babelfish's PostgreSQL port
# (pg_exec); elsewhere now, just after loadgen's answer. Ending at the
# write lets loadgen ask rarely: each of its asks is a listing on the
# store, 1-2 ms of Babelfish's CPU, and at 50 a second they cost a drain
# of 20,000 about 6 % of its rate (alternated, 1,354-1,379 against
# 1,405-1,572 attempts/s asking every 250 ms). River's end is an event in
# its own client, which costs its database nothing.
drain_ended_at() {
	local at=
	if [ "$STORE" = sqlserver ]; then
		local db=${databases[${#databases[@]} - 1]}
		at=$(pg_exec "SELECT extract(epoch FROM max(last_modified_at)) FROM ${db}_dbo.submission_intents")
	fi
	echo "${at:-$(date +%s.%N)}"
}

# -------------------------------------------------------------- the reports
# field FILE LABEL N: the N-th number in the value column of a loadgen row.
field() { awk -F'|' -v label="$2" -v n="$3" 'index($2, label) { split($3, v, /[^0-9.]+/); k = 0
	for (i = 1; i in v; i++) if (v[i] != "") { k++; if (k == n) { print v[i]; exit } } }' "$1"; }
verdict() { awk -v got="$1" -v want="$3" -v op="$2" 'BEGIN { if (got == "" || got == "never") { print "no"; exit }
	ok = (op == ">=") ? (got + 0 >= want + 0) : (got + 0 <= want + 0); print (ok ? "yes" : "**no**") }'; }
row() { echo "| $1 | $2 $3 | $4 | $(verdict "$4" "$2" "$3") |"; }
# median_run PREFIX N: which of the reports PREFIX1..PREFIXN has the
# median intake throughput.
median_run() {
	for n in $(seq 1 "$2"); do echo "$(field "$work/$1$n.md" "intake throughput" 1) $n"; done |
		sort -n | sed -n "$((($2 + 1) / 2))p" | cut -d' ' -f2
}
# leases_lost LOGFILE...: the leader_lost warnings in the services' logs (a
# graceful shutdown logs its release at info level, which backlog_run's
# drains log).
leases_lost() { cat "$@" 2>/dev/null | grep -c 'level=WARN .*msg=leader_lost' || true; }

# The phases, in their own file.
# shellcheck source=scripts/bench-phases.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench-phases.sh"
