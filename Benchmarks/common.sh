# Helpers the benchmark scripts share; sourced, not run.

need() { command -v "$1" >/dev/null 2>&1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 1 500); do curl -sf -o /dev/null "$1" && return 0; sleep 0.02; done; echo "no answer from $1" >&2; exit 1; }
# CPU ticks (user + system, 1/100 s) of a process and its children.
cpu_ticks() { for pid in "$1" $(pgrep -P "$1" || true); do awk '{ print $14 + $15 }' "/proc/$pid/stat"; done | awk '{ s += $1 } END { print s }'; }
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
median_of() { tr ' ' '\n' <<<"$1" | grep . | median; }
