#!/usr/bin/env bash
# `make bench-sqlserver`: the `make bench` phases on SQL Server, the
# production store, against the T-SQL server of ../shared/babelfish (started
# when it does not answer), with River on the same server's PostgreSQL port
# in the same run; written to the section of docs/benchmarks.md between
# <!-- sqlserver:begin --> and <!-- sqlserver:end --> (make bench and make
# soak keep it), with issue 25's goals. Everything runs on one host: loadgen,
# the service, the gateway simulator (5 ms) and the database server share
# the cores.
#
# Phases: durable intake of single submissions (RUNS runs, the median read)
# and of batches of 100; intake and execution at once at MIXED_RATE intents/s
# offered for EXEC_SECONDS; SIGKILL and SIGTERM failover (5 s lease, 1 s
# renewal); scripts/bench-river.sh on SQL Server beside River (intake,
# BACKLOG executed, mixed); a backlog drained on SQL Server and on SQLite with
# the service's CPU (and the database server's) per executed attempt; a
# backlog drained by a warm standby that takes over from a killed leader; and
# LEASE_RATE intents/s offered for LEASE_SECONDS at the default lease timing
# (60 s lease, 20 s renewal) and at 5 s / 1 s, counting leases lost.
#
# Knobs (environment): RUNS (3), INTAKE_COUNT (30000), BATCH_COUNT (100000),
# MIXED_RATE (500), EXEC_SECONDS (60), BACKLOG (20000), RIVER_RUNS (1),
# LEASE_RATE (500), LEASE_SECONDS (600), BASE_PORT (18200; uses BASE_PORT..+3
# and bench-river.sh BASE_PORT+10..+13), SQLSERVER_DSN (the server's master
# database), OUT (docs/benchmarks.md). BENCH_SMOKE=1 proves the script end to
# end in a few minutes: tiny counts and durations, the report written to a
# temporary file unless OUT is set.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${BENCH_SMOKE:-}" ]; then
	RUNS=${RUNS:-1} INTAKE_COUNT=${INTAKE_COUNT:-200} BATCH_COUNT=${BATCH_COUNT:-1000}
	EXEC_SECONDS=${EXEC_SECONDS:-3} MIXED_RATE=${MIXED_RATE:-50} BACKLOG=${BACKLOG:-200}
	LEASE_SECONDS=${LEASE_SECONDS:-3} LEASE_RATE=${LEASE_RATE:-50}
	OUT=${OUT:-$(mktemp /tmp/benchmarks-sqlserver-smoke.XXXXXX.md)}
fi
RUNS=${RUNS:-3}
INTAKE_COUNT=${INTAKE_COUNT:-30000}
BATCH_COUNT=${BATCH_COUNT:-100000}
MIXED_RATE=${MIXED_RATE:-500}
EXEC_SECONDS=${EXEC_SECONDS:-60}
BACKLOG=${BACKLOG:-20000}
RIVER_RUNS=${RIVER_RUNS:-1}
LEASE_RATE=${LEASE_RATE:-500}
LEASE_SECONDS=${LEASE_SECONDS:-600}
BASE_PORT=${BASE_PORT:-18200}
API_PORT=$BASE_PORT SMS_PORT=$((BASE_PORT + 1)) PUSH_PORT=$((BASE_PORT + 2)) API2_PORT=$((BASE_PORT + 3))
OUT=${OUT:-docs/benchmarks.md}
STORE=sqlserver
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh

sqlserver_up
river_db=riverbench_$$
bench_cleanup_extra() { pg_exec "DROP DATABASE IF EXISTS $river_db" >/dev/null 2>&1; }
bench_setup

write_registry "$work/registry.json" "$SMS_PORT" 600
start_sim "$SMS_PORT" "$PUSH_PORT"
base_flags="--registry $work/registry.json --max-in-flight 256 --log-level warn"
fast_lease="--lease-duration 5s --renew-interval 1s --acquire-interval 1s"
serve_flags="$base_flags $fast_lease"
serve_cmd="submission-manager serve --listen 127.0.0.1:$API_PORT --database sqlserver://...?database=<new> --migrate $serve_flags"
server_version=$(tsql_exec "SELECT @@VERSION" | head -1)

intake_runs "$RUNS"
batch_runs "$RUNS"
paced_run "$MIXED_RATE" mixed "$EXEC_SECONDS"
failover_runs
stop_leader

log "scripts/bench-river.sh on SQL Server, River on the same server's PostgreSQL"
pg_exec "CREATE DATABASE $river_db" >/dev/null
STORE=sqlserver RUNS=$RIVER_RUNS INTAKE=$INTAKE_COUNT BACKLOG=$BACKLOG MIXED=$((MIXED_RATE * EXEC_SECONDS)) \
	BASE_PORT=$((BASE_PORT + 10)) RIVER_DSN="postgres://babelfish_user:12345678@127.0.0.1:$BABELFISH_PG_PORT/$river_db?sslmode=disable" \
	RIVER_PGDATA="$BABELFISH_PGDATA" \
	RIVER_FIGURES="$work/river.txt" RIVER_HEADING="### River on the same server's PostgreSQL port" \
	scripts/bench-river.sh "$work/river.md"

