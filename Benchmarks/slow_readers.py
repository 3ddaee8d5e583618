#!/usr/bin/env python3
"""The slow-reader flood: many connections pipeline requests as fast as the server accepts them
and never read a byte, while fresh clients keep asking for the same URL. Prints one Markdown
table row: fresh requests answered, their median and slowest latency, and the server's peak RSS.

    slow_readers.py --url http://127.0.0.1:8080/screens/menu --pid 1234 [--connections 300] [--seconds 10]
"""
import argparse
import multiprocessing
import os
import selectors
import socket
import statistics
import sys
import threading
import time
from urllib.parse import urlsplit


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def fetch(host, port, request, timeout):
    """One fresh connection, one request; the seconds until the whole response arrived, or None."""
    start = time.monotonic()
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(request)
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    return None
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(body) < length:
                chunk = sock.recv(65536)
                if not chunk:
                    return None
                body += chunk
            return time.monotonic() - start if head.startswith(b"HTTP/1.1 200") else None
    except OSError:
        return None


def flood(host, port, request, connections, seconds, sent):
    """Opens the connections and pipelines requests into them until `seconds` pass, never reading.
    Runs in its own process, at a lower priority, so the probes' timings are not the flood's."""
    os.nice(10)
    burst = request * 256
    selector = selectors.DefaultSelector()
    for _ in range(connections):
        sock = socket.socket()
        # A bounded send buffer: otherwise the kernel buffers megabytes per connection on the
        # flood's side, and the machine-wide TCP memory pressure delays every server's new
        # connections by a SYN retransmission (1 s), which measures the kernel, not the server.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
        sock.connect((host, port))
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_WRITE)
    stop = time.monotonic() + seconds
    total = 0
    while time.monotonic() < stop:
        for key, _ in selector.select(timeout=0.1):
            try:
                total += key.fileobj.send(burst)
            except BlockingIOError:
                pass
            except OSError:
                selector.unregister(key.fileobj)
    sent.value = total
    time.sleep(1)  # keep the connections open until the last probes are done
    for key in list(selector.get_map().values()):
        key.fileobj.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--connections", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--label", default="server")
    parser.add_argument("--result", help="also write 'answered total median_ms slowest_ms peak_rss_mb' to this file")
    args = parser.parse_args()
    url = urlsplit(args.url)
    host, port = url.hostname, url.port
    request = f"GET {url.path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()

    sent = multiprocessing.Value("d", 0.0)
    flooder = multiprocessing.Process(target=flood, args=(host, port, request, args.connections, args.seconds, sent))
    flooder.start()
    time.sleep(1)  # let the flood build up before measuring
    stop = time.monotonic() + args.seconds - 1
    peak = [rss_mb(args.pid)]
    latencies, failures = [], 0

    def sample():
        while time.monotonic() < stop + 0.5:
            peak[0] = max(peak[0], rss_mb(args.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    while time.monotonic() < stop:
        latency = fetch(host, port, request, timeout=5)
        if latency is None:
            failures += 1
        else:
            latencies.append(latency * 1000)
        time.sleep(0.02)
    sampler.join()
    flooder.join()

    total = len(latencies) + failures
    median = statistics.median(latencies) if latencies else float("nan")
    slowest = max(latencies) if latencies else float("nan")
    print(f"| {args.label} | {len(latencies)}/{total} | {median:.1f} | {slowest:.1f} | {peak[0]:.1f} |", flush=True)
    if args.result:
        with open(args.result, "w") as result:
            result.write(f"{len(latencies)} {total} {median:.3f} {slowest:.3f} {peak[0]:.1f}\n")
    print(f"{args.label}: flood sent {sent.value / 1e6:.1f} MB of pipelined requests", file=sys.stderr)


if __name__ == "__main__":
    main()
