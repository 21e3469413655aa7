#!/usr/bin/env bash
# make bench-smoke: what keeps the benchmarks from rotting unnoticed. Every
# benchmark of every package runs once (-benchtime 1x; the Redis store's
# too, RDV_REQUIRE_REDIS=1, so a missing redis-server fails rather than
# skips), then the load tester's shed mode against small ceilings and its
# udprate mode on the memory and the Redis store, briefly. A default that
# breaks a fixture, a benchmark or a load-tester validation fails here,
# naming what failed. About 4 minutes on 2 cores; CI runs it after make test.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
OUT=${OUT:-bench/out/smoke}

# shellcheck source=bench/lib.sh
. bench/lib.sh

rm -rf "$OUT"
mkdir -p "$OUT"
failures=()
fail() { failures+=("$1"); }
trap 'stop_server; stop_redis' EXIT

echo "== every benchmark once" >&2
if ! RDV_REQUIRE_REDIS=1 $GO test -run '^$' -bench . -benchtime 1x -timeout 30m ./... >"$OUT/bench.txt" 2>&1; then
	grep -E '^(--- FAIL|FAIL|panic)|_test\.go:[0-9]+:' "$OUT/bench.txt" >&2 || tail -20 "$OUT/bench.txt" >&2
	fail "benchmarks: $(grep -E '^--- FAIL' "$OUT/bench.txt" | awk '{print $3}' | paste -sd' ' -) (see $OUT/bench.txt)"
fi

build_bins "$OUT/bin"
"$OUT/bin/rendezvous-load" principals --publishers 30 --clients 4 \
	--principals-out "$OUT/principals.json" --tokens-out "$OUT/tokens.json"

echo "== shed mode against 2,000 listings / 1,000 attempts" >&2
small=(--max-listings 2000 --max-presence 2000 --max-attempts 1000 --tenant-listing-quota 2000
	--tenant-attempt-quota 1000 --subject-attempt-quota 1000 --tenant-idempotency-quota 35000)
if start_server "$OUT/bin/rendezvous" "$OUT/server-shed.log" --principals "$OUT/principals.json" "${small[@]}"; then
	# Latency and the generator's pace are make bench's to judge: on a busy
	# CI machine they would fail the smoke for reasons outside the change.
	"$OUT/bin/rendezvous-load" --mode shed --http "$SERVER_HTTP" --tokens "$OUT/tokens.json" --overload 2 \
		--duration 2s --progress 1s --max-rss-mib 128 --shed-p99 0 --min-offered 0.5 \
		--server-pid "$SERVER_PID" --out "$OUT/shed" >"$OUT/shed.txt" 2>&1 ||
		fail "shed: $(failed_checks "$OUT/shed/result.json") (see $OUT/shed.txt)"
	stop_server
else
	fail "shed: the server did not start"
fi

echo "== udprate on both stores" >&2
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$OUT/capability.key"
chmod 600 "$OUT/capability.key"
if start_redis "$OUT/redis.log"; then
	for store in memory redis; do
		args=(--principals "$OUT/principals.json" --store "$store")
		if [ "$store" = redis ]; then
			args+=(--redis-addr "$REDIS_ADDR" --redis-name smoke --capability-key-file "$OUT/capability.key")
		fi
		if ! start_server "$OUT/bin/rendezvous" "$OUT/server-udprate-$store.log" "${args[@]}"; then
			fail "udprate on $store: the server did not start"
			continue
		fi
		"$OUT/bin/rendezvous-load" --mode udprate --stun presence --listings 500 --http "$SERVER_HTTP" \
			--tokens "$OUT/tokens.json" --duration 1s --progress 1s --server-pid "$SERVER_PID" \
			--out "$OUT/udprate-$store" >"$OUT/udprate-$store.txt" 2>&1 ||
			fail "udprate on $store: $(failed_checks "$OUT/udprate-$store/result.json") (see $OUT/udprate-$store.txt)"
		stop_server
	done
	stop_redis
else
	fail "udprate: redis-server did not start"
fi

if [ ${#failures[@]} -gt 0 ]; then
	echo "make bench-smoke FAILED:" >&2
	printf '  %s\n' "${failures[@]}" >&2
	exit 1
fi
echo "bench-smoke: every benchmark, shed and udprate passed (outputs in $OUT)" >&2
