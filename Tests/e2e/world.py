"""A small outside world for reachd's targets and connectivity check, built in namespaces.

    client ns (reachd runs here)                gateway ns (the "internet")
    ┌──────────────────────────────┐  veth     ┌──────────────────────────────────────────┐
    │ lo 127.0.0.1                 │           │ 198.18.O.1   dnsmasq :53 (the resolver)  │
    │ <link> 198.18.O.2/24 ────────┼───────────┼─ <gateway_link> 198.18.O.1/24             │
    │ default via 198.18.O.1       │           │ lo: 198.19.O.1–127/32 (service addresses) │
    │ unreachable 198.19.O.99/32   │           │   198.19.O.53  second dnsmasq             │
    │ /etc/netns/<client>/resolv.conf          │   198.19.O.54  a DNS server that never    │
    │   → nameserver 198.18.O.1    │           │                answers (silent UDP)       │
    └──────────────────────────────┘           │ blackhole 198.19.O.128/25: SYNs vanish    │
                                               │ HTTP / HTTPS / TCP servers on 0.0.0.0     │
                                               └──────────────────────────────────────────┘

Addresses come only from 198.18.0.0/15 and nothing leaves the two namespaces: the gateway
has no other link and no default route. `ip netns exec <client>` bind-mounts
`/etc/netns/<client>/resolv.conf` over `/etc/resolv.conf`, so reachd resolves through the
gateway's dnsmasq; `set_nameservers()` rewrites that file *in place* (a bind mount follows the
inode, not the name).

Names the primary dnsmasq knows (`--local=/test/`: it is authoritative for `.test`, so a name
without IPv6 answers AAAA with NOERROR/no data, as a real server does):
    db.test        → 198.19.O.10           (second dnsmasq: 198.19.O.11)
    many.test      → 198.19.O.{100,21,9,3} (configured unsorted on purpose)
    silent.test    → 198.19.O.130          (inside the dropped range)
    noroute.test   → 198.19.O.99           (the client has an `unreachable` route to it)
    mixed.test     → 198.19.O.99 and .100  (the first has no route, the second has)
    dual.test      → 198.19.O.10 and 2001:db8::10 (the client has no IPv6 route)
    fifty.test     → 50 addresses in the dropped range (198.19.O.188–237)
    secure.test    → 198.19.O.10           (the name the trusted TLS certificate carries)
    nx.test        → NXDOMAIN
    moved.test     → NXDOMAIN              (second dnsmasq: 198.19.O.12)

Servers are plain Python threads whose sockets were created inside the gateway namespace
(`netns.socket_in`), so a test switches what they answer with one assignment.

API (import the fixtures into a test module: `from world import world, reachd_in`):
    world                      fixture: a fresh World, torn down in every outcome
    reachd_in(world, *args, env=, trust_test_ca=)   fixture: reachd in the client namespace
    reachd_in.many(world, [args], [args], ...)      several at once (their start-up overlaps)
    start_reachd_in(world, *args)                   the same without a fixture (caller stops it)
    World: client, gateway (netns.Namespace), link, gateway_link, client_ip, gateway_ip,
           db_ip, db2_ip, moved_ip, many_ips, noroute_ip, silent_ip, dns2_ip, dns_silent_ip,
           svc(n), dropped(i), resolv_path, set_nameservers(*ips, options=),
           server(port=0, default=OK, tls=None|"trusted"|"self-signed") → Server,
           local_server() → Server on the client's 127.0.0.1, closed_port(),
           link_down(), link_up(), del_default_route(), add_default_route(), wait_carrier(),
           add_second_link() → link2 (client 198.19.O.249/30 ↔ gateway .250)
    Server: route(path, behaviour), default, once(path, *behaviours), stop(), start(),
            hit_count(path), wait_hits(path, n, timeout), requests [(method, path, headers)],
            connections, wait_connections(n, timeout)
    behaviours: Answer(status, body, headers), OK, NO_CONTENT, UNAVAILABLE, NOT_FOUND,
            PORTAL_LOGIN, redirect(location, status), Delayed(s, answer), Trickle(), Big(),
            Cycle(*answers) (each request the next, in turn), HANG, CLOSE, GARBAGE
    reading: status(server), readyz(server), target_of(doc, name), wait_status(server, pred, t),
            wait_target(server, name, pred, t), wait_connectivity(server, pred, t),
            is_state(state, reason), settled, ip_sort_key, target_args({name: url}),
            dns_query(ns, server, name, qtype)
"""

from __future__ import annotations

import atexit
import ipaddress
import os
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path

import pytest

import netns
from conftest import Response, _dump_on_failure, get_status, http, stop_reachd
from reachd_process import Reachd, reachd_binary

