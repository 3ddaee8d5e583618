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
import glob
import http.client
import http.server
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

BINARY = sys.argv[1]
KEYS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
REPLICAS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
PASSWORD = "bench-" + uuid.uuid4().hex[:8]
# STORE=off runs the replicas without the store, each keeping answers in its own memory: the
# fleet as it was, for comparison.
WITHOUT_STORE = os.environ.get("STORE") == "off"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_postgres(command):
    return ["runuser", "-u", "postgres", "--"] + command if os.getuid() == 0 else command


class Upstream(http.server.ThreadingHTTPServer):
    daemon_threads = True
    calls = {}
    lock = threading.Lock()


class UpstreamHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        key = self.headers.get("Idempotency-Key", "-")
        with Upstream.lock:
            Upstream.calls[key] = Upstream.calls.get(key, 0) + 1
            number = sum(Upstream.calls.values())
        time.sleep(random.uniform(0, 0.3))
        body = json.dumps({"id": str(number)}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def submit(port, key, email):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    body = json.dumps({"inputs": {"email": email}})
    connection.request(
        "POST", "/screens/order/actions/send", body=body,
        headers={"Content-Type": "application/json", "Idempotency-Key": key})
    response = connection.getresponse()
    answer = (response.status, response.getheader("Idempotent-Replayed"), response.read())
    connection.close()
    return answer


def main():
    work = tempfile.mkdtemp(prefix="taksi-fleet-")
    os.chmod(work, 0o755)
    processes = []
    postgres_bin = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
    data = os.path.join(work, "pg")
    try:
        # PostgreSQL, with password authentication, on a free port.
        os.makedirs(data)
        password_file = os.path.join(work, "password")
        with open(password_file, "w") as f:
            f.write(PASSWORD)
        if os.getuid() == 0:
            shutil.chown(data, "postgres")
            shutil.chown(password_file, "postgres")
        subprocess.run(
            as_postgres([f"{postgres_bin}/initdb", "-D", data, "-U", "taksi", f"--pwfile={password_file}",
                         "--auth=scram-sha-256", "--no-sync"]), check=True, stdout=subprocess.DEVNULL)
        pg_port = free_port()
        subprocess.run(
            as_postgres([f"{postgres_bin}/pg_ctl", "-D", data, "-l", os.path.join(data, "log"), "-w",
                         "-o", f"-p {pg_port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off", "start"]),
            check=True, stdout=subprocess.DEVNULL)

        upstream = Upstream(("127.0.0.1", 0), UpstreamHandler)
        threading.Thread(target=upstream.serve_forever, daemon=True).start()

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
        ports = []
        for index in range(REPLICAS):
            port = free_port()
            store = {} if WITHOUT_STORE else {"TAKSI_STORE": f"postgres://taksi:{PASSWORD}@127.0.0.1:{pg_port}/postgres?sslmode=disable"}
            environment = dict(os.environ, **store,
                               TAKSI_UPSTREAM_API=f"http://127.0.0.1:{upstream.server_address[1]}", TAKSI_ACCESS_LOG="false",
                               TAKSI_THREADS="1", TAKSI_LOG_LEVEL="warning")
            log = open(os.path.join(work, f"replica-{index}.log"), "w")
            processes.append(subprocess.Popen(
                [BINARY, "--port", str(port), "--screens", screens, "--no-watch"], env=environment, stdout=log, stderr=log,
                cwd=work))
            ports.append(port)
        for port in ports:
            for _ in range(500):
                try:
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                    connection.request("GET", "/readyz")
                    if connection.getresponse().status == 200:
                        break
                except OSError:
                    time.sleep(0.02)
            else:
                sys.exit(f"replica on {port} did not start")

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

        calls = Upstream.calls
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
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        subprocess.run(as_postgres([f"{postgres_bin}/pg_ctl", "-D", data, "-m", "immediate", "stop"]),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
