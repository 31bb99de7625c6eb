# SubmissionManager. The two commands a newcomer needs: `make run`, `make test`.
GO       ?= go
BIN      := bin
# The TypeScript SDK, an npm package; its tools are pinned in its lockfile.
SDK_TS   := sdk/typescript
# Generated trees that `make verify` requires to be up to date (the SDK's
# built JavaScript and vendored openapi-fetch are committed, so installing it
# from a directory builds nothing).
GENERATED := api adapters db $(SDK_TS)/src/schema.gen.ts $(SDK_TS)/dist $(SDK_TS)/vendor

.PHONY: all build run test test-sqlserver test-short test-ts generate lint-api verify bench bench-river bench-paired bench-sqlserver fuzz soak clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The service on the embedded SQLite default with both gateway simulators:
# zero configuration. Ctrl-C stops both.
run: build
	@mkdir -p data
	@$(BIN)/gateway-sim & sim=$$!; \
	trap 'kill $$sim 2>/dev/null' EXIT INT TERM; \
	$(BIN)/submission-manager serve

# internal/testreport runs go test -json and ends with the skipped tests,
# by reason, and the counts; it exits with go test's status.
test: test-ts
	SUBMISSION_TEST_SQLSERVER_DSN='$(SQLSERVER_DSN)' $(GO) run ./internal/testreport -go $(GO) -count=1 -timeout 25m ./...

# The SQL Server tests run against SUBMISSION_TEST_SQLSERVER_DSN or, when it
# is unset, the Babelfish server that ../shared/babelfish/start leaves on
# 127.0.0.1:1433 if it answers (a TCP connect, nothing more); without either,
# testcontainers starts SQL Server where a Docker engine answers.
SQLSERVER_LOCAL_DSN := sqlserver://babelfish_user:12345678@127.0.0.1:1433?database=master
SQLSERVER_DSN = $(or $(SUBMISSION_TEST_SQLSERVER_DSN),$(shell timeout 2 bash -c 'exec 3<>/dev/tcp/127.0.0.1/1433' 2>/dev/null && echo '$(SQLSERVER_LOCAL_DSN)'))

# Only the SQL Server tests: the adapter's and the end-to-end tests' SQL
# Server half. They fail, rather than skip, when no server is found.
test-sqlserver:
	SUBMISSION_TEST_SQLSERVER_DSN='$(SQLSERVER_DSN)' SUBMISSION_TEST_SQLSERVER_REQUIRED=1 \
		$(GO) run ./internal/testreport -go $(GO) -count=1 -timeout 25m ./adapters/sqlserver/... && \
	SUBMISSION_TEST_SQLSERVER_DSN='$(SQLSERVER_DSN)' SUBMISSION_TEST_SQLSERVER_REQUIRED=1 \
		$(GO) run ./internal/testreport -go $(GO) -count=1 -timeout 20m -run '^TestStores$$/^sqlserver$$' ./e2e/ && \
	SUBMISSION_TEST_SQLSERVER_DSN='$(SQLSERVER_DSN)' SUBMISSION_TEST_SQLSERVER_REQUIRED=1 \
		$(GO) run ./internal/testreport -go $(GO) -count=1 -timeout 20m -run '^TestHASQLServerFailoverBehindHAProxy$$' ./e2e/

# The TypeScript SDK's tests build and start the real service and simulator.
test-ts: $(SDK_TS)/node_modules/.package-lock.json
	cd $(SDK_TS) && npm test

# npm ci installs exactly the lockfile (from the npm cache when it has it);
# later targets run offline.
$(SDK_TS)/node_modules/.package-lock.json: $(SDK_TS)/package-lock.json
	cd $(SDK_TS) && npm ci --no-audit --no-fund

test-short:
	$(GO) run ./internal/testreport -go $(GO) -short -count=1 ./...

# Regenerates every committed generated file with the tools pinned in go.mod
# (and, for the TypeScript SDK, in its package-lock.json).
generate: $(SDK_TS)/node_modules/.package-lock.json
	$(GO) generate ./...
	$(GO) tool sqlc generate
	cd $(SDK_TS) && npm run --silent generate

# api/openapi.yaml against Redocly CLI's recommended rules, warnings counted
# as errors; api/.redocly.lint-ignore.yaml lists the reasoned exceptions.
lint-api: $(SDK_TS)/node_modules/.package-lock.json
	cd $(SDK_TS) && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npm run --silent lint-api

verify: generate lint-api
	@if [ -n "$$(git status --porcelain -- $(GENERATED))" ]; then \
		echo "generated code is stale: run 'make generate' and commit"; \
		git status --porcelain -- $(GENERATED); exit 1; fi
	@if [ -n "$$(gofmt -l $$(git ls-files '*.go'))" ]; then \
		echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff

bench:
	./scripts/bench.sh

# The bounded chaos soak (a few minutes; SOAK_DURATION, default 3m): three
# instances behind HAProxy on SQLite under load, random SIGKILL/SIGSTOP of the
# leader and gateway fault modes; its figures go into docs/benchmarks.md.
soak:
	./scripts/soak.sh

# River beside SubmissionManager on the same work (also part of `make bench`).
bench-river:
	./scripts/bench-river.sh

# Two builds of the service compared in pairs of back-to-back runs (intake
# and a backlog executed, on SQLite): BASE=rev (default HEAD~1), PAIRS=5.
# For changes that should cost nothing; prints a table of medians and ratios.
bench-paired:
	./scripts/bench-paired.sh

# The `make bench` phases on SQL Server (the Babelfish server of
# ../shared/babelfish, started if needed) beside River on its PostgreSQL
# port, into their own section of docs/benchmarks.md. BENCH_SMOKE=1 runs it
# in minutes with tiny counts and writes a temporary file instead.
bench-sqlserver:
	./scripts/bench-sqlserver.sh

# Each fuzz target searches for FUZZTIME (their seed corpora already run in
# `make test`); the default keeps the whole run near five minutes.
FUZZTIME ?= 40s
FUZZ_TARGETS := \
	./core/:FuzzDecodeRegistry \
	./adapters/httpapi/:FuzzSubmitBody \
	./adapters/httpapi/:FuzzIntentIDReadback \
	./adapters/httpapi/:FuzzIntentIDRuleAgreement \
	./adapters/httpapi/:FuzzListQuery \
	./adapters/httpapi/:FuzzIntentPath \
	./adapters/gateway/:FuzzReadStatusAnswer

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

clean:
	rm -rf $(BIN) data $(SDK_TS)/.test-build
