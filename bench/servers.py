"""The servers under test — reachd and its peers (nginx static, nginx + nchan) — and raw HTTP
helpers that talk to them inside their namespaces. Stdlib only."""

from __future__ import annotations

import os
import re
import resource
import select
import socket
import subprocess
import time

import nsutil
from nsutil import Namespace

PORT = 8080


def http_request(ns: Namespace, port: int, method: str, path: str, body: bytes = b"",
                 headers: dict[str, str] | None = None, timeout: float = 5) -> tuple[int, dict, bytes]:
    """One request on a fresh connection (Connection: close) to 127.0.0.1:port inside `ns`."""
    with nsutil.inside(ns):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(("127.0.0.1", port))
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
        for k, v in (headers or {}).items():
            lines.append(f"{k}: {v}")
        if body:
            lines.append(f"Content-Length: {len(body)}")
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        data = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        return parse_response(data)
    finally:
        sock.close()


def parse_response(data: bytes) -> tuple[int, dict, bytes]:
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        out, rest = b"", body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            out += rest[:size]
            rest = rest[size + 2:]
        body = out
    return status, headers, body


def wait_http(ns: Namespace, port: int, path: str, want: int = 200, timeout: float = 20,
              proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before answering {path}")
        try:
            status, _, _ = http_request(ns, port, "GET", path, timeout=2)
            if status == want:
                return
            last = status
        except OSError as error:
            last = error
        time.sleep(0.02)
    raise TimeoutError(f"{path} on port {port} did not answer {want} in {timeout}s (last: {last})")


class Reachd:
    name = "reachd"

    def __init__(self, binary: str, ns: Namespace, workdir: str, port: int = PORT, heartbeat: float = 3600,
                 max_connections: int = 12000, extra: list[str] | None = None, log_name: str = "reachd") -> None:
        self.ns, self.port = ns, port
        self.log_path = os.path.join(workdir, f"{log_name}-{ns.name}.log")
        self.log = open(self.log_path, "ab")
        cmd = [binary, "--host", "127.0.0.1", "--port", str(port), "--heartbeat", str(heartbeat),
               "--max-connections", str(max_connections), *(extra or [])]
        self.proc = ns.popen(*cmd, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.pid = self.proc.pid

    def wait_ready(self, timeout: float = 20) -> None:
        wait_http(self.ns, self.port, "/status", timeout=timeout, proc=self.proc)

    @property
    def measured_pid(self) -> int:
        return self.pid

    def status_doc(self) -> bytes:
        status, _, body = http_request(self.ns, self.port, "GET", "/status")
        if status != 200:
            raise RuntimeError(f"/status answered {status}")
        return body

    def sequence(self) -> int:
        return int(re.search(rb'"sequence":(\d+)', self.status_doc()).group(1))

    def stop(self) -> int | None:
        code = nsutil.stop(self.proc, timeout=15)
        self.log.close()
        return code


NGINX_MODULE = "/usr/lib/nginx/modules/ngx_nchan_module.so"


class Nginx:
    """nginx as its own process (never the system service): config and state under a temp
    prefix, one worker, listening on 127.0.0.1 inside `ns`. Serves `static_body` at /status,
    and with `nchan` an EventSource subscriber at /events and a publisher at /pub."""

    def __init__(self, ns: Namespace, workdir: str, static_body: bytes = b"{}", nchan: bool = False,
                 port: int = PORT) -> None:
        self.ns, self.port, self.nchan = ns, port, nchan
        self.name = "nchan" if nchan else "nginx"
        self.prefix = os.path.join(workdir, f"nginx-{ns.name}")
        os.makedirs(self.prefix, exist_ok=True)
        with open(os.path.join(self.prefix, "status.json"), "wb") as f:
            f.write(static_body)
        conf = os.path.join(self.prefix, "nginx.conf")
        with open(conf, "w") as f:
            f.write(self.config())
        self.log = open(os.path.join(self.prefix, "stderr.log"), "ab")
        self.proc = ns.popen("nginx", "-p", self.prefix, "-c", conf, "-e", os.path.join(self.prefix, "error.log"),
                             stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.pub: socket.socket | None = None

    def config(self) -> str:
        """The whole file: the same frame for every nginx of the bench, `http_block` inside it."""
        p = self.prefix
        nofile = min(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 40000)
        return f"""{'load_module ' + NGINX_MODULE + ';' if self.nchan else ''}
daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile {nofile};
pid {p}/nginx.pid;
error_log {p}/error.log warn;
events {{
    worker_connections {nofile - 200};
    use epoll;
}}
http {{
    access_log off;
    client_body_temp_path {p}/client_body;
    proxy_temp_path {p}/proxy;
    fastcgi_temp_path {p}/fastcgi;
    uwsgi_temp_path {p}/uwsgi;
    scgi_temp_path {p}/scgi;
    keepalive_timeout 75s;
{self.http_block()}
}}
"""

    def http_block(self) -> str:
        """The `/status` peer: the static document, and with `nchan` its EventSource and publisher."""
        p = self.prefix
        nchan_locations = """
        location = /events {
            nchan_subscriber eventsource;
            nchan_channel_id reachd;
            nchan_eventsource_event status;
            nchan_message_buffer_length 1;
        }
        location = /pub {
            nchan_publisher;
            nchan_channel_id reachd;
            nchan_message_buffer_length 1;
        }""" if self.nchan else ""
        return f"""    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000000;
    default_type application/json;
    server {{
        listen 127.0.0.1:{self.port} backlog=4096;
        location = /status {{
            alias {p}/status.json;
        }}{nchan_locations}
    }}"""

    def wait_ready(self, timeout: float = 20) -> None:
        wait_http(self.ns, self.port, "/status", timeout=timeout, proc=self.proc)

    @property
    def measured_pid(self) -> int:
        """The one worker (the master only supervises)."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            kids = nsutil.children(self.proc.pid)
            if kids:
                return kids[0]
            time.sleep(0.05)
        raise RuntimeError("nginx has no worker process")

    # -- nchan publisher: one keep-alive connection, timed from the POST's response

    def publish(self, body: bytes) -> tuple[int, int, int, int]:
        """POSTs `body`; returns monotonic and realtime ns before sending, then monotonic and
        realtime ns when the whole response has been read."""
        if self.pub is None:
            with nsutil.inside(self.ns):
                self.pub = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.pub.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.pub.settimeout(10)
            self.pub.connect(("127.0.0.1", self.port))
        request = (f"POST /pub HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   f"Accept: text/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
        start, start_real = time.monotonic_ns(), time.time_ns()
        self.pub.sendall(request)
        data = b""
        while True:
            chunk = self.pub.recv(65536)
            if not chunk:
                raise RuntimeError("nchan publisher connection closed")
            data += chunk
            head, sep, rest = data.partition(b"\r\n\r\n")
            if not sep:
                continue
            match = re.search(rb"(?i)content-length:\s*(\d+)", head)
            if match and len(rest) >= int(match.group(1)):
                break
            if not match and b"chunked" in head.lower() and rest.endswith(b"0\r\n\r\n"):
                break
        end_mono, end_real = time.monotonic_ns(), time.time_ns()
        status = int(head.split()[1])
        if status not in (201, 202):
            raise RuntimeError(f"nchan publish answered {status}: {data[:200]!r}")
        return start, start_real, end_mono, end_real

    def stop(self) -> int | None:
        if self.pub is not None:
            self.pub.close()
        code = nsutil.stop(self.proc, timeout=15)
        self.log.close()
        return code


def versions() -> dict:
    def out(*cmd: str) -> str:
        try:
            r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=10)
            return (r.stdout + r.stderr).strip()
        except (OSError, subprocess.SubprocessError):
            return "unavailable"

    def deb(pkg: str) -> str:
        return out("dpkg-query", "-W", "-f=${Version}", pkg) or "not installed"

    return {
        "nginx": out("nginx", "-v").replace("nginx version: nginx/", ""),
        "libnginx-mod-nchan": deb("libnginx-mod-nchan"),
        "wrk": deb("wrk"),
        "prometheus-blackbox-exporter": deb("prometheus-blackbox-exporter"),
        "prometheus": deb("prometheus"),
        "libmicrohttpd": deb("libmicrohttpd12") or deb("libmicrohttpd12t64"),
        "swift": out("swift", "--version").splitlines()[0] if out("swift", "--version") else "unavailable",
    }


def read_lines_until(procs: list[subprocess.Popen], buffers: dict, want, timeout: float) -> bool:
    """Reads stdout lines from `procs` (non-blocking, into `buffers[pid]` lists) until
    `want(buffers)` is true or `timeout` passes."""
    deadline = time.monotonic() + timeout
    fds = {p.stdout.fileno(): p for p in procs if p.stdout}
    for fd in fds:
        os.set_blocking(fd, False)
    partial = buffers.setdefault("_partial", {})
    while True:
        if want(buffers):
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        ready, _, _ = select.select(list(fds), [], [], min(remaining, 0.5))
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                continue
            proc = fds[fd]
            if not data:
                fds.pop(fd)
                if not fds:
                    return want(buffers)
                continue
            text = partial.get(proc.pid, "") + data.decode(errors="replace")
            *lines, partial[proc.pid] = text.split("\n")
            buffers.setdefault(proc.pid, []).extend(lines)


class Floor:
    """`bench/floor.c`: an SSE server that only writes — the physical floor of fan-out on this
    machine for its number of threads. A change goes in on stdin; "sent N" comes back once every
    stream was written."""

    def __init__(self, binary: str, ns: Namespace, workdir: str, threads: int, port: int = PORT) -> None:
        self.ns, self.port, self.threads = ns, port, threads
        self.name = f"floor{threads}"
        self.log = open(os.path.join(workdir, f"floor-{ns.name}.log"), "ab")
        self.proc = ns.popen(binary, "-p", str(port), "-t", str(threads), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=self.log)

    def wait_ready(self, timeout: float = 20) -> None:
        wait_http(self.ns, self.port, "/status", timeout=timeout, proc=self.proc)

    @property
    def measured_pid(self) -> int:
        return self.proc.pid

    def publish(self, body: bytes) -> tuple[int, int, int, int]:
        """Hands `body` over; returns monotonic and realtime ns before, then after "sent"."""
        start, start_real = time.monotonic_ns(), time.time_ns()
        self.proc.stdin.write(b"%d\n" % len(body) + body)
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line.startswith(b"sent "):
            raise RuntimeError(f"floor answered {line!r}")
        return start, start_real, time.monotonic_ns(), time.time_ns()

    def stop(self) -> int | None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        code = nsutil.stop(self.proc, timeout=5)
        self.log.close()
        return code
