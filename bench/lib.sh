# Shell helpers shared by bench/run.sh and bench/compare.sh (sourced, not run).
# Both scripts set GO before sourcing this file.

# build_bins DIR: builds rendezvous and rendezvous-load into DIR.
build_bins() {
	mkdir -p "$1"
	$GO build -o "$1/" ./cmd/rendezvous ./cmd/rendezvous-load
}

# start_server BIN LOG [FLAGS...]: starts the server, waits for its first log
# line and sets SERVER_PID, SERVER_HTTP and SERVER_UDP. A SERVER_WRAP array
# (e.g. taskset -c 1) prefixes the command.
start_server() {
	local bin=$1 log=$2
	shift 2
	${SERVER_WRAP[@]+"${SERVER_WRAP[@]}"} "$bin" --http-addr 127.0.0.1:0 --udp-addr 127.0.0.1:0 --log-format json --drain-window 1s "$@" 2>"$log" &
	SERVER_PID=$!
	for _ in $(seq 1 100); do
		if grep -q '"msg":"listening"' "$log" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	local first
	first=$(head -1 "$log")
	SERVER_HTTP=$(sed -n 's/.*"http":"\([^"]*\)".*/\1/p' <<<"$first")
	SERVER_UDP=$(sed -n 's/.*"udp":"\([^"]*\)".*/\1/p' <<<"$first")
	if [ -z "$SERVER_HTTP" ] || [ -z "$SERVER_UDP" ]; then
		echo "the server did not start; its log:" >&2
		cat "$log" >&2
		return 1
	fi
}

# stop_server: SIGTERM (drain) and wait.
stop_server() {
	if [ -n "${SERVER_PID:-}" ]; then
		kill -TERM "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	fi
}

# start_redis LOG: starts a redis-server without persistence on a free
# loopback port and sets REDIS_PID and REDIS_ADDR once it answers PING.
start_redis() {
	local log=$1 port
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$log" 2>&1 &
		REDIS_PID=$!
		for _ in $(seq 1 50); do
			if [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ]; then
				REDIS_ADDR=127.0.0.1:$port
				return 0
			fi
			kill -0 "$REDIS_PID" 2>/dev/null || break # the port was taken: try another
			sleep 0.1
		done
		stop_redis
	done
	echo "redis-server did not start; its log:" >&2
	cat "$log" >&2
	return 1
}

# stop_redis: kill the redis-server start_redis started and wait.
stop_redis() {
	if [ -n "${REDIS_PID:-}" ]; then
		kill "$REDIS_PID" 2>/dev/null || true
		wait "$REDIS_PID" 2>/dev/null || true
		REDIS_PID=
	fi
}
