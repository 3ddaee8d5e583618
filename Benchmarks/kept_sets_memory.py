#!/usr/bin/env python3
"""How a replica's resident memory follows the screen sets it keeps (ScreenStore's earlier sets,
bounded by count and bytes) over reshaping reloads: every reload changes every screen's
skeleton, so each set it replaces is kept while its skeletons may be cached.

    kept_sets_memory.py BINARY [SCREENS] [RELOADS]
    MAX_AGE=1 kept_sets_memory.py BINARY 300 4      skeletons cached for a second (20 by default)

Serves SCREENS generated screens (default 1,000) with live reload, reloads RELOADS times (default
30), and after each prints the resident set (VmRSS), the kept sets and their counted bytes
(taksi_screen_sets_kept, taksi_screen_sets_kept_bytes). Skeletons are cached for MAX_AGE seconds,
so after the reloads the kept sets expire; it then waits for that and prints the same again: what
a replica holds once it keeps (next to) nothing, against a control serving one set with no
reloads. Debug and release builds both show it; name the build and CPU beside the numbers."""
import json, os, re, shutil, socket, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_screens import generated_screen  # noqa: E402

if len(sys.argv) < 2:
    raise SystemExit(__doc__)
binary = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
reloads = int(sys.argv[3]) if len(sys.argv) > 3 else 30
work = tempfile.mkdtemp(prefix="kept-sets-")
screens = os.path.join(work, "screens")


def write(shape):
    """The set's files; `shape` renames one component of every screen (a new skeleton each)."""
    os.makedirs(screens, exist_ok=True)
    for i in range(count):
        screen = generated_screen(i)
        screen["components"][0]["identifier"] = f"title_{shape}"
        with open(os.path.join(screens, f"screen-{i:05d}.json.tmp"), "w") as f:
            json.dump(screen, f)
        os.replace(os.path.join(screens, f"screen-{i:05d}.json.tmp"), os.path.join(screens, f"screen-{i:05d}.json"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
        return r.read().decode()


def rss(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(field + r":\s+(\d+)", f.read()).group(1)) / 1024


def metric(text, name):
    m = re.search(rf"^{name} ([0-9.e+]+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def serve():
    port = free_port()
    config = os.path.join(work, "config.json")
    with open(config, "w") as f:
        json.dump({"skeleton_max_age": int(os.environ.get("MAX_AGE", "20")), "skeleton_stale_while_revalidate": 0, "access_log": False,
                   "log_level": "warning", "watch_interval": 0.2}, f)
    process = subprocess.Popen([binary, "serve", "--config", config, "--screens", screens, "--port", str(port)])
    for _ in range(600):
        try:
            get(port, "/readyz")
            return process, port
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the server did not answer")


def version(port):
    return json.loads(get(port, "/readyz"))["screens_version"]


def line(label, process, port):
    metrics = get(port, "/metrics")
    kept = metric(metrics, "taksi_screen_sets_kept")
    kept_mib = metric(metrics, "taksi_screen_sets_kept_bytes") / 2**20
    print(f"{label:>10}  rss {rss(process.pid):7.1f} MiB  kept {kept:3.0f} sets, counted {kept_mib:7.1f} MiB", flush=True)
    return rss(process.pid)


write(0)
process, port = serve()
try:
    get(port, "/screens/screen-00000")
    start = line("start", process, port)
    for n in range(1, reloads + 1):
        before = version(port)
        write(n)
        while version(port) == before:
            time.sleep(0.05)
        get(port, "/screens/screen-00000")
        line(f"reload {n}", process, port)
    time.sleep(int(os.environ.get("MAX_AGE", "20")) + 2)
    get(port, "/readyz")  # prunes what expired; the sets are freed on a background task
    time.sleep(2)
    end = line("expired", process, port)
    print(f"peak {rss(process.pid, 'VmHWM'):.1f} MiB")
finally:
    process.terminate()
    process.wait()

write("control")
process, port = serve()
try:
    get(port, "/screens/screen-00000")
    control = line("control", process, port)
finally:
    process.terminate()
    process.wait()
print(f"after the kept sets expired: {end - control:+.1f} MiB against the control ({end:.1f} against {control:.1f})")
shutil.rmtree(work, ignore_errors=True)
