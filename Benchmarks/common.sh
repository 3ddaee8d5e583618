# Helpers the benchmark scripts share; sourced, not run.

need() { command -v "$1" >/dev/null 2>&1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 1 500); do curl -sf -o /dev/null "$1" && return 0; sleep 0.02; done; echo "no answer from $1" >&2; exit 1; }
# CPU ticks (user + system, 1/100 s) of a process and its children.
cpu_ticks() { for pid in "$1" $(pgrep -P "$1" || true); do awk '{ print $14 + $15 }' "/proc/$pid/stat"; done | awk '{ s += $1 } END { print s }'; }
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
median_of() { tr ' ' '\n' <<<"$1" | grep . | median; }
# Installs wrk, nginx and curl with apt-get when one of them is missing.
need_load_tools() {
    if ! need wrk || ! need nginx || ! need curl; then
        echo "installing wrk, nginx and curl with apt-get" >&2
        local sudo
        sudo=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
        $sudo apt-get update -qq && $sudo apt-get install -y -qq wrk nginx-light curl >/dev/null
    fi
}
# Sets BIN to the taksi-server to measure: TAKSI_BIN (a binary built elsewhere, another scratch
# path or commit, measured as it is), else a release build of this checkout.
release_binary() {
    if [ -n "${TAKSI_BIN:-}" ]; then
        BIN=$TAKSI_BIN
    else
        swift build -c release --product taksi-server >&2
        BIN="$(swift build -c release --show-bin-path)/taksi-server"
    fi
}
# Makes WORK, a scratch folder nginx's workers can read (they run as nobody when started by root),
# removed at exit, when every process in PIDS is killed.
make_work_dir() {
    WORK=$(mktemp -d)
    chmod 755 "$WORK"
    PIDS=()
    trap 'for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$WORK"' EXIT
}
# Installs Debian's postgresql with apt-get when it is missing (the fleet benchmarks start their own cluster).
need_postgres() {
    if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
        echo "installing postgresql with apt-get" >&2
        local sudo
        sudo=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
        $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
    fi
}
# Sets BIN to TAKSI_BIN, else a debug build of this checkout: for benchmarks of behaviour, not speed.
debug_binary() {
    if [ -n "${TAKSI_BIN:-}" ]; then
        BIN=$TAKSI_BIN
    else
        swift build --product taksi-server >&2
        BIN="$(swift build --show-bin-path)/taksi-server"
    fi
}