log "a backlog of $BACKLOG drained on each store, for the CPU per executed attempt"
backlog_run cpu-sqlserver >"$work/cpu-sqlserver.txt"
STORE=sqlite backlog_run cpu-sqlite >"$work/cpu-sqlite.txt"
read -r tsql_rate tsql_cores _ tsql_svc_ms tsql_db_ms _ <"$work/cpu-sqlserver.txt"
read -r lite_rate lite_cores _ lite_svc_ms _ _ <"$work/cpu-sqlite.txt"

log "a warm standby takes over a backlog of $BACKLOG"
takeover_run takeover >"$work/takeover.txt"
read -r takeover_rate takeover_db_ms <"$work/takeover.txt"

log "leases under load: $LEASE_RATE intents/s for $LEASE_SECONDS s at the default timing, then at 5 s / 1 s"
serve_flags=$base_flags paced_run "$LEASE_RATE" lease_default "$LEASE_SECONDS"
paced_run "$LEASE_RATE" lease_fast "$LEASE_SECONDS"
lost_default=$(leases_lost "$work/lease_default.log")
lost_fast=$(leases_lost "$work/lease_fast.log")
lost_all=$(leases_lost "$work"/serve*.log)
twice=$(curl -fsS "http://127.0.0.1:$SMS_PORT/stats" | python3 -c \
	'import json, sys; print(sum(1 for r in (json.load(sys.stdin).get("References") or {}).values() if r.get("Accepted", 0) > 1))')

