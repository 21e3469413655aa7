#!/usr/bin/env bash
# make bench: runs the store, UDP and HTTP benchmark suites with -count
# enough for benchstat, the load tester's ceiling proof (fill to the default
# ceilings, 2x overload, RSS bound) and its UDP rate, the shared-state suite
# (the Redis store's transitions at the full fill with Redis CPU per call,
# one instance's UDP presence rate on the Redis store against the memory
# store, and the browse page's rate on both stores at 1-3 instances with
# wrk), then writes one page per area it ran, docs/benchmarks/results/
# <area>.md, with bench/cmd/benchreport. An area not run keeps its page.
#
# Environment (all optional):
#   COUNT      runs of each benchmark (default 6, what benchstat wants)
#   BENCHTIME  -benchtime per run (default 300ms)
#   BENCH      benchmark regexp (default .)
#   RUNS       runs of each load-tester measurement (shed, udprate, and the
#              memory/redis pair, alternating; default 3)
#   AREAS      subset of "store udp http load shared-state" (default all;
#              shared-state needs redis-server and redis-cli)
#   OUT        raw results directory (default bench/out, git-ignored)
# Raw outputs stay in $OUT: compare two runs with `benchstat old.txt new.txt`.
# It fails, naming each failed suite or check, when anything failed.
# About 12-15 minutes on a 2-core machine with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
COUNT=${COUNT:-6}
BENCHTIME=${BENCHTIME:-300ms}
BENCH=${BENCH:-.}
RUNS=${RUNS:-3}
AREAS=${AREAS:-store udp http load shared-state}
OUT=${OUT:-bench/out}

# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=bench/browse.sh
. bench/browse.sh
# shellcheck source=bench/shared_latency.sh
. bench/shared_latency.sh

mkdir -p "$OUT"
ensure_benchstat

declare -A PKGS=(
	[store]="./bench/ ./engine/ ./engine/memstore/"
	[udp]="./netio/..."
	[http]="./httpapi/ ./cmd/rendezvous/"
)

machine >"$OUT/meta.txt"

