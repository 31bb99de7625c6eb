# shellcheck shell=bash
# The end-to-end phases the benchmarks share, sourced by bench-lib.sh (which
# says what the store and the processes are).

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
# a warm pool rather than of its connections' first calls (on Babelfish
# each compiles the intake's procedure there, about 0.7 s of the server's
# CPU, on each connection of the pool; serve's own warm-up does the same). Before a
# batch phase also 20 batches of 100 at once, one on each connection:
# Babelfish compiles a procedure on a connection's first call of it, about
# a second of CPU for the batch insert, which otherwise fell on the first
# sixteen timed batches at once (8-9 s each, the phase's p99).
warm_up() {
	if [ "$STORE" = sqlserver ]; then
		"$bin"/loadgen --url "http://127.0.0.1:$API_PORT" --count 640 --concurrency 64 --wait=false --run-id "warm$1" >/dev/null
		case $1 in batch*)
			"$bin"/loadgen --url "http://127.0.0.1:$API_PORT" --count 2000 --batch 100 --concurrency 20 --wait=false --run-id "warm$1b" >/dev/null ;;
		esac
	fi
}

# intake_runs N: durable intake alone, N times, each on a fresh API-only
# instance (--api-only takes the intents and executes none, so the figure
# is what the API and the store accept, as River's insert benchmarks
# measure an insert-only client); reports in $work/intake1.md..; sets
# intake_cmd.
intake_runs() {
	intake_cmd="loadgen --url http://127.0.0.1:$API_PORT --count $INTAKE_COUNT --concurrency 64 --wait=false"
	local n
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
	local n
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

# take_backlog NAME LOG [extra serve flags...]: an API-only instance on
# the current database (new_database) takes BACKLOG intents, their
# intentIds prefixed with NAME, and stops; its log goes to LOG.
take_backlog() {
	local name=$1 logfile=$2
	shift 2
	# shellcheck disable=SC2086
	"$bin"/submission-manager serve --listen "127.0.0.1:$API_PORT" $database_flags $serve_flags --api-only "$@" 2>>"$logfile" &
	local api=$!
	pids+=($api)
	wait_ready "http://127.0.0.1:$API_PORT" "mode=follower"
	"$bin"/loadgen --url "http://127.0.0.1:$API_PORT" --concurrency 64 --count "$BACKLOG" --wait=false --run-id "$name" >/dev/null
	kill -TERM "$api"
	wait "$api" 2>/dev/null || true
}

# takeover_run NAME: a warm standby takes over a backlog its leader left.
# A leader and a standby start on a new database (the standby warms its
# executor's pool and waits), both are frozen (SIGSTOP), an API-only
# instance takes BACKLOG intents, the leader is killed (SIGKILL) and the
# standby resumes: it takes the lapsed lease and drains the backlog on the
# connections it warmed before the intents arrived, timed from its resume
# until no intent is pending (drain_ended_at). Prints the executed
# attempts/s and the database server's CPU milliseconds per executed
# attempt. Uses API2_PORT and API2_PORT+1; serve_flags must hold a lease
# of 5 s or less (the fast lease), which has lapsed when the standby
# resumes.
# Call it with stdout redirected, as backlog_run.
takeover_run() {
	local name=$1 standby_port=$API2_PORT leader_port=$((API2_PORT + 1))
	db_seq=$((${db_seq:-0} + 1))
	new_database "takeover$db_seq"
	# shellcheck disable=SC2086
	"$bin"/submission-manager serve --listen "127.0.0.1:$leader_port" $database_flags $serve_flags 2>>"$work/$name.log" &
	local leader=$!
	pids+=($leader)
	wait_ready "http://127.0.0.1:$leader_port" "mode=leader"
	# shellcheck disable=SC2086
	"$bin"/submission-manager serve --listen "127.0.0.1:$standby_port" $database_flags $serve_flags 2>>"$work/$name.log" &
	local standby=$!
	pids+=($standby)
	wait_ready "http://127.0.0.1:$standby_port" "mode=follower"
	kill -STOP "$standby" "$leader"
	local frozen
	frozen=$(date +%s.%N)
	# Should it fail, bench_cleanup wakes the two to stop them.
	take_backlog "$name" "$work/$name.log"
	kill -KILL "$leader"
	wait "$leader" 2>/dev/null || true
	# The lease lapsed at most its duration (the fast lease's 5 s) after the
	# freeze: a small backlog is taken in sooner, and the drain's time must
	# not include the wait for it.
	sleep "$(awk -v f="$frozen" -v now="$(date +%s.%N)" 'BEGIN { d = f + 6 - now; print (d > 0 ? d : 0) }')"
	local t0 t1 db0 db1
	t0=$(date +%s.%N)
	db0=$(db_server_ticks)
	kill -CONT "$standby"
	"$bin"/loadgen --url "http://127.0.0.1:$standby_port" --concurrency 64 --await-drain --drain-poll "$(drain_poll)" --wait-timeout 30m >/dev/null
	db1=$(db_server_ticks)
	t1=$(drain_ended_at)
	kill -TERM "$standby"
	wait "$standby" 2>/dev/null || true
	awk -v n="$BACKLOG" -v a="$t0" -v b="$t1" -v db="$((db1 - db0))" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.0f %.3f\n", n / (b - a), db / hz * 1000 / n }'
}

# backlog_run NAME [extra serve flags...]: an API-only instance takes
# BACKLOG intents; then a leader starts on the same database and executes
# them, timed from its start until no intent is pending (the last result's
# write on SQL Server, drain_ended_at; loadgen --await-drain's answer on
# SQLite, asking every drain_poll over one kept-alive connection), as
# River's backlog phase is timed from its client's start. Prints the
# executed attempts/s, the cores the service and the simulator used
# meanwhile, the CPU milliseconds per executed attempt of the service
# and of the database server (0 for SQLite, which runs in the service),
# and the attempts/s timed from the leader's lease (its leader_acquired
# log line, after the warm-ups and the logins a fresh process pays; from
# its start when the line is missing) to the same end: River's client
# starts on a pool that its producers have connected.
# Call it with stdout redirected, not in $(...) or <(...): a subshell would
# forget the database it makes, which the cleanup then leaves behind.
backlog_run() {
	local name=$1
	shift
	db_seq=$((${db_seq:-0} + 1))
	new_database "backlog$db_seq"
	take_backlog "$name" "$work/serve1.log" "$@"
	local pid t0 t1 sim0 sim1 svc1 db0 db1 from leased
	from=$(wc -l <"$work/serve1.log")
	t0=$(date +%s.%N)
	sim0=$(cpu_ticks "$sim_pid")
	db0=$(db_server_ticks)
	# Not wait_ready: its loop of curl processes would run beside the
	# drain. loadgen waits for the service to answer. At info level, for
	# its leader_acquired line: it logs a few lines a second at most.
	# shellcheck disable=SC2086
	"$bin"/submission-manager serve --listen "127.0.0.1:$API_PORT" $database_flags $serve_flags --log-level info "$@" 2>>"$work/serve1.log" &
	pid=$!
	pids+=($pid)
	"$bin"/loadgen --url "http://127.0.0.1:$API_PORT" --concurrency 64 --await-drain --drain-poll "$(drain_poll)" --wait-timeout 30m >/dev/null
	sim1=$(cpu_ticks "$sim_pid")
	svc1=$(cpu_ticks "$pid")
	db1=$(db_server_ticks)
	t1=$(drain_ended_at)
	leased=$(tail -n +"$((from + 1))" "$work/serve1.log" | sed -n 's/^time=\([^ ]*\) .*msg=leader_acquired .*/\1/p' | head -1)
	leased=$(date -d "${leased:-@$t0}" +%s.%N)
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null || true
	awk -v n="$BACKLOG" -v a="$t0" -v b="$t1" -v l="$leased" -v sim="$((sim1 - sim0))" -v svc="$svc1" -v db="$((db1 - db0))" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { d = b - a; printf "%.0f %.2f %.2f %.3f %.3f %.0f\n", n / d, svc / hz / d, sim / hz / d, svc / hz * 1000 / n, db / hz * 1000 / n, n / (b - l) }'
}
