"""A world for `icmp://` targets: echo replies from a user-space responder a test drives, a router
whose onward link can shrink and whose ICMP errors can vanish (DESIGN.md, "Quality: loss,
latency, path MTU").

    client ns (reachd)              router ns                              far ns (the responder)
    <link> 198.18.O.2/24     ──── <router_link> 198.18.O.1/24
           2001:db8:O::2/64              2001:db8:O::1/64
    default via 198.18.O.1        forwarding on (both families),
    default via 2001:db8:O::1     ICMP rate limits off
    unreachable 198.19.O.83       <router_far> 198.19.O.65/29 ──────────── <far_link> 198.19.O.66/29
    unreachable 2001:db8:O:5::83               2001:db8:O:f::1/64                    2001:db8:O:f::2/64
                                  198.19.O.80/28 via far                  lo: 198.19.O.81–.83
                                  2001:db8:O:5::/64 via far                   2001:db8:O:5::81–83
                                  dnsmasq on 198.18.O.1 (the client's     icmp_echo_ignore_all=1
                                  resolver)                               (both families): only
                                                                          the EchoResponder answers

Addresses come only from 198.18.0.0/15 and 2001:db8::/32 (IPv6 with `nodad`, links with
`addrgenmode none`; the router's and far's links carry static `fe80::1`/`fe80::2` because a
router solicits a neighbour for a forwarded packet from its link-local address).

Names the router's dnsmasq knows (the client's resolv.conf names it):
    far.test      198.19.O.81   2001:db8:O:5::81   (far4, far6: both families answer)
    far4.test     198.19.O.81   —
    far6.test     —             2001:db8:O:5::81
    other.test    198.19.O.82   2001:db8:O:5::82   (far4b, far6b: `prohibit()` tests use them)
    noroute.test  198.19.O.83   2001:db8:O:5::83   (the client has `unreachable` routes to both)

EchoResponder (in the far namespace, raw ICMP sockets created there from this process, one
thread): answers every echo request of either family from the address it was sent to, with
the same identifier, sequence and payload, and records each request (`requests`: family, source,
destination, identifier, sequence, payload size, what was done). A test changes at run time:
    delay = 0.3            every reply 0.3 s late
    delay_next(4, 0.3)     only the next 4 requests of each family late
    drop_every = 3         every 3rd *small* request of each family unanswered (`drop_large` too)
    drop_all = True        nothing answered
    mangle = "ident"       every reply with another identifier ("seq": another sequence) — what
                           another process's replies look like to a raw socket
"Small" is a payload of at most SMALL_PAYLOAD (100) bytes: reachd's small echoes carry 56, its
full-size echo fills the MTU. `counts(family, ident=...)` says what was received and answered.

Path MTU (`shrink_mtu`): the router↔far link gets MTU `link_mtu` (1280: IPv6's minimum) on both
ends, and the router's IPv4 route toward the far range `mtu ipv4_mtu` (1000): a forwarded packet
larger than that with DF set gets "fragmentation needed" (IPv4, naming 1000) or "packet too big"
(IPv6, naming 1280) from the router. `block_router_errors()` makes those vanish: policy routing
sends every ICMP the router itself originates (`iif lo ipproto icmp` / `ipv6-icmp`) to table 222,
which holds only a blackhole default route (iptables is not installed here).
`allow_router_errors()` removes the rules again.

`prohibit(address)`: a `prohibit` route for that address in the router — it answers with ICMP
destination unreachable, administratively prohibited (IPv4 code 13, IPv6 code 1). The kernel
rate-limits IPv4 errors a router sends per source (a burst of 5, then one a second; a global
sysctl a test must not touch): a test keeps the echoes that meet this route few.
"""

from __future__ import annotations

import heapq
import os
import select
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

import netns
from conftest import _dump_on_failure, http, stop_reachd
from world import Dnsmasq, WorldReachd, _discard, status, target_of, wait_status  # noqa: F401

FAMILIES = ("ipv4", "ipv6")
SMALL_PAYLOAD = 100
IP_PKTINFO = 8  # <linux/in.h>; Python's socket module lacks it
ICMP6_FILTER = 1  # <netinet/icmp6.h>
ROUTER_ERROR_TABLE = "222"


# --------------------------------------------------------------------------- the responder


