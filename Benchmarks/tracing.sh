#!/usr/bin/env bash
# What tracing costs: the same server over the example screens with tracing off, and on with
# sampling 0, 0.01 and 1, exporting to the stand-in OTLP receiver (scripts/otlp-receiver.py),
# each measured with wrk on a skeleton and on data rendered from a request value.
#
#   Benchmarks/tracing.sh                       # 5 s runs, 3 rounds
#   DURATION=3 ROUNDS=5 TAKSI_BIN=/path/to/taksi-server Benchmarks/tracing.sh
#
# Prints, per scenario and setting, the median server CPU time per request in microseconds (user +
# system, from /proc) and the median requests/s. Server on CPU 0 (one event loop), wrk on CPU 1.
# Needs wrk, curl and python3 with opentelemetry-proto (pip install opentelemetry-proto).
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
release_binary

WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT


python3 scripts/otlp-receiver.py >"$WORK/spans.jsonl" &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q '^port ' "$WORK/spans.jsonl" 2>/dev/null && break; sleep 0.05; done
RECEIVER="http://127.0.0.1:$(head -1 "$WORK/spans.jsonl" | cut -d' ' -f2)"

SETTINGS=("off|false|1" "sampling 0|true|0" "sampling 0.01|true|0.01" "sampling 1|true|1")
declare -A PORT PID
for setting in "${SETTINGS[@]}"; do
    IFS='|' read -r name enabled sampling <<<"$setting"
    port=$(free_port)
    TAKSI_TRACING=$enabled TAKSI_TRACING_ENDPOINT=$RECEIVER TAKSI_TRACING_SAMPLING=$sampling \
        taskset -c 0 "$BIN" serve --port "$port" --threads 1 --no-preview 2>"$WORK/$port.log" &
    PID[$name]=$!
    PIDS+=($!)
    PORT[$name]=$port
    wait_for "http://127.0.0.1:$port/healthz"
done

run_wrk() { # url pid -> "requests_per_second cpu_microseconds_per_request"
    local before after output requests
    before=$(cpu_ticks "$2")
    output=$(taskset -c 1 wrk -t1 -c64 -d"${DURATION}s" "$1")
    after=$(cpu_ticks "$2")
    requests=$(awk '/requests in/ { print $1 }' <<<"$output")
    python3 -c "print(round($requests / $DURATION), round(($after - $before) / 100 * 1e6 / $requests, 2))"
}

SCENARIOS=("skeleton|/screens/landing" "data, request value|/screens/home/data?name=Ada")
declare -A RPS CPU
for _ in $(seq 1 "$ROUNDS"); do
    for scenario in "${SCENARIOS[@]}"; do
        IFS='|' read -r sname path <<<"$scenario"
        for setting in "${SETTINGS[@]}"; do
            name=${setting%%|*}
            read -r rps cpu <<<"$(run_wrk "http://127.0.0.1:${PORT[$name]}$path" "${PID[$name]}")"
            RPS["$sname|$name"]+="$rps "
            CPU["$sname|$name"]+="$cpu "
        done
    done
done

printf '| scenario | tracing | CPU µs/req | req/s |\n|---|---|---:|---:|\n'
for scenario in "${SCENARIOS[@]}"; do
    sname=${scenario%%|*}
    for setting in "${SETTINGS[@]}"; do
        name=${setting%%|*}
        printf '| %s | %s | %s | %s |\n' "$sname" "$name" \
            "$(median_of "${CPU["$sname|$name"]}")" "$(median_of "${RPS["$sname|$name"]}")"
    done
done
echo "spans received: $(($(wc -l <"$WORK/spans.jsonl") - 1))"