# meta AREA LINE...: the area's own record (meta-AREA.txt), rewritten when
# the area runs again, so `AREAS=load ./bench/run.sh` keeps the others'.
meta() {
	local area=$1
	shift
	printf '%s\n' "$@" >>"$OUT/meta-$area.txt"
}
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# fail WHAT: records a named failure; the run goes on and exits 1 at the end.
failures=()
fail() { failures+=("$1"); }
trap 'stop_server; stop_redis' EXIT
for area in $AREAS; do
	case $area in
	store | udp | http)
		echo "== $area: ${PKGS[$area]}" >&2
		rm -f "$OUT/meta-$area.txt"
		meta "$area" "$area: $(date -u '+%Y-%m-%d %H:%M UTC'), load avg $(loadavg) at start" \
			"  go test -run '^\$' -bench '$BENCH' -skip '^BenchmarkRedisStore' -benchmem -count $COUNT -benchtime $BENCHTIME -timeout 30m ${PKGS[$area]}"
		# A failing suite is reported and the others still run; the page is
		# written from whatever results there are.
		# shellcheck disable=SC2086 # the package list is split on purpose
		# (The Redis store's benchmarks in ./bench/ belong to shared-state.)
		if ! $GO test -run '^$' -bench "$BENCH" -skip '^BenchmarkRedisStore' -benchmem -count "$COUNT" -benchtime "$BENCHTIME" -timeout 30m ${PKGS[$area]} | tee "$OUT/$area.txt"; then
			meta "$area" "  FAILED (partial results)"
			fail "$area: go test -bench failed: $(grep -E '^--- FAIL' "$OUT/$area.txt" | awk '{print $3}' | sort -u | paste -sd' ' -) (see $OUT/$area.txt)"
		fi
		benchstat "$OUT/$area.txt" >"$OUT/$area.benchstat.txt" || true
		meta "$area" "  load avg $(loadavg) at the end"
		;;
	load)
		echo "== load: ceiling proof and UDP rate, $RUNS runs each" >&2
		rm -f "$OUT/meta-load.txt"
		rm -rf "$OUT"/load "$OUT"/load-r* "$OUT"/udprate "$OUT"/udprate-r[0-9]*
		meta load "load: $(date -u '+%Y-%m-%d %H:%M UTC'), load avg $(loadavg) at start"
		if ! build_bins "$OUT/bin"; then
			fail "load: build"
			continue
		fi
		principals=("$OUT/bin/rendezvous-load" principals --publishers 260 --clients 4
			--principals-out "$OUT/principals.json" --tokens-out "$OUT/tokens.json")
		"${principals[@]}"
		meta load "  $(show "${principals[@]}")"
		for r in $(seq 1 "$RUNS"); do
			# The ceiling proof on a fresh server each run, with the quota
			# flags that let one tenant fill the default ceilings.
			if ! start_server "$OUT/bin/rendezvous" "$OUT/server-shed-r$r.log" --principals "$OUT/principals.json" "${CEILING_FLAGS[@]}"; then
				fail "load: the server did not start (run $r, $OUT/server-shed-r$r.log)"
				continue 2
			fi
			[ "$r" = 1 ] && meta load "  $(show "${SERVER_CMD[@]}")"
			shed=("$OUT/bin/rendezvous-load" --mode shed --http "$SERVER_HTTP" --tokens "$OUT/tokens.json"
				--overload 2 --duration 10s --progress 2s --max-rss-mib "$MAX_RSS_MIB" --server-pid "$SERVER_PID" --out "$OUT/load-r$r")
			"${shed[@]}" || fail "load: shed run $r ($(failed_checks "$OUT/load-r$r/result.json"))"
			stop_server
			meta load "  $(show "${shed[@]}")" "  load avg $(loadavg) after shed run $r"
			# A fresh server for the rate, so nothing of the fill is left in it.
			if ! start_server "$OUT/bin/rendezvous" "$OUT/server-udprate-r$r.log" --principals "$OUT/principals.json"; then
				fail "load: the server did not start (run $r, $OUT/server-udprate-r$r.log)"
				continue 2
			fi
			[ "$r" = 1 ] && meta load "  $(show "${SERVER_CMD[@]}")"
			rate=("$OUT/bin/rendezvous-load" --mode udprate --stun presence --listings 5000 --http "$SERVER_HTTP"
				--tokens "$OUT/tokens.json" --duration 5s --progress 2s --server-pid "$SERVER_PID" --out "$OUT/udprate-r$r")
			"${rate[@]}" || fail "load: udprate run $r ($(failed_checks "$OUT/udprate-r$r/result.json"))"
			stop_server
			meta load "  $(show "${rate[@]}")"
		done
		meta load "  load avg $(loadavg) at the end"
		;;
	shared-state)
		echo "== shared-state: the Redis store's transitions and UDP rate" >&2
		rm -f "$OUT/meta-shared-state.txt"
		meta shared-state "shared-state: $(date -u '+%Y-%m-%d %H:%M UTC'), load avg $(loadavg) at start, $(redis-server --version | cut -d' ' -f1-3)" \
			"  RDV_REQUIRE_REDIS=1 go test -run '^\$' -bench '^BenchmarkRedisStore' -benchmem -count $COUNT -benchtime $BENCHTIME -timeout 30m ./bench/"
		if ! RDV_REQUIRE_REDIS=1 $GO test -run '^$' -bench '^BenchmarkRedisStore' -benchmem -count "$COUNT" -benchtime "$BENCHTIME" -timeout 30m ./bench/ | tee "$OUT/shared-state.txt"; then
			meta shared-state "  FAILED (partial results)"
			fail "shared-state: go test -bench failed (see $OUT/shared-state.txt)"
		fi
		benchstat "$OUT/shared-state.txt" >"$OUT/shared-state.benchstat.txt" || true
		if ! build_bins "$OUT/bin"; then
			fail "shared-state: build"
			continue
		fi
		"$OUT/bin/rendezvous-load" principals --publishers 260 --clients 4 \
			--principals-out "$OUT/principals.json" --tokens-out "$OUT/tokens.json"
		head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$OUT/capability.key"
		chmod 600 "$OUT/capability.key"
		if ! start_redis "$OUT/redis.log"; then
			fail "shared-state: redis-server did not start ($OUT/redis.log)"
			continue
		fi
		# One instance's UDP presence rate on each store, the two
		# alternating RUNS times; each pair gives one ratio.
		alternate_stores udprate bench udprate_generator
		# The 100-item browse page over HTTP, memory against Redis at 1-3
		# instances (bench/browse.sh).
		browse_bench
		meta shared-state "  load avg $(loadavg) before the HTTP latency runs"
		shared_latency
		shared_scrapes
		stop_redis
		meta shared-state "  load avg $(loadavg) at the end"
		;;
	*)
		echo "unknown area $area (want store, udp, http, load or shared-state)" >&2
		exit 2
		;;
	esac
done

$GO run ./bench/cmd/benchreport -in "$OUT" -results docs/benchmarks/results -areas "$AREAS"
echo "wrote docs/benchmarks/results/ for: $AREAS (raw results in $OUT)" >&2
if [ ${#failures[@]} -gt 0 ]; then
	echo "make bench FAILED:" >&2
	printf '  %s\n' "${failures[@]}" >&2
	exit 1
fi