@dataclass(frozen=True)
class EchoRequest:
    at: float  # time.monotonic() when it arrived
    family: str
    src: str
    dst: str
    ident: int
    seq: int
    payload: int  # bytes after the 8-byte ICMP header
    action: str  # "answered" (possibly late), "dropped"
    delay: float

    @property
    def small(self) -> bool:
        return self.payload <= SMALL_PAYLOAD

    @property
    def packet_size(self) -> int:
        """The IP packet's size on the wire."""
        return self.payload + 8 + (20 if self.family == "ipv4" else 40)


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


class EchoResponder:
    """Answers ICMP/ICMPv6 echo requests in `namespace` from user space (see the module doc)."""

    def __init__(self, namespace: str) -> None:
        self.delay = 0.0
        self.drop_every: int | None = None
        self.drop_large = False
        self.drop_all = False
        self.mangle: str | None = None
        self.requests: list[EchoRequest] = []
        self.answered: dict[str, int] = {"ipv4": 0, "ipv6": 0}  # replies actually sent
        self._delay_next: dict[str, list] = {"ipv4": [0, 0.0], "ipv6": [0, 0.0]}
        self._small_seen: dict[str, int] = {"ipv4": 0, "ipv6": 0}
        self._pending: list = []  # heap of (due, n, family, sock, reply, address, cmsg, request index)
        self._pending_n = 0
        self._cond = threading.Condition()
        self.sock4, self.sock6 = self._open(namespace)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"echo-responder-{namespace}", daemon=True)
        self._thread.start()

    @staticmethod
    def _open(namespace: str) -> tuple[socket.socket, socket.socket]:
        result: dict = {}

        def worker() -> None:
            try:
                fd = os.open(f"/run/netns/{namespace}", os.O_RDONLY)
                try:
                    if netns._libc.setns(fd, netns.CLONE_NEWNET) != 0:
                        raise OSError(f"setns({namespace}) failed")
                finally:
                    os.close(fd)
                s4 = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
                s6 = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
                result["sockets"] = (s4, s6)
            except BaseException as error:  # noqa: BLE001
                result["error"] = error

        thread = threading.Thread(target=worker, name=f"setns-{namespace}")
        thread.start()
        thread.join()
        if "error" in result:
            raise result["error"]
        s4, s6 = result["sockets"]
        s6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVPKTINFO, 1)
        # Only echo requests (type 128) reach this socket: a set bit blocks that type.
        words = [0xFFFFFFFF] * 8
        words[128 >> 5] &= ~(1 << (128 & 31))
        s6.setsockopt(socket.IPPROTO_ICMPV6, ICMP6_FILTER, struct.pack("=8I", *words))
        for s in (s4, s6):
            s.setblocking(False)
        return s4, s6

    # -- what a test changes

    def delay_next(self, count: int, seconds: float) -> None:
        """The next `count` requests of each family are answered `seconds` late."""
        with self._cond:
            for family in FAMILIES:
                self._delay_next[family] = [count, seconds]

    def reset(self) -> None:
        """Answer everything at once again (the records stay)."""
        with self._cond:
            self.delay = 0.0
            self.drop_every = None
            self.drop_large = False
            self.drop_all = False
            self.mangle = None
            for family in FAMILIES:
                self._delay_next[family] = [0, 0.0]
                self._small_seen[family] = 0

    # -- reading

    def snapshot(self) -> list[EchoRequest]:
        with self._cond:
            return list(self.requests)

    def of(self, family: str | None = None, ident: int | None = None, small: bool | None = None,
           dst: str | None = None, since: float = 0.0, exclude_idents: set[int] = frozenset()) -> list[EchoRequest]:
        return [r for r in self.snapshot()
                if (family is None or r.family == family) and (ident is None or r.ident == ident)
                and (small is None or r.small == small) and (dst is None or r.dst == dst)
                and r.at >= since and r.ident not in exclude_idents]

    def idents(self, family: str | None = None) -> set[int]:
        return {r.ident for r in self.of(family)}

    def pending(self) -> int:
        with self._cond:
            return len(self._pending)

    def last_request_age(self) -> float:
        with self._cond:
            return time.monotonic() - self.requests[-1].at if self.requests else float("inf")

    def wait_requests(self, predicate, timeout: float, what: str = "requests") -> list[EchoRequest]:
        """Wait until `predicate(snapshot)`; returns that snapshot."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                snap = list(self.requests)
                if predicate(snap):
                    return snap
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"responder: {what} not seen within {timeout}s; {len(snap)} requests: "
                                       f"{self.summary()}")
                self._cond.wait(min(remaining, 0.1))

    def wait_quiet(self, quiet: float = 0.3, timeout: float = 10.0) -> None:
        """Wait until nothing arrived for `quiet` seconds and no late reply is pending."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.last_request_age() >= quiet and self.pending() == 0:
                return
            time.sleep(0.02)
        raise TimeoutError(f"the responder never went quiet for {quiet}s within {timeout}s")

    def summary(self) -> str:
        with self._cond:
            out = []
            for family in FAMILIES:
                reqs = [r for r in self.requests if r.family == family]
                out.append(f"{family}: {len(reqs)} received ({sum(r.small for r in reqs)} small), "
                           f"{sum(r.action == 'dropped' for r in reqs)} dropped, {self.answered[family]} answered, "
                           f"idents {sorted({r.ident for r in reqs})}")
            return "; ".join(out)

    # -- the loop

    def close(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=2)
        for s in (self.sock4, self.sock6):
            s.close()

    def _loop(self) -> None:
        while not self._stopping.is_set():
            with self._cond:
                due = self._pending[0][0] if self._pending else None
            timeout = 0.05 if due is None else max(0.0, min(0.05, due - time.monotonic()))
            try:
                readable, _, _ = select.select([self.sock4, self.sock6], [], [], timeout)
            except (OSError, ValueError):
                return
            for sock in readable:
                try:
                    if sock is self.sock4:
                        self._receive4()
                    else:
                        self._receive6()
                except BlockingIOError:
                    pass
                except OSError:
                    if self._stopping.is_set():
                        return
            self._send_due()

    def _receive4(self) -> None:
        while True:
            try:
                packet, (src, _) = self.sock4.recvfrom(65535)
            except BlockingIOError:
                return
            ihl = (packet[0] & 0x0F) * 4
            dst = socket.inet_ntop(socket.AF_INET, packet[16:20])
            icmp = packet[ihl:]
            if len(icmp) < 8 or icmp[0] != 8 or icmp[1] != 0:
                continue
            reply = bytearray(b"\x00\x00\x00\x00" + self._mangled(icmp[4:8]) + icmp[8:])
            reply[2:4] = struct.pack("!H", _checksum(bytes(reply)))
            pktinfo = struct.pack("=I4s4s", 0, socket.inet_aton(dst), b"\0\0\0\0")
            self._handle("ipv4", self.sock4, icmp, src, dst, bytes(reply), (src, 0),
                         [(socket.IPPROTO_IP, IP_PKTINFO, pktinfo)])

    def _receive6(self) -> None:
        while True:
            try:
                icmp, ancillary, _, address = self.sock6.recvmsg(65535, socket.CMSG_SPACE(20))
            except BlockingIOError:
                return
            src = address[0]
            dst = None
            for level, kind, data in ancillary:
                if level == socket.IPPROTO_IPV6 and kind == socket.IPV6_PKTINFO:
                    dst = socket.inet_ntop(socket.AF_INET6, data[:16])
            if len(icmp) < 8 or icmp[0] != 128 or icmp[1] != 0 or dst is None:
                continue
            reply = b"\x81\x00\x00\x00" + self._mangled(icmp[4:8]) + icmp[8:]  # the kernel fills in the ICMPv6 checksum
            pktinfo = socket.inet_pton(socket.AF_INET6, dst) + struct.pack("=I", 0)
            self._handle("ipv6", self.sock6, icmp, src, dst, reply, (src, 0, 0, 0),
                         [(socket.IPPROTO_IPV6, socket.IPV6_PKTINFO, pktinfo)])

    def _mangled(self, ident_seq: bytes) -> bytes:
        ident, seq = struct.unpack("!HH", ident_seq)
        if self.mangle == "ident":
            ident = (ident + 1) & 0xFFFF
        elif self.mangle == "seq":
            seq = (seq + 1000) & 0xFFFF
        return struct.pack("!HH", ident, seq)

    def _handle(self, family, sock, icmp, src, dst, reply, address, cmsg) -> None:
        ident, seq = struct.unpack("!HH", icmp[4:8])
        payload = len(icmp) - 8
        small = payload <= SMALL_PAYLOAD
        now = time.monotonic()
        with self._cond:
            drop = self.drop_all
            if small:
                self._small_seen[family] += 1
                if self.drop_every and self._small_seen[family] % self.drop_every == 0:
                    drop = True
            elif self.drop_large:
                drop = True
            delay = self.delay
            left, seconds = self._delay_next[family]
            if left > 0:
                self._delay_next[family][0] = left - 1
                delay = max(delay, seconds)
            index = len(self.requests)
            self.requests.append(EchoRequest(now, family, src, dst, ident, seq, payload,
                                             "dropped" if drop else "answered", 0.0 if drop else delay))
            if not drop:
                self._pending_n += 1
                heapq.heappush(self._pending, (now + delay, self._pending_n, family, sock, reply, address, cmsg,
                                               index))
            self._cond.notify_all()
        if not drop and delay == 0:
            self._send_due()

    def _send_due(self) -> None:
        while True:
            with self._cond:
                if not self._pending or self._pending[0][0] > time.monotonic():
                    return
                _, _, family, sock, reply, address, cmsg, _ = heapq.heappop(self._pending)
            try:
                sock.sendmsg([reply], cmsg, 0, address)
                sent = True
            except OSError:
                sent = False
            with self._cond:
                if sent:
                    self.answered[family] += 1
                self._cond.notify_all()


