"""The server over the example screens, for the scripts that check what it answers
(check-docs.py, response-snapshot.py): a free port, the repository's config.json, no reloads and
no access log; it is stopped when the block ends. project_server does the same in another folder,
with that folder's config.json.

    with example_server(binary) as port:
        ...
"""
import contextlib
import os
import socket
import subprocess
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def binary_from(argv):
    """The server binary given on the command line, else the debug build."""
    return argv[1] if len(argv) > 1 else os.path.join(ROOT, ".build", "debug", "taksi-server")


def example_server(binary):
    """The server on the example screens."""
    return project_server(binary, ROOT)


@contextlib.contextmanager
def project_server(binary, folder):
    """Starts the server in `folder`, waits until it answers /healthz, yields its port, stops it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [binary, "serve", "--port", str(port), "--no-watch", "--no-access-log"], cwd=folder,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(500):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.02)
        yield port
    finally:
        server.terminate()
        server.wait()
