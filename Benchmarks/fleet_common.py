"""What the fleet benchmarks share: a throwaway PostgreSQL cluster, an upstream that counts keyed
calls, and taksi-server replicas as processes. Imported by fleet_submits.py and fleet_rollout.py."""
import glob
import http.client
import http.server
import json
import os
import random
import shutil
import socket
import subprocess
import threading
import time
import uuid


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_postgres(command):
    return ["runuser", "-u", "postgres", "--"] + command if os.getuid() == 0 else command


class Database:
    """A PostgreSQL cluster in `work`, password authentication, on a free port."""

    def __init__(self, work):
        self.bin = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
        self.data = os.path.join(work, "pg")
        self.password = "bench-" + uuid.uuid4().hex[:8]
        os.makedirs(self.data)
        password_file = os.path.join(work, "password")
        with open(password_file, "w") as f:
            f.write(self.password)
        if os.getuid() == 0:
            shutil.chown(self.data, "postgres")
            shutil.chown(password_file, "postgres")
        subprocess.run(
            as_postgres([f"{self.bin}/initdb", "-D", self.data, "-U", "taksi", f"--pwfile={password_file}",
                         "--auth=scram-sha-256", "--no-sync"]), check=True, stdout=subprocess.DEVNULL)
        self.port = free_port()
        self.start()

    @property
    def url(self):
        return f"postgres://taksi:{self.password}@127.0.0.1:{self.port}/postgres?sslmode=disable"

    def start(self):
        subprocess.run(
            as_postgres([f"{self.bin}/pg_ctl", "-D", self.data, "-l", os.path.join(self.data, "log"), "-w",
                         "-o", f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off", "start"]),
            check=True, stdout=subprocess.DEVNULL)

    def stop(self):
        subprocess.run(as_postgres([f"{self.bin}/pg_ctl", "-D", self.data, "-m", "immediate", "stop"]),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Upstream(http.server.ThreadingHTTPServer):
    """Answers every POST with 201 after 0 to `delay` seconds, counting calls by Idempotency-Key."""
    daemon_threads = True

    def __init__(self, delay=0.3):
        self.calls = {}
        self.lock = threading.Lock()
        self.delay = delay
        super().__init__(("127.0.0.1", 0), UpstreamHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"


class UpstreamHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        key = self.headers.get("Idempotency-Key", "-")
        with self.server.lock:
            self.server.calls[key] = self.server.calls.get(key, 0) + 1
            number = sum(self.server.calls.values())
        time.sleep(random.uniform(0, self.server.delay))
        body = json.dumps({"id": str(number)}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def start_replicas(binary, count, work, environment, arguments, first_index=0):
    """`count` servers, each on a free port, logging to work/replica-N.log; their ports and processes."""
    ports, processes = [], []
    for index in range(first_index, first_index + count):
        port = free_port()
        log = open(os.path.join(work, f"replica-{index}.log"), "w")
        env = dict(os.environ, TAKSI_ACCESS_LOG="false", TAKSI_THREADS="1", TAKSI_LOG_LEVEL="warning",
                   HOSTNAME=f"replica-{index}", **environment)
        processes.append(subprocess.Popen([binary, "--port", str(port), "--no-watch"] + arguments, env=env, stdout=log,
                                          stderr=log, cwd=work))
        ports.append(port)
    for port in ports:
        deadline = time.time() + 120
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                connection.request("GET", "/readyz")
                if connection.getresponse().status == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                raise SystemExit(f"replica on {port} did not start; see its log in {work}")
            time.sleep(0.05)
    return ports, processes


def stop_replicas(processes):
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def request(port, method, path, headers=None, body=None):
    """(status, headers as a dict, body bytes); status 0 when the connection failed."""
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        answer = (response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        connection.close()
        return answer
    except OSError:
        return (0, {}, b"")


def clean_up(processes, database, work):
    """Stops the replicas and the database, and removes the scratch folder."""
    stop_replicas(processes)
    if database:
        database.stop()
    shutil.rmtree(work, ignore_errors=True)
