# Rendezvous: `make run` starts the service on its embedded store, `make test` passes the tests.
GO       ?= go
PKGS     ?= ./...

.PHONY: run test fmt fmt-check vet test-race bench bench-smoke bench-compare fuzz build image

run:
	$(GO) run ./cmd/rendezvous --dev

# VERSION is stamped into every binary (--version, rendezvous_build_info).
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)

build:
	$(GO) build -ldflags "-X github.com/rendezvous/rendezvous/internal/version.override=$(VERSION)" -o bin/ ./cmd/...

# The container image (deploy/Containerfile) with buildah; nothing is pulled.
image:
	VERSION=$(VERSION) ./deploy/build-image.sh

fmt:
	gofmt -l -w $$(git ls-files '*.go')

vet:
	$(GO) vet $(PKGS)

test: fmt-check vet test-race c-test

# Fails on unformatted code, like wireguard-go's format_test.go.
fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files -o --exclude-standard '*.go' 2>/dev/null)); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

test-race:
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

# The benchmark suites and the load tester's ceiling proof; writes
# docs/benchmarks/results/<area>.md for the areas run (AREAS, see bench/run.sh).
bench:
	./bench/run.sh

# Every benchmark once (both stores) and the shed and udprate modes briefly:
# CI runs it after make test, so a change that breaks a benchmark fails.
bench-smoke:
	./bench/smoke.sh

# Each fuzz target for FUZZTIME (the seed corpora also run in `make test`).
FUZZTIME ?= 30s
FUZZ_TARGETS = ./engine/memstore:FuzzStoreOps ./netio/stun:FuzzParse ./netio:FuzzProcessor \
	./httpapi:FuzzDecodeCreateListing ./httpapi:FuzzDecodeRenew ./httpapi:FuzzDecodeJoinRevocation
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; echo "== $$pkg $$fn"; \
		$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s $$pkg || exit 1; \
	done

bench-compare:
	./bench/compare.sh

# The soak (docs/load-testing.md §5): mixed load against the real server,
# started by the load tester, for SOAK; fails when the server's RSS, fds or
# goroutines grow without bound, a listing is lost or an answer is untyped.
# `make test` runs it for 2 minutes (TestSoak in cmd/rendezvous-load).
SOAK ?= 30m
.PHONY: soak
soak: build
	bin/rendezvous-load --mode soak --server-bin bin/rendezvous --duration $(SOAK) --listings 2000 --out bin/soak-out

# The fault scenarios (docs/benchmarks/ha.md): the tests named TestHA… in
# HA_PKGS run once (-json, so each ha-evidence line is tied to its test);
# benchreport writes their figures to the page, which flags an untyped
# answer, a bound not met, a failed or skipped scenario or a missing line.
HA_RUN  ?= ^TestHA
HA_PKGS ?= ./cmd/rendezvous/ ./client/ ./engine/redisstore/
.PHONY: ha-evidence
ha-evidence:
	@mkdir -p bench/out
	@echo "go test -count=1 -json -timeout 30m -run '$(HA_RUN)' $(HA_PKGS) > bench/out/ha.json"
	@$(GO) test -count=1 -json -timeout 30m -run '$(HA_RUN)' $(HA_PKGS) >bench/out/ha.json; st=$$?; \
	$(GO) run ./bench/cmd/benchreport -ha bench/out/ha.json -ha-doc docs/benchmarks/ha.md \
		-ha-command "go test -count=1 -json -run '$(HA_RUN)' $(HA_PKGS)" || exit 1; \
	echo "wrote docs/benchmarks/ha.md (test output in bench/out/ha.json)"; exit $$st

# The C library (sdk/c, docs/sdk-c.md): its unit tests built with CMake
# under AddressSanitizer and UndefinedBehaviorSanitizer, run by ctest; then
# a plain Release build and install into a scratch prefix, so the static and
# shared libraries, the header and the pkg-config file are checked too.
CC_BUILD ?= bin/c-build
.PHONY: c-test c-build
c-test:
	cmake -S sdk/c -B $(CC_BUILD)/asan -DRDV_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build $(CC_BUILD)/asan -j2
	ctest --test-dir $(CC_BUILD)/asan --output-on-failure
	$(MAKE) c-build c-doc-examples
