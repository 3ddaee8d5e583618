#!/usr/bin/env python3
"""A CDN in front, measured: taksi-server behind a real Varnish with vmod_xkey and the shipped VCL
(deploy/varnish/taksi.vcl), skeletons kept for an hour (cdn.skeleton_shared_max_age 3600) and
purged on every change.

    python3 Benchmarks/cdn_purge.py [PATH_TO_TAKSI_SERVER]    # default: the debug build

A project of 50 screens, 10 of which place the fragment `banner`: every skeleton is fetched through
Varnish until each is a hit; the fragment is edited and the server reloads it; then every
skeleton is fetched again. Prints the hit ratio before and after the change, how long after the
new set was served the purge was done (the server's `cdn purged` log line), and whether any
request after that got an earlier skeleton. Needs varnish and varnish-modules (apt-get).
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCREENS, PLACING = 50, 10


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    with urllib.request.urlopen(urllib.request.Request(url), timeout=10) as response:
        return response.read().decode(), response.headers.get("X-Cache")


def write_project(folder, banner):
    screens = os.path.join(folder, "Screens")
    os.makedirs(os.path.join(screens, "fragments"), exist_ok=True)
    with open(os.path.join(screens, "fragments", "banner.yaml"), "w") as f:
        f.write(f"description: A banner.\ncomponents:\n  - {{name: label_component, identifier: banner, content: {{value: {banner}}}}}\n")
    for i in range(SCREENS):
        uses = "  - $fragment: banner\n" if i < PLACING else ""
        with open(os.path.join(screens, f"s{i}.yaml"), "w") as f:
            f.write(f"name: s{i}\nentry: true\ncomponents:\n{uses}  - {{name: label_component, identifier: title, content: {{value: Screen {i}}}}}\n")


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug", "taksi-server"))
    if not shutil.which("varnishd") and not os.path.exists("/usr/sbin/varnishd"):
        sys.exit("needs Varnish: apt-get install varnish varnish-modules")
    work = tempfile.mkdtemp(prefix="taksi-cdn-")
    varnish_port, server_port = free_port(), free_port()
    processes = []
    try:
        vcl = open(os.path.join(ROOT, "deploy", "varnish", "taksi.vcl")).read().replace('.port = "8080";', f'.port = "{server_port}";')
        with open(os.path.join(work, "taksi.vcl"), "w") as f:
            f.write(vcl)
        varnish = subprocess.Popen(
            ["/usr/sbin/varnishd", "-F", "-a", f"127.0.0.1:{varnish_port}", "-T", "127.0.0.1:0", "-n", os.path.join(work, "varnish"),
             "-f", os.path.join(work, "taksi.vcl"), "-s", "malloc,64m", "-j", "none"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(varnish)
        project = os.path.join(work, "project")
        write_project(project, "Sale")
        config = {"cdn": {"skeleton_shared_max_age": 3600, "purge": [{"varnish": [f"http://127.0.0.1:{varnish_port}"]}]},
                  "watch_interval": 0.1}
        with open(os.path.join(project, "config.json"), "w") as f:
            json.dump(config, f)
        log = open(os.path.join(work, "server.log"), "w")
        server = subprocess.Popen([binary, "--port", str(server_port), "--log-format", "json", "--no-access-log"], cwd=project,
                                  stdout=log, stderr=log)
        processes.append(server)
        base = f"http://127.0.0.1:{varnish_port}"
        for _ in range(500):
            try:
                get(f"http://127.0.0.1:{server_port}/healthz")
                get(f"{base}/screens/s0")
                break
            except Exception:
                time.sleep(0.02)
        names = [f"s{i}" for i in range(SCREENS)]
        for name in names:
            get(f"{base}/screens/{name}")
        before = sum(get(f"{base}/screens/{name}")[1] == "hit" for name in names)
        version = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{server_port}/readyz").read())["screens_version"]

        write_project(project, "Summer sale")
        while json.loads(urllib.request.urlopen(f"http://127.0.0.1:{server_port}/readyz").read())["screens_version"] == version:
            time.sleep(0.01)
        served = time.monotonic()
        purged_ms, purged_at, reloaded_at = None, None, None
        while purged_ms is None and time.monotonic() - served < 30:
            log.flush()
            for line in open(os.path.join(work, "server.log")):
                if line.startswith("{"):
                    entry = json.loads(line)
                    if entry.get("message") == "cdn purged":
                        purged_ms = int(entry["taksi.duration_ms"])
                        purged_at = entry["@timestamp"]
                    elif "reload" in entry.get("message", ""):
                        reloaded_at = entry["@timestamp"]
            time.sleep(0.01)
        after, stale = 0, 0
        for name in names:
            body, cache = get(f"{base}/screens/{name}")
            after += cache == "hit"
            stale += name in names[:PLACING] and "Summer sale" not in body
        print(f"screens: {SCREENS}, {PLACING} placing the edited fragment; skeletons kept for an hour (s-maxage=3600)")
        print(f"hit ratio before the change: {before}/{SCREENS} ({100 * before / SCREENS:.0f}%)")
        print(f"hit ratio right after it:    {after}/{SCREENS} ({100 * after / SCREENS:.0f}%): the {SCREENS - after} misses are the screens it changed")
        def moment(stamp):
            return time.mktime(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")) + float("0" + stamp[19:-1])
        gap = f"{(moment(purged_at) - moment(reloaded_at)) * 1000:.0f} ms after the reload's log line" if reloaded_at else "(no reload line)"
        print(f"purge answered by Varnish in {purged_ms} ms; done {gap}")
        print(f"earlier skeletons served after the purge: {stale}")
    finally:
        for process in processes:
            process.terminate()
            process.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