DNSMASQ = "/usr/sbin/dnsmasq"
SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


# --------------------------------------------------------------------------- behaviours


@dataclass(frozen=True)
class Answer:
    """Answer the request with this status, body and extra headers, then close."""

    status: int
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()

    def head(self) -> bytes:
        lines = [f"HTTP/1.1 {self.status} {REASONS.get(self.status, 'Status')}"]
        if self.status not in (204, 304) and not (100 <= self.status < 200):
            lines.append(f"Content-Length: {len(self.body)}")
        lines.append("Connection: close")
        lines += [f"{key}: {value}" for key, value in self.headers]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


REASONS = {200: "OK", 204: "No Content", 301: "Moved Permanently", 302: "Found", 307: "Temporary Redirect",
           400: "Bad Request", 404: "Not Found", 500: "Internal Server Error", 503: "Service Unavailable"}


@dataclass(frozen=True)
class Big:
    """A 200 whose body is `size` bytes, written as fast as the client reads."""

    size: int = 10 * 1024 * 1024


@dataclass(frozen=True)
class Delayed:
    """Wait `seconds`, then give `answer` (a probe that is still running: the target stays `unknown`)."""

    seconds: float
    answer: "Answer"


@dataclass(frozen=True)
class Trickle:
    """Send `data` one byte every `every` seconds (a response head that never completes in time)."""

    data: bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    every: float = 1.0


class Cycle:
    """Each request gets the next of `answers`, in turn, for ever (a lossy server: 503 one time in
    three is `Cycle(OK, OK, UNAVAILABLE)`); `given` counts what was answered."""

    def __init__(self, *answers: "Answer") -> None:
        self.answers = answers
        self.given: list[Answer] = []
        self._lock = threading.Lock()

    def next(self) -> "Answer":
        with self._lock:
            answer = self.answers[len(self.given) % len(self.answers)]
            self.given.append(answer)
            return answer

    def count(self, status: int) -> int:
        with self._lock:
            return sum(1 for answer in self.given if answer.status == status)


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


HANG = _Named("HANG")  # read the request, never answer (until the client leaves or the server stops)
CLOSE = _Named("CLOSE")  # read the request, close without a byte
GARBAGE = _Named("GARBAGE")  # answer with bytes that are not HTTP

NO_CONTENT = Answer(204)
OK = Answer(200, b"ok\n")
UNAVAILABLE = Answer(503, b"down\n")
NOT_FOUND = Answer(404, b"no\n")
PORTAL_LOGIN = Answer(200, b"<html><body><form action=/login>Sign in to Hotel WiFi</form></body></html>\n",
                      (("Content-Type", "text/html"),))


def redirect(location: str, status: int = 302) -> Answer:
    return Answer(status, b"", (("Location", location),))


# --------------------------------------------------------------------------- servers


