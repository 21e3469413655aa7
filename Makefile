# Rendezvous: `make run` starts the service on its embedded store, `make test` passes the tests.
GO       ?= go
PKGS     ?= ./...
COUNT    ?= 6
BENCHTIME ?= 1s

.PHONY: run test fmt vet test-race bench bench-compare fuzz build

run:
	$(GO) run ./cmd/rendezvous --dev

build:
	$(GO) build -o bin/ ./cmd/...

fmt:
	gofmt -l -w $$(git ls-files '*.go')

vet:
	$(GO) vet $(PKGS)

test: vet test-race

test-race:
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

bench:
	./bench/run.sh

bench-compare:
	./bench/compare.sh
