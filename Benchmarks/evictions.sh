#!/usr/bin/env bash
# What an upstream cache at capacity costs per request as distinct keys pile up: data requests for
# items/<id>, each id new, each an upstream call (nginx answers it) whose value evicts the least
# recently used entry once the cache holds its 1,000 entries (the shipped default). The rows must
# stay flat: a cost that grows with the keys seen shows as a rising column (it rose without bound
# while each eviction wrapped the cache's change observer in one more thunk, and an eviction that
# scans every entry grows with the cache's size).
#
#   Benchmarks/evictions.sh                  # 100,000 distinct keys, in segments of 2 s
#   KEYS=250000 SEGMENT=3 Benchmarks/evictions.sh
#   TAKSI_BIN=/path/to/taksi-server Benchmarks/evictions.sh
#
# Prints per segment: the distinct keys asked for so far, requests/s, the server's CPU
# microseconds per request (user + system, from /proc) and its resident memory; then the cache's
# misses, each a new entry. The server runs on CPU 0, nginx and wrk on CPU 1. Most of a request's
# cost is its upstream call; the segments vary by about 20% from run to run here.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh

KEYS=${KEYS:-100000}
SEGMENT=${SEGMENT:-2}
CONNECTIONS=${CONNECTIONS:-16}

need_load_tools
release_binary

make_work_dir

# The upstream: nginx answers every /items/<id> with one small JSON object.
UPSTREAM_PORT=$(free_port)
mkdir -p "$WORK/nginx"
cat >"$WORK/nginx/nginx.conf" <<EOF
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    server {
        listen 127.0.0.1:$UPSTREAM_PORT;
        location /items/ { default_type application/json; return 200 '{"name": "Item"}'; }
    }
}
EOF
taskset -c 1 nginx -c "$WORK/nginx/nginx.conf" -g 'daemon off;' &
PIDS+=($!)

mkdir -p "$WORK/screens"
cat >"$WORK/screens/items.yaml" <<'EOF'
name: items/{id}
parameters:
  id: {type: string, pattern: "[a-z0-9-]+", max_length: 64}
sources:
  item: {type: http, upstream: api, path: "/items/{id}", ttl: 600}
components:
  - {name: label_component, identifier: name, content: {value: {$bind: item.name}}}
EOF
cat >"$WORK/config.json" <<EOF
{"upstreams": {"api": "http://127.0.0.1:$UPSTREAM_PORT"}, "access_log": false}
EOF
PORT=$(free_port)
taskset -c 0 "$BIN" serve --config "$WORK/config.json" --screens "$WORK/screens" --host 127.0.0.1 --port "$PORT" --threads 1 \
    2>"$WORK/taksi.log" &
TAKSI_PID=$!
PIDS+=("$TAKSI_PID")
wait_for "http://127.0.0.1:$PORT/healthz"
wait_for "http://127.0.0.1:$UPSTREAM_PORT/items/x"

# Each of wrk's requests asks for an id no request asked for before: the segment, the thread
# and a counter.
cat >"$WORK/distinct.lua" <<'EOF'
local threads = 0
function setup(thread)
    threads = threads + 1
    thread:set("thread", threads)
end
local counter = 0
local segment = os.getenv("SEGMENT_NUMBER") or "0"
function request()
    counter = counter + 1
    return wrk.format("GET", "/screens/items/s" .. segment .. "-t" .. thread .. "-" .. counter .. "/data")
end
EOF

printf '%10s %10s %12s %10s\n' "keys" "req/s" "CPU µs/req" "RSS MB"
seen=0
number=0
while [ "$seen" -lt "$KEYS" ]; do
    number=$((number + 1))
    before=$(cpu_ticks "$TAKSI_PID")
    out=$(SEGMENT_NUMBER=$number taskset -c 1 wrk -t 2 -c "$CONNECTIONS" -d "${SEGMENT}s" -s "$WORK/distinct.lua" "http://127.0.0.1:$PORT")
    after=$(cpu_ticks "$TAKSI_PID")
    requests=$(awk '/requests in/ { print $1 }' <<<"$out")
    rate=$(awk '/Requests\/sec/ { printf "%.0f", $2 }' <<<"$out")
    seen=$((seen + requests))
    rss=$(awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$TAKSI_PID/status")
    cpu=$(awk -v t=$((after - before)) -v n="$requests" 'BEGIN { printf "%.1f", n ? t * 10000 / n : 0 }')
    printf '%10d %10s %12s %10s\n' "$seen" "$rate" "$cpu" "$rss"
done
misses=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk -F' ' '/^taksi_upstream_cache_total\{result="miss"\}/ { print $2 }')
echo "upstream cache misses (each a new entry, each past the 1,000th an eviction): $misses"
