# Shell functions of the shared-state area's browse measurement (sourced by
# bench/run.sh after bench/lib.sh, not run): the 100-item browse page that
# HTTP serves, memory store against Redis store at 1, 2 and 3 instances.
#
# Each configuration gets fresh servers, a fill of 25,000 listings held with
# live presence and renewed leases by the load tester (--mode load, which
# keeps refreshing and renewing while wrk runs, as an operator's hosts
# would), then one wrk per instance at once, twice: while the load tester
# runs, and with it stopped, when INFO commandstats (FCALL usec) over the
# window is the pages' own Redis CPU. Raw results:
# $OUT/browse-<store>-n<N>-r<R>/.
#
# Needs: OUT, RUNS, REDIS_ADDR and REDIS_PID (start_redis), $OUT/bin, $OUT/principals.json,
# $OUT/tokens.json, $OUT/capability.key, and meta/fail/show/loadavg of run.sh.

BROWSE_WRK=(wrk -t1 -c16 -d5s)
BROWSE_PATH="/v1/listings?protocol_version=7&limit=100"
BROWSE_LISTINGS=${BROWSE_LISTINGS:-25000}

# fcall_stats: "calls usec" of FCALL on the bench's redis-server.
fcall_stats() {
	redis-cli -h "${REDIS_ADDR%:*}" -p "${REDIS_ADDR#*:}" info commandstats |
		sed -n 's/^cmdstat_fcall:calls=\([0-9]*\),usec=\([0-9]*\),.*/\1 \2/p' | tr -d '\r'
}

# proc_ticks PID...: the CPU the processes used so far, in clock ticks
# (utime + stime of /proc/PID/stat, summed).
proc_ticks() {
	local p t=0
	for p in "$@"; do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}

# browse_bench: every configuration RUNS times, alternating, so a drift of
# the machine's load falls on all of them.
browse_bench() {
	local r cfg token
	token=$(jq -r '.clients[0]' "$OUT/tokens.json")
	rm -rf "$OUT"/browse-*
	for r in $(seq 1 "$RUNS"); do
		for cfg in memory-1 redis-1 redis-2 redis-3; do
			browse_one "$r" "${cfg%-*}" "${cfg#*-}" "$token" ||
				fail "shared-state: browse on $cfg, run $r (see $OUT/browse-${cfg%-*}-n${cfg#*-}-r$r)"
		done
	done
}

# browse_one RUN STORE N TOKEN: one configuration's measurement.
browse_one() {
	local r=$1 store=$2 n=$3 token=$4 i dir pids=() https=() loadpid args ok=0
	dir="$OUT/browse-$store-n$n-r$r"
	mkdir -p "$dir"
	args=(--principals "$OUT/principals.json" --store "$store" "${CEILING_FLAGS[@]}")
	if [ "$store" = redis ]; then
		args+=(--redis-addr "$REDIS_ADDR" --redis-name "browse-r$r-n$n" --capability-key-file "$OUT/capability.key")
	fi
	for i in $(seq 1 "$n"); do
		if ! start_server "$OUT/bin/rendezvous" "$dir/server-$i.log" "${args[@]}"; then
			SERVER_PID=
			browse_stop "${pids[@]}"
			return 1
		fi
		pids+=("$SERVER_PID")
		https+=("$SERVER_HTTP")
		SERVER_PID=
	done
	local load=("$OUT/bin/rendezvous-load" --mode load --listings "$BROWSE_LISTINGS" --http "${https[0]}"
		--tokens "$OUT/tokens.json" --duration 10m --progress 10s --out "$dir/load")
	"${load[@]}" >"$dir/load.log" 2>&1 &
	loadpid=$!
	BROWSE_CPU_PIDS=("${pids[*]}" "$REDIS_PID" "$loadpid")
	for _ in $(seq 1 600); do
		grep -q '^phase load' "$dir/load.log" 2>/dev/null && ok=1 && break
		kill -0 "$loadpid" 2>/dev/null || break
		sleep 1
	done
	if [ "$ok" = 1 ]; then
		# A first page on each instance, untimed: on the Redis store it
		# builds the instance's local index from the snapshot, once per
		# process.
		for i in $(seq 1 "$n"); do
			curl -sf -o /dev/null --max-time 60 -H "Authorization: Bearer $token" "http://${https[i - 1]}$BROWSE_PATH" || ok=0
		done
		{
			echo "store=$store"
			echo "instances=$n"
			echo "loadavg_start=$(loadavg)"
		} >"$dir/summary.txt"
		browse_wrk "$dir" live "$token" "${https[@]}" || ok=0
		# Then with the load tester stopped (SIGSTOP; the listings stay live
		# well within the presence TTL): no other call reaches Redis, so its
		# FCALL time over the window is the pages' own.
		kill -STOP "$loadpid"
		sleep 1
		browse_wrk "$dir" paused "$token" "${https[@]}" || ok=0
		kill -CONT "$loadpid"
		echo "loadavg_end=$(loadavg)" >>"$dir/summary.txt"
		if [ "$r" = 1 ]; then
			meta shared-state "  browse, $store, $n instance(s):" "    $(show "${SERVER_CMD[@]}")" "    $(show "${load[@]}")" \
				"    $(show "${BROWSE_WRK[@]}") -H 'Authorization: Bearer <client token>' http://<instance>$BROWSE_PATH (one per instance, at once)"
		fi
	fi
	kill -KILL "$loadpid" 2>/dev/null || true # no cleanup: the servers and their state go next
	wait "$loadpid" 2>/dev/null || true
	browse_stop "${pids[@]}"
	if [ "$store" = redis ]; then
		# The next configuration starts from an empty deployment.
		redis-cli -h "${REDIS_ADDR%:*}" -p "${REDIS_ADDR#*:}" flushall >/dev/null
	fi
	[ "$ok" = 1 ]
}

# browse_wrk DIR WINDOW TOKEN HTTP...: one wrk per instance at once, into
# DIR/wrk-WINDOW-<i>.txt, with the FCALL readings around them in
# DIR/summary.txt (WINDOW_start/WINDOW_end=<time> <calls> <usec>).
browse_wrk() {
	local dir=$1 window=$2 token=$3 i wrks=()
	shift 3
	echo "${window}_start=$(date +%s.%N) $(fcall_stats)" >>"$dir/summary.txt"
	browse_cpu "${window}_cpu_start" >>"$dir/summary.txt"
	for i in $(seq 1 $#); do
		"${BROWSE_WRK[@]}" -H "Authorization: Bearer $token" "http://${!i}$BROWSE_PATH" >"$dir/wrk-$window-$i.txt" 2>&1 &
		wrks+=($!)
	done
	wait "${wrks[@]}" || return 1
	echo "${window}_end=$(date +%s.%N) $(fcall_stats)" >>"$dir/summary.txt"
	browse_cpu "${window}_cpu_end" >>"$dir/summary.txt"
}

# browse_cpu KEY: KEY=<clock ticks per second> <ticks> of the instances,
# redis-server and the load tester (BROWSE_CPU_PIDS): where the cores went
# during a window.
browse_cpu() {
	local servers
	read -ra servers <<<"${BROWSE_CPU_PIDS[0]}"
	echo "$1=$(getconf CLK_TCK) $(proc_ticks "${servers[@]}") $(proc_ticks "${BROWSE_CPU_PIDS[1]}") $(proc_ticks "${BROWSE_CPU_PIDS[2]}")"
}

# browse_stop PID...: SIGTERM the servers browse_one started and wait.
browse_stop() {
	local p
	for p in "$@"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "$@"; do
		wait "$p" 2>/dev/null || true
	done
}
