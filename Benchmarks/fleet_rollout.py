#!/usr/bin/env python3
"""A fleet through a publish and a store outage, as apps see it.

Three taksi-server processes serve the screens published to one PostgreSQL (screens_source
store). LOADS screen loads run throughout, each as docs/client.md's code does it: the skeleton
from a replica picked at random, then its data from another picked at random with the
skeleton's revision echoed (X-Taksi-Skeleton); on 412 the skeleton again with Cache-Control:
no-cache and its data once more. A load fails when its data names a component its skeleton lacks
(the client drops all of it) or ends in 412.

1. A publish that changes the data's shape (the dynamic component is renamed) while the loads
   run: how long each replica takes to serve it, and how the loads ended.
2. The store stopped for OUTAGE seconds while loads and keyed submits go on: every GET must be
   answered, no keyed submit may reach the upstream twice (a submit refused with 503 is retried
   with its key until answered), and after the store is back a publish reaches every replica
   again, with no restart.

Run by Benchmarks/fleet-rollout.sh, which builds the server; usage:
    fleet_rollout.py TAKSI_SERVER_BINARY [LOADS] [OUTAGE]
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from fleet_common import Database, Upstream, clean_up, request, start_replicas

BINARY = sys.argv[1]
LOADS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
OUTAGE = float(sys.argv[3]) if len(sys.argv) > 3 else 30
REPLICAS = 3


def screens(directory, identifier):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "home.yaml"), "w") as f:
        f.write(f"""name: home
entry: true
sources: {{query: {{type: request, parameters: {{name: {{default: Ada}}}}}}}}
components:
  - {{name: label_component, identifier: {identifier}, content: {{value: {{$template: "Hi {{query.name}}"}}}}}}
  - {{name: label_component, identifier: message, content: {{value: " "}}}}
actions:
  send:
    inputs: {{email: {{type: string, required: true}}}}
    call: {{upstream: api, path: /orders, body: {{email: {{$bind: inputs.email}}}}, timeout: 10}}
    answers:
      success: {{data: [{{identifier: message, content: {{value: {{$template: "Order {{response.id}}"}}}}}}]}}
      failure: {{data: [{{identifier: message, content: {{value: Try again}}}}]}}