# --------------------------------------------------------------------------- the world


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.02)


class IcmpWorld:
    """client — router — far, both families, the responder in far (see the module doc)."""

    def __init__(self) -> None:
        self._dns: list[Dnsmasq] = []
        self.responder: EchoResponder | None = None
        self.client = netns.Namespace()
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    def _build(self) -> None:
        self.router = netns.Namespace()
        self.far = netns.Namespace()
        n = self.client.number
        o = self.octet = n % 250 + 1
        self.v6 = f"2001:db8:{o}"
        self.link, self.router_link = f"e2e{n}c", f"e2e{n}r"
        self.router_far, self.far_link = f"e2e{n}x", f"e2e{n}f"
        self.client_ip, self.router_ip = f"198.18.{o}.2", f"198.18.{o}.1"
        self.client_ip6, self.router_ip6 = f"{self.v6}::2", f"{self.v6}::1"
        self.router_far_ip, self.far_link_ip = f"198.19.{o}.65", f"198.19.{o}.66"
        self.router_far_ip6, self.far_link_ip6 = f"{self.v6}:f::1", f"{self.v6}:f::2"
        self.far_range4, self.far_range6 = f"198.19.{o}.80/28", f"{self.v6}:5::/64"
        self.far4, self.far6 = f"198.19.{o}.81", f"{self.v6}:5::81"
        self.far4b, self.far6b = f"198.19.{o}.82", f"{self.v6}:5::82"
        self.noroute4, self.noroute6 = f"198.19.{o}.83", f"{self.v6}:5::83"
        self.names = {
            "far.test": (self.far4, self.far6),
            "far4.test": (self.far4, None),
            "far6.test": (None, self.far6),
            "other.test": (self.far4b, self.far6b),
            "noroute.test": (self.noroute4, self.noroute6),
        }
        self.log_dir = Path(tempfile.mkdtemp(prefix=f"e2e-{os.getpid()}-icmp-"))
        c, r, f = self.client, self.router, self.far

        # client ↔ router
        c.ip("link", "add", self.link, "type", "veth", "peer", "name", self.router_link, "netns", r.name)
        # router ↔ far
        r.ip("link", "add", self.router_far, "type", "veth", "peer", "name", self.far_link, "netns", f.name)
        for ns, link in ((c, self.link), (r, self.router_link), (r, self.router_far), (f, self.far_link)):
            ns.ip("link", "set", link, "addrgenmode", "none")
        c.ip("addr", "add", f"{self.client_ip}/24", "dev", self.link)
        c.ip("addr", "add", f"{self.client_ip6}/64", "dev", self.link, "nodad")
        r.ip("addr", "add", f"{self.router_ip}/24", "dev", self.router_link)
        r.ip("addr", "add", f"{self.router_ip6}/64", "dev", self.router_link, "nodad")
        r.ip("addr", "add", "fe80::1/64", "dev", self.router_link, "nodad")
        r.ip("addr", "add", f"{self.router_far_ip}/29", "dev", self.router_far)
        r.ip("addr", "add", f"{self.router_far_ip6}/64", "dev", self.router_far, "nodad")
        r.ip("addr", "add", "fe80::1/64", "dev", self.router_far, "nodad")
        f.ip("addr", "add", f"{self.far_link_ip}/29", "dev", self.far_link)
        f.ip("addr", "add", f"{self.far_link_ip6}/64", "dev", self.far_link, "nodad")
        f.ip("addr", "add", "fe80::2/64", "dev", self.far_link, "nodad")
        for address in (self.far4, self.far4b, self.noroute4):
            f.ip("addr", "add", f"{address}/32", "dev", "lo")
        for address in (self.far6, self.far6b, self.noroute6):
            f.ip("addr", "add", f"{address}/128", "dev", "lo", "nodad")
        for key in ("net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.icmp_ratelimit=0",
                    "net.ipv6.icmp.ratelimit=0"):
            r.exec("sysctl", "-qw", key, check=True, capture_output=True)
        for key in ("net.ipv4.icmp_echo_ignore_all=1", "net.ipv6.icmp.echo_ignore_all=1"):
            f.exec("sysctl", "-qw", key, check=True, capture_output=True)
        for ns, link in ((r, self.router_link), (r, self.router_far), (f, self.far_link), (c, self.link)):
            ns.ip("link", "set", link, "up")
        c.ip("route", "replace", "default", "via", self.router_ip, "dev", self.link)
        c.ip("-6", "route", "replace", "default", "via", self.router_ip6, "dev", self.link)
        c.ip("route", "add", "unreachable", f"{self.noroute4}/32")
        c.ip("-6", "route", "add", "unreachable", f"{self.noroute6}/128")
        self._far_routes()
        f.ip("route", "add", "default", "via", self.router_far_ip)
        f.ip("-6", "route", "add", "default", "via", self.router_far_ip6, "dev", self.far_link)

        self.resolv_dir = Path("/etc/netns") / c.name
        self.resolv_dir.mkdir(parents=True, exist_ok=True)
        (self.resolv_dir / "resolv.conf").write_text(f"nameserver {self.router_ip}\n")
        records = [f"--host-record={name}," + ",".join(a for a in pair if a) for name, pair in self.names.items()]
        self.dns = Dnsmasq(r.name, self.router_ip, records, self.log_dir)
        self._dns.append(self.dns)

        self.responder = EchoResponder(f.name)
        for ns, link in ((c, self.link), (f, self.far_link)):
            _wait(lambda ns=ns, link=link: "LOWER_UP" in ns.ip("-br", "link", "show", "dev", link).stdout, 10,
                  f"{link} has no carrier")
        self.dns.wait_ready(c.name, "far.test")

    def _far_routes(self, ipv4_mtu: int | None = None) -> None:
        extra = ["mtu", str(ipv4_mtu)] if ipv4_mtu else []
        self.router.ip("route", "replace", self.far_range4, "via", self.far_link_ip, "dev", self.router_far, *extra)
        self.router.ip("-6", "route", "replace", self.far_range6, "via", self.far_link_ip6, "dev", self.router_far)

    # -- the path MTU

    def shrink_mtu(self, link_mtu: int = 1280, ipv4_mtu: int = 1000) -> None:
        """The router↔far link carries `link_mtu` (IPv6's path MTU), the router's IPv4 route toward
        the far range `ipv4_mtu` (IPv4's path MTU)."""
        assert link_mtu >= 1280, "IPv6 needs at least 1280"
        self.link_mtu, self.ipv4_mtu = link_mtu, ipv4_mtu
        self.router.ip("link", "set", self.router_far, "mtu", str(link_mtu))
        self.far.ip("link", "set", self.far_link, "mtu", str(link_mtu))
        self._far_routes(ipv4_mtu)

    def path_mtu(self, family: str) -> int:
        return self.ipv4_mtu if family == "ipv4" else self.link_mtu

    def block_router_errors(self) -> None:
        """Every ICMP the router originates (frag needed, packet too big, unreachable…) vanishes."""
        r = self.router
        r.ip("route", "add", "blackhole", "default", "table", ROUTER_ERROR_TABLE)
        r.ip("-6", "route", "add", "blackhole", "default", "table", ROUTER_ERROR_TABLE)
        r.ip("rule", "add", "iif", "lo", "ipproto", "icmp", "table", ROUTER_ERROR_TABLE)
        r.ip("-6", "rule", "add", "iif", "lo", "ipproto", "ipv6-icmp", "table", ROUTER_ERROR_TABLE)

    def allow_router_errors(self) -> None:
        r = self.router
        r.ip("rule", "del", "iif", "lo", "ipproto", "icmp", "table", ROUTER_ERROR_TABLE)
        r.ip("-6", "rule", "del", "iif", "lo", "ipproto", "ipv6-icmp", "table", ROUTER_ERROR_TABLE)

    # -- administratively prohibited

    def prohibit(self, address: str) -> None:
        flag, length = ("-6", 128) if ":" in address else ("-4", 32)
        self.router.ip(flag, "route", "add", "prohibit", f"{address}/{length}")

    def unprohibit(self, address: str) -> None:
        flag, length = ("-6", 128) if ":" in address else ("-4", 32)
        self.router.ip(flag, "route", "del", "prohibit", f"{address}/{length}")

    # -- the client's own tools

    def ping(self, address: str, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
        """iputils ping from the client namespace (root: raw sockets there)."""
        return self.client.exec("ping", "-n", *args, address, capture_output=True, text=True, timeout=timeout)

    def ping_process(self, address: str, *args: str) -> subprocess.Popen:
        return subprocess.Popen(["ip", "netns", "exec", self.client.name, "ping", "-n", *args, address],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def sysctl(self, ns: netns.Namespace, key: str, value: str) -> None:
        ns.exec("sysctl", "-qw", f"{key}={value}", check=True, capture_output=True)

    # -- cleanup

    def close(self) -> None:
        if self.responder is not None:
            self.responder.close()
        for dns in self._dns:
            dns.stop()
        resolv_dir = getattr(self, "resolv_dir", None)
        if resolv_dir is not None:
            shutil.rmtree(resolv_dir, ignore_errors=True)
            try:
                resolv_dir.parent.rmdir()
            except OSError:
                pass
        for ns in (getattr(self, "far", None), getattr(self, "router", None), self.client):
            if ns is not None:
                ns.delete()
        log_dir = getattr(self, "log_dir", None)
        if log_dir is not None:
            shutil.rmtree(log_dir, ignore_errors=True)

    def logs(self) -> str:
        return (f"---- responder ----\n{self.responder.summary() if self.responder else None}\n"
                + "\n".join(f"---- dnsmasq {d.address} ----\n{d.output()[-3000:]}" for d in self._dns))


# --------------------------------------------------------------------------- fixtures and reading


@pytest.fixture
def icmp_world(request):
    """A fresh IcmpWorld; torn down (namespaces, responder, dnsmasq, /etc/netns/<client>) in every outcome."""
    w = IcmpWorld()

    def finish() -> None:
        failed = any(getattr(request.node, f"rep_{when}", None) is not None
                     and getattr(request.node, f"rep_{when}").failed for when in ("setup", "call"))
        if failed:
            try:
                print(f"\n{w.logs()}")
            except OSError:
                pass
        w.close()

    request.addfinalizer(finish)
    return w


def start_reachd_in(world: IcmpWorld, *args: str, env: dict | None = None) -> WorldReachd:
    """reachd in the client namespace (so it resolves through the router's dnsmasq), ready."""
    server = WorldReachd(world, *args, env=env)
    try:
        server.wait_ready()
    except BaseException:
        _discard(server)
        raise
    return server


@pytest.fixture
def reachd_icmp(request, icmp_world):
    """`reachd_icmp(*args, env=None)`: reachd in the ICMP world's client namespace, ready;
    stopped (its log printed on failure) at teardown."""
    servers: list = []

    def make(*args: str, env: dict | None = None):
        server = start_reachd_in(icmp_world, *args, env=env)
        servers.append(server)
        return server

    yield make
    for server in reversed(servers):
        _dump_on_failure(request, server)
        stop_reachd(server)


def metrics_text(server) -> str:
    response = http(server.port, "GET", "/metrics", ns=server.netns)
    assert response.status == 200, response
    return response.body.decode()


__all__ = ["EchoRequest", "EchoResponder", "IcmpWorld", "icmp_world", "reachd_icmp", "start_reachd_in",
           "metrics_text", "FAMILIES", "SMALL_PAYLOAD"]
