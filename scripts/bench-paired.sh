#!/usr/bin/env bash
# `make bench-paired`: the same end-to-end phases run by two builds of the
# service, back to back in pairs, on embedded SQLite, so that a change that
# should cost nothing (a restructuring, tracing switched off) is compared
# with the code before it on the same machine at the same moment. A single
# run on a shared VM moves by +-30 % with its neighbours; pairs taken in
# alternating order, and the median of their ratios, do not.
#
# Knobs (environment): BASE (the git revision to compare with, default
# HEAD~1), HEAD_REV (the revision compared with it, default the working
# tree), PAIRS (default 5), INTAKE_COUNT (single submissions per intake
# run, default 20000), BACKLOG (intents per backlog run, default 20000),
# BASE_PORT (default 18100). The table goes to stdout; OUT appends it to a
# file as well.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${BASE:-HEAD~1}
PAIRS=${PAIRS:-5}
INTAKE_COUNT=${INTAKE_COUNT:-20000}
BACKLOG=${BACKLOG:-20000}
BASE_PORT=${BASE_PORT:-18100}
API_PORT=$BASE_PORT SMS_PORT=$((BASE_PORT + 1)) PUSH_PORT=$((BASE_PORT + 2)) API2_PORT=$((BASE_PORT + 3))
STORE=sqlite
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh
bench_setup
head_bin=$bin
worktrees=()
bench_cleanup_extra() { for w in "${worktrees[@]:-}"; do [ -n "$w" ] && git worktree remove --force "$w"; done; }
# build_rev REV DIR: the service of revision REV into DIR, driven by this
# tree's load generator, so that only the service differs between builds.
build_rev() {
	log "building $1"
	git worktree add --detach -q "$work/src-$1" "$1"
	worktrees+=("$work/src-$1")
	(cd "$work/src-$1" && go build -o "$2/" ./cmd/submission-manager)
	cp "$head_bin/loadgen" "$2/"
}
base_rev=$(git rev-parse --short "$BASE")
build_rev "$base_rev" "$work/base-bin"
base_bin=$work/base-bin
if [ -n "${HEAD_REV:-}" ]; then
	head_rev=$(git rev-parse --short "$HEAD_REV")
	build_rev "$head_rev" "$work/head-bin"
	head_bin=$work/head-bin
else
	head_rev=$(git rev-parse --short HEAD)
	[ -z "$(git status --porcelain --untracked-files=no)" ] || head_rev="$head_rev+changes"
fi

write_registry "$work/registry.json" "$SMS_PORT"
serve_flags="--registry $work/registry.json --max-in-flight 256 --lease-duration 5s --renew-interval 1s --acquire-interval 1s --log-level warn"
bin=$work/bin
start_sim "$SMS_PORT" "$PUSH_PORT"

# one_run N BUILD: one intake run and one backlog run of BUILD (base or
# head), appended to $work/BUILD.txt as "intake/s attempts/s ms/attempt
# ms/intent" (the service's CPU per executed attempt and per intent taken
# in: on a busy machine these move far less than the rates do).
one_run() {
	local n=$1 build=$2
	if [ "$build" = base ]; then bin=$base_bin; else bin=$head_bin; fi
	fresh_service --api-only
	wait_ready "http://127.0.0.1:$API_PORT" "mode=follower"
	local cpu0 cpu1 intake intakems
	cpu0=$(cpu_ticks "$leader_pid")
	"$bin"/loadgen --url "http://127.0.0.1:$API_PORT" --count "$INTAKE_COUNT" --concurrency 64 --wait=false --run-id "$build$n" >"$work/intake.md"
	cpu1=$(cpu_ticks "$leader_pid")
	stop_leader
	intake=$(field "$work/intake.md" "intake throughput" 1)
	intakems=$(awk -v t="$((cpu1 - cpu0))" -v hz="$(getconf CLK_TCK)" -v n="$INTAKE_COUNT" 'BEGIN { printf "%.3f", t / hz * 1000 / n }')
	backlog_run "backlog-$build$n" >"$work/backlog.txt"
	read -r attempts _ _ svcms _ <"$work/backlog.txt"
	echo "$intake $attempts $svcms $intakems" >>"$work/$build.txt"
	log "pair $n, $build ($([ "$build" = base ] && echo "$base_rev" || echo "$head_rev")): intake $intake/s ($intakems ms CPU per intent), backlog $attempts attempts/s ($svcms ms CPU per attempt)"
}
: >"$work/base.txt"
: >"$work/head.txt"
for n in $(seq 1 "$PAIRS"); do
	if [ $((n % 2)) -eq 1 ]; then one_run "$n" base; one_run "$n" head; else one_run "$n" head; one_run "$n" base; fi
done

# median COLUMN FILE; ratio_median COLUMN: the median of head/base per pair.
median() { awk -v c="$1" '{ print $c }' "$2" | sort -g | sed -n "$(((PAIRS + 1) / 2))p"; }
ratio_median() { paste -d' ' "$work/head.txt" "$work/base.txt" | awk -v c="$1" '{ printf "%.3f\n", $c / $(c + 4) }' | sort -g | sed -n "$(((PAIRS + 1) / 2))p"; }
{
	echo "Paired runs (\`BASE=$BASE${HEAD_REV:+ HEAD_REV=$HEAD_REV} PAIRS=$PAIRS make bench-paired\`, $(date -u +%Y-%m-%d)): $base_rev against $head_rev on $(store_label),"
	echo "$(nproc) cores, $INTAKE_COUNT single submissions from 64 clients to an API-only instance, then a backlog of"
	echo "$BACKLOG executed by a leader (gateway simulator at 5 ms, --max-in-flight 256); each pair runs both builds"
	echo "back to back, alternating which goes first. Medians of $PAIRS pairs; the ratio is the median of the pairs' ratios."
	echo
	echo "| figure | $base_rev | $head_rev | $head_rev / $base_rev |"
	echo "| --- | --- | --- | --- |"
	echo "| durable intake, intents/s | $(median 1 "$work/base.txt") | $(median 1 "$work/head.txt") | $(ratio_median 1) |"
	echo "| service CPU per intent taken in, ms | $(median 4 "$work/base.txt") | $(median 4 "$work/head.txt") | $(ratio_median 4) |"
	echo "| backlog executed, attempts/s | $(median 2 "$work/base.txt") | $(median 2 "$work/head.txt") | $(ratio_median 2) |"
	echo "| service CPU per executed attempt, ms | $(median 3 "$work/base.txt") | $(median 3 "$work/head.txt") | $(ratio_median 3) |"
} | tee -a "${OUT:-/dev/null}"
