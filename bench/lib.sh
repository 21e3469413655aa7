# Shell helpers shared by bench/run.sh and bench/compare.sh (sourced, not run).
# Both scripts set GO before sourcing this file.

# build_bins DIR: builds rendezvous and rendezvous-load into DIR.
build_bins() {
	mkdir -p "$1"
	$GO build -o "$1/" ./cmd/rendezvous ./cmd/rendezvous-load
}

# start_server BIN LOG [FLAGS...]: starts the server, waits for its first log
# line and sets SERVER_PID, SERVER_HTTP, SERVER_UDP and SERVER_CMD (the
# command as run, for the page). A SERVER_WRAP array
# (e.g. taskset -c 1) prefixes the command.
start_server() {
	local bin=$1 log=$2
	shift 2
	SERVER_CMD=("$bin" --http-addr 127.0.0.1:0 --udp-addr 127.0.0.1:0 --log-format json --drain-window 1s "$@")
	${SERVER_WRAP[@]+"${SERVER_WRAP[@]}"} "${SERVER_CMD[@]}" 2>"$log" &
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

# The ceiling proof's server flags: the default ceilings (25,000 listings,
# 10,000 attempts) with the tenant and subject quotas raised to the whole
# pools, since all the load tester's principals are one tenant and four
# clients create every attempt (by default a tenant holds half a pool).
CEILING_FLAGS=(--tenant-listing-quota 25000 --tenant-attempt-quota 10000
	--subject-attempt-quota 10000 --tenant-idempotency-quota 35000)
# The server's RSS at the full fill must stay under this (checked by the
# load tester's server.rss).
MAX_RSS_MIB=${MAX_RSS_MIB:-128}

# benchstat at a fixed version, so two machines' tables are computed alike.
BENCHSTAT_VERSION=v0.0.0-20260908200009-22c9c6c9d4da
ensure_benchstat() {
	local bin
	bin="$($GO env GOPATH)/bin/benchstat"
	if ! $GO version -m "$bin" 2>/dev/null | grep -q "golang.org/x/perf[[:space:]]*$BENCHSTAT_VERSION"; then
		echo "installing benchstat (golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION)" >&2
		$GO install "golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION"
	fi
	export PATH="$($GO env GOPATH)/bin:$PATH"
}

# machine: what a page needs to be reproduced and compared: CPU (go test's
# own "cpu:" line is added by benchreport), kernel, Go, Redis, coturn,
# benchstat, load average.
machine() {
	echo "cpu:         $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') (/proc/cpuinfo), $(nproc) CPUs"
	echo "kernel:      $(uname -srm)"
	echo "go:          $($GO version)"
	echo "redis:       $(redis-server --version 2>/dev/null | cut -d' ' -f1-3 || echo 'not installed')"
	echo "coturn:      $(turnserver --version 2>/dev/null | head -1 || echo 'not installed')"
	echo "benchstat:   golang.org/x/perf/cmd/benchstat@$BENCHSTAT_VERSION"
	echo "load avg:    $(cut -d' ' -f1-3 /proc/loadavg) ($(date -u '+%Y-%m-%d %H:%M UTC'))"
}

# show CMD...: a command as recorded on a page: binaries and files by their
# base name, ports and PIDs as run.
show() {
	local a out=()
	for a in "$@"; do
		case $a in
		*/*) out+=("${a##*/}") ;;
		*) out+=("$a") ;;
		esac
	done
	echo "${out[*]}"
}

# failed_checks RESULT_JSON: the names of the failed checks of a load run.
failed_checks() {
	if [ ! -f "$1" ]; then
		echo "no result.json"
		return
	fi
	local names
	names=$(tr -d ' \n\t' <"$1" | grep -o '"name":"[^"]*","ok":false' | cut -d'"' -f4 | paste -sd, -)
	echo "failed: ${names:-none}"
}
