#!/usr/bin/env bash
# make bench: runs the store, UDP and HTTP benchmark suites with -count
# enough for benchstat, the load tester's ceiling proof (fill to the default
# ceilings, 2x overload) and its UDP rate, the shared-state suite (the Redis
# store's transitions at the full fill with Redis CPU per call, and one
# instance's UDP presence rate on the Redis store against the memory store),
# then writes docs/benchmarks.md from the results with bench/cmd/benchreport.
#
# Environment (all optional):
#   COUNT      runs of each benchmark (default 6, what benchstat wants)
#   BENCHTIME  -benchtime per run (default 300ms)
#   BENCH      benchmark regexp (default .)
#   AREAS      subset of "store udp http load shared-state" (default all;
#              shared-state needs redis-server and redis-cli)
#   OUT        raw results directory (default bench/out, git-ignored)
# Raw outputs stay in $OUT: compare two runs with `benchstat old.txt new.txt`.
# About 10-15 minutes on a 2-core machine with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
COUNT=${COUNT:-6}
BENCHTIME=${BENCHTIME:-300ms}
BENCH=${BENCH:-.}
AREAS=${AREAS:-store udp http load shared-state}
OUT=${OUT:-bench/out}

# shellcheck source=bench/lib.sh
. bench/lib.sh

mkdir -p "$OUT"
export PATH="$PATH:$($GO env GOPATH)/bin"
if ! command -v benchstat >/dev/null; then
	echo "installing benchstat (golang.org/x/perf/cmd/benchstat)" >&2
	$GO install golang.org/x/perf/cmd/benchstat@latest
fi

declare -A PKGS=(
	[store]="./bench/ ./engine/ ./engine/memstore/"
	[udp]="./netio/..."
	[http]="./httpapi/ ./cmd/rendezvous/"
)

{
	echo "go:          $($GO version)"
	echo "cpu:         $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
} >"$OUT/meta.txt"

# meta AREA LINE...: the area's own record (meta-AREA.txt), rewritten when
# the area runs again, so `AREAS=load ./bench/run.sh` keeps the others'.
meta() {
	local area=$1
	shift
	printf '%s\n' "$@" >>"$OUT/meta-$area.txt"
}
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