# ---------------------------------------------------------------- the report
median_intake=$(median_run intake "$RUNS")
median_batch=$(median_run batch "$RUNS")
read -r _ _ _ r_backlog_ours r_backlog_river _ _ _ _ _ r_client_ms r_db_ms < <(head -1 "$work/river.txt")
half_river=$(awk -v a="$r_backlog_ours" -v b="$r_backlog_river" 'BEGIN { printf "%.2f", a / b }')
section=$(mktemp)
trap 'rm -f "$section"; bench_cleanup' EXIT
{
	echo "<!-- sqlserver:begin (written by make bench-sqlserver; keep this section self-contained) -->"
	echo "## SQL Server (\`make bench-sqlserver\`)"
	echo
	echo "\`scripts/bench-sqlserver.sh\` on $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD): the phases of \`make bench\` on"
	echo "SQL Server, the production store, here $server_version (../shared/babelfish, fsync on), on"
	echo "$(nproc) cores of a $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), shared by loadgen, the service, the"
	echo "gateway simulator (5 ms) and the database server. Service: \`$serve_cmd\`; each phase on a new database, the one before dropped."
	echo
	echo "| goal (issue 25) | target | measured | met |"
	echo "| --- | --- | --- | --- |"
	row "durable intake, 64 clients, API-only, median of $RUNS runs (intents/s)" ">=" 1000 "$(field "$work/intake$median_intake.md" "intake throughput" 1)"
	row "intake latency p99 at that load (ms)" "<=" 250 "$(field "$work/intake$median_intake.md" "intake latency" 2)"
	row "bulk intake, batches of 100 from 16 clients, median of $RUNS runs (intents/s)" ">=" 10000 "$(field "$work/batch$median_batch.md" "intake throughput" 1)"
	row "a backlog of $BACKLOG executed (attempts/s)" ">=" 1000 "$r_backlog_ours"
	row "the same against River's backlog on the same PostgreSQL, same run (ratio)" ">=" 0.5 "$half_river"
	row "intake and execution at once, $MIXED_RATE intents/s offered for $EXEC_SECONDS s: left pending" "<=" 0 "$(field "$work/mixed.md" "still pending" 1)"
	row "the same: first-attempt lateness p99 (ms)" "<=" 1000 "$(field "$work/mixed.md" "first-attempt lateness" 2)"
	row "leases lost in $LEASE_SECONDS s at $LEASE_RATE intents/s, default timing (60 s / 20 s)" "<=" 0 "$lost_default"
	row "leases lost in $LEASE_SECONDS s at $LEASE_RATE intents/s, 5 s lease / 1 s renewal" "<=" 0 "$lost_fast"
	row "failover after SIGKILL of the leader, 5 s lease (s)" "<=" 6 "$kill_secs"
	row "references the gateway accepted twice, whole run" "<=" 0 "$twice"
	echo
	echo "Leases lost in the whole run, every phase: $lost_all. Failover after a graceful shutdown (SIGTERM): $term_secs s."
	echo
	echo "### Intake"
	echo
	echo "Commands: \`$intake_cmd\` and \`$batch_cmd\`, $RUNS times each, each on a fresh API-only instance and database."
	echo
	echo "| run | single: intents/s | p50 / p99 / max (ms) | batches of 100: intents/s | batch p50 / p99 / max (ms) |"
	echo "| --- | --- | --- | --- | --- |"
	for n in $(seq 1 "$RUNS"); do
		i=$work/intake$n.md b=$work/batch$n.md
		echo "| $n | $(field "$i" "intake throughput" 1) | $(field "$i" "intake latency" 1) / $(field "$i" "intake latency" 2) / $(field "$i" "intake latency" 3) | $(field "$b" "intake throughput" 1) | $(field "$b" "intake latency" 1) / $(field "$b" "intake latency" 2) / $(field "$b" "intake latency" 3) |"
	done
	echo
	echo "### Intake and execution at once, $MIXED_RATE intents/s offered"
	echo
	echo "Command: \`$mixed_cmd\`"
	echo
	cat "$work/mixed.md"
	echo
	echo "### CPU per executed attempt"
	echo
	echo "A backlog of $BACKLOG intents, taken in by an API-only instance, then drained by a leader started on"
	echo "the same database (\`--max-in-flight 256\`), on each store in this run. The database server's CPU is"
	echo "its postmaster's and backends' (SQLite runs inside the service). River's row is its first run's"
	echo "backlog below, on the same server's PostgreSQL, from its client's start (its jobs inserted, its pool"
	echo "connected) to its last completion: its client process's CPU and its server's per executed job."
	echo
	echo "| store | executed (attempts/s) | service (cores) | service CPU per attempt (ms) | database server CPU per attempt (ms) |"
	echo "| --- | --- | --- | --- | --- |"
	echo "| SQL Server ($(echo "$server_version" | cut -d' ' -f1-3)) | $tsql_rate | $tsql_cores | $tsql_svc_ms | $tsql_db_ms |"
	echo "| SQLite | $lite_rate | $lite_cores | $lite_svc_ms | in the service |"
	echo "| River on the same server's PostgreSQL (jobs/s; its client process's CPU) | $(printf '%.0f' "$r_backlog_river") | — | $r_client_ms | $r_db_ms |"
	echo
	echo "### A warm standby takes over a backlog"
	echo
	echo "A leader and a standby start on a new database, the standby warms its executor's pool and waits;"
	echo "both are frozen (SIGSTOP) while an API-only instance takes $BACKLOG intents; the leader is killed"
	echo "(SIGKILL) and the standby resumes, takes the lapsed lease ($fast_lease) and drains the backlog on"
	echo "the connections it warmed, timed from its resume to its last result's write (\`takeover_run\`,"
	echo "scripts/bench-phases.sh). Its plans were made while the tables were empty; docs/sqlserver.md,"
	echo "\"Statistics\", says what that cost before an instance looked at the statistics at its first attempts."
	echo
	echo "| drained by | executed (attempts/s) | database server CPU per attempt (ms) |"
	echo "| --- | --- | --- |"
	echo "| the standby, from its resume | $takeover_rate | $takeover_db_ms |"
	echo "| a fresh leader, from its start (above) | $tsql_rate | $tsql_db_ms |"
	echo "| River on the same server's PostgreSQL, its client started on the pool its producers connected (below) | $(printf '%.0f' "$r_backlog_river") | — |"
	echo
	echo "The standby's connections are warm, as River's client's are: against River's backlog in this run, $(awk -v a="$takeover_rate" -v b="$r_backlog_river" 'BEGIN { printf "%.2f", a / b }')×."
	echo
	echo "### Leases under load"
	echo
	echo "\`$lease_default_cmd\`, once at the default lease timing and once with \`$fast_lease\`; a lost lease is a"
	echo "\`leader_lost\` warning in the service's log."
	echo
	echo "| timing | leases lost | first-attempt lateness p50 / p99 (ms) | left pending |"
	echo "| --- | --- | --- | --- |"
	for run in default fast; do
		f=$work/lease_$run.md
		lost=lost_$run
		echo "| $run | ${!lost} | $(field "$f" "first-attempt lateness" 1) / $(field "$f" "first-attempt lateness" 2) | $(field "$f" "still pending" 1) |"
	done
	echo
	cat "$work/river.md"
	echo "<!-- sqlserver:end -->"
} >"$section"

if grep -q '<!-- sqlserver:begin' "$OUT" 2>/dev/null; then
	awk -v file="$section" '
		/<!-- sqlserver:begin/ { while ((getline line < file) > 0) print line; skip = 1; next }
		/<!-- sqlserver:end -->/ { skip = 0; next }
		!skip { print }' "$OUT" >"$OUT.tmp"
	mv "$OUT.tmp" "$OUT"
else
	{ [ -s "$OUT" ] && echo; cat "$section"; } >>"$OUT"
fi
log "wrote the SQL Server section of $OUT"
