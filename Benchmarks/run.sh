#!/usr/bin/env bash
# Serves the same bytes from taksi-server and nginx and compares them with wrk.
#
#   Benchmarks/run.sh                      # defaults: 10 s runs, 3 rounds, 64 connections
#   DURATION=5 ROUNDS=5 Benchmarks/run.sh
#
# Builds taksi-server in release mode, installs wrk and nginx with apt-get when missing, pins
# each server to CPU 0 and the load generator to CPU 1, alternates the servers round by round,
# and prints the median requests/s and p99 latency of each scenario with the ratio to nginx,
# then the slow-reader flood (Benchmarks/slow_readers.py). Neither server writes an access log.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-64}
FLOOD_SECONDS=${FLOOD_SECONDS:-10}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}

need() { command -v "$1" >/dev/null 2>&1; }
if ! need wrk || ! need nginx || ! need curl; then
    echo "installing wrk, nginx and curl with apt-get" >&2
    SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq wrk nginx-light curl >/dev/null
fi

swift build -c release --product taksi-server >&2
BIN="$(swift build -c release --show-bin-path)/taksi-server"

WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 1 500); do curl -sf -o /dev/null "$1" && return 0; sleep 0.02; done; echo "no answer from $1" >&2; exit 1; }

# taksi-server over the example screens plus a 2 KB screen with fixture-only data.
python3 Benchmarks/make_screens.py bench "$WORK/screens"
TAKSI_PORT=$(free_port)
TAKSI_ACCESS_LOG=false TAKSI_LOG_LEVEL=warning taskset -c "$SERVER_CPU" \
    "$BIN" serve --screens "$WORK/screens" --host 127.0.0.1 --port "$TAKSI_PORT" --threads 1 --no-watch &
PIDS+=($!)
TAKSI_PID=$!
TAKSI="http://127.0.0.1:$TAKSI_PORT"
wait_for "$TAKSI/healthz"

# nginx gets the bytes captured from taksi-server.
mkdir -p "$WORK/www"
curl -sf "$TAKSI/screens/menu" -o "$WORK/www/skeleton.json"
curl -sf -H 'Accept-Encoding: gzip' "$TAKSI/screens/menu" -o "$WORK/www/skeleton.json.gz"
curl -sf "$TAKSI/screens/menu/data" -o "$WORK/www/data.json"
TAKSI_ETAG=$(curl -sfI "$TAKSI/screens/menu" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
NGINX_PORT=$(free_port)
cat >"$WORK/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 100000000;
    open_file_cache max=100;
    gzip_static on;
    default_type application/json;
    types {}
    client_body_temp_path $WORK/tmp; proxy_temp_path $WORK/tmp; fastcgi_temp_path $WORK/tmp;
    uwsgi_temp_path $WORK/tmp; scgi_temp_path $WORK/tmp;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $WORK/www;
    }
}
EOF
mkdir -p "$WORK/tmp"
taskset -c "$SERVER_CPU" nginx -c "$WORK/nginx.conf" -p "$WORK" 2>/dev/null &
PIDS+=($!)
NGINX_PID=$!
NGINX="http://127.0.0.1:$NGINX_PORT"
wait_for "$NGINX/skeleton.json"
NGINX_ETAG=$(curl -sfI "$NGINX/skeleton.json" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')

cmp -s <(curl -sf "$TAKSI/screens/menu") <(curl -sf "$NGINX/skeleton.json") || { echo "the servers send different bytes" >&2; exit 1; }
cmp -s <(curl -sf -H 'Accept-Encoding: gzip' "$TAKSI/screens/menu") <(curl -sf -H 'Accept-Encoding: gzip' "$NGINX/skeleton.json") \
    || { echo "the servers send different gzip bytes" >&2; exit 1; }

# name | taksi path | nginx path | header for taksi | header for nginx
SCENARIOS=(
    "skeleton|/screens/menu|/skeleton.json|X-Bench: 1|X-Bench: 1"
    "skeleton gzip|/screens/menu|/skeleton.json|Accept-Encoding: gzip|Accept-Encoding: gzip"
    "304|/screens/menu|/skeleton.json|If-None-Match: $TAKSI_ETAG|If-None-Match: $NGINX_ETAG"
    "data (fixtures)|/screens/menu/data|/data.json|X-Bench: 1|X-Bench: 1"
)

run_wrk() { # url header -> "requests_per_second p99_ms"
    taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -H "$2" "$1" | awk '
        /Requests\/sec/ { rps = $2 }
        $1 == "99%" { v = $2; unit = v; gsub(/[0-9.]/, "", unit); sub(/[a-z]+$/, "", v)
                      ms = (unit == "us") ? v / 1000 : (unit == "s") ? v * 1000 : v; p99 = ms }
        END { printf "%s %.3f\n", rps, p99 }'
}

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "Benchmark: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(uname -sr)" >&2
echo "servers on CPU $SERVER_CPU, wrk on CPU $CLIENT_CPU, $CONNECTIONS connections, ${DURATION}s x $ROUNDS rounds" >&2
declare -A RPS P99
for round in $(seq 1 "$ROUNDS"); do
    for scenario in "${SCENARIOS[@]}"; do
        IFS='|' read -r name taksi_path nginx_path taksi_header nginx_header <<<"$scenario"
        read -r rps p99 < <(run_wrk "$TAKSI$taksi_path" "$taksi_header")
        RPS["taksi|$name"]+="$rps "; P99["taksi|$name"]+="$p99 "
        read -r rps p99 < <(run_wrk "$NGINX$nginx_path" "$nginx_header")
        RPS["nginx|$name"]+="$rps "; P99["nginx|$name"]+="$p99 "
        echo "round $round: $name done" >&2
    done
done

printf '\n| scenario | taksi-server req/s | nginx req/s | ratio | taksi p99 ms | nginx p99 ms |\n|---|---:|---:|---:|---:|---:|\n'
for scenario in "${SCENARIOS[@]}"; do
    name=${scenario%%|*}
    t=$(tr ' ' '\n' <<<"${RPS["taksi|$name"]}" | grep . | median)
    n=$(tr ' ' '\n' <<<"${RPS["nginx|$name"]}" | grep . | median)
    tp=$(tr ' ' '\n' <<<"${P99["taksi|$name"]}" | grep . | median)
    np=$(tr ' ' '\n' <<<"${P99["nginx|$name"]}" | grep . | median)
    awk -v name="$name" -v t="$t" -v n="$n" -v tp="$tp" -v np="$np" \
        'BEGIN { printf "| %s | %.0f | %.0f | %.2fx | %.2f | %.2f |\n", name, t, n, t / n, tp, np }'
done

printf '\n| slow-reader flood (300 connections pipelining, never reading) | fresh requests answered | median ms | slowest ms | peak RSS MB |\n|---|---:|---:|---:|---:|\n'
for server in taksi nginx; do
    if [ $server = taksi ]; then url="$TAKSI/screens/menu"; pid=$TAKSI_PID; else url="$NGINX/skeleton.json"; pid=$NGINX_PID; fi
    taskset -c "$CLIENT_CPU" python3 Benchmarks/slow_readers.py --url "$url" --pid "$pid" --seconds "$FLOOD_SECONDS" --label "$server"
done
