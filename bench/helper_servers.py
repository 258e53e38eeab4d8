"""The small Python servers the probes meet in a namespace (the targets' HTTP server, the
connectivity check's server) and how to ask any helper server for its counters: what reachd sent
is counted on the far side.
"""

from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import time

import nsutil
from nsutil import Namespace


TARGET_SERVER = r"""
import http.server, json, signal, socket, socketserver, sys, threading
# SIGUSR1 prints the requests answered so far by the client's family (one JSON line).
counts = {"ipv4": 0, "ipv6": 0}
lock = threading.Lock()
def report(*_):
    with lock:
        line = json.dumps(counts)
    print(line, flush=True)
signal.signal(signal.SIGUSR1, report)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with lock:
            counts["ipv4" if "." in self.client_address[0] else "ipv6"] += 1
        self.send_response(204); self.end_headers()
    def log_message(self, *a): pass
bind = sys.argv[1]
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True; allow_reuse_address = True; request_queue_size = 1024
    address_family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    def server_bind(self):
        if self.address_family == socket.AF_INET6:
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # "::" takes both families
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "target", self.server_address[1]  # no getfqdn: no lookup
S((bind, 8080), H).serve_forever()
"""


CHECK_SERVER = r"""
import http.server, json, signal, socketserver, sys, threading
# A connectivity check's server: 204 on /generate_204, 404 elsewhere, on ADDRESS:PORT (IPv4).
# SIGUSR1 prints the check requests answered so far by the client's address (one JSON line): which
# uplink each came through.
counts = {}
lock = threading.Lock()
def report(*_):
    with lock:
        line = json.dumps(counts)
    print(line, flush=True)
signal.signal(signal.SIGUSR1, report)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/generate_204":
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
        with lock:
            counts[self.client_address[0]] = counts.get(self.client_address[0], 0) + 1
        self.send_response(204); self.end_headers()
    def log_message(self, *a): pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True; allow_reuse_address = True; request_queue_size = 1024
    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "check", self.server_address[1]  # no getfqdn: no lookup
S((sys.argv[1], int(sys.argv[2])), H).serve_forever()
"""


def ask_counts(proc: subprocess.Popen, timeout: float = 3) -> dict | None:
    """A helper server's counters: SIGUSR1, then the JSON line it prints."""
    if proc.poll() is not None:
        return None
    proc.send_signal(signal.SIGUSR1)
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        return None
    line = proc.stdout.readline()
    return json.loads(line) if line.strip() else None


def wait_listening(ns: Namespace, host: str, port: int, timeout: float = 10) -> None:
    """Until a TCP connection from `ns` to host:port succeeds (a helper server is up)."""
    deadline = time.monotonic() + timeout
    while True:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with nsutil.inside(ns):
            sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(1)
        try:
            sock.connect((host, port))
            return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on {host}:{port} after {timeout}s")
            time.sleep(0.02)
        finally:
            sock.close()