class Server:
    """A TCP server in a namespace: HTTP (optionally TLS) with per-path behaviours.

    - `routes[path] = behaviour` (path without the query), `default` for every other path;
    - `once(path, *behaviours)`: the next requests for `path` get these, in order, then the
      route again (one lost probe, exactly);
    - `connections` counts accepted connections (a `tcp://` probe is a handshake and a close);
      `hits[path]` lists the monotonic times of requests for `path`.
    - `stop()` closes the listener (new connections are refused: RST), `start()` opens it again
      on the same port.
    - `bind="::"` listens on both families (one socket, IPV6_V6ONLY off); then
      `route(path, behaviour, family="ipv4"|"ipv6")` answers one family differently and
      `hit_count(path, family=)` counts one family's requests.
    """

    def __init__(self, namespace: str, port: int = 0, tls: ssl.SSLContext | None = None,
                 default=OK, bind: str = "0.0.0.0") -> None:
        self.namespace = namespace
        self.port = port
        self.bind = bind
        self.tls = tls
        self.default = default
        self.routes: dict[str, object] = {}
        self.family_routes: dict[tuple[str, str], object] = {}  # (family, path) → behaviour
        self.family_hits: dict[tuple[str, str], int] = defaultdict(int)
        self._once: dict[str, deque] = defaultdict(deque)
        self.hits: dict[str, list[float]] = defaultdict(list)
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # (method, path, headers) in order
        self.connections = 0
        self._cond = threading.Condition()
        self._listener: socket.socket | None = None
        self._accept_thread: threading.Thread | None = None
        self._open: set[socket.socket] = set()
        self._stopping = threading.Event()

    # -- lifecycle

    def start(self) -> "Server":
        assert self._listener is None, "already listening"
        family = socket.AF_INET6 if ":" in self.bind else socket.AF_INET
        listener = netns.socket_in(self.namespace, family)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        listener.bind((self.bind, self.port))
        listener.listen(256)
        listener.settimeout(0.1)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._stopping = threading.Event()
        self._accept_thread = threading.Thread(target=self._accept_loop, args=(listener, self._stopping),
                                               name=f"server-{self.port}", daemon=True)
        self._accept_thread.start()
        return self

    def stop(self) -> None:
        """Close the listener and every open connection: afterwards the port refuses."""
        listener, self._listener = self._listener, None
        if listener is None:
            return
        self._stopping.set()
        listener.close()
        if self._accept_thread is not None:
            self._accept_thread.join(timeout=2)
        with self._cond:
            open_now = list(self._open)
        for conn in open_now:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    @property
    def listening(self) -> bool:
        return self._listener is not None

    # -- configuration

    def route(self, path: str, behaviour, family: str | None = None) -> None:
        with self._cond:
            if family is None:
                self.routes[path] = behaviour
            else:
                assert family in ("ipv4", "ipv6"), family
                self.family_routes[(family, path)] = behaviour

    def once(self, path: str, *behaviours) -> None:
        with self._cond:
            self._once[path].extend(behaviours)

    def hit_count(self, path: str, family: str | None = None) -> int:
        with self._cond:
            return len(self.hits[path]) if family is None else self.family_hits[(family, path)]

    def wait_hits(self, path: str, count: int, timeout: float) -> list[float]:
        """Wait until `path` was requested `count` times in all; returns the hit times."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.hits[path]) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"{path} requested {len(self.hits[path])} times, wanted {count}")
                self._cond.wait(remaining)
            return list(self.hits[path])

    def wait_connections(self, count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.connections < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"{self.connections} connections, wanted {count}")
                self._cond.wait(remaining)

    # -- serving

    def _accept_loop(self, listener: socket.socket, stopping: threading.Event) -> None:
        while not stopping.is_set():
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self._cond:
                self.connections += 1
                self._open.add(conn)
                self._cond.notify_all()
            threading.Thread(target=self._serve, args=(conn, stopping), daemon=True).start()

    def _serve(self, raw: socket.socket, stopping: threading.Event) -> None:
        conn = raw
        try:
            raw.settimeout(10)
            if self.tls is not None:
                conn = self.tls.wrap_socket(raw, server_side=True)
            head = b""
            while b"\r\n\r\n" not in head:
                data = conn.recv(65536)
                if not data:
                    return  # a tcp:// probe: handshake, then close
                head += data
                if self.tls is None and head.startswith(b"\x16\x03"):
                    # A TLS ClientHello to a plain server: answer 400 at once, as real servers do.
                    conn.sendall(Answer(400, b"plain HTTP server\n").head() + b"plain HTTP server\n")
                    return
                if len(head) > 65536:
                    return
            lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
            parts = lines[0].split(" ")
            path = parts[1].split("?", 1)[0] if len(parts) >= 2 else "/"
            headers = {}
            for line in lines[1:]:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
            family = _peer_family(raw)
            with self._cond:
                if self._once[path]:
                    behaviour = self._once[path].popleft()
                else:
                    behaviour = self.family_routes.get((family, path), self.routes.get(path, self.default))
                self.hits[path].append(time.monotonic())
                self.family_hits[(family, path)] += 1
                self.requests.append((parts[0], path, headers))
                self._cond.notify_all()
            self._act(conn, behaviour, stopping)
        except (OSError, ssl.SSLError, ValueError):
            pass
        finally:
            with self._cond:
                self._open.discard(raw)
            try:
                conn.close()
            except OSError:
                pass

    def _act(self, conn, behaviour, stopping: threading.Event) -> None:
        if isinstance(behaviour, Answer):
            conn.sendall(behaviour.head() + behaviour.body)
        elif isinstance(behaviour, Big):
            conn.sendall(Answer(200).head().replace(b"Content-Length: 0", f"Content-Length: {behaviour.size}".encode()))
            chunk = b"x" * 65536
            sent = 0
            while sent < behaviour.size and not stopping.is_set():
                conn.sendall(chunk[: behaviour.size - sent])
                sent += len(chunk)
        elif isinstance(behaviour, Cycle):
            self._act(conn, behaviour.next(), stopping)
        elif isinstance(behaviour, Delayed):
            if not stopping.wait(behaviour.seconds):
                self._act(conn, behaviour.answer, stopping)
        elif isinstance(behaviour, Trickle):
            for byte in behaviour.data:
                if stopping.wait(behaviour.every):
                    return
                conn.sendall(bytes([byte]))
        elif behaviour is HANG:
            conn.settimeout(0.2)
            while not stopping.is_set():
                try:
                    if not conn.recv(4096):
                        return
                except (socket.timeout, ssl.SSLWantReadError):
                    continue
        elif behaviour is CLOSE:
            return
        elif behaviour is GARBAGE:
            conn.sendall(b"SSH-2.0-OpenSSH_9.2 this is not HTTP\r\n\r\n")
        else:
            raise ValueError(f"unknown behaviour {behaviour!r}")


def _peer_family(conn: socket.socket) -> str:
    """"ipv4" or "ipv6": how the client connected (a v4-mapped peer on a "::" socket is IPv4)."""
    try:
        peer = conn.getpeername()[0]
    except OSError:
        return "ipv4"
    return "ipv6" if ":" in peer and not peer.startswith("::ffff:") else "ipv4"


class SilentUDP:
    """A bound UDP socket that never reads: a DNS server that never answers (and no ICMP).
    `address` may be IPv4 or IPv6."""

    def __init__(self, namespace: str, address: str, port: int = 53) -> None:
        self.address = address
        self.sock = netns.socket_in(namespace, _family(address), socket.SOCK_DGRAM)
        self.sock.bind((address, port))

    def close(self) -> None:
        self.sock.close()


class Dnsmasq:
    """One dnsmasq in the gateway namespace, bound to `address`:53 (IPv4 or IPv6), answering only
    from its flags.

    `local=True` (every world server) adds `--local=/test/`: authoritative for `.test`, so a name
    without IPv6 answers AAAA with NOERROR/no data. With `local=False` dnsmasq would forward what its
    records do not answer and, having no upstream (`--no-resolv`), answers REFUSED instead: the AAAA
    query of a name it holds only an A record for is REFUSED — a nameserver that answers A but not
    AAAA (RFC 4074's kind)."""

    def __init__(self, namespace: str, address: str, records: list[str], log_dir: Path, local: bool = True) -> None:
        self.address = address
        self.log_path = log_dir / f"dnsmasq-{address}.log"
        self.pid_path = log_dir / f"dnsmasq-{address}.pid"
        command = ["ip", "netns", "exec", namespace, DNSMASQ, "--keep-in-foreground", "--no-resolv", "--no-hosts",
                   "--conf-file=/dev/null", "--bind-interfaces", f"--listen-address={address}", "--port=53",
                   f"--pid-file={self.pid_path}", "--log-queries", "--log-facility=-", "--local-ttl=0",
                   "--cache-size=0", *(["--local=/test/"] if local else []), *records]
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, namespace: str, name: str, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"dnsmasq exited with {self.process.returncode}: {self.output()}")
            try:
                dns_query(namespace, self.address, name, timeout=0.2)
                return
            except (TimeoutError, OSError):
                time.sleep(0.02)
        raise TimeoutError(f"dnsmasq on {self.address} does not answer: {self.output()}")

    def output(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def dns_query(namespace: str, server: str, name: str, qtype: int = 1, timeout: float = 1.0) -> tuple[int, list[str]]:
    """One DNS query from inside `namespace` to `server` (IPv4 or IPv6): (rcode, addresses of the
    answer's A/AAAA records)."""
    ident = os.getpid() & 0xFFFF
    question = b"".join(bytes([len(label)]) + label.encode() for label in name.split(".")) + b"\0"
    packet = struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + question + struct.pack("!HH", qtype, 1)
    sock = netns.socket_in(namespace, _family(server), socket.SOCK_DGRAM)
    try:
        sock.settimeout(timeout)
        sock.sendto(packet, (server, 53))
        try:
            data, _ = sock.recvfrom(4096)
        except socket.timeout:
            raise TimeoutError(f"no answer from {server} for {name}") from None
    finally:
        sock.close()
    _, flags, qdcount, ancount, _, _ = struct.unpack("!HHHHHH", data[:12])
    offset = 12
    for _ in range(qdcount):
        offset = _skip_name(data, offset) + 4
    addresses = []
    for _ in range(ancount):
        offset = _skip_name(data, offset)
        rtype, _, _, length = struct.unpack("!HHIH", data[offset:offset + 10])
        offset += 10
        rdata = data[offset:offset + length]
        offset += length
        if rtype == 1:
            addresses.append(socket.inet_ntop(socket.AF_INET, rdata))
        elif rtype == 28:
            addresses.append(socket.inet_ntop(socket.AF_INET6, rdata))
    return flags & 0xF, addresses


def _family(address: str) -> int:
    return socket.AF_INET6 if ":" in address else socket.AF_INET


def _skip_name(data: bytes, offset: int) -> int:
    while True:
        length = data[offset]
        if length == 0:
            return offset + 1
        if length & 0xC0 == 0xC0:
            return offset + 2
        offset += 1 + length


# --------------------------------------------------------------------------- certificates


_CERTS: dict[str, str] | None = None
_CERTS_LOCK = threading.Lock()


def certificates() -> dict[str, str]:
    """Made once per test process with `openssl`: a CA, a leaf it signed for secure.test and
    db.test, the same leaf expired yesterday, and a self-signed leaf for the same names that
    nothing trusts.

    Keys: ca, leaf_cert, leaf_key, expired_cert, self_cert, self_key, dir.
    """
    global _CERTS
    with _CERTS_LOCK:
        if _CERTS is not None and os.path.isdir(_CERTS["dir"]):
            return _CERTS
        directory = tempfile.mkdtemp(prefix=f"e2e-{os.getpid()}-certs-")
        d = Path(directory)

        def openssl(*args: str) -> None:
            subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=30)

        san = "subjectAltName=DNS:secure.test,DNS:db.test"
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem"), "-days", "2", "-subj", "/CN=reachd e2e CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", str(d / "leaf.key"), "-out", str(d / "leaf.csr"), "-subj", "/CN=secure.test")
        (d / "leaf.ext").write_text(f"{san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
        openssl("x509", "-req", "-in", str(d / "leaf.csr"), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca.key"),
                "-CAcreateserial", "-out", str(d / "leaf.pem"), "-days", "2", "-extfile", str(d / "leaf.ext"))
        # Valid until a day before it was made: "certificate has expired", and nothing else wrong.
        openssl("x509", "-req", "-in", str(d / "leaf.csr"), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca.key"),
                "-CAcreateserial", "-out", str(d / "expired.pem"), "-days", "-1", "-extfile", str(d / "leaf.ext"))
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", str(d / "self.key"), "-out", str(d / "self.pem"), "-days", "2", "-subj", "/CN=secure.test",
                "-addext", san)
        _CERTS = {"dir": directory, "ca": str(d / "ca.pem"), "leaf_cert": str(d / "leaf.pem"),
                  "leaf_key": str(d / "leaf.key"), "expired_cert": str(d / "expired.pem"), "self_cert": str(d / "self.pem"), "self_key": str(d / "self.key")}
        return _CERTS


