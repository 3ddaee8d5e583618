#!/usr/bin/env bash
# Start-up time and memory with generated screen sets of 100, 1,000 and 10,000 screens.
#
#   Benchmarks/startup.sh              # sizes 100 1000 10000, 3 runs each
#   SIZES="100 1000" RUNS=5 Benchmarks/startup.sh
#   TAKSI_BIN=/path/to/taksi-server Benchmarks/startup.sh   # measure that binary instead of building
#
# Start-up is measured from exec until /readyz answers (polled every 5 ms, so +-5 ms); memory is
# the server's resident set once ready. Prints the medians and how each grows per screen.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh

SIZES=${SIZES:-"100 1000 10000"}
RUNS=${RUNS:-3}
command -v curl >/dev/null || { SUDO=$([ "$(id -u)" = 0 ] || echo sudo); $SUDO apt-get install -y -qq curl >/dev/null; }

release_binary
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"; [ -n "${PID:-}" ] && kill "$PID" 2>/dev/null || true' EXIT


printf '| screens | files (MB) | start-up ms | RSS MB | ms per screen | KB RSS per screen |\n|---:|---:|---:|---:|---:|---:|\n'
for size in $SIZES; do
    python3 Benchmarks/make_screens.py generated "$WORK/screens-$size" "$size"
    megabytes=$(du -sm "$WORK/screens-$size" | cut -f1)
    times=""; memory=""
    for _ in $(seq 1 "$RUNS"); do
        port=$(free_port)
        start=$(date +%s%N)
        TAKSI_ACCESS_LOG=false TAKSI_LOG_LEVEL=warning "$BIN" serve --screens "$WORK/screens-$size" --port "$port" --no-watch &
        PID=$!
        until curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; do
            kill -0 "$PID" 2>/dev/null || { echo "taksi-server exited while loading $size screens" >&2; exit 1; }
            sleep 0.005
        done
        end=$(date +%s%N)
        times+="$(( (end - start) / 1000000 )) "
        memory+="$(awk '/VmRSS/ { print $2 / 1024 }' "/proc/$PID/status") "
        kill "$PID"; wait "$PID" 2>/dev/null || true; PID=""
    done
    t=$(tr ' ' '\n' <<<"$times" | grep . | median)
    m=$(tr ' ' '\n' <<<"$memory" | grep . | median)
    awk -v n="$size" -v mb="$megabytes" -v t="$t" -v m="$m" \
        'BEGIN { printf "| %d | %d | %.0f | %.1f | %.3f | %.1f |\n", n, mb, t, m, t / n, m * 1024 / n }'
done
