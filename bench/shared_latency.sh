# The shared-state area's measurements on both stores (the UDP rate and
# HTTP latency pairs) and its scrape count, sourced by bench/run.sh after
# bench/lib.sh; they use its OUT, RUNS, meta, fail, show and loadavg, the
# built binaries in $OUT/bin, the principals and tokens of the area and a
# running redis-server (REDIS_ADDR).

# The mixed open-loop rates of the latency table: 1,000 requests/s of the
# kinds that reach the store, and GET /livez besides, which no store call
# answers: the floor the generator, the HTTP stack and this machine set in
# the same run.
LATENCY_RATES=create=150,renew=300,join=150,browse=100,get=300,livez=100
LATENCY_LISTINGS=2000

# alternate_stores NAME PREFIX GENERATOR [SERVER_FLAG...]: RUNS times, a
# fresh server on the memory store and then one on the Redis store (under
# the key prefix PREFIX-r<run>, nothing of an earlier run left to count),
# each with the principals and SERVER_FLAGs, measured by the load
# generator command the function GENERATOR puts in GEN for the output
# directory it is given, $OUT/NAME-<store>-r<run>: the same build and
# generator on both stores, alternating, so a drift of the machine's load
# falls on both (one pair per run). The first run's commands go to the
# area's record.
alternate_stores() {
	local name=$1 prefix=$2 generator=$3 r store args out
	shift 3
	rm -rf "$OUT/$name"-memory* "$OUT/$name"-redis*
	for r in $(seq 1 "$RUNS"); do
		for store in memory redis; do
			args=(--principals "$OUT/principals.json" --store "$store" "$@")
			if [ "$store" = redis ]; then
				args+=(--redis-addr "$REDIS_ADDR" --redis-name "$prefix-r$r" --capability-key-file "$OUT/capability.key")
			fi
			if ! start_server "$OUT/bin/rendezvous" "$OUT/server-$name-$store-r$r.log" "${args[@]}"; then
				fail "shared-state: the $store server did not start for the $name run $r"
				continue
			fi
			out="$OUT/$name-$store-r$r"
			"$generator" "$out"
			"${GEN[@]}" || fail "shared-state: $name on $store, run $r ($(failed_checks "$out/result.json"))"
			stop_server
			if [ "$r" = 1 ]; then
				meta shared-state "  $(show "${SERVER_CMD[@]}")" "  $(show "${GEN[@]}")"
			fi
		done
	done
}

# udprate_generator OUT: one instance's authenticated UDP presence rate
# (the udprate pairs).
udprate_generator() {
	GEN=("$OUT/bin/rendezvous-load" --mode udprate --stun presence --listings 5000 --http "$SERVER_HTTP"
		--tokens "$OUT/tokens.json" --duration 5s --progress 2s --server-pid "$SERVER_PID" --out "$1")
}

# latency_generator OUT: the HTTP latency per kind at LATENCY_RATES.
latency_generator() {
	GEN=("$OUT/bin/rendezvous-load" --mode load --listings "$LATENCY_LISTINGS" --rate "$LATENCY_RATES"
		--http "$SERVER_HTTP" --tokens "$OUT/tokens.json" --duration 20s --ramp 2s --progress 5s
		--server-pid "$SERVER_PID" --out "$1")
}

# shared_latency: the HTTP latency per kind at LATENCY_RATES on the memory
# store and the Redis store (at the ceilings the other areas use), the
# same build and generator, alternating RUNS times.
shared_latency() {
	alternate_stores latency latency latency_generator "${CEILING_FLAGS[@]}"
}

# shared_scrapes: against one instance on the Redis store, counts the
# Redis function calls (INFO commandstats, after CONFIG RESETSTAT) of
# 1,000 unauthenticated scrapes, 25 at a time (half /metrics on the
# metrics listener, half /readyz), of 1,000 GET /v1/admin/stats (the global
# operator's: they share its revocation check as they share the figures,
# one call a second), and of
# an idle stretch before them (the instance's registration renewals).
# Written to $OUT/scrapes-redis.txt as key=value lines.
shared_scrapes() {
	local metrics op
	if ! start_server "$OUT/bin/rendezvous" "$OUT/server-scrapes.log" --principals "$OUT/principals.json" --store redis \
		--redis-addr "$REDIS_ADDR" --redis-name scrapes --capability-key-file "$OUT/capability.key" --metrics-addr 127.0.0.1:0; then
		fail "shared-state: the server did not start for the scrape count"
		return
	fi
	meta shared-state "  $(show "${SERVER_CMD[@]}")"
	metrics=$(head -1 "$OUT/server-scrapes.log" | sed -n 's/.*"metrics":"\([^"]*\)".*/\1/p')
	op=$(sed -n 's/.*"operator": *"\([^"]*\)".*/\1/p' "$OUT/tokens.json")
	: >"$OUT/scrapes-open.curl"
	: >"$OUT/scrapes-admin.curl"
	for i in $(seq 0 499); do
		printf 'url = "http://%s/metrics"\noutput = "/dev/null"\nurl = "http://%s/readyz"\noutput = "/dev/null"\n' "$metrics" "$SERVER_HTTP" >>"$OUT/scrapes-open.curl"
		printf 'url = "http://%s/v1/admin/stats"\noutput = "/dev/null"\nurl = "http://%s/v1/admin/stats"\noutput = "/dev/null"\n' "$SERVER_HTTP" "$SERVER_HTTP" >>"$OUT/scrapes-admin.curl"
	done
	sleep 1.5 # the start's own calls are done, the figures stale
	{
		echo "scrapes=1000"
		count_fcalls idle sleep 2
		count_fcalls open curl -sS --no-progress-meter --parallel --parallel-max 25 --fail -K "$OUT/scrapes-open.curl"
		count_fcalls admin curl -sS --no-progress-meter --parallel --parallel-max 25 --fail -H "Authorization: Bearer $op" -K "$OUT/scrapes-admin.curl"
	} >"$OUT/scrapes-redis.txt" || fail "shared-state: a scrape failed"
	stop_server
	meta shared-state "  curl -sS --no-progress-meter --parallel --parallel-max 25 --fail -K scrapes-open.curl (500 x /metrics on --metrics-addr and /readyz), then with the operator's token -K scrapes-admin.curl (1,000 x /v1/admin/stats); redis-cli config resetstat / info commandstats around each"
}

# count_fcalls NAME CMD...: runs CMD between a reset and a read of the Redis
# server's command statistics and prints NAME_seconds and NAME_fcalls.
count_fcalls() {
	local name=$1 port=${REDIS_ADDR##*:} t0 t1 n
	shift
	redis-cli -p "$port" config resetstat >/dev/null
	t0=$(date +%s%N)
	"$@" || return 1
	t1=$(date +%s%N)
	n=$(redis-cli -p "$port" info commandstats | sed -n 's/^cmdstat_fcall:calls=\([0-9]*\),.*/\1/p')
	echo "${name}_seconds=$(((t1 - t0) / 1000000))e-3"
	echo "${name}_fcalls=${n:-0}"
}
