#!/usr/bin/env bash
# make soak: the bounded chaos soak (e2e/soak_test.go): three instances on
# SQLite behind HAProxy, a steady load, random SIGKILL/SIGSTOP of the leader
# and gateway fault modes for SOAK_DURATION (default 3m), then the checks.
# Its figures replace the "Chaos soak" section of docs/benchmarks.md.
# Needs haproxy (.ci/run installs it). Not part of make test.
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${SOAK_DURATION:-3m}"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT

echo "soak: ${duration} of chaos (plus build, start and settling)"
log="$(mktemp)"
if ! SUBMISSION_SOAK="$duration" SUBMISSION_SOAK_REPORT="$report" \
	go test -count=1 -timeout 30m -run '^TestSoak$' -v ./e2e/ >"$log" 2>&1; then
	# The failing check, without the instances' JSON log lines around it;
	# the whole log stays for a closer look.
	grep -v -e '^=== ' -e '^        {' "$log" || true
	echo "soak failed; the whole log: $log"
	exit 1
fi
grep -v '^=== ' "$log" | tail -n 40
rm -f "$log"

section="$(mktemp)"
trap 'rm -f "$report" "$section"' EXIT
{
	echo "<!-- soak:begin (written by make soak; keep this section self-contained) -->"
	echo "## Chaos soak (\`make soak\`)"
	echo
	echo "Three \`serve\` processes on one SQLite file behind HAProxy (docs/haproxy.cfg), the gateway"
	echo "simulator as a process (10-50 ms latency, 80 % accepted, lookup on), 4 clients submitting through"
	echo "HAProxy every 40 ms each. Every 3-7 s the chaos loop picks one of: SIGKILL the leader (its slot"
	echo "restarted at once), SIGSTOP the leader past its 2 s lease then SIGCONT it, or a gateway fault mode"
	echo "for 2-4 s. Measured on $(date -u +%Y-%m-%d) at commit $(git rev-parse --short HEAD), $(nproc) cores shared with other work."
	echo
	echo "| what | figures |"
	echo "| --- | --- |"
	cat "$report"
	echo "<!-- soak:end -->"
} >"$section"

doc=docs/benchmarks.md
if grep -q '<!-- soak:begin' "$doc"; then
	awk -v file="$section" '
		/<!-- soak:begin/ { while ((getline line < file) > 0) print line; skip = 1; next }
		/<!-- soak:end -->/ { skip = 0; next }
		!skip { print }' "$doc" >"$doc.tmp"
	mv "$doc.tmp" "$doc"
else
	{ echo; cat "$section"; } >>"$doc"
fi
echo "soak: figures written to $doc"
