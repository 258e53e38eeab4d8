"""Shared fixtures and raw HTTP / SSE clients for reachd's black-box tests.

Everything here talks to a real reachd over real sockets. Clients are written on raw
sockets (not urllib) so the tests can see exactly what went over the wire: chunk framing,
the final zero-length chunk, resets versus clean EOF.
"""

from __future__ import annotations

import json
import os
import re
import resource
import select
import signal
import socket
import sys
import time
from collections import deque
from dataclasses import dataclass

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import load_report  # noqa: E402
import netns  # noqa: E402
from reachd_process import Reachd, reachd_binary  # noqa: E402

READY_FILE = "/tmp/reachd-server-ready"
ISO8601_MS_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
DEFAULT_TIMEOUT = 5.0


# --------------------------------------------------------------------------- pytest setup


def pytest_configure(config):
    config.addinivalue_line("markers", "netns: needs root to create Linux network namespaces")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    config.addinivalue_line("markers", "partial_failures: the contract of issue 18 (per family, DNS, one change "
                                       "→ one document); run as a group with -m partial_failures")


_NETNS_SUPPORT: tuple[bool, str] | None = None


def pytest_runtest_setup(item):
    global _NETNS_SUPPORT
    if not os.path.exists(reachd_binary()):
        pytest.skip(f"reachd binary not built: {reachd_binary()}")
    if item.get_closest_marker("netns"):
        if _NETNS_SUPPORT is None:
            _NETNS_SUPPORT = netns.netns_supported()
        ok, reason = _NETNS_SUPPORT
        if not ok:
            pytest.skip(reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
    load_report.outcome(item.nodeid, report.when, report.outcome, report.duration)


def pytest_sessionfinish(session, exitstatus):
    netns.cleanup_all()
    written = load_report.write(session.config.args)
    if written:
        print(f"\nreport written to {written}")


def raise_nofile(wanted: int = 20000) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(max(soft, wanted), hard) if hard != resource.RLIM_INFINITY else max(soft, wanted)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


# --------------------------------------------------------------------------- process fixtures


def _dump_on_failure(request, server: Reachd) -> None:
    failed = any(
        getattr(request.node, f"rep_{when}", None) is not None and getattr(request.node, f"rep_{when}").failed
        for when in ("setup", "call")
    )
    if failed:
        try:
            print(f"\n---- reachd output ({server.log_path}) ----\n{server.output()[-8000:]}")
        except OSError:
            pass


def start_reachd(*args: str, netns: str | None = None, env: dict | None = None) -> Reachd:
    server = Reachd(*args, netns=netns, env=env)
    try:
        server.wait_ready()
    except BaseException:
        server.terminate(signal.SIGKILL)
        raise
    return server


def stop_reachd(server: Reachd) -> None:
    if server.process.poll() is None:
        server.terminate(signal.SIGTERM, timeout=20)
    elif not server.log.closed:
        server.log.close()
    try:
        server.log_path.unlink()
    except OSError:
        pass


@pytest.fixture(scope="module")
def reachd_module():
    """One reachd on the host's 127.0.0.1, shared by a module's tests."""
    server = start_reachd()
    yield server
    stop_reachd(server)


@pytest.fixture
def reachd(reachd_module, request):
    """The module's reachd; fails the test if the process died during it."""
    assert reachd_module.process.poll() is None, f"reachd is not running: {reachd_module.output()}"
    yield reachd_module
    _dump_on_failure(request, reachd_module)


@pytest.fixture
def reachd_factory(request):
    """Start reachd processes (optionally in a namespace); all stopped at teardown."""
    servers: list[Reachd] = []

    def make(*args: str, netns: str | None = None, env: dict | None = None) -> Reachd:
        server = start_reachd(*args, netns=netns, env=env)
        servers.append(server)
        return server

    yield make
    for server in reversed(servers):
        _dump_on_failure(request, server)
        stop_reachd(server)


@pytest.fixture
def veth(request):
    """A namespace with a veth link (carrier up), 198.18.x.2/24 and a default route."""
    network = netns.VethNetwork()
    request.addfinalizer(network.delete)
    return network


@pytest.fixture
def bare_namespace(request):
    """A namespace with only its loopback: nothing is reachable."""
    ns = netns.Namespace()
    request.addfinalizer(ns.delete)
    return ns


# --------------------------------------------------------------------------- raw HTTP


@dataclass
class Response:
    status: int
    reason: str
    version: str
    headers: list[tuple[str, str]]
    body: bytes
    head_raw: bytes = b""
    chunked: bool = False

    def header(self, name: str, default: str | None = None) -> str | None:
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return default

    def header_all(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key.lower() == name.lower()]

    def json(self):
        return json.loads(self.body)

    @property
    def content_type(self) -> str:
        return (self.header("content-type") or "").split(";")[0].strip().lower()


class ConnectionClosed(Exception):
    """The peer closed (EOF) or reset the connection."""

    def __init__(self, how: str, partial: bytes = b""):
        super().__init__(how)
        self.how = how  # "eof" or "reset"
        self.partial = partial


def connect(port: int, host: str = "127.0.0.1", ns: str | None = None, timeout: float = DEFAULT_TIMEOUT,
            family: int = socket.AF_INET) -> socket.socket:
    sock = netns.socket_in(ns, family) if ns else socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


class Conn:
    """A raw HTTP/1.1 client connection with its own read buffer (pipelining-safe)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = b""

    @classmethod
    def open(cls, port: int, ns: str | None = None, timeout: float = DEFAULT_TIMEOUT, host: str = "127.0.0.1",
             family: int = socket.AF_INET) -> "Conn":
        return cls(connect(port, host=host, ns=ns, timeout=timeout, family=family))

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Conn":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def request(self, method: str, path: str, headers: dict | None = None, body: bytes = b"",
                host: str = "127.0.0.1") -> None:
        # One Host: a second one is malformed (RFC 9112 §3.2), so a given Host replaces the default.
        given = {key.lower() for key in (headers or {})}
        lines = [f"{method} {path} HTTP/1.1"] + ([] if "host" in given else [f"Host: {host}"])
        for key, value in (headers or {}).items():
            lines.append(f"{key}: {value}")
        if body:
            lines.append(f"Content-Length: {len(body)}")
        self.send(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)

    def _fill(self) -> None:
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            raise ConnectionClosed("reset", self.buf)
        if not data:
            raise ConnectionClosed("eof", self.buf)
        self.buf += data

    def read_until(self, delimiter: bytes, limit: int = 1 << 20) -> bytes:
        while delimiter not in self.buf:
            if len(self.buf) > limit:
                raise ValueError("response head too large")
            self._fill()
        index = self.buf.index(delimiter) + len(delimiter)
        data, self.buf = self.buf[:index], self.buf[index:]
        return data

    def read_exact(self, count: int) -> bytes:
        while len(self.buf) < count:
            self._fill()
        data, self.buf = self.buf[:count], self.buf[count:]
        return data

    def read_to_eof(self) -> bytes:
        try:
            while True:
                self._fill()
        except ConnectionClosed as closed:
            if closed.how == "reset":
                raise
        data, self.buf = self.buf, b""
        return data

    def read_head(self) -> Response:
        head = self.read_until(b"\r\n\r\n")
        lines = head[:-4].decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        code, _, reason = rest.partition(" ")
        headers = []
        for line in lines[1:]:
            key, _, value = line.partition(":")
            headers.append((key.strip(), value.strip()))
        return Response(int(code), reason, version, headers, b"", head_raw=head)

    def read_response(self, method: str = "GET") -> Response:
        response = self.read_head()
        if method == "HEAD" or response.status in (204, 304) or 100 <= response.status < 200:
            return response
        encoding = (response.header("transfer-encoding") or "").lower()
        if "chunked" in encoding:
            response.chunked = True
            body = b""
            while True:
                size_line = self.read_until(b"\r\n")
                size = int(size_line.split(b";")[0].strip(), 16)
                if size == 0:
                    while self.read_until(b"\r\n") != b"\r\n":
                        pass
                    break
                body += self.read_exact(size)
                assert self.read_exact(2) == b"\r\n", "chunk not followed by CRLF"
            response.body = body
        elif response.header("content-length") is not None:
            response.body = self.read_exact(int(response.header("content-length")))
        else:
            response.body = self.read_to_eof()
        return response

    def get(self, path: str, method: str = "GET", headers: dict | None = None) -> Response:
        self.request(method, path, headers)
        return self.read_response(method)


def http(port: int, method: str, path: str, headers: dict | None = None, ns: str | None = None,
         timeout: float = DEFAULT_TIMEOUT, body: bytes = b"") -> Response:
    """One request on a fresh connection."""
    with Conn.open(port, ns=ns, timeout=timeout) as conn:
        conn.request(method, path, {"Connection": "close", **(headers or {})}, body=body)
        return conn.read_response(method)


def get_status(port: int, ns: str | None = None) -> dict:
    response = http(port, "GET", "/status", ns=ns)
    assert response.status == 200, response
    return response.json()


def outcome_of(conn: Conn, method: str = "GET", timeout: float = DEFAULT_TIMEOUT) -> tuple[str, Response | None]:
    """Read one response or notice a close. Returns ("response", r) or ("closed", None).

    A socket timeout propagates: a hang is a failure.
    """
    conn.sock.settimeout(timeout)
    try:
        return "response", conn.read_response(method)
    except ConnectionClosed:
        return "closed", None
    except (ConnectionResetError, BrokenPipeError):
        return "closed", None


# --------------------------------------------------------------------------- SSE


@dataclass
class Event:
    id: str | None
    event: str
    data: str
    received_at: float

    @property
    def doc(self) -> dict:
        return json.loads(self.data)


class ChunkDecoder:
    """Incremental HTTP/1.1 chunked transfer decoding; keeps the raw tail for inspection."""

    def __init__(self) -> None:
        self.buf = b""
        self.state = "size"
        self.remaining = 0
        self.done = False
        self.raw_tail = b""
        self.raw_total = 0

    def feed(self, data: bytes) -> bytes:
        self.raw_tail = (self.raw_tail + data)[-64:]
        self.raw_total += len(data)
        self.buf += data
        out = bytearray()
        while True:
            if self.state == "size":
                if b"\r\n" not in self.buf:
                    if len(self.buf) > 1024:
                        raise ValueError(f"bad chunk size line: {self.buf[:80]!r}")
                    break
                line, self.buf = self.buf.split(b"\r\n", 1)
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    self.state = "trailer"
                else:
                    self.remaining = size
                    self.state = "data"
            elif self.state == "data":
                if not self.buf:
                    break
                take = self.buf[: self.remaining]
                out += take
                self.buf = self.buf[len(take):]
                self.remaining -= len(take)
                if self.remaining == 0:
                    self.state = "crlf"
            elif self.state == "crlf":
                if len(self.buf) < 2:
                    break
                if self.buf[:2] != b"\r\n":
                    raise ValueError(f"chunk data not followed by CRLF: {self.buf[:20]!r}")
                self.buf = self.buf[2:]
                self.state = "size"
            elif self.state == "trailer":
                if b"\r\n" not in self.buf:
                    break
                line, self.buf = self.buf.split(b"\r\n", 1)
                if line == b"":
                    self.state = "done"
                    self.done = True
            else:  # done
                if self.buf:
                    raise ValueError(f"bytes after the final chunk: {self.buf[:40]!r}")
                break
        return bytes(out)


class SSEReader:
    """Incremental parser of one HTTP response carrying an SSE stream.

    feed() takes raw socket bytes: the response head, then chunked (or raw) body.
    """

    def __init__(self) -> None:
        self.head_buf = b""
        self.response: Response | None = None
        self.chunks: ChunkDecoder | None = None
        self.text = b""  # the decoded body so far
        self.pending = b""  # undecoded line remainder
        self.items: list[tuple] = []  # ("retry", int) / ("comment", str) / ("event", Event), in order
        self.events: deque[Event] = deque()  # undelivered events
        self.all_events: list[Event] = []
        self.comments: list[tuple[str, float]] = []
        self.retries: list[int] = []
        self._cur: dict = {}
        self.eof = False
        self.reset = False

    @property
    def done(self) -> bool:
        return self.chunks is not None and self.chunks.done

    def feed(self, data: bytes, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if self.response is None:
            self.head_buf += data
            if b"\r\n\r\n" not in self.head_buf:
                return
            head, data = self.head_buf.split(b"\r\n\r\n", 1)
            conn = Conn(None)  # type: ignore[arg-type]
            conn.buf = head + b"\r\n\r\n"
            self.response = conn.read_head()
            if "chunked" in (self.response.header("transfer-encoding") or "").lower():
                self.response.chunked = True
                self.chunks = ChunkDecoder()
        body = self.chunks.feed(data) if self.chunks is not None else data
        if body:
            self.text += body
            self._parse(body, now)

    def _parse(self, body: bytes, now: float) -> None:
        self.pending += body
        while b"\n" in self.pending:
            line, self.pending = self.pending.split(b"\n", 1)
            if line.endswith(b"\r"):
                line = line[:-1]
            text = line.decode("utf-8")
            if text == "":
                if "data" in self._cur or "event" in self._cur or "id" in self._cur:
                    event = Event(self._cur.get("id"), self._cur.get("event", "message"),
                                  "\n".join(self._cur.get("data", [])), now)
                    self.events.append(event)
                    self.all_events.append(event)
                    self.items.append(("event", event))
                self._cur = {}
                continue
            if text.startswith(":"):
                comment = text[1:].lstrip(" ")
                self.comments.append((comment, now))
                self.items.append(("comment", comment))
                continue
            name, _, value = text.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if name == "data":
                self._cur.setdefault("data", []).append(value)
            elif name == "retry":
                self.retries.append(int(value))
                self.items.append(("retry", int(value)))
            elif name in ("id", "event"):
                self._cur[name] = value


class SSEClient:
    """A blocking SSE client over one raw socket."""

    def __init__(self, port: int, path: str = "/events", headers: dict | None = None, ns: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, sock: socket.socket | None = None):
        self.sock = sock if sock is not None else connect(port, ns=ns, timeout=timeout)
        self.sock.settimeout(timeout)
        self.reader = SSEReader()
        self.connected_at = time.monotonic()
        lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", "Accept: text/event-stream"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "SSEClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def response(self) -> Response | None:
        return self.reader.response

    def _recv(self, deadline: float) -> bool:
        """Read once; False on EOF. Raises TimeoutError past `deadline`."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("SSE read timed out")
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            raise TimeoutError("SSE read timed out") from None
        except ConnectionResetError:
            self.reader.reset = True
            raise
        if not data:
            self.reader.eof = True
            return False
        self.reader.feed(data)
        return True

    def read_head(self, timeout: float = DEFAULT_TIMEOUT) -> Response:
        deadline = time.monotonic() + timeout
        while self.reader.response is None:
            if not self._recv(deadline):
                raise ConnectionClosed("eof", self.reader.head_buf)
        return self.reader.response

    def next_event(self, timeout: float = DEFAULT_TIMEOUT) -> Event:
        deadline = time.monotonic() + timeout
        while not self.reader.events:
            if self.reader.eof or self.reader.done:
                raise ConnectionClosed("eof", self.reader.text)
            if not self._recv(deadline):
                raise ConnectionClosed("eof", self.reader.text)
        return self.reader.events.popleft()

    def wait_for(self, predicate, timeout: float = DEFAULT_TIMEOUT) -> Event:
        """The next status event whose document satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no matching event within {timeout}s; got {[e.data for e in self.reader.all_events][-3:]}")
            event = self.next_event(remaining)
            if event.event == "status" and predicate(event.doc):
                return event

    def wait_comment(self, timeout: float = DEFAULT_TIMEOUT) -> tuple[str, float]:
        deadline = time.monotonic() + timeout
        seen = len(self.reader.comments)
        while len(self.reader.comments) <= seen:
            if not self._recv(deadline):
                raise ConnectionClosed("eof", self.reader.text)
        return self.reader.comments[seen]

    def read_to_end(self, timeout: float = DEFAULT_TIMEOUT) -> str:
        """Read until EOF. Returns "eof" (clean) or "reset"; raises TimeoutError on a hang."""
        deadline = time.monotonic() + timeout
        try:
            while self._recv(deadline):
                pass
        except ConnectionResetError:
            return "reset"
        return "eof"


def drain(sock: socket.socket) -> None:
    """Discard whatever is readable now without blocking."""
    while True:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return
        try:
            if not sock.recv(65536):
                return
        except OSError:
            return


def wait_until(predicate, timeout: float, interval: float = 0.02, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{message} not met within {timeout}s")
        time.sleep(interval)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def check_status_document(doc: dict) -> None:
    """The contract of the status document (docs/status-document.md and openapi.yaml), field by field."""
    for key in ("state", "isReachable", "ipv4", "ipv6", "transport", "isDataMetered", "interfaces",
                "sequence", "changedAt"):
        assert key in doc, f"missing {key!r} in {doc}"
    assert doc["state"] in ("unknown", "reachable", "unreachable"), doc["state"]
    assert doc["isReachable"] is (doc["state"] == "reachable")
    assert isinstance(doc["ipv4"], bool) and isinstance(doc["ipv6"], bool)
    if doc["state"] != "unknown":
        assert doc["isReachable"] == (doc["ipv4"] or doc["ipv6"]), doc
    assert set(("wifi", "cellular", "ethernet", "other")) <= set(doc["transport"]), doc["transport"]
    assert all(isinstance(doc["transport"][k], bool) for k in ("wifi", "cellular", "ethernet", "other"))
    assert isinstance(doc["isDataMetered"], bool)
    assert isinstance(doc["sequence"], int) and not isinstance(doc["sequence"], bool) and doc["sequence"] >= 0
    assert isinstance(doc["changedAt"], str) and ISO8601_MS_Z.match(doc["changedAt"]), doc["changedAt"]
    assert isinstance(doc["interfaces"], list)
    for interface in doc["interfaces"]:
        for key in ("name", "index", "transport", "kind", "operState", "isDefaultRoute", "addresses"):
            assert key in interface, f"interface lacks {key!r}: {interface}"
        assert isinstance(interface["name"], str) and interface["name"]
        assert isinstance(interface["index"], int) and interface["index"] > 0
        assert interface["transport"] in ("wifi", "cellular", "ethernet", "other"), interface
        assert interface["kind"] is None or isinstance(interface["kind"], str)
        assert isinstance(interface["operState"], str)
        assert isinstance(interface["isDefaultRoute"], bool)
        assert isinstance(interface["addresses"], list)
        assert all(isinstance(a, str) and "/" in a for a in interface["addresses"]), interface["addresses"]


def interface_named(doc: dict, name: str) -> dict | None:
    for interface in doc["interfaces"]:
        if interface["name"] == name:
            return interface
    return None