def cleanup_certificates() -> None:
    global _CERTS
    with _CERTS_LOCK:
        if _CERTS is not None:
            shutil.rmtree(_CERTS["dir"], ignore_errors=True)
            _CERTS = None


atexit.register(cleanup_certificates)


def server_tls(cert: str, key: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


# --------------------------------------------------------------------------- the world


class World:
    """The two namespaces, their link, DNS, and the servers a test starts. See the module doc."""

    def __init__(self) -> None:
        self._servers: list[Server] = []
        self._silent: list[SilentUDP] = []
        self._dns: list[Dnsmasq] = []
        self.client = netns.Namespace()
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    # -- addresses

    def svc(self, host: int) -> str:
        """A service address on the gateway's loopback (1–127)."""
        assert 1 <= host <= 127
        return f"198.19.{self.octet}.{host}"

    def dropped(self, index: int) -> str:
        """An address in the range the gateway silently drops (0–119)."""
        assert 0 <= index <= 119
        return f"198.19.{self.octet}.{128 + index}"

    def _build(self) -> None:
        self.gateway = netns.Namespace()
        self.octet = self.client.number % 250 + 1
        o = self.octet
        self.link = f"e2e{self.client.number}c"  # the client's end: what `interface` should name
        self.gateway_link = f"e2e{self.client.number}g"
        self.client_ip = f"198.18.{o}.2"
        self.gateway_ip = f"198.18.{o}.1"
        self.db_ip = self.svc(10)
        self.db2_ip = self.svc(11)
        self.moved_ip = self.svc(12)
        self.many_ips = [self.svc(100), self.svc(21), self.svc(9), self.svc(3)]
        self.noroute_ip = self.svc(99)
        self.dns2_ip = self.svc(53)
        self.dns_silent_ip = self.svc(54)
        self.silent_ip = self.dropped(2)
        self.dual_ipv6 = "2001:db8::10"  # documentation range; no route anywhere: never sent
        self.fifty_ips = [self.dropped(i) for i in range(60, 110)]
        self.log_dir = Path(tempfile.mkdtemp(prefix=f"e2e-{os.getpid()}-world-"))

        c, g = self.client, self.gateway
        c.ip("link", "add", self.link, "type", "veth", "peer", "name", self.gateway_link, "netns", g.name)
        # No IPv6 link-local addresses: their DAD would finish a second after start-up and send
        # netlink notifications in the middle of a test (every batch re-runs the probes).
        c.ip("link", "set", self.link, "addrgenmode", "none")
        g.ip("link", "set", self.gateway_link, "addrgenmode", "none")
        c.ip("addr", "add", f"{self.client_ip}/24", "dev", self.link)
        g.ip("addr", "add", f"{self.gateway_ip}/24", "dev", self.gateway_link)
        batch = "".join(f"addr add {self.svc(h)}/32 dev lo\n"
                        for h in sorted({10, 11, 12, 53, 54, *[int(a.rsplit('.', 1)[1]) for a in self.many_ips]}))
        # A forwarded packet that meets a blackhole route is discarded without any ICMP (the
        # kernel's ip_error: EINVAL → no reply); only a *local* sender would see an error.
        batch += f"route add blackhole 198.19.{o}.128/25\n"
        g.exec("ip", "-batch", "-", input=batch.encode(), check=True, capture_output=True)
        g.exec("sysctl", "-qw", "net.ipv4.ip_forward=1", check=True, capture_output=True)
        g.ip("link", "set", self.gateway_link, "up")
        c.ip("link", "set", self.link, "up")
        self.add_default_route()
        c.ip("route", "add", "unreachable", f"{self.noroute_ip}/32")

        self.resolv_dir = Path("/etc/netns") / c.name
        self.resolv_dir.mkdir(parents=True, exist_ok=True)
        self.resolv_path = self.resolv_dir / "resolv.conf"
        self.set_nameservers(self.gateway_ip)

        self.dns = self._dnsmasq(self.gateway_ip, [
            f"--host-record=db.test,{self.db_ip}",
            f"--host-record=secure.test,{self.db_ip}",
            *[f"--host-record=many.test,{a}" for a in self.many_ips],
            # The first address (sorted) has no route, the second has: probe the routable one.
            f"--host-record=mixed.test,{self.noroute_ip}",
            f"--host-record=mixed.test,{self.svc(100)}",
            # IPv4 and IPv6 (the client has no IPv6 route): IPv4 is probed.
            f"--host-record=dual.test,{self.db_ip},{self.dual_ipv6}",
            # 50 addresses, all dropped: more than a 512-byte UDP answer holds.
            *[f"--host-record=fifty.test,{a}" for a in self.fifty_ips],
            f"--host-record=silent.test,{self.silent_ip}",
            f"--host-record=noroute.test,{self.noroute_ip}",
            "--address=/nx.test/",
            "--address=/moved.test/",
            *self._extra_records(),
        ])
        self.dns2 = self._dnsmasq(self.dns2_ip, [
            f"--host-record=db.test,{self.db2_ip}",
            f"--host-record=moved.test,{self.moved_ip}",
            "--address=/nx.test/",
            *self._extra_records_dns2(),
        ])
        self._silent.append(SilentUDP(g.name, self.dns_silent_ip))
        for server in self._dns:
            server.wait_ready(c.name, "db.test")
        self.wait_carrier()

    def _extra_records(self) -> list[str]:
        """More dnsmasq flags for the primary server (a grown world adds its names here)."""
        return []

    def _extra_records_dns2(self) -> list[str]:
        """More dnsmasq flags for the second server."""
        return []

    def _dnsmasq(self, address: str, records: list[str], local: bool = True) -> Dnsmasq:
        server = Dnsmasq(self.gateway.name, address, records, self.log_dir, local=local)
        self._dns.append(server)
        return server

    # -- resolv.conf

    def set_nameservers(self, *servers: str, options: str | None = None) -> None:
        """Rewrite the client's resolv.conf in place (same inode: the bind mount follows it)."""
        text = "".join(f"nameserver {s}\n" for s in servers)
        if options:
            text += f"options {options}\n"
        with open(self.resolv_path, "w") as f:  # O_TRUNC: the inode stays
            f.write(text)

    # -- servers

    def server(self, port: int = 0, default=OK, tls: str | None = None) -> Server:
        """A started HTTP/TCP server on the gateway's 0.0.0.0:`port` (0: any free port).

        `tls`: None (plain), "trusted" (a leaf signed by the test CA, see `start_reachd_in`'s
        `trust_test_ca`), "expired" (that leaf, expired) or "self-signed".
        """
        context = None
        if tls is not None:
            certs = certificates()
            if tls == "trusted":
                context = server_tls(certs["leaf_cert"], certs["leaf_key"])
            elif tls == "expired":
                context = server_tls(certs["expired_cert"], certs["leaf_key"])
            elif tls == "self-signed":
                context = server_tls(certs["self_cert"], certs["self_key"])
            else:
                raise ValueError(tls)
        server = Server(self.gateway.name, port, tls=context, default=default)
        self._servers.append(server)
        return server.start()

    def local_server(self, default=OK) -> Server:
        """A server on the *client's* 127.0.0.1 (the app beside a sidecar)."""
        server = Server(self.client.name, 0, default=default, bind="127.0.0.1")
        self._servers.append(server)
        return server.start()

    def closed_port(self) -> int:
        """A gateway port nothing listens on (connections get an RST: `refused`)."""
        sock = netns.socket_in(self.gateway.name)
        try:
            sock.bind(("0.0.0.0", 0))
            return sock.getsockname()[1]
        finally:
            sock.close()

    # -- network changes

    def add_second_link(self) -> str:
        """A second veth between client and gateway (client 198.19.O.249/30, gateway .250),
        carrier up, no route through it yet; returns the client's end."""
        c, g = self.client, self.gateway
        self.link2 = f"e2e{self.client.number}d"
        self.gateway_link2 = f"e2e{self.client.number}h"
        self.client_ip2, self.gateway_ip2 = f"198.19.{self.octet}.249", f"198.19.{self.octet}.250"
        c.ip("link", "add", self.link2, "type", "veth", "peer", "name", self.gateway_link2, "netns", g.name)
        c.ip("link", "set", self.link2, "addrgenmode", "none")
        g.ip("link", "set", self.gateway_link2, "addrgenmode", "none")
        c.ip("addr", "add", f"{self.client_ip2}/30", "dev", self.link2)
        g.ip("addr", "add", f"{self.gateway_ip2}/30", "dev", self.gateway_link2)
        g.ip("link", "set", self.gateway_link2, "up")
        c.ip("link", "set", self.link2, "up")
        deadline = time.monotonic() + 10
        while "LOWER_UP" not in c.ip("-br", "link", "show", "dev", self.link2).stdout:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.link2} has no carrier")
            time.sleep(0.02)
        return self.link2

    def add_default_route(self) -> None:
        self.client.ip("route", "replace", "default", "via", self.gateway_ip, "dev", self.link)

    def del_default_route(self) -> None:
        self.client.ip("route", "del", "default")

    def link_down(self) -> None:
        self.client.ip("link", "set", self.link, "down")

    def link_up(self, default_route: bool = True) -> None:
        """Up again; `ip link set down` flushed the routes through it, so restore the default."""
        self.client.ip("link", "set", self.link, "up")
        if default_route:
            self.add_default_route()

    def wait_carrier(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.client.ip("-br", "link", "show", "dev", self.link).stdout
            if " UP " in f" {out} " and "LOWER_UP" in out:
                return
            time.sleep(0.02)
        raise TimeoutError(f"{self.link} has no carrier after {timeout}s")

    # -- cleanup

    def close(self) -> None:
        for server in getattr(self, "_servers", []):
            server.stop()
        for silent in getattr(self, "_silent", []):
            silent.close()
        for dns in getattr(self, "_dns", []):
            dns.stop()
        resolv_dir = getattr(self, "resolv_dir", None)
        if resolv_dir is not None:
            shutil.rmtree(resolv_dir, ignore_errors=True)
            try:
                resolv_dir.parent.rmdir()  # /etc/netns, when nothing else uses it
            except OSError:
                pass
        for ns in (getattr(self, "gateway", None), self.client):
            if ns is not None:
                ns.delete()
        log_dir = getattr(self, "log_dir", None)
        if log_dir is not None:
            shutil.rmtree(log_dir, ignore_errors=True)

    def dns_logs(self) -> str:
        return "\n".join(f"---- dnsmasq {d.address} ----\n{d.output()[-3000:]}" for d in self._dns)


# --------------------------------------------------------------------------- reachd in the world


class WorldReachd(Reachd):
    """reachd inside the world's client namespace (so it resolves through the world's DNS).

    `trust_test_ca`: inside the private mount namespace `ip netns exec` gives it, the system's CA
    bundle is bind-mounted over by one holding only the test CA — reachd still verifies "against
    the system's CAs"; the host's file is untouched (the mount does not propagate back).
    """

    def __init__(self, world: World, *args: str, env: dict | None = None, trust_test_ca: bool = False):
        from reachd_process import free_port

        self.port = free_port()
        self.netns = world.client.name
        command = [reachd_binary(), "--host", "127.0.0.1", "--port", str(self.port), *args]
        if trust_test_ca:
            ca = certificates()["ca"]
            command = ["sh", "-c", f'mount --bind "$0" {SYSTEM_CA_BUNDLE} && exec "$@"', ca, *command]
        command = ["ip", "netns", "exec", self.netns, *command]
        self.log_path = Path(f"/tmp/reachd-test-{os.getpid()}-{self.port}.log")
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**os.environ, **(env or {})})
        self.started_at = time.monotonic()


