#!/usr/bin/env bash
# Serves the same bytes from taksi-server and nginx and compares them with wrk, the way users run
# both: taksi-server with its shipped defaults (access log on; standard error goes to a file, as
# nginx's log does), nginx with a buffered access log (`buffer=64k flush=1s`); and both again
# with the access log off.
#
#   Benchmarks/run.sh                      # defaults: 10 s runs, 3 rounds, 64 connections
#   DURATION=5 ROUNDS=5 Benchmarks/run.sh
#   TAKSI_BIN=/path/to/taksi-server Benchmarks/run.sh   # measure that binary instead of building
#   TAKSI_BASE=/path/to/older/taksi-server ONLY='data|304' FLOOD_SECONDS=0 Benchmarks/run.sh
#       # also measure an older build in the same run (its one-core rows, shipped defaults) and
#       # print what changed; ONLY keeps the scenarios whose names match (grep -E); no flood
#
# Builds taksi-server in release mode, installs wrk and nginx with apt-get when missing, pins
# each server to CPU 0 (one event loop thread, one nginx worker) and the load generator to CPU 1,
# alternates the servers run by run, and prints per scenario the median requests/s, the server's
# CPU time per request in microseconds (user + system, from /proc), the p99 latency and the ratio
# to nginx; then what the access log costs; then the slow-reader flood (Benchmarks/slow_readers.py).
# The "two cores" rows run two event loops against two nginx workers on CPUs 0 and 1 (TWO_CPUS),
# with wrk's two threads on the same CPUs: a machine with two cores has no third for the load
# generator, and sharing them taxes both servers alike (each row's CPU time is the server's own).
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-64}
FLOOD_SECONDS=${FLOOD_SECONDS:-10}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
TWO_CPUS=${TWO_CPUS:-0,1}

need_load_tools

release_binary

make_work_dir


# taksi-server over the example screens (their upstreams answered offline through config.json)
# plus a 2 KB screen with fixture-only data: one instance with the shipped defaults, one with the
# access log off, and one with two event loops on two CPUs. Only the thread count is set, so each
# compares with as many nginx workers.
python3 Benchmarks/make_screens.py bench "$WORK/screens"
# start_taksi NAME CPUS THREADS [TAKSI_ACCESS_LOG]: sets NAME_PID and NAME (its URL); the access
# log as shipped unless given.
start_taksi() {
    local port
    port=$(free_port)
    env ${4:+TAKSI_ACCESS_LOG=$4} taskset -c "$2" "${5:-$BIN}" serve --screens "$WORK/screens" --host 127.0.0.1 --port "$port" --threads "$3" \
        2>"$WORK/taksi-$1.log" &
    PIDS+=($!)
    printf -v "$1_PID" '%s' $!
    printf -v "$1" '%s' "http://127.0.0.1:$port"
    wait_for "http://127.0.0.1:$port/healthz"
}
start_taksi TAKSI "$SERVER_CPU" 1
start_taksi QUIET "$SERVER_CPU" 1 false
start_taksi TWO "$TWO_CPUS" 2
if [ -n "${TAKSI_BASE:-}" ]; then start_taksi BASE "$SERVER_CPU" 1 "" "$TAKSI_BASE"; fi

# What nginx serves, captured from taksi-server: name | taksi-server path | nginx file.
RESOURCES=(
    "menu|/screens/menu|skeleton.json"
    "menu data|/screens/menu/data|data.json"
    "home data|/screens/home/data?name=Ada|home-data.json"
    "stations|/screens/bikes/stations/velib|stations.json"
    "stations data|/screens/bikes/stations/velib/data|stations-data.json"
    "repositories data|/screens/repositories/data?q=swift|repositories-data.json"
)
mkdir -p "$WORK/www" "$WORK/tmp"
for resource in "${RESOURCES[@]}"; do
    IFS='|' read -r _ path file <<<"$resource"
    curl -sf "$TAKSI$path" -o "$WORK/www/$file"
