# The shared-state area's HTTP measurements, sourced by bench/run.sh after
# bench/lib.sh; they use its OUT, RUNS, meta, fail, show and loadavg, the
# built binaries in $OUT/bin, the principals and tokens of the area and a
# running redis-server (REDIS_ADDR).

# The mixed open-loop rates of the latency table: 1,000 requests/s of the
# kinds that reach the store, and GET /livez besides, which no store call
# answers: the floor the generator, the HTTP stack and this machine set in
# the same run.
LATENCY_RATES=create=150,renew=300,join=150,browse=100,get=300,livez=100
LATENCY_LISTINGS=2000

# shared_latency: the HTTP latency per kind at LATENCY_RATES on the memory
# store and the Redis store, the same build and generator, alternating RUNS
# times (one pair per run), each on a fresh server.
shared_latency() {
	local r store args lat
	rm -rf "$OUT"/latency-memory* "$OUT"/latency-redis*
	for r in $(seq 1 "$RUNS"); do
		for store in memory redis; do
			args=(--principals "$OUT/principals.json" --store "$store" "${CEILING_FLAGS[@]}")
			if [ "$store" = redis ]; then
				args+=(--redis-addr "$REDIS_ADDR" --redis-name "latency-r$r" --capability-key-file "$OUT/capability.key")
			fi
			if ! start_server "$OUT/bin/rendezvous" "$OUT/server-latency-$store-r$r.log" "${args[@]}"; then
				fail "shared-state: the $store server did not start for the latency run $r"
				continue
			fi
			lat=("$OUT/bin/rendezvous-load" --mode load --listings "$LATENCY_LISTINGS" --rate "$LATENCY_RATES"
				--http "$SERVER_HTTP" --tokens "$OUT/tokens.json" --duration 20s --ramp 2s --progress 5s
				--server-pid "$SERVER_PID" --out "$OUT/latency-$store-r$r")
			"${lat[@]}" || fail "shared-state: latency on $store, run $r ($(failed_checks "$OUT/latency-$store-r$r/result.json"))"
			stop_server
			if [ "$r" = 1 ]; then
				meta shared-state "  $(show "${SERVER_CMD[@]}")" "  $(show "${lat[@]}")"
			fi
		done
	done
}

# shared_scrapes: against one instance on the Redis store, counts the
# Redis function calls (INFO commandstats, after CONFIG RESETSTAT) of
# 1,000 unauthenticated scrapes, 25 at a time (half /metrics on the
# metrics listener, half /readyz), of 1,000 GET /v1/admin/stats (the global
# operator's: each also checks its caller's revocation, one call on this
# instance, which serves no browse page), and of
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
