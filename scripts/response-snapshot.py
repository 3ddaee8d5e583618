#!/usr/bin/env python3
"""Writes every answer the server gives on the example screens, byte for byte, to one file, so a
change that should not alter what is served (a refactor, a faster path) can be checked:

    scripts/response-snapshot.py BINARY > before.txt
    ... change, build ...
    scripts/response-snapshot.py BINARY > after.txt && diff before.txt after.txt

Starts the server on a free port with the repository's config.json (its upstreams are files, so
the answers are the same on every run), sends a fixed list of raw requests (skeletons and data in
every variant, language and encoding, conditional requests, actions, links, the documents, and
malformed, oversized and pipelined requests) and prints each response with the values that change
from run to run (`Date`, generated request ids) blanked. Gzip bodies are printed decompressed.
"""
import gzip
import re
import socket
import sys

from example_server import binary_from, example_server


SCREENS = [
    "bikes/networks", "bikes/stations/bicing", "bikes/stations/velib", "bikes/stations/unknown-network",
    "home", "landing", "login", "newsletter", "repositories", "repositories/apple/swift-nio",
    "repositories/example/no-description", "repositories/nobody/nothing", "restaurants/sakura-ramen",
    "restaurants/la-table", "restaurants/missing", "nope", "bikes/stations/BAD!",
]

HEADER_SETS = [
    "",
    "Accept-Encoding: gzip\r\n",
    "Accept-Language: de-DE,de;q=0.9\r\n",
    "Accept-Language: pt\r\nAccept-Encoding: gzip, br\r\n",
    "X-Taksi-App-Version: 2.1.0\r\n",
    "X-Taksi-App-Version: 1.0\r\nX-Taksi-Alternative: compact\r\n",
    "X-Taksi-Device: device-1\r\n",
]


def requests():
    """Raw requests, in order."""
    out = []

    def get(target, headers="", method="GET"):
        out.append(f"{method} {target} HTTP/1.1\r\nHost: localhost\r\n{headers}\r\n".encode())

    def post(target, body, headers=""):
        data = body.encode()
        out.append(
            f"POST {target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n{headers}\r\n".encode() + data
        )

    for path in ["/screens", "/healthz", "/openapi.yaml", "/openapi.json", "/",
                 "/.well-known/apple-app-site-association", "/.well-known/assetlinks.json",
                 "/links?url=https%3A%2F%2Feats.example.com%2Frestaurants%2Fsakura-ramen",
                 "/links?url=nothing", "/preview", "/metrics-not-here"]:
        get(path)
    for screen in SCREENS:
        for headers in HEADER_SETS:
            get(f"/screens/{screen}", headers)
            get(f"/screens/{screen}/data", headers)
            get(f"/screens/{screen}/data?q=swift&page=2&city=x", headers)
        get(f"/screens/{screen}", method="HEAD")
        get(f"/screens/{screen}", method="DELETE")
        get(f"/screens/{screen}/data", "X-Taksi-Skeleton: 0000000000000000\r\n")
    get("/screens/home", 'If-None-Match: "nothing"\r\n')
    get("/screens/home?x=%ZZ")
    get("/screens/" + "a" * 9000)
    post("/screens/login/actions/submit", '{"email":"ada@example.com","password":"correct horse"}')
    post("/screens/login/actions/submit", '{"email":"nope","password":"x"}')
    post("/screens/login/actions/submit", "{not json")
    post("/screens/login/actions/nothing", "{}")
    post("/screens/newsletter/actions/subscribe", '{"email":"ada@example.com","frequency":"monthly"}')
    post("/screens/newsletter/actions/subscribe", '{"email":"ada@example.com"}', "Idempotency-Key: k-1\r\n")
    out.append(b"GET /screens/home HTTP/1.0\r\n\r\n")
    out.append(b"GET /screens/home HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
    out.append(b"BREW /screens/home HTTP/1.1\r\nHost: a\r\n\r\n")
    out.append(b"GET /screens/home HTTP/2.0\r\nHost: a\r\n\r\n")
    out.append(b"GET /screens/home HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999\r\n\r\n")
    out.append(b"GET /screens/home HTTP/1.1\r\nHost: a\r\nExpect: tea\r\n\r\n")
    out.append(b"not http at all\r\n\r\n")
    return out


def blank_varying(text):
    """`Date` and generated request ids blanked: what differs between two runs of the same server."""
    text = re.sub(rb"\r\nDate: [^\r]*", b"\r\nDate: -", text)
    return re.sub(rb"\r\nX-Request-Id: [0-9a-f]+-\d+", b"\r\nX-Request-Id: -", text)


def stable(response):
    """The response with the values that differ between runs blanked, gzip bodies decompressed."""
    head, _, body = response.partition(b"\r\n\r\n")
    head = blank_varying(head)
    if b"\r\nContent-Encoding: gzip" in head:
        try:
            body = b"[gzip] " + gzip.decompress(body)
        except OSError:
            body = b"[gzip, does not decompress] " + body
    return head + b"\r\n\r\n" + body


def exchange(port, request, to_close=False):
    """Sends one request on its own connection; reads its answer (to its length, or until the
    server closes or goes quiet)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(request)
        data = b""
        connection.settimeout(2 if to_close else 0.3)
        while True:
            head, separator, body = data.partition(b"\r\n\r\n")
            if separator and not to_close and not request.startswith(b"HEAD"):
                length = re.search(rb"\r\nContent-Length: (\d+)", head)
                if length and len(body) >= int(length.group(1)) and not head.startswith(b"HTTP/1.1 100"):
                    break
            try:
                chunk = connection.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            data += chunk
    return data


def main():
    with example_server(binary_from(sys.argv)) as port:
        batch = requests()
        # One at a time, and all of them pipelined on one connection.
        for request in batch:
            sys.stdout.buffer.write(b"=== " + request.split(b"\r\n", 1)[0] + b"\n")
            sys.stdout.buffer.write(stable(exchange(port, request)) + b"\n")
        safe = [r for r in batch if r.startswith(b"GET /screens/") and len(r) < 4000]
        sys.stdout.buffer.write(b"=== pipelined\n")
        closing = b"GET /screens/home HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        sys.stdout.buffer.write(blank_varying(exchange(port, b"".join(safe) + closing, to_close=True)) + b"\n")


if __name__ == "__main__":
    main()
