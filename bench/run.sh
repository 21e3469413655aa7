#!/usr/bin/env bash
# make bench: runs the store, UDP and HTTP benchmark suites with -count
# enough for benchstat, the load tester's ceiling proof (fill to the default
# ceilings, 2x overload) and its UDP rate, then writes docs/benchmarks.md
# from the results with bench/cmd/benchreport.
#
# Environment (all optional):
#   COUNT      runs of each benchmark (default 6, what benchstat wants)
#   BENCHTIME  -benchtime per run (default 300ms)
#   BENCH      benchmark regexp (default .)
#   AREAS      subset of "store udp http load" (default all)
#   OUT        raw results directory (default bench/out, git-ignored)
# Raw outputs stay in $OUT: compare two runs with `benchstat old.txt new.txt`.
# About 10-15 minutes on a 2-core machine with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
COUNT=${COUNT:-6}
BENCHTIME=${BENCHTIME:-300ms}
BENCH=${BENCH:-.}
AREAS=${AREAS:-store udp http load}
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
	[store]="./bench/ ./engine/"
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
trap stop_server EXIT
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
		if ! $GO test -run '^$' -bench "$BENCH" -benchmem -count "$COUNT" -benchtime "$BENCHTIME" -timeout 30m ${PKGS[$area]} | tee "$OUT/$area.txt"; then
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
	*)
		echo "unknown area $area (want store, udp, http or load)" >&2
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