c-build:
	cmake -S sdk/c -B $(CC_BUILD)/release -DCMAKE_BUILD_TYPE=Release -DRDV_TESTS=OFF -DCMAKE_INSTALL_LIBDIR=lib \
		-DCMAKE_INSTALL_PREFIX=$(CURDIR)/$(CC_BUILD)/prefix >/dev/null
	cmake --build $(CC_BUILD)/release -j2
	cmake --install $(CC_BUILD)/release >/dev/null
	test -f $(CC_BUILD)/prefix/lib/librendezvous.a && test -f $(CC_BUILD)/prefix/include/rendezvous.h
	PKG_CONFIG_PATH=$(CURDIR)/$(CC_BUILD)/prefix/lib/pkgconfig pkg-config --libs --cflags rendezvous
	@# No allocator and no writable global state anywhere in the library.
	@if nm -u $(CC_BUILD)/release/librendezvous.a | grep -wE 'malloc|calloc|realloc|free'; then echo "librendezvous allocates"; exit 1; fi
	@if objdump -t $(CC_BUILD)/release/librendezvous.a | grep -E '\sO\s+\.(data|bss)\s'; then echo "librendezvous has writable global state"; exit 1; fi
	@# Only the platform layer (src/platform_*.c) calls the operating system: the
	@# other objects need nothing from outside the library but string functions.
	@if nm -u $$(ls $(CC_BUILD)/release/CMakeFiles/rdv_objs.dir/src/*.o | grep -v '/platform_') | awk '$$1 == "U" {print $$2}' | \
		grep -vE '^(rdv_|_GLOBAL_OFFSET_TABLE_$$|__stack_chk_fail$$|__.*_chk$$|(memcmp|memcpy|memmove|memset|snprintf|strchr|strlen|strrchr)$$)'; then \
		echo "librendezvous calls the system outside its platform layer"; exit 1; fi

# docs/sdk-c.md's game-loop examples compile: the C one against the
# installed library (pkg-config), the C# one with mcs against the binding.
.PHONY: c-doc-examples
c-doc-examples:
	@perl -ne 'print if /^<!-- c-example -->/../^```$$/ and !/^(<!--|```)/' docs/sdk-c.md > $(CC_BUILD)/doc_example.c
	@perl -ne 'print if /^<!-- csharp-example -->/../^```$$/ and !/^(<!--|```)/' docs/sdk-c.md > $(CC_BUILD)/DocExample.cs
	@test -s $(CC_BUILD)/doc_example.c && test -s $(CC_BUILD)/DocExample.cs
	cc -std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -o $(CC_BUILD)/doc_example $(CC_BUILD)/doc_example.c \
		$$(PKG_CONFIG_PATH=$(CURDIR)/$(CC_BUILD)/prefix/lib/pkgconfig pkg-config --cflags --libs rendezvous)
	mcs -target:library -warnaserror -out:$(CC_BUILD)/DocExample.dll sdk/csharp/Rendezvous.cs $(CC_BUILD)/DocExample.cs

# The C parser's libFuzzer target (clang) for C_FUZZTIME seconds, seeded
# with the golden vectors; part of `make fuzz`.
C_FUZZTIME ?= 30
.PHONY: c-fuzz
fuzz: c-fuzz
c-fuzz:
	@mkdir -p $(CC_BUILD)/fuzz/corpus
	clang -std=c99 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Isdk/c/include -Isdk/c/src \
		-o $(CC_BUILD)/fuzz/fuzz_parse sdk/c/fuzz/fuzz_parse.c $(wildcard sdk/c/src/*.c)
	@perl -ne 'if (/^bytes (\S+)/) { open F, ">", sprintf("$(CC_BUILD)/fuzz/corpus/golden%03d", ++$$n) or die; print F pack("H*", $$1); close F }' sdk/c/testdata/golden.txt
	$(CC_BUILD)/fuzz/fuzz_parse -max_total_time=$(C_FUZZTIME) -max_len=1300 $(CC_BUILD)/fuzz/corpus

# The C library's per-datagram costs and state sizes (docs/benchmarks/sdk-c.md).
.PHONY: c-bench
c-bench:
	@mkdir -p $(CC_BUILD)
	cc -std=c99 -O2 -Isdk/c/include -Isdk/c/src -o $(CC_BUILD)/c_bench sdk/c/bench/bench.c $(wildcard sdk/c/src/*.c)
	$(CC_BUILD)/c_bench