""")


def load(ports, with_shape=False):
    """One screen load as docs/client.md's code does it: 'ok', 'recovered' (after a 412) or why it
    failed; with the skeleton's shape (its dynamic component's identifier) when asked."""
    outcome, identifiers = load_once(ports)
    shape = next((i for i in (identifiers or set()) if i in ("greeting", "welcome", "hello")), "-")
    return (outcome, shape) if with_shape else outcome


def load_once(ports):
    def skeleton(headers=None):
        status, response_headers, body = request(random.choice(ports), "GET", "/screens/home", headers=headers)
        if status != 200:
            return None, None
        identifiers = {c.get("identifier") for c in json.loads(body)["components"]}
        return response_headers.get("x-taksi-skeleton"), identifiers

    def data(revision):
        return request(random.choice(ports), "GET", "/screens/home/data?name=Bo", headers={"X-Taksi-Skeleton": revision})

    revision, identifiers = skeleton()
    if revision is None:
        return "skeleton not answered", None
    status, _, body = data(revision)
    outcome = "ok"
    if status == 412:
        revision, identifiers = skeleton({"Cache-Control": "no-cache"})
        if revision is None:
            return "skeleton not answered", None
        status, _, body = data(revision)
        outcome = "recovered"
    if status == 412:
        return "412 twice", identifiers
    if status != 200:
        return f"data answered {status}", identifiers
    named = {entry["identifier"] for entry in json.loads(body)["interface_data"]}
    return (outcome if named <= identifiers else "data the client drops"), identifiers


def serves(port, identifier):
    status, _, body = request(port, "GET", "/screens/home", headers={"Cache-Control": "no-cache"})
    return status == 200 and f'"identifier":"{identifier}"' in body.decode()


def publish(directory, config, environment):
    return subprocess.run([BINARY, "publish", directory, "--config", config], env=environment, capture_output=True, text=True)


def main():
    work = tempfile.mkdtemp(prefix="taksi-rollout-")
    os.chmod(work, 0o755)
    processes = []
    database = None
    try:
        database = Database(work)
        upstream = Upstream(delay=0.05)
        config = os.path.join(work, "config.json")
        with open(config, "w") as f:
            json.dump({"upstreams": {"api": upstream.url}}, f)
        environment = dict(os.environ, TAKSI_STORE=database.url)
        for identifier in ["greeting", "welcome", "hello"]:
            screens(os.path.join(work, identifier), identifier)
        first = publish(os.path.join(work, "greeting"), config, environment)
        if first.returncode != 0:
            sys.exit(f"publish failed: {first.stdout}{first.stderr}")
        ports, processes = start_replicas(
            BINARY, REPLICAS, work, {"TAKSI_STORE": database.url, "TAKSI_SCREENS_SOURCE": "store"}, ["--config", config])

        # 1. A publish during the loads.
        outcomes = {}
        lock = threading.Lock()
        done = [0]

        shapes = {}

        def one(_):
            # Paced (16 at a time, 0.1 s apart each), so the loads span the publish and the
            # seconds the replicas take to follow it: 1,000 take about 6 s.
            time.sleep(0.1)
            outcome, shape = load(ports, with_shape=True)
            with lock:
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                shapes[shape] = shapes.get(shape, 0) + 1
                done[0] += 1

        # An app's skeleton fetched before the publish, kept in its cache.
        _, cached_headers, cached_body = request(ports[0], "GET", "/screens/home")
        cached_revision = cached_headers.get("x-taksi-skeleton")
        cached_identifiers = {c.get("identifier") for c in json.loads(cached_body)["components"]}
        converged = {}
        with ThreadPoolExecutor(16) as pool:
            futures = [pool.submit(one, index) for index in range(LOADS)]
            while done[0] < LOADS * 0.3:
                time.sleep(0.01)
            published = publish(os.path.join(work, "welcome"), config, environment)
            at = time.time()
            if published.returncode != 0:
                sys.exit(f"publish failed: {published.stdout}{published.stderr}")
            pending = set(ports)
            while pending and time.time() - at < 30:
                for port in list(pending):
                    if serves(port, "welcome"):
                        converged[port] = time.time() - at
                        pending.discard(port)
                time.sleep(0.01)
            for future in futures:
                future.result()
        # How the replicas answered revisions they did not serve: from an earlier set they kept, or
        # from the published bundle loaded for it.
        counted = {}
        for port in ports:
            for line in request(port, "GET", "/metrics")[2].decode().splitlines():
                for name in ('taksi_skeleton_revisions_total{result="earlier"}', 'taksi_skeleton_revisions_total{result="outdated"}',
                             'taksi_kept_bundle_loads_total{outcome="loaded"}'):
                    if line.startswith(name + " "):
                        counted[name] = counted.get(name, 0) + int(float(line.split()[-1]))
        counters_line = "   replicas' counters: " + ", ".join(f"{k} {v}" for k, v in sorted(counted.items()))
        failed = {k: v for k, v in outcomes.items() if k not in ("ok", "recovered")}
        # The cached skeleton's data, asked of every replica and of one started after the publish
        # (a scale-out, or a pod of a new image): it never held the earlier set.
        late_ports, late = start_replicas(
            BINARY, 1, work, {"TAKSI_STORE": database.url, "TAKSI_SCREENS_SOURCE": "store"}, ["--config", config], first_index=REPLICAS)
        processes += late
        cached_answers = []
        for port in ports + late_ports:
            status, _, body = request(port, "GET", "/screens/home/data", headers={"X-Taksi-Skeleton": cached_revision})
            named = {e["identifier"] for e in json.loads(body)["interface_data"]} if status == 200 else None
            cached_answers.append("ok" if named is not None and named <= cached_identifiers else f"{status}")
        kept = sum(int(float(line.split()[-1])) for line in request(late_ports[0], "GET", "/metrics")[2].decode().splitlines()
                   if line.startswith('taksi_kept_bundle_loads_total{outcome="loaded"} '))
        cached_line = ("   a skeleton cached before the publish, its data from each replica and one started after it: "
                       + ", ".join(cached_answers) + f" (the last loaded {kept} published bundle for it)")
        latest = max(converged.values()) if len(converged) == REPLICAS else None
        print(f"1. a publish during {LOADS} loads over {REPLICAS} replicas: " + ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())))
        print("   skeletons by shape: " + ", ".join(f"{k}: {v}" for k, v in sorted(shapes.items())))
        print("   each replica served the new bundle after " + ", ".join(f"{converged.get(p, float('nan')):.2f} s" for p in ports)
              + " (from the end of publish)")
        print(counters_line)
        print(cached_line)
        first_ok = not failed and latest is not None and latest <= 2.0 and all(a == "ok" for a in cached_answers)

        # 2. The store stopped mid-load.
        gets = {}
        submits = {}
        keys = []
        stop = threading.Event()

        def loads():
            while not stop.is_set():
                outcome = load(ports)
                with lock:
                    gets[outcome] = gets.get(outcome, 0) + 1

        def submitter():
            while not stop.is_set():
                key = str(uuid.uuid4())
                with lock:
                    keys.append(key)
                while True:
                    status, _, _ = request(random.choice(ports), "POST", "/screens/home/actions/send",
                                           body=json.dumps({"inputs": {"email": "a@b.co"}}),
                                           headers={"Content-Type": "application/json", "Idempotency-Key": key})
                    with lock:
                        submits[status] = submits.get(status, 0) + 1
                    if status != 503 and status != 409:
                        break
                    time.sleep(0.2)

        threads = [threading.Thread(target=loads) for _ in range(8)] + [threading.Thread(target=submitter) for _ in range(4)]
        for thread in threads:
            thread.start()
        time.sleep(2)
        database.stop()
        time.sleep(OUTAGE)
        database.start()
        time.sleep(5)
        stop.set()
        for thread in threads:
            thread.join()
        twice = [key for key in keys if upstream.calls.get(key, 0) > 1]
        never = [key for key in keys if key not in upstream.calls]
        print(f"2. the store stopped for {OUTAGE:.0f} s: loads " + ", ".join(f"{k}: {v}" for k, v in sorted(gets.items()))
              + "; keyed submits answered " + ", ".join(f"{k}: {v}" for k, v in sorted(submits.items()))
              + f"; {len(keys)} keys, {len(twice)} sent twice, {len(never)} never sent")
        published = publish(os.path.join(work, "hello"), config, environment)
        at = time.time()
        back = {}
        while len(back) < REPLICAS and time.time() - at < 30:
            for port in ports:
                if port not in back and serves(port, "hello"):
                    back[port] = time.time() - at
            time.sleep(0.01)
        print("   after it came back, a publish reached every replica after " + ", ".join(
            f"{back.get(p, float('nan')):.2f} s" for p in ports) + " (no restart)")
        gets_failed = {k: v for k, v in gets.items() if k not in ("ok", "recovered")}
        second_ok = not gets_failed and not twice and not never and published.returncode == 0 and len(back) == REPLICAS
        ok = first_ok and second_ok
        print("verdict: " + ("every load ended with data its skeleton decodes, every replica followed within 2 s, "
                             "no keyed submit ran twice" if ok else "FAILED"))
        sys.exit(0 if ok else 1)
    finally:
        clean_up(processes, database, work)


if __name__ == "__main__":
    main()
