#!/usr/bin/env bash
# The memory a replica needs, for the manifest's request and limit (KubernetesManifest.MemoryBudget):
# the release server's own resident set serving the example screens (idle, then its peak under
# load: skeletons, data from fixtures and from the file upstreams, data with a new query each
# time, which fills the data memo), and how much a compiled screen set holds per byte of its files
# (a generated set of 1,000 screens, measured against an empty one).
#
#   Benchmarks/memory-footprint.sh
#   REQUESTS=400000 Benchmarks/memory-footprint.sh
#   TAKSI_BIN=/path/to/taksi-server Benchmarks/memory-footprint.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh

REQUESTS=${REQUESTS:-200000}
need curl || { SUDO=$([ "$(id -u)" = 0 ] || echo sudo); $SUDO apt-get install -y -qq curl >/dev/null; }
release_binary
make_work_dir

rss() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
peak() { awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
serve() { # SCREENS CONFIG → PID, PORT
    PORT=$(free_port)
    TAKSI_ACCESS_LOG=false TAKSI_LOG_LEVEL=warning "$BIN" serve --config "$2" --screens "$1" --port "$PORT" --no-watch &
    PID=$!
    PIDS+=("$PID")
    wait_for "http://127.0.0.1:$PORT/readyz"
}

# 1. The examples, as config.json serves them (file upstreams), under load.
serve Screens config.json
idle=$(rss "$PID")
python3 - "$PORT" "$REQUESTS" <<'PY'
import concurrent.futures, sys, urllib.request
port, total = int(sys.argv[1]), int(sys.argv[2])
paths = ["/screens/home", "/screens/landing", "/screens/bikes/networks/data", "/screens/bikes/stations/velib/data"]
def get(n):
    path = paths[n % len(paths)] if n % 2 else f"/screens/home/data?name=user{n}"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}") as response:
        response.read()
with concurrent.futures.ThreadPoolExecutor(16) as pool:
    list(pool.map(get, range(total)))
PY
echo "examples: $idle MiB resident when ready, $(rss "$PID") MiB after $REQUESTS requests (half with a new query each), peak $(peak "$PID") MiB"
kill "$PID"; wait "$PID" 2>/dev/null || true

# 2. A compiled set per byte of its files.
mkdir -p "$WORK/empty"
printf '{"name": "start", "entry": true, "components": []}\n' >"$WORK/empty/start.json"
printf '{"upstreams": {}}\n' >"$WORK/config.json"
serve "$WORK/empty" "$WORK/config.json"
base=$(awk '/VmRSS/ { print $2 }' "/proc/$PID/status")
kill "$PID"; wait "$PID" 2>/dev/null || true
python3 Benchmarks/make_screens.py generated "$WORK/generated" 1000 >/dev/null
bytes=$(du -sb "$WORK/generated" | cut -f1)
serve "$WORK/generated" "$WORK/config.json"
loaded=$(awk '/VmRSS/ { print $2 }' "/proc/$PID/status")
kill "$PID"; wait "$PID" 2>/dev/null || true
echo "1,000 generated screens: $((bytes / 1024)) KiB of files, $(((loaded - base) / 1024)) MiB more resident: $(awk -v r=$(((loaded - base) * 1024)) -v b="$bytes" 'BEGIN { printf "%.1f", r / b }') bytes per byte of files"