failed=0
trap 'stop_server; stop_redis' EXIT
for area in $AREAS; do
	case $area in
	store | udp | http)
		echo "== $area: ${PKGS[$area]}" >&2
		rm -f "$OUT/meta-$area.txt"
		meta "$area" "$area: $(date -u '+%Y-%m-%d %H:%M UTC'), load avg $(loadavg) at start" \
			"  go test -run '^\$' -bench '$BENCH' -benchmem -count $COUNT -benchtime $BENCHTIME ${PKGS[$area]}"
		# A failing suite is reported and the others still run; the page is
		# written from whatever results there are.
		# shellcheck disable=SC2086 # the package list is split on purpose
		# (The Redis store's benchmarks in ./bench/ belong to shared-state.)
		if ! $GO test -run '^$' -bench "$BENCH" -skip '^BenchmarkRedisStore' -benchmem -count "$COUNT" -benchtime "$BENCHTIME" -timeout 30m ${PKGS[$area]} | tee "$OUT/$area.txt"; then
			meta "$area" "  FAILED (partial results)"
			failed=1
		fi
		benchstat "$OUT/$area.txt" >"$OUT/$area.benchstat.txt" || true
		meta "$area" "  load avg $(loadavg) at the end"
		;;
	load)
		echo "== load: ceiling proof and UDP rate" >&2
		rm -f "$OUT/meta-load.txt"
		meta load "load: $(date -u '+%Y-%m-%d %H:%M UTC'), load avg $(loadavg) at start" \
			"  rendezvous --principals principals.json   (default ceilings; 'rendezvous-load principals --publishers 260')"
		if ! build_bins "$OUT/bin"; then
			failed=1
			continue
		fi
		"$OUT/bin/rendezvous-load" principals --publishers 260 --clients 4 \
			--principals-out "$OUT/principals.json" --tokens-out "$OUT/tokens.json"
		if ! start_server "$OUT/bin/rendezvous" "$OUT/server-shed.log" --principals "$OUT/principals.json"; then
			failed=1
			continue
		fi
		shed=("$OUT/bin/rendezvous-load" --mode shed --http "$SERVER_HTTP" --tokens "$OUT/tokens.json"
			--overload 2 --duration 10s --progress 2s --server-pid "$SERVER_PID" --out "$OUT/load")
		"${shed[@]}" || failed=1
		stop_server
		meta load "  ${shed[*]##*/}" "  load avg $(loadavg) after the shed run"
		# A fresh server for the rate, so nothing of the fill is left in it.
		if ! start_server "$OUT/bin/rendezvous" "$OUT/server-udprate.log" --principals "$OUT/principals.json"; then
			failed=1
			continue
		fi
		rate=("$OUT/bin/rendezvous-load" --mode udprate --stun presence --listings 5000 --http "$SERVER_HTTP"
			--tokens "$OUT/tokens.json" --duration 5s --progress 2s --server-pid "$SERVER_PID" --out "$OUT/udprate")
		"${rate[@]}" || failed=1
		stop_server
		meta load "  ${rate[*]##*/}"
		;;
	shared-state)
		echo "== shared-state: the Redis store's transitions and UDP rate" >&2
		rm -f "$OUT/meta-shared-state.txt"
		meta shared-state "shared-state: $(date -u '+%Y-%m-%d %H:%M UTC'), load avg $(loadavg) at start, $(redis-server --version | cut -d' ' -f1-3)" \
			"  go test -run '^\$' -bench '^BenchmarkRedisStore' -benchmem -count $COUNT -benchtime $BENCHTIME ./bench/"
		if ! $GO test -run '^$' -bench '^BenchmarkRedisStore' -benchmem -count "$COUNT" -benchtime "$BENCHTIME" -timeout 30m ./bench/ | tee "$OUT/shared-state.txt"; then
			meta shared-state "  FAILED (partial results)"
			failed=1
		fi
		benchstat "$OUT/shared-state.txt" >"$OUT/shared-state.benchstat.txt" || true
		if ! build_bins "$OUT/bin"; then
			failed=1
			continue
		fi
		"$OUT/bin/rendezvous-load" principals --publishers 260 --clients 4 \
			--principals-out "$OUT/principals.json" --tokens-out "$OUT/tokens.json"
		head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$OUT/capability.key"
		chmod 600 "$OUT/capability.key"
		if ! start_redis "$OUT/redis.log"; then
			failed=1
			continue
		fi
		# The same generator against the same build, one store after the other.
		for store in memory redis; do
			args=(--principals "$OUT/principals.json" --store "$store")
			if [ "$store" = redis ]; then
				args+=(--redis-addr "$REDIS_ADDR" --redis-name bench --capability-key-file "$OUT/capability.key")
			fi
			if ! start_server "$OUT/bin/rendezvous" "$OUT/server-udprate-$store.log" "${args[@]}"; then
				failed=1
				continue
			fi
			rate=("$OUT/bin/rendezvous-load" --mode udprate --stun presence --listings 5000 --http "$SERVER_HTTP"
				--tokens "$OUT/tokens.json" --duration 5s --progress 2s --server-pid "$SERVER_PID" --out "$OUT/udprate-$store")
			"${rate[@]}" || failed=1
			stop_server
			meta shared-state "  rendezvous ${args[*]##*/}" "  ${rate[*]##*/}"
		done
		stop_redis
		meta shared-state "  load avg $(loadavg) at the end"
		;;
	*)
		echo "unknown area $area (want store, udp, http, load or shared-state)" >&2
		exit 2
		;;
	esac
done

$GO run ./bench/cmd/benchreport -in "$OUT" -docs docs/benchmarks -out docs/benchmarks.md
echo "wrote docs/benchmarks.md (raw results in $OUT)" >&2
if [ "$failed" != 0 ]; then
	echo "a benchmark suite or a load validation failed: see $OUT/meta-*.txt, $OUT/load/result.json and $OUT/load/report.html" >&2
	exit 1
fi