def start_reachd_in(world: World, *args: str, env: dict | None = None, trust_test_ca: bool = False) -> WorldReachd:
    """Start reachd in the world's client namespace and wait until it answers /livez."""
    server = WorldReachd(world, *args, env=env, trust_test_ca=trust_test_ca)
    try:
        server.wait_ready()
    except BaseException:
        _discard(server)
        raise
    return server


def _discard(server: Reachd) -> None:
    server.terminate(signal.SIGKILL)
    try:
        server.log_path.unlink()
    except OSError:
        pass


def start_many_in(world: World, *arg_lists: list[str], trust_test_ca: bool = False) -> list[WorldReachd]:
    """Start one reachd per argument list at once, then wait for all (the waits overlap)."""
    servers: list[WorldReachd] = []
    try:
        for args in arg_lists:
            servers.append(WorldReachd(world, *args, trust_test_ca=trust_test_ca))
        for server in servers:
            server.wait_ready()
    except BaseException:
        for server in servers:
            _discard(server)
        raise
    return servers


def target_args(targets: dict[str, str]) -> list[str]:
    """{"db": "tcp://db.test:5432"} → ["--target", "db=tcp://db.test:5432"]."""
    args: list[str] = []
    for name, url in targets.items():
        args += ["--target", f"{name}={url}"]
    return args


