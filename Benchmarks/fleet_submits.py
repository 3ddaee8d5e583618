#!/usr/bin/env python3
"""Keyed submits across a fleet: does the upstream see each key exactly once?

Three taksi-server processes share one PostgreSQL (a throwaway cluster in a scratch folder) and
one upstream that counts what it is sent and answers each call after 0 to 300 ms. Each of KEYS
submits carries its own Idempotency-Key and goes to a replica picked at random; its retry goes
to another replica picked at random, a third of them while the first still waits on the upstream
(the phone gave up waiting), the rest after it was answered. Then every key's upstream calls are
counted, and every retry's answer is compared with the first's.

Run by Benchmarks/fleet-submits.sh, which builds the server; usage:
    fleet_submits.py TAKSI_SERVER_BINARY [KEYS] [REPLICAS]
STORE=off runs the replicas without the store, for comparison (it fails).
"""
import json
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from fleet_common import Database, Upstream, clean_up, request, start_replicas

BINARY = sys.argv[1]
KEYS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
REPLICAS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
# STORE=off runs the replicas without the store, each keeping answers in its own memory: the
# fleet as it was, for comparison.
WITHOUT_STORE = os.environ.get("STORE") == "off"


def submit(port, key, email):
    status, headers, body = request(
        port, "POST", "/screens/order/actions/send", body=json.dumps({"inputs": {"email": email}}),
        headers={"Content-Type": "application/json", "Idempotency-Key": key})
    return (status, headers.get("idempotent-replayed"), body)


def main():
    work = tempfile.mkdtemp(prefix="taksi-fleet-")
    os.chmod(work, 0o755)
    processes = []
    database = None
    try:
        database = Database(work)
        upstream = Upstream(delay=0.3)
        screens = os.path.join(work, "Screens")
        os.makedirs(screens)
        with open(os.path.join(screens, "order.yaml"), "w") as f:
            f.write("""name: order
entry: true
components:
  - {name: label_component, identifier: message, content: {value: " "}}
actions:
  send:
    inputs: {email: {type: string, required: true}}
    call: {upstream: api, path: /orders, body: {email: {$bind: inputs.email}}, timeout: 10}
    answers:
      success: {data: [{identifier: message, content: {value: {$template: "Order {response.id}"}}}]}
      failure: {data: [{identifier: message, content: {value: Try again}}]}
""")
        environment = {"TAKSI_UPSTREAM_API": upstream.url}
        if not WITHOUT_STORE:
            environment["TAKSI_STORE"] = database.url
        ports, processes = start_replicas(BINARY, REPLICAS, work, environment, ["--screens", screens])

        keys = [str(uuid.uuid4()) for _ in range(KEYS)]
        outcomes = []
        outcome_lock = threading.Lock()

        def one(key):
            first_port = random.choice(ports)
            retry_port = random.choice([p for p in ports if p != first_port])
            email = f"{key[:8]}@example.com"
            if random.random() < 1 / 3:
                # The retry while the first still waits on the upstream (0 to 300 ms).
                with ThreadPoolExecutor(2) as pair:
                    first = pair.submit(submit, first_port, key, email)
                    time.sleep(random.uniform(0.01, 0.1))
                    retry = pair.submit(submit, retry_port, key, email)
                    answers = (first.result(), retry.result(), True)
            else:
                first = submit(first_port, key, email)
                answers = (first, submit(retry_port, key, email), False)
            with outcome_lock:
                outcomes.append((key,) + answers)

        started = time.time()
        with ThreadPoolExecutor(32) as pool:
            list(pool.map(one, keys))
        elapsed = time.time() - started

        calls = upstream.calls
        once = sum(1 for key in keys if calls.get(key) == 1)
        twice = [key for key in keys if calls.get(key, 0) > 1]
        never = [key for key in keys if key not in calls]
        concurrent = [o for o in outcomes if o[3]]
        busy = sum(1 for o in outcomes if 409 in (o[1][0], o[2][0]))
        replayed = sum(1 for o in outcomes if o[2][1] == "true" or o[1][1] == "true")
        same = sum(1 for o in outcomes if o[1][0] == 200 and o[2][0] == 200 and o[1][2] == o[2][2])
        statuses = {}
        for o in outcomes:
            for answer in (o[1], o[2]):
                statuses[answer[0]] = statuses.get(answer[0], 0) + 1
        print(f"{REPLICAS} replicas, " + ("no store (answers in each replica's memory)" if WITHOUT_STORE else "one PostgreSQL") + f", {KEYS} keys ({len(concurrent)} retried while the first still ran), "
              f"{2 * KEYS} submits in {elapsed:.1f} s")
        print(f"upstream calls: {sum(calls.values())}; keys called exactly once: {once}; more than once: {len(twice)}; "
              f"never: {len(never)}")
        print(f"answers by status: {dict(sorted(statuses.items()))}; pairs with a replayed answer: {replayed}; "
              f"pairs answered 200 with the same body: {same}; pairs with a 409: {busy}")
        ok = not twice and not never and same == KEYS
        print("verdict: " + ("every key reached the upstream exactly once, and every retry got the first answer" if ok
                             else "FAILED"))
        sys.exit(0 if ok else 1)
    finally:
        clean_up(processes, database, work)

if __name__ == "__main__":
    main()