done
curl -sf -H 'Accept-Encoding: gzip' "$TAKSI/screens/menu" -o "$WORK/www/skeleton.json.gz"
TAKSI_ETAG=$(curl -sfI "$TAKSI/screens/menu" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
NGINX_PORT=$(free_port)
NGINX_QUIET_PORT=$(free_port)
# nginx_conf NAME MASTER WORKERS SERVERS: one configuration, the same but for its process model
# and server blocks.
nginx_conf() {
    cat >"$WORK/$1.conf" <<NGINX
daemon off;
master_process $2;
worker_processes $3;
pid $WORK/$1.pid;
error_log $WORK/$1-error.log warn;
events { worker_connections 4096; }
http {
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
$4
}
NGINX
}
nginx_conf nginx off 1 "
    server {
        listen 127.0.0.1:$NGINX_PORT;
        access_log $WORK/nginx-access.log combined buffer=64k flush=1s;
        root $WORK/www;
    }
    server {
        listen 127.0.0.1:$NGINX_QUIET_PORT;
        access_log off;
        root $WORK/www;
    }"
taskset -c "$SERVER_CPU" nginx -c "$WORK/nginx.conf" -p "$WORK" 2>/dev/null &
PIDS+=($!)
NGINX_PID=$!
NGINX="http://127.0.0.1:$NGINX_PORT"
NGINX_QUIET="http://127.0.0.1:$NGINX_QUIET_PORT"
wait_for "$NGINX/skeleton.json"
# Two workers need nginx's master process; their CPU time is the master's and its children's.
NGINX_TWO_PORT=$(free_port)
nginx_conf nginx-two on 2 "
    server {
        listen 127.0.0.1:$NGINX_TWO_PORT;
        access_log $WORK/nginx-two-access.log combined buffer=64k flush=1s;
        root $WORK/www;
    }"
taskset -c "$TWO_CPUS" nginx -c "$WORK/nginx-two.conf" -p "$WORK" 2>/dev/null &
PIDS+=($!)
NGINX_TWO_PID=$!
NGINX_TWO="http://127.0.0.1:$NGINX_TWO_PORT"
wait_for "$NGINX_TWO/skeleton.json"
NGINX_ETAG=$(curl -sfI "$NGINX/skeleton.json" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')

for resource in "${RESOURCES[@]}"; do
    IFS='|' read -r name path file <<<"$resource"
    cmp -s <(curl -sf "$TAKSI$path") <(curl -sf "$NGINX/$file") || { echo "the servers send different bytes for $name" >&2; exit 1; }
done
cmp -s <(curl -sf -H 'Accept-Encoding: gzip' "$TAKSI/screens/menu") <(curl -sf -H 'Accept-Encoding: gzip' "$NGINX/skeleton.json") \
    || { echo "the servers send different gzip bytes" >&2; exit 1; }

# Each request a name never asked for before: the data is rendered every time, nothing kept helps.
# Each wrk run (and each of its threads) names its own visitors, so a later round never repeats an
# earlier one's names (which the memo would keep the second time they are asked for).
cat >"$WORK/unique.lua" <<'LUA'
math.randomseed(os.time())
run = math.random(1, 2147483647)
id = 0
counter = 0
function setup(thread)
    id = id + 1
    thread:set("id", id)
end
request = function()
    counter = counter + 1
    return wrk.format("GET", "/screens/home/data?name=visitor" .. run .. "-" .. id .. "-" .. counter)
end
LUA
echo "-- the URL as given" >"$WORK/none.lua"

# name | instances (on: defaults, off: access log off, two: two cores) | taksi-server path | nginx path | header | wrk script
SCENARIOS=(
    "skeleton|on|/screens/menu|/skeleton.json|X-Bench: 1|none"
    "skeleton, access log off|off|/screens/menu|/skeleton.json|X-Bench: 1|none"
    "skeleton gzip|on|/screens/menu|/skeleton.json|Accept-Encoding: gzip|none"
    "304|on|/screens/menu|/skeleton.json|If-None-Match: ETAG|none"
    "skeleton, path parameter|on|/screens/bikes/stations/velib|/stations.json|X-Bench: 1|none"
    "data, fixtures|on|/screens/menu/data|/data.json|X-Bench: 1|none"
    "data, request value|on|/screens/home/data?name=Ada|/home-data.json|X-Bench: 1|none"
    "data, a new request value each time|on|/screens/home/data|/home-data.json|X-Bench: 1|unique"
    "data, cached upstream, path parameter|on|/screens/bikes/stations/velib/data|/stations-data.json|X-Bench: 1|none"
    "data, cached upstream, query|on|/screens/repositories/data?q=swift|/repositories-data.json|X-Bench: 1|none"
    "skeleton, two cores|two|/screens/menu|/skeleton.json|X-Bench: 1|none"
    "data, a new request value each time, two cores|two|/screens/home/data|/home-data.json|X-Bench: 1|unique"
)
if [ -n "${ONLY:-}" ]; then
    kept=()
    for scenario in "${SCENARIOS[@]}"; do
        if grep -qE "$ONLY" <<<"${scenario%%|*}"; then kept+=("$scenario"); fi
    done
    SCENARIOS=("${kept[@]}")
    [ ${#SCENARIOS[@]} -gt 0 ] || { echo "ONLY=$ONLY matches no scenario" >&2; exit 1; }
fi

# A process's CPU time in clock ticks, its children's included (nginx's workers).

run_wrk() { # url header script pid [cpus threads] -> "requests_per_second p99_ms cpu_microseconds_per_request"
    local before after output
    before=$(cpu_ticks "$4")
    output=$(taskset -c "${5:-$CLIENT_CPU}" wrk -t"${6:-1}" -c"$CONNECTIONS" -d"${DURATION}s" --latency -H "$2" -s "$WORK/$3.lua" "$1")
    after=$(cpu_ticks "$4")
    awk -v ticks=$((after - before)) -v hz="$(getconf CLK_TCK)" '
        / requests in / { requests = $1 }
        /Requests\/sec/ { rps = $2 }
        $1 == "99%" { v = $2; unit = v; gsub(/[0-9.]/, "", unit); sub(/[a-z]+$/, "", v)
                      ms = (unit == "us") ? v / 1000 : (unit == "s") ? v * 1000 : v; p99 = ms }
        END { printf "%s %.3f %.2f\n", rps, p99, (requests > 0) ? ticks / hz * 1e6 / requests : 0 }' <<<"$output"
}


echo "Benchmark: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(uname -sr)" >&2
echo "servers on CPU $SERVER_CPU, wrk on CPU $CLIENT_CPU, $CONNECTIONS connections, ${DURATION}s x $ROUNDS rounds" >&2
declare -A RPS P99 CPU
for round in $(seq 1 "$ROUNDS"); do
    for scenario in "${SCENARIOS[@]}"; do
        IFS='|' read -r name log taksi_path nginx_path header script <<<"$scenario"
        cpus=$CLIENT_CPU threads=1 nginx_pid=$NGINX_PID
        case $log in
            on) taksi=$TAKSI taksi_pid=$TAKSI_PID nginx=$NGINX ;;
            off) taksi=$QUIET taksi_pid=$QUIET_PID nginx=$NGINX_QUIET ;;
            two) taksi=$TWO taksi_pid=$TWO_PID nginx=$NGINX_TWO nginx_pid=$NGINX_TWO_PID cpus=$TWO_CPUS threads=2 ;;
        esac
        read -r rps p99 cpu < <(run_wrk "$taksi$taksi_path" "${header/ETAG/$TAKSI_ETAG}" "$script" "$taksi_pid" "$cpus" "$threads")
        RPS["taksi|$name"]+="$rps " P99["taksi|$name"]+="$p99 " CPU["taksi|$name"]+="$cpu "
        read -r rps p99 cpu < <(run_wrk "$nginx$nginx_path" "${header/ETAG/$NGINX_ETAG}" none "$nginx_pid" "$cpus" "$threads")
        RPS["nginx|$name"]+="$rps " P99["nginx|$name"]+="$p99 " CPU["nginx|$name"]+="$cpu "
        if [ -n "${TAKSI_BASE:-}" ] && [ "$log" = on ]; then
            read -r rps p99 cpu < <(run_wrk "$BASE$taksi_path" "${header/ETAG/$TAKSI_ETAG}" "$script" "$BASE_PID")
            RPS["base|$name"]+="$rps " P99["base|$name"]+="$p99 " CPU["base|$name"]+="$cpu "
        fi
        echo "round $round: $name done" >&2
    done
done

printf '\n| scenario | taksi-server req/s | nginx req/s | ratio | taksi-server CPU µs/req | nginx CPU µs/req | taksi p99 ms | nginx p99 ms |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|\n'
for scenario in "${SCENARIOS[@]}"; do
    name=${scenario%%|*}
    awk -v name="$name" -v t="$(median_of "${RPS["taksi|$name"]}")" -v n="$(median_of "${RPS["nginx|$name"]}")" \
        -v tc="$(median_of "${CPU["taksi|$name"]}")" -v nc="$(median_of "${CPU["nginx|$name"]}")" \
        -v tp="$(median_of "${P99["taksi|$name"]}")" -v np="$(median_of "${P99["nginx|$name"]}")" \
        'BEGIN { printf "| %s | %.0f | %.0f | %.2fx | %.1f | %.1f | %.2f | %.2f |\n", name, t, n, t / n, tc, nc, tp, np }'
done
if [ -n "${TAKSI_BASE:-}" ]; then
    printf '\n| against %s | its ratio | this ratio | its CPU µs/req | this CPU µs/req | change |\n|---|---:|---:|---:|---:|---:|\n' "$TAKSI_BASE"
    for scenario in "${SCENARIOS[@]}"; do
        name=${scenario%%|*}
        [ -n "${CPU["base|$name"]:-}" ] || continue
        awk -v name="$name" -v b="$(median_of "${RPS["base|$name"]}")" -v t="$(median_of "${RPS["taksi|$name"]}")" \
            -v n="$(median_of "${RPS["nginx|$name"]}")" -v bc="$(median_of "${CPU["base|$name"]}")" \
            -v tc="$(median_of "${CPU["taksi|$name"]}")" \
            'BEGIN { printf "| %s | %.2fx | %.2fx | %.1f | %.1f | %+.0f%% |\n", name, b / n, t / n, bc, tc, (tc / bc - 1) * 100 }'
    done
fi
[ -n "${RPS["taksi|skeleton"]:-}" ] && [ -n "${RPS["taksi|skeleton, access log off"]:-}" ] &&
awk -v on="$(median_of "${RPS["taksi|skeleton"]}")" -v off="$(median_of "${RPS["taksi|skeleton, access log off"]}")" \
    -v non="$(median_of "${RPS["nginx|skeleton"]}")" -v noff="$(median_of "${RPS["nginx|skeleton, access log off"]}")" \
    'BEGIN { printf "\nThe access log costs taksi-server %.0f%% of its skeleton throughput (nginx: %.0f%%).\n", (1 - on / off) * 100, (1 - non / noff) * 100 }'
echo "taksi-server wrote $(grep -c ' GET /' "$WORK/taksi-TAKSI.log" || true) access log lines, nginx $(wc -l <"$WORK/nginx-access.log")."

[ "$FLOOD_SECONDS" -gt 0 ] || exit 0
printf '\n| slow-reader flood (300 connections pipelining, never reading) | fresh requests answered | median ms | slowest ms | peak RSS MB |\n|---|---:|---:|---:|---:|\n'
for server in taksi nginx; do
    if [ $server = taksi ]; then url="$TAKSI/screens/menu" pid=$TAKSI_PID; else url="$NGINX/skeleton.json" pid=$NGINX_PID; fi
    taskset -c "$CLIENT_CPU" python3 Benchmarks/slow_readers.py --url "$url" --pid "$pid" --seconds "$FLOOD_SECONDS" --label "$server" \
        --result "$WORK/flood-$server"
done
# The targets: fresh requests during the flood answered in a median under 5 ms, no more of them
# failing than nginx's in the same run (loopback itself drops a few under this flood), memory
# under 100 MB.
read -r t_answered t_total t_median _ t_rss <"$WORK/flood-taksi"
read -r n_answered n_total _ _ _ <"$WORK/flood-nginx"
awk -v ta="$t_answered" -v tt="$t_total" -v tm="$t_median" -v tr="$t_rss" -v na="$n_answered" -v nt="$n_total" 'BEGIN {
    failed = tt - ta; nginx_failed = nt - na
    ok = (tm < 5) && (failed <= nginx_failed) && (tr < 100)
    printf "\nFlood verdict: %s (median %.1f ms, target < 5; %d failed, nginx %d; peak RSS %.0f MB, target < 100)\n",
        ok ? "met" : "NOT MET", tm, failed, nginx_failed, tr
}'