# --------------------------------------------------------------------------- reading reachd


def status(server: Reachd) -> dict:
    return get_status(server.port, ns=server.netns)


def readyz(server: Reachd) -> Response:
    return http(server.port, "GET", "/readyz", ns=server.netns)


def target_of(doc: dict, name: str) -> dict:
    for target in doc.get("targets") or []:
        if target["name"] == name:
            return target
    raise KeyError(f"no target {name!r} in {doc.get('targets')}")


def wait_status(server: Reachd, predicate, timeout: float, interval: float = 0.05, what: str = "status") -> dict:
    """Poll /status until `predicate(doc)`; returns that document. The last one is in the error."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = status(server)
        if predicate(last):
            return last
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what} not reached within {timeout}s; last document: "
                               f"targets={last.get('targets')} connectivity={last.get('connectivity')} "
                               f"state={last.get('state')}")
        time.sleep(interval)


def wait_target(server: Reachd, name: str, predicate, timeout: float) -> dict:
    """Poll /status until target `name` satisfies `predicate(target)`; returns the target."""
    doc = wait_status(server, lambda d: _has(d, name) and predicate(target_of(d, name)), timeout,
                      what=f"target {name}")
    return target_of(doc, name)


def wait_connectivity(server: Reachd, predicate, timeout: float) -> dict:
    doc = wait_status(server, lambda d: "connectivity" in d and predicate(d["connectivity"]), timeout,
                      what="connectivity")
    return doc["connectivity"]


def _has(doc: dict, name: str) -> bool:
    return any(t.get("name") == name for t in doc.get("targets") or [])


def is_state(state: str, reason: str | None = None):
    """A predicate on a target or connectivity object: this state (and this reason)."""
    def predicate(obj: dict) -> bool:
        return obj.get("state") == state and (reason is None or obj.get("reason") == reason)
    predicate.__name__ = f"{state}/{reason}"
    return predicate


def settled(obj: dict) -> bool:
    return obj.get("state") not in (None, "unknown")


def ip_sort_key(text: str):
    address = ipaddress.ip_address(text)
    return (address.version, int(address))


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def world(request):
    """A fresh world (see the module doc); torn down in every outcome."""
    w = World()

    def finish() -> None:
        failed = any(getattr(request.node, f"rep_{when}", None) is not None
                     and getattr(request.node, f"rep_{when}").failed for when in ("setup", "call"))
        if failed:
            try:
                print(f"\n{w.dns_logs()}")
            except OSError:
                pass
        w.close()

    request.addfinalizer(finish)
    return w


@pytest.fixture
def reachd_in(request, world):
    """`reachd_in(world, *args, env=None, trust_test_ca=False)`: reachd in the world's client
    namespace, ready; stopped (and its log printed on failure) at teardown.
    `reachd_in.many(world, [args...], [args...], trust_test_ca=False)` starts several at once."""
    servers: list[WorldReachd] = []

    def make(w: World, *args: str, env: dict | None = None, trust_test_ca: bool = False) -> WorldReachd:
        server = start_reachd_in(w, *args, env=env, trust_test_ca=trust_test_ca)
        servers.append(server)
        return server

    def many(w: World, *arg_lists: list[str], trust_test_ca: bool = False) -> list[WorldReachd]:
        started = start_many_in(w, *arg_lists, trust_test_ca=trust_test_ca)
        servers.extend(started)
        return started

    make.many = many
    yield make
    for server in reversed(servers):
        _dump_on_failure(request, server)
        stop_reachd(server)
