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
	for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
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

# tsql_exec runs one T-SQL statement on the server, through Babelfish's
# PostgreSQL port with the session in its T-SQL dialect (CREATE and DROP
# DATABASE there make T-SQL databases, which the TDS port serves).
tsql_exec() {
	PGPASSWORD=12345678 PGOPTIONS='--client-min-messages=warning' "$BABELFISH_PSQL" -h 127.0.0.1 -p "$BABELFISH_PG_PORT" -U babelfish_user -d babelfish_db \
		-qAt -v ON_ERROR_STOP=1 -c "SET babelfishpg_tsql.sql_dialect = 'tsql'" -c "$1"
}

# new_database NAME sets database_flags to the serve flags of a new, empty
# database of the store under test.
new_database() {
	case "$STORE" in
	sqlite)
		rm -f "$work/$1".db*
		database_flags="--database sqlite:$work/$1.db"
		;;
	sqlserver)
		local name="smbench_$$_$1"
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

# cpu_ticks PID: the CPU time (user + system, in clock ticks) a process used.
cpu_ticks() { [ -n "$1" ] && [ -r "/proc/$1/stat" ] && awk '{ print $14 + $15 }' "/proc/$1/stat" || echo 0; }

# db_server_ticks: the CPU time the database server used, for a server
# outside the service (Babelfish: its postmaster, the children it reaped
# and the live ones); 0 for SQLite, which runs inside the service.
db_server_ticks() {
	local pm
	if [ "$STORE" != sqlserver ] || [ ! -r "$BABELFISH_PGDATA/postmaster.pid" ]; then
		echo 0
		return
	fi
	pm=$(head -1 "$BABELFISH_PGDATA/postmaster.pid")
	{
		awk '{ print $14 + $15 + $16 + $17 }' "/proc/$pm/stat" 2>/dev/null
		for c in $(cat "/proc/$pm/task/$pm/children" 2>/dev/null); do cpu_ticks "$c"; done
	} | awk '{ s += $1 } END { print s + 0 }'
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
# leases_lost LOGFILE...: the leader_lost warnings in the services' logs
# (a graceful shutdown logs its release at info level, below --log-level warn).
leases_lost() { cat "$@" 2>/dev/null | grep -c 'leader_lost' || true; }

# ------------------------------------------------------------------- phases
# They use API_PORT, API2_PORT, serve_flags (every serve flag but the
# database's and --listen), INTAKE_COUNT, BATCH_COUNT and EXEC_SECONDS.

# fresh_service [extra flags...]: stops the previous service (leader_pid)
# and starts one on a new database, so that every phase starts from the
# same state; sets leader_pid. Its log is $work/serve1.log.
fresh_service() {
	stop_leader
	db_seq=$((${db_seq:-0} + 1))
	new_database "bench$db_seq"
	# shellcheck disable=SC2086
	"$bin"/submission-manager serve --listen "127.0.0.1:$API_PORT" $database_flags $serve_flags "$@" 2>>"$work/serve1.log" &
	leader_pid=$!
	pids+=($leader_pid)
}

# stop_leader stops the service fresh_service or failover_runs left running.
stop_leader() {
	if [ -n "${leader_pid:-}" ]; then
		kill "$leader_pid" 2>/dev/null || true
		wait "$leader_pid" 2>/dev/null || true
		leader_pid=
	fi
}

# warm_up: on a store across the network, 640 intents from 64 clients
# before an intake phase's clock starts, so that the figures are those of
# a warm pool rather than of its logins (each costs a Babelfish server
# about a quarter of a second of CPU, and the pool opens twenty).
warm_up() {
	if [ "$STORE" = sqlserver ]; then
		"$bin"/loadgen --url "http://127.0.0.1:$API_PORT" --count 640 --concurrency 64 --wait=false --run-id "warm$1" >/dev/null
	fi
}

# intake_runs N: durable intake alone, N times, each on a fresh API-only
# instance (--api-only takes the intents and executes none, so the figure
# is what the API and the store accept, as River's insert benchmarks
# measure an insert-only client); reports in $work/intake1.md..; sets
# intake_cmd.
intake_runs() {
	intake_cmd="loadgen --url http://127.0.0.1:$API_PORT --count $INTAKE_COUNT --concurrency 64 --wait=false"
	for n in $(seq 1 "$1"); do
		log "submission-manager serve --api-only ...; $intake_cmd (run $n of $1)"
		fresh_service --api-only
		wait_ready "http://127.0.0.1:$API_PORT" "mode=follower"
		warm_up "intake$n"
		"$bin"/loadgen --url "http://127.0.0.1:$API_PORT" --count "$INTAKE_COUNT" --concurrency 64 --wait=false --run-id "intake$n" >"$work/intake$n.md"
		cat "$work/intake$n.md" >&2
	done
}

# batch_runs N: the same with batches of 100 from 16 clients through
# POST /v1/intents/batch; reports in $work/batch1.md..; sets batch_cmd.
batch_runs() {
	batch_cmd="loadgen --url http://127.0.0.1:$API_PORT --count $BATCH_COUNT --batch 100 --concurrency 16 --wait=false"
	for n in $(seq 1 "$1"); do
		log "submission-manager serve --api-only ...; $batch_cmd (run $n of $1)"
		fresh_service --api-only
		wait_ready "http://127.0.0.1:$API_PORT" "mode=follower"
		warm_up "batch$n"
		"$bin"/loadgen --url "http://127.0.0.1:$API_PORT" --count "$BATCH_COUNT" --batch 100 --concurrency 16 --wait=false --run-id "batch$n" >"$work/batch$n.md"
		cat "$work/batch$n.md" >&2
	done
}

# mixed_run: the intake load against a leader that executes every intent
# it takes in; report in $work/mixed.md; sets mixed_cmd.
mixed_run() {
	mixed_cmd="loadgen --url http://127.0.0.1:$API_PORT --count $INTAKE_COUNT --concurrency 64"
	log "submission-manager serve ...; $mixed_cmd"
	fresh_service
	wait_ready "http://127.0.0.1:$API_PORT" "mode=leader"
	"$bin"/loadgen --url "http://127.0.0.1:$API_PORT" --count "$INTAKE_COUNT" --concurrency 64 --run-id mixed >"$work/mixed.md"
	cat "$work/mixed.md" >&2
}

# paced_run RATE NAME [SECONDS [extra serve flags...]]: a fresh leader,
# loadgen at RATE intents/s for SECONDS (default EXEC_SECONDS), open loop;
# the report goes to $work/NAME.md, the command to ${NAME}_cmd, the
# service's log lines of the run to $work/NAME.log.
paced_run() {
	local rate=$1 name=$2 seconds=${3:-$EXEC_SECONDS}
	shift $(($# < 3 ? $# : 3))
	local count=$((rate * seconds))
	local cmd="loadgen --url http://127.0.0.1:$API_PORT --count $count --concurrency 64 --rate $rate"
	printf -v "${name}_cmd" '%s' "$cmd"
	log "$cmd ${*:+(serve $*)}"
	local from
	from=$(wc -l <"$work/serve1.log" 2>/dev/null || echo 0)
	fresh_service "$@"
	wait_ready "http://127.0.0.1:$API_PORT" "mode=leader"
	"$bin"/loadgen --url "http://127.0.0.1:$API_PORT" --count "$count" --concurrency 64 --rate "$rate" \
		--wait-timeout "$((seconds + 300))s" --run-id "$name" >"$work/$name.md"
	cat "$work/$name.md" >&2
	tail -n +"$((from + 1))" "$work/serve1.log" >"$work/$name.log"
}

# failover_runs: a follower on the leader's database; SIGKILL the leader,
# submit through the follower, and time until that intent's first attempt
# has started; then the same after a graceful shutdown (SIGTERM) of the new
# leader. Sets kill_secs and term_secs.
failover_runs() {
	# shellcheck disable=SC2086
	"$bin"/submission-manager serve --listen "127.0.0.1:$API2_PORT" $database_flags $serve_flags 2>"$work/serve2.log" &
	local follower_pid=$!
	pids+=($follower_pid)
	wait_ready "http://127.0.0.1:$API2_PORT" "mode=follower"

	log "failover: SIGKILL of the leader"
	t0=$(date +%s.%N)
	kill -9 "$leader_pid"
	kill_secs=$(first_attempt_after "http://127.0.0.1:$API2_PORT" "failover-kill-$$")

	log "failover: graceful shutdown (SIGTERM) of the new leader"
	# shellcheck disable=SC2086
	"$bin"/submission-manager serve --listen "127.0.0.1:$API_PORT" $database_flags $serve_flags 2>"$work/serve3.log" &
	leader_pid=$!
	pids+=($leader_pid)
	wait_ready "http://127.0.0.1:$API_PORT" "mode=follower"
	t0=$(date +%s.%N)
	kill -TERM "$follower_pid"
	term_secs=$(first_attempt_after "http://127.0.0.1:$API_PORT" "failover-term-$$")
}

first_attempt_after() { # base url, intent id -> seconds from $t0 to an attempt being visible
	curl -fsS -o /dev/null -H 'Content-Type: application/json' \
		-d "{\"intentId\":\"$2\",\"submissionTarget\":\"sms.realtime\",\"payload\":{\"to\":\"+15550100\"}}" "$1/v1/intents"
	for _ in $(seq 1 1500); do
		if curl -fsS "$1/v1/intents/$2" | grep -q '"startedAt"'; then
			awk -v now="$(date +%s.%N)" -v t0="$t0" 'BEGIN { printf "%.2f\n", now - t0 }'
			return 0
		fi
		sleep 0.02
	done
	echo "never"
}

# backlog_run NAME [extra serve flags...]: an API-only instance takes
# BACKLOG intents; then a leader starts on the same database and executes
# them, timed from its start until no intent is pending (loadgen
# --await-drain polls every 20 ms over one kept-alive connection), as
# River's backlog phase is timed from its client's start. Prints the
# executed attempts/s, the cores the service and the simulator used
# meanwhile, and the CPU milliseconds per executed attempt of the service
# and of the database server (0 for SQLite, which runs in the service).
# Call it with stdout redirected, not in $(...) or <(...): a subshell would
# forget the database it makes, which the cleanup then leaves behind.
backlog_run() {
	local name=$1
	shift
	db_seq=$((${db_seq:-0} + 1))
	new_database "backlog$db_seq"
	# shellcheck disable=SC2086
	"$bin"/submission-manager serve --listen "127.0.0.1:$API_PORT" $database_flags $serve_flags --api-only "$@" 2>>"$work/serve1.log" &
	local pid=$!
	pids+=($pid)
	wait_ready "http://127.0.0.1:$API_PORT" "mode=follower"
	"$bin"/loadgen --url "http://127.0.0.1:$API_PORT" --concurrency 64 --count "$BACKLOG" --wait=false --run-id "$name" >/dev/null
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null || true
	local t0 t1 sim0 sim1 svc1 db0 db1
	t0=$(date +%s.%N)
	sim0=$(cpu_ticks "$sim_pid")
	db0=$(db_server_ticks)
	# Not wait_ready: its loop of curl processes would run beside the
	# drain. loadgen waits for the service to answer.
	# shellcheck disable=SC2086
	"$bin"/submission-manager serve --listen "127.0.0.1:$API_PORT" $database_flags $serve_flags "$@" 2>>"$work/serve1.log" &
	pid=$!
	pids+=($pid)
	"$bin"/loadgen --url "http://127.0.0.1:$API_PORT" --concurrency 64 --await-drain --wait-timeout 30m >/dev/null
	t1=$(date +%s.%N)
	sim1=$(cpu_ticks "$sim_pid")
	svc1=$(cpu_ticks "$pid")
	db1=$(db_server_ticks)
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null || true
	awk -v n="$BACKLOG" -v a="$t0" -v b="$t1" -v sim="$((sim1 - sim0))" -v svc="$svc1" -v db="$((db1 - db0))" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { d = b - a; printf "%.0f %.2f %.2f %.3f %.3f\n", n / d, svc / hz / d, sim / hz / d, svc / hz * 1000 / n, db / hz * 1000 / n }'
}
