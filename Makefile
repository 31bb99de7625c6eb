# SubmissionManager. The two commands a newcomer needs: `make run`, `make test`.
GO       ?= go
BIN      := bin
# Generated trees that `make verify` requires to be up to date.
GENERATED := api adapters db

.PHONY: all build run test test-short generate verify bench fuzz clean

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

test:
	$(GO) test -count=1 -timeout 20m ./...

test-short:
	$(GO) test -short -count=1 ./...

# Regenerates every committed generated file with the tools pinned in go.mod.
generate:
	$(GO) generate ./...
	$(GO) tool sqlc generate

verify: generate
	@if [ -n "$$(git status --porcelain -- $(GENERATED))" ]; then \
		echo "generated code is stale: run 'make generate' and commit"; \
		git status --porcelain -- $(GENERATED); exit 1; fi
	@if [ -n "$$(gofmt -l $$(git ls-files '*.go'))" ]; then \
		echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff

bench:
	./scripts/bench.sh

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
	rm -rf $(BIN) data
