# SubmissionManager. The two commands a newcomer needs: `make run`, `make test`.
GO       ?= go
BIN      := bin
# Generated trees that `make verify` requires to be up to date.
GENERATED := api adapters db

.PHONY: all build run test test-short generate verify bench bench-river fuzz clean

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

# River beside SubmissionManager on the same work (also part of `make bench`).
bench-river:
	./scripts/bench-river.sh

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecodeRegistry -fuzztime 60s ./core/

clean:
	rm -rf $(BIN) data
