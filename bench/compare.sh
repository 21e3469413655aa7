#!/usr/bin/env bash
# make bench-compare: measures, in one run and with the same UDP load
# generator (rendezvous-load --mode udprate), our authenticated presence
# refresh rate and coturn's plain STUN Binding rate on loopback, and writes
# every round's rates and ratios, with the median ratio and its range, into
# docs/benchmarks/results/compare.md. Needs turnserver (coturn) on the PATH
# (Debian/Ubuntu: apt-get install coturn). Expected: ratio 1.0 or more.
#
# The machine is shared and the generator shares its cores with the server,
# so one pair of runs can swing either way: the two servers are measured
# alternately, ROUNDS times (coturn, ours, coturn, ours, ...; ours on a fresh
# server each round), every round's rates, ratio and server CPU per answer
# are printed and written to the page with the median ratio and its range.
# Our plain Binding rate is measured once, after the rounds.
#
# On a machine with two or more cores the servers run pinned to CPU 1 and
# the generator to CPU 0 (PIN=0 turns this off): the generator then cannot
# take the server's CPU, so the rate measures the server rather than how the
# scheduler split two cores between two busy processes. A presence request
# costs the generator more than a plain Binding (it signs it), so unpinned the
# generator is what limits our presence rate on 2 cores.
#
# Environment (all optional): DURATION (default 5s), WINDOW (requests in
# flight per socket, default 256), SOCKETS (default 4), ROUNDS (default 5),
# COTURN_PORT (default 34780), OUT (default bench/out).
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
DURATION=${DURATION:-5s}
WINDOW=${WINDOW:-256}
SOCKETS=${SOCKETS:-4}
ROUNDS=${ROUNDS:-5}
COTURN_PORT=${COTURN_PORT:-34780}
OUT=${OUT:-bench/out}
PIN=${PIN:-1}
SERVER_WRAP=()
GEN_WRAP=()
if [ "$PIN" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
	SERVER_WRAP=(taskset -c 1)
	GEN_WRAP=(taskset -c 0)
fi

# shellcheck source=bench/lib.sh
. bench/lib.sh

if ! command -v turnserver >/dev/null; then
	echo "bench-compare needs coturn's turnserver on the PATH (apt-get install coturn); nothing measured" >&2
	exit 1
fi
rm -rf "$OUT/compare"
mkdir -p "$OUT/compare"
machine >"$OUT/meta.txt"
meta=("compare: $(date -u '+%Y-%m-%d %H:%M UTC'), $ROUNDS rounds, pinned: ${SERVER_WRAP[*]:-no} / ${GEN_WRAP[*]:-no}")
COTURN_PID=
cleanup() {
	stop_server
	if [ -n "$COTURN_PID" ]; then
		kill "$COTURN_PID" 2>/dev/null || true
		wait "$COTURN_PID" 2>/dev/null || true
	fi
}
trap cleanup EXIT
build_bins "$OUT/bin"
load_bin="$OUT/bin/rendezvous-load"
load() { ${GEN_WRAP[@]+"${GEN_WRAP[@]}"} "$load_bin" "$@"; }
load principals --publishers 60 --clients 1 --principals-out "$OUT/compare/principals.json" --tokens-out "$OUT/compare/tokens.json"
common=(--mode udprate --duration "$DURATION" --window "$WINDOW" --udp-sockets "$SOCKETS" --progress 1s)

# coturn: STUN only, no TLS/DTLS, no CLI, logging to a file, loopback only.
${SERVER_WRAP[@]+"${SERVER_WRAP[@]}"} turnserver -n --stun-only --no-tls --no-dtls --no-cli --listening-ip 127.0.0.1 \
	--listening-port "$COTURN_PORT" --log-file "$OUT/compare/coturn.log" --simple-log \
	--pidfile "$OUT/compare/coturn.pid" >/dev/null 2>&1 &
COTURN_PID=$!
for _ in $(seq 1 50); do
	if load "${common[@]}" --stun plain --mediator "127.0.0.1:$COTURN_PORT" --duration 1s --window 1 --udp-sockets 1 \
		--out "$OUT/compare/probe" >/dev/null 2>&1; then
		break
	fi
	sleep 0.2
done
# field FILE NAME: a number field of a result.json.
field() { sed -n "s/.*\"$2\": *\([0-9.e+]*\).*/\1/p" "$1" | head -1; }

summary="$OUT/compare/rounds.txt"
printf '%-6s %14s %14s %8s %18s %18s\n' round coturn-plain/s ours-presence/s ratio "coturn-cpu-us/ans" "ours-cpu-us/ans" >"$summary"
for r in $(seq 1 "$ROUNDS"); do
	load "${common[@]}" --stun plain --mediator "127.0.0.1:$COTURN_PORT" --server-pid "$COTURN_PID" --out "$OUT/compare/coturn-r$r"
	start_server "$OUT/bin/rendezvous" "$OUT/compare/server-r$r.log" --principals "$OUT/compare/principals.json"
	if [ "$r" = 1 ]; then
		meta+=("  $(show ${SERVER_WRAP[@]+"${SERVER_WRAP[@]}"} turnserver -n --stun-only --no-tls --no-dtls --no-cli --listening-ip 127.0.0.1 --listening-port "$COTURN_PORT")"
			"  $(show ${GEN_WRAP[@]+"${GEN_WRAP[@]}"} "$load_bin" "${common[@]}" --stun plain --mediator "127.0.0.1:$COTURN_PORT" --server-pid "$COTURN_PID" --out "$OUT/compare/coturn-r$r")"
			"  $(show ${SERVER_WRAP[@]+"${SERVER_WRAP[@]}"} "${SERVER_CMD[@]}")"
			"  $(show ${GEN_WRAP[@]+"${GEN_WRAP[@]}"} "$load_bin" "${common[@]}" --stun presence --listings 5000 --http "$SERVER_HTTP" --tokens "$OUT/compare/tokens.json" --server-pid "$SERVER_PID" --out "$OUT/compare/ours-r$r")")
	fi
	load "${common[@]}" --stun presence --listings 5000 --http "$SERVER_HTTP" --tokens "$OUT/compare/tokens.json" \
		--server-pid "$SERVER_PID" --out "$OUT/compare/ours-r$r"
	if [ "$r" = "$ROUNDS" ]; then
		load "${common[@]}" --stun plain --mediator "$SERVER_UDP" --server-pid "$SERVER_PID" --out "$OUT/compare/ours-plain"
	fi
	stop_server
	c=$(field "$OUT/compare/coturn-r$r/result.json" answered_per_s)
	o=$(field "$OUT/compare/ours-r$r/result.json" answered_per_s)
	cc=$(field "$OUT/compare/coturn-r$r/result.json" cpu_us_per_answer)
	oc=$(field "$OUT/compare/ours-r$r/result.json" cpu_us_per_answer)
	awk -v r="$r" -v c="$c" -v o="$o" -v cc="$cc" -v oc="$oc" \
		'BEGIN { printf "%-6s %14.0f %14.0f %8.2f %18.2f %18.2f\n", r, c, o, o / c, cc, oc }' >>"$summary"
done
kill "$COTURN_PID" 2>/dev/null || true
wait "$COTURN_PID" 2>/dev/null || true
COTURN_PID=

meta+=("  load avg $(cut -d' ' -f1-3 /proc/loadavg) at the end")
printf '%s\n' "${meta[@]}" >"$OUT/meta-compare.txt"
$GO run ./bench/cmd/benchreport -in "$OUT" -results docs/benchmarks/results -areas compare
cat "$summary" >&2
echo "the ratio of our presence refresh rate to coturn's plain Binding rate (expected 1.0 or more), median and range: docs/benchmarks/results/compare.md" >&2
