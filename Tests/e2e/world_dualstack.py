"""The e2e world grown dual-stack, for the per-family and DNS rules (docs/probes.md; the contract's "Partial failures").

Everything of `world.World` stays (the IPv4 link, both dnsmasqs, the silent nameserver, the
dropped IPv4 range, `noroute_ip`); this adds:

    client ns (reachd)               gateway ns                           far ns (the servers)
    <link> 198.18.O.2/24        ──── <gateway_link> 198.18.O.1/24
           2001:db8:O::2/64           2001:db8:O::1/64
    default via 198.18.O.1           forwarding on (both families)
    default via 2001:db8:O::1        <gw_far> 198.19.O.65/29 ───────────── <far_link> 198.19.O.66/29
    unreachable 2001:db8:O:99::/64            2001:db8:O:f::1/64                    2001:db8:O:f::2/64
                                     198.19.O.80/28   via far  (switchable)  lo: 198.19.O.81–.83
                                     2001:db8:O:5::/64 via far (switchable)      2001:db8:O:5::81–83
                                     blackhole 2001:db8:O:d::/64 (dropped, like 198.19.O.128/25)
                                     lo: 198.19.O.55, .56, .58: FakeDNS servers the test drives
                                         198.19.O.57: nothing listens on UDP 53 (ICMP port unreachable)
                                         198.19.O.59: dnsmasq_without_aaaa() (on demand)
                                         2001:db8:O:53::55, ::56: IPv6 FakeDNS servers (fake_dns6)
                                     2001:db8:O::1 (its link address): dns6(), a dnsmasq on
                                         IPv6 (on demand) with the names below

`far_server()` listens on `::` (both families) in the far namespace, so one port answers on the
IPv4 and the IPv6 address of every far name. `break_family("ipv6")` turns the gateway's route
toward the far IPv6 range into a `blackhole`: the client's route stays usable, packets leave and
vanish with no ICMP — "IPv6 route present, IPv6 broken". `reject_family("ipv4"|"ipv6")` makes
it an `unreachable` route instead: the gateway answers every packet toward the range with an ICMP
destination unreachable (IPv4 host unreachable, IPv6 no route), which the client's connect() reports
as EHOSTUNREACH / ENETUNREACH. `restore_family` undoes either.

IPv6 addresses are added with `nodad` (usable at once, no DAD notification a second later) and
the links keep `addrgenmode none` (no link-local address whose DAD would end mid-test). The
gateway's and far's links get a static `fe80::1`/`fe80::2` (nodad): a router solicits a neighbour
for a packet it forwards from its link-local address only. The client's link has none.

Names the primary dnsmasq knows in addition to world.py's (A / AAAA):
    both.test             198.19.O.81   2001:db8:O:5::81     both families work
    v4only.test           198.19.O.82   —
    v6only.test           —             2001:db8:O:5::83
    v4dead.test           198.19.O.158  2001:db8:O:5::81     IPv4 in the dropped range
    v6dead.test           198.19.O.81   2001:db8:O:d::81     IPv6 in the dropped range
    bothdead.test         198.19.O.159  2001:db8:O:d::82
    v6noroute.test        198.19.O.81   2001:db8:O:99::81    the client has no IPv6 route to it
    v4noroute.test        198.19.O.99   2001:db8:O:5::81     the client has no IPv4 route to it
    v4dead-v6noroute.test 198.19.O.160  2001:db8:O:99::82
    bothnoroute.test      198.19.O.99   2001:db8:O:99::83
The second dnsmasq (dns2_ip) knows both.test as 198.19.O.81 only: switching resolv.conf to it
takes a family away from a name.

FakeDNS: a UDP DNS server in the gateway (IPv4 or IPv6) whose answer a test switches with one
assignment (`mode` = noerror, nxdomain, refused, servfail, notimp, malformed, silent; `modes[qtype]`
for one query type — `modes[AAAA] = "silent"` answers A and drops AAAA; `delay` seconds before
answering; `once(*modes)` for the next queries) and which records every query it got. NOERROR
carries `answer` for A and, when set, `answer6` for AAAA.

dnsmasq_without_aaaa(*names): a real dnsmasq that holds only A records (each name → 198.19.O.81)
and, with no upstream and no `--local`, answers their AAAA with REFUSED.

PacketCapture: an AF_PACKET socket on one link of one namespace; what crossed it, parsed down to
the transport ports (to prove "nothing is sent").
"""

from __future__ import annotations

import errno
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass

import pytest

import netns
from conftest import _dump_on_failure, stop_reachd
from world import OK, Dnsmasq, Server, World, start_many_in, start_reachd_in, status, wait_status

FAMILIES = ("ipv4", "ipv6")


class DualStackWorld(World):
    """world.World plus IPv6, the far namespace, FakeDNS servers and a closed DNS port (module doc)."""

    def __init__(self) -> None:
        self._fakes: list[FakeDNS] = []
        self._captures: list[PacketCapture] = []
        self._dns6: Dnsmasq | None = None  # started on demand: dns6(), dnsmasq_without_aaaa()
        self._dns_no_aaaa: Dnsmasq | None = None
        super().__init__()

    def _addresses(self) -> None:
        o = self.octet
        self.v6 = f"2001:db8:{o}"
        self.client_ip6 = f"{self.v6}::2"
        self.gateway_ip6 = f"{self.v6}::1"
        self.far_range4 = f"198.19.{o}.80/28"
        self.far_range6 = f"{self.v6}:5::/64"
        self.dropped_range6 = f"{self.v6}:d::/64"
        self.noroute_range6 = f"{self.v6}:99::/64"
        self.gw_far_ip, self.far_ip = f"198.19.{o}.65", f"198.19.{o}.66"
        self.gw_far_ip6, self.far_ip6 = f"{self.v6}:f::1", f"{self.v6}:f::2"
        # Far service addresses (on the far namespace's lo).
        self.both4, self.both6 = f"198.19.{o}.81", f"{self.v6}:5::81"
        self.v4only4 = f"198.19.{o}.82"
        self.v6only6 = f"{self.v6}:5::83"
        # Dropped (silent) and unroutable addresses.
        self.dead4, self.dead4b, self.dead4c = self.dropped(30), self.dropped(31), self.dropped(32)
        self.dead6, self.dead6b = f"{self.v6}:d::81", f"{self.v6}:d::82"
        self.noroute6, self.noroute6b, self.noroute6c = (f"{self.v6}:99::81", f"{self.v6}:99::82",
                                                         f"{self.v6}:99::83")
        # Nameservers.
        self.fake_dns_ips = [self.svc(55), self.svc(56), self.svc(58)]
        self.fake_dns6_ips = [f"{self.v6}:53::55", f"{self.v6}:53::56"]
        self.dns_closed_ip = self.svc(57)
        self.dns_no_aaaa_ip = self.svc(59)
        self.names = {
            "both.test": (self.both4, self.both6),
            "v4only.test": (self.v4only4, None),
            "v6only.test": (None, self.v6only6),
            "v4dead.test": (self.dead4, self.both6),
            "v6dead.test": (self.both4, self.dead6),
            "bothdead.test": (self.dead4b, self.dead6b),
            "v6noroute.test": (self.both4, self.noroute6),
            "v4noroute.test": (self.noroute_ip, self.both6),
            "v4dead-v6noroute.test": (self.dead4c, self.noroute6b),
            "bothnoroute.test": (self.noroute_ip, self.noroute6c),
        }

    def _extra_records(self) -> list[str]:
        self._addresses()
        return [f"--host-record={name}," + ",".join(a for a in pair if a) for name, pair in self.names.items()]

    def _extra_records_dns2(self) -> list[str]:
        # The second dnsmasq knows both.test without its AAAA: a name that loses a family.
        return [f"--host-record=both.test,{self.both4}"]

    def _build(self) -> None:
        super()._build()
        c, g = self.client, self.gateway
        # Client ↔ gateway: IPv6 beside IPv4 on the same veth pair.
        c.ip("addr", "add", f"{self.client_ip6}/64", "dev", self.link, "nodad")
        g.ip("addr", "add", f"{self.gateway_ip6}/64", "dev", self.gateway_link, "nodad")
        c.ip("-6", "route", "replace", "default", "via", self.gateway_ip6, "dev", self.link)
        c.ip("-6", "route", "add", "unreachable", self.noroute_range6)
        for key in ("net.ipv6.conf.all.forwarding=1", "net.ipv4.icmp_ratelimit=0", "net.ipv6.icmp.ratelimit=0"):
            g.exec("sysctl", "-qw", key, check=True, capture_output=True)

        # Gateway ↔ far: the servers live one hop behind the gateway.
        self.far = netns.Namespace()
        f = self.far
        self.gw_far_link = f"e2e{c.number}x"
        self.far_link = f"e2e{c.number}f"
        g.ip("link", "add", self.gw_far_link, "type", "veth", "peer", "name", self.far_link, "netns", f.name)
        g.ip("link", "set", self.gw_far_link, "addrgenmode", "none")
        f.ip("link", "set", self.far_link, "addrgenmode", "none")
        g.ip("addr", "add", f"{self.gw_far_ip}/29", "dev", self.gw_far_link)
        f.ip("addr", "add", f"{self.far_ip}/29", "dev", self.far_link)
        g.ip("addr", "add", f"{self.gw_far_ip6}/64", "dev", self.gw_far_link, "nodad")
        f.ip("addr", "add", f"{self.far_ip6}/64", "dev", self.far_link, "nodad")
        for address in (self.both4, self.v4only4):
            f.ip("addr", "add", f"{address}/32", "dev", "lo")
        for address in (self.both6, self.v6only6):
            f.ip("addr", "add", f"{address}/128", "dev", "lo", "nodad")
        # Link-local addresses on the gateway's and far's links (not the client's): a router sends a
        # neighbour solicitation for a packet it forwards from its link-local address, and without
        # one it sends none at all (ndisc_send_ns) — forwarded IPv6 would never leave.
        g.ip("addr", "add", "fe80::1/64", "dev", self.gateway_link, "nodad")
        g.ip("addr", "add", "fe80::1/64", "dev", self.gw_far_link, "nodad")
        f.ip("addr", "add", "fe80::2/64", "dev", self.far_link, "nodad")
        g.ip("link", "set", self.gw_far_link, "up")
        f.ip("link", "set", self.far_link, "up")
        f.ip("route", "add", "default", "via", self.gw_far_ip)
        f.ip("-6", "route", "add", "default", "via", self.gw_far_ip6, "dev", self.far_link)
        self.restore_family("ipv4")
        self.restore_family("ipv6")
        g.ip("-6", "route", "add", "blackhole", self.dropped_range6)

        # Nameservers the test drives, and one address where nothing listens on UDP 53.
        for address in (*self.fake_dns_ips, self.dns_closed_ip, self.dns_no_aaaa_ip):
            g.ip("addr", "add", f"{address}/32", "dev", "lo")
        for address in self.fake_dns6_ips:
            g.ip("addr", "add", f"{address}/128", "dev", "lo", "nodad")
        _wait(lambda: "LOWER_UP" in f.ip("-br", "link", "show", "dev", self.far_link).stdout, 10,
              f"{self.far_link} carrier")
        _wait(lambda: "LOWER_UP" in c.ip("-br", "link", "show", "dev", self.link).stdout, 10, f"{self.link} carrier")

    # -- families

    def family_range(self, family: str) -> str:
        return {"ipv4": self.far_range4, "ipv6": self.far_range6}[family]

    def break_family(self, family: str) -> None:
        """The gateway silently drops `family` toward the far servers (the client's route stays)."""
        flag = "-4" if family == "ipv4" else "-6"
        self.gateway.ip(flag, "route", "replace", "blackhole", self.family_range(family))

    def reject_family(self, family: str) -> None:
        """The gateway answers `family` toward the far servers with ICMP destination unreachable
        (an `unreachable` route; the client's own route stays usable). The client's connect()
        fails with EHOSTUNREACH (IPv4) / ENETUNREACH (IPv6) at once.

        The kernel rate-limits the IPv4 errors a router sends per destination (ip_error: a burst
        of 5, then 1 a second, a global sysctl a test must not touch): a test keeps the IPv4
        probes that meet this route few, or a later one times out instead. IPv6 has no such limit
        here (`net.ipv6.icmp.ratelimit=0` in the gateway)."""
        flag = "-4" if family == "ipv4" else "-6"
        self.gateway.ip(flag, "route", "replace", "unreachable", self.family_range(family))

    def connect_errno(self, address: str, port: int, timeout: float = 3.0) -> int | None:
        """A TCP connect from the client namespace: None when it succeeds, else its errno
        (`errno.ETIMEDOUT` when nothing came back within `timeout`)."""
        sock = netns.socket_in(self.client.name, socket.AF_INET6 if ":" in address else socket.AF_INET)
        try:
            sock.settimeout(timeout)
            sock.connect((address, port))
            return None
        except socket.timeout:
            return errno.ETIMEDOUT
        except OSError as error:
            return error.errno
        finally:
            sock.close()

    def restore_family(self, family: str) -> None:
        flag = "-4" if family == "ipv4" else "-6"
        via = self.far_ip if family == "ipv4" else self.far_ip6
        self.gateway.ip(flag, "route", "replace", self.family_range(family), "via", via, "dev", self.gw_far_link)

    def add_second_link_ipv6(self) -> str:
        """A second veth, client 2001:db8:O:2::2/64 ↔ gateway ::1, carrier up; the client's route
        to the far IPv6 range goes through it (IPv4 still leaves through `link`). Returns its name."""
        c, g = self.client, self.gateway
        self.link6 = f"e2e{c.number}s"
        self.gateway_link6 = f"e2e{c.number}t"
        c.ip("link", "add", self.link6, "type", "veth", "peer", "name", self.gateway_link6, "netns", g.name)
        c.ip("link", "set", self.link6, "addrgenmode", "none")
        g.ip("link", "set", self.gateway_link6, "addrgenmode", "none")
        c.ip("addr", "add", f"{self.v6}:2::2/64", "dev", self.link6, "nodad")
        g.ip("addr", "add", f"{self.v6}:2::1/64", "dev", self.gateway_link6, "nodad")
        g.ip("addr", "add", "fe80::1/64", "dev", self.gateway_link6, "nodad")
        g.ip("link", "set", self.gateway_link6, "up")
        c.ip("link", "set", self.link6, "up")
        _wait(lambda: "LOWER_UP" in c.ip("-br", "link", "show", "dev", self.link6).stdout, 10,
              f"{self.link6} carrier")
        c.ip("-6", "route", "add", self.far_range6, "via", f"{self.v6}:2::1", "dev", self.link6)
        return self.link6

    def link_up(self, default_route: bool = True) -> None:
        super().link_up(default_route)
        if default_route:
            self.client.ip("-6", "route", "replace", "default", "via", self.gateway_ip6, "dev", self.link)

    # -- servers

    def far_server(self, default=OK) -> Server:
        """A started HTTP/TCP server on the far namespace's `::` (both families), any free port."""
        server = Server(self.far.name, 0, default=default, bind="::")
        self._servers.append(server)
        return server.start()

    def far_closed_port(self) -> int:
        """A far port nothing listens on, either family (connections get an RST: `refused`)."""
        sock = netns.socket_in(self.far.name, socket.AF_INET6)
        try:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sock.bind(("::", 0))
            return sock.getsockname()[1]
        finally:
            sock.close()

    def fake_dns(self, index: int = 0, mode: str = "noerror", modes: dict[int, str] | None = None,
                 answer6: str | None = None) -> "FakeDNS":
        """FakeDNS number `index` (0–2) on the gateway, started in `mode` (`modes`: per query type).
        Its A answer is both.test's IPv4 address; its AAAA answer `answer6` (none by default)."""
        server = FakeDNS(self.gateway.name, self.fake_dns_ips[index], mode=mode, answer=self.both4,
                         answer6=answer6, modes=modes)
        self._fakes.append(server)
        return server

    def fake_dns6(self, index: int = 0, mode: str = "noerror", modes: dict[int, str] | None = None,
                  answer6: str | None = None) -> "FakeDNS":
        """FakeDNS number `index` (0–1) on an IPv6 address of the gateway (2001:db8:O:53::55/56)."""
        server = FakeDNS(self.gateway.name, self.fake_dns6_ips[index], mode=mode, answer=self.both4,
                         answer6=answer6, modes=modes)
        self._fakes.append(server)
        return server

    def dns6(self) -> Dnsmasq:
        """A dnsmasq on the gateway's IPv6 link address (started on first use) knowing db.test and
        every name of the module doc, A and AAAA — a nameserver reached over IPv6."""
        if self._dns6 is None:
            records = [f"--host-record=db.test,{self.db_ip}", *self._extra_records()]
            self._dns6 = self._dnsmasq(self.gateway_ip6, records)
            self._dns6.wait_ready(self.client.name, "db.test")
        return self._dns6

    def dnsmasq_without_aaaa(self, *names: str) -> Dnsmasq:
        """A dnsmasq on 198.19.O.59 (started on first use) holding only an A record for each of
        `names` (both.test's IPv4 address), without `--local`: with no upstream it answers their
        AAAA queries REFUSED. The first call's names are the ones it knows."""
        if self._dns_no_aaaa is None:
            assert names, "name the records"
            records = [f"--host-record={name},{self.both4}" for name in names]
            self._dns_no_aaaa = self._dnsmasq(self.dns_no_aaaa_ip, records, local=False)
            self._dns_no_aaaa.wait_ready(self.client.name, names[0])
        return self._dns_no_aaaa

    def capture(self, side: str = "gateway") -> "PacketCapture":
        """What arrives at the gateway's end of the client link (everything the client sends)."""
        assert side == "gateway"
        capture = PacketCapture(self.gateway.name, self.gateway_link)
        self._captures.append(capture)
        return capture

    # -- cleanup

    def close(self) -> None:
        for fake in getattr(self, "_fakes", []):
            fake.close()
        for capture in getattr(self, "_captures", []):
            capture.close()
        super().close()
        far = getattr(self, "far", None)
        if far is not None:
            far.delete()


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached within {timeout}s")
        time.sleep(0.02)


# --------------------------------------------------------------------------- a DNS server the test drives


RCODES = {"noerror": 0, "formerr": 1, "servfail": 2, "nxdomain": 3, "notimp": 4, "refused": 5}
MODES = (*RCODES, "malformed", "silent")
A, AAAA = 1, 28  # query types


@dataclass(frozen=True)
class Query:
    name: str
    qtype: int
    at: float
    source: str
    mode: str  # what it was answered with


class FakeDNS:
    """A UDP DNS server bound to `address`:53 (IPv4 or IPv6) in `namespace`; answers every name
    per `mode`, or per `modes[qtype]` for a query type listed there.

    - noerror: NOERROR with one A record (`answer`) for an A query, one AAAA record (`answer6`) for
      an AAAA query when `answer6` is set, no record otherwise;
    - nxdomain / refused / servfail / notimp / formerr: that rcode, no records;
    - malformed: the right id and a NOERROR header announcing one answer, then a cut-off record;
    - silent: no answer at all (and no ICMP: the socket is bound);
    - `delay`: seconds to wait before answering (a query still in flight);
    - `once(*modes)`: the next queries get these modes, in order, then `mode`/`modes` again;
    - `modes` (qtype → mode, e.g. `{AAAA: "silent"}`): assign or change entries at any time.
    """

    def __init__(self, namespace: str, address: str, mode: str = "noerror", answer: str = "198.19.0.1",
                 answer6: str | None = None, modes: dict[int, str] | None = None) -> None:
        assert mode in MODES, mode
        assert all(m in MODES for m in (modes or {}).values()), modes
        self.address = address
        self.mode = mode
        self.modes: dict[int, str] = dict(modes or {})
        self.delay = 0.0
        self.answer = answer
        self.answer6 = answer6
        self.queries: list[Query] = []
        self._once: deque[str] = deque()
        self._cond = threading.Condition()
        self.sock = netns.socket_in(namespace, socket.AF_INET6 if ":" in address else socket.AF_INET,
                                    socket.SOCK_DGRAM)
        self.sock.bind((address, 53))
        self.sock.settimeout(0.1)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"fakedns-{address}", daemon=True)
        self._thread.start()

    def once(self, *modes: str) -> None:
        assert all(m in MODES for m in modes), modes
        with self._cond:
            self._once.extend(modes)

    def query_count(self) -> int:
        with self._cond:
            return len(self.queries)

    def of_type(self, qtype: int, name: str | None = None) -> list[Query]:
        """The queries of one type (and one name, case-insensitively) received so far."""
        with self._cond:
            return [q for q in self.queries if q.qtype == qtype and (name is None or q.name.lower() == name.lower())]

    def wait_queries(self, count: int, timeout: float) -> list[Query]:
        """Wait until `count` queries arrived in all; returns them."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.queries) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"FakeDNS {self.address}: {len(self.queries)} queries, wanted {count}")
                self._cond.wait(remaining)
            return list(self.queries)

    def close(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=2)
        self.sock.close()

    def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                data, peer = self.sock.recvfrom(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                ident, flags, qdcount = struct.unpack("!HHH", data[:6])
                name, end = _read_name(data, 12)
                qtype = struct.unpack("!H", data[end:end + 2])[0]
                question = data[12:end + 4]
            except (struct.error, IndexError, UnicodeDecodeError):
                continue
            with self._cond:
                mode = self._once.popleft() if self._once else self.modes.get(qtype, self.mode)
                self.queries.append(Query(name, qtype, time.monotonic(), peer[0], mode))
                self._cond.notify_all()
                delay = self.delay
            if mode == "silent":
                continue
            reply = self._reply(ident, flags, question, qtype, mode)
            if delay:
                threading.Timer(delay, self._send, args=(reply, peer)).start()
            else:
                self._send(reply, peer)

    def _send(self, reply: bytes, peer) -> None:
        try:
            self.sock.sendto(reply, peer)
        except OSError:
            pass

    def _reply(self, ident: int, query_flags: int, question: bytes, qtype: int, mode: str) -> bytes:
        rd = query_flags & 0x0100
        rcode = RCODES.get(mode, 0)
        flags = 0x8000 | 0x0400 | rd | 0x0080 | rcode  # QR, AA, RD copied, RA, rcode
        if mode == "malformed":
            header = struct.pack("!HHHHHH", ident, flags, 1, 1, 0, 0)
            return header + question + b"\xc0\x0c\x00\x01\x00"  # an answer cut off in its type/class
        records = b""
        if mode == "noerror" and qtype == A:
            records = (b"\xc0\x0c" + struct.pack("!HHIH", A, 1, 0, 4) + socket.inet_aton(self.answer))
        elif mode == "noerror" and qtype == AAAA and self.answer6:
            records = (b"\xc0\x0c" + struct.pack("!HHIH", AAAA, 1, 0, 16)
                       + socket.inet_pton(socket.AF_INET6, self.answer6))
        header = struct.pack("!HHHHHH", ident, flags, 1, 1 if records else 0, 0, 0)
        return header + question + records


def _read_name(data: bytes, offset: int) -> tuple[str, int]:
    labels = []
    while True:
        length = data[offset]
        if length == 0:
            return ".".join(labels), offset + 1
        if length & 0xC0:
            raise IndexError("compression in a question")
        labels.append(data[offset + 1:offset + 1 + length].decode("ascii"))
        offset += 1 + length


# --------------------------------------------------------------------------- packet capture


ETH_P_ALL = 0x0003


@dataclass(frozen=True)
class Packet:
    at: float
    family: str  # ipv4 / ipv6 / other
    proto: int  # 6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6, ...; -1 when not IP
    src: str
    dst: str
    sport: int | None
    dport: int | None


class PacketCapture:
    """Every frame received on `link` in `namespace` (AF_PACKET), parsed to IP and ports."""

    def __init__(self, namespace: str, link: str) -> None:
        self.sock = netns.socket_in(namespace, socket.AF_PACKET, socket.SOCK_RAW)
        self.sock.bind((link, ETH_P_ALL))
        self.sock.settimeout(0.1)
        self.packets: list[Packet] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"capture-{link}", daemon=True)
        self._thread.start()

    def snapshot(self) -> list[Packet]:
        with self._lock:
            return list(self.packets)

    def udp(self, since: float = 0.0) -> list[Packet]:
        return [p for p in self.snapshot() if p.proto == 17 and p.at >= since]

    def close(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=2)
        self.sock.close()

    def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                frame, meta = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            packet = _parse_frame(frame, time.monotonic())
            with self._lock:
                self.packets.append(packet)


def _parse_frame(frame: bytes, at: float) -> Packet:
    ethertype = struct.unpack("!H", frame[12:14])[0]
    ip = frame[14:]
    if ethertype == 0x0800 and len(ip) >= 20:
        header_length = (ip[0] & 0x0F) * 4
        proto = ip[9]
        src, dst = socket.inet_ntop(socket.AF_INET, ip[12:16]), socket.inet_ntop(socket.AF_INET, ip[16:20])
        return Packet(at, "ipv4", proto, src, dst, *_ports(proto, ip[header_length:]))
    if ethertype == 0x86DD and len(ip) >= 40:
        proto = ip[6]
        src, dst = socket.inet_ntop(socket.AF_INET6, ip[8:24]), socket.inet_ntop(socket.AF_INET6, ip[24:40])
        return Packet(at, "ipv6", proto, src, dst, *_ports(proto, ip[40:]))
    return Packet(at, "other", -1, "", "", None, None)


def _ports(proto: int, payload: bytes) -> tuple[int | None, int | None]:
    if proto in (6, 17) and len(payload) >= 4:
        return struct.unpack("!HH", payload[:4])
    return None, None


# --------------------------------------------------------------------------- fixtures and reading


@pytest.fixture
def dual_world(request):
    """A fresh DualStackWorld; torn down (namespaces, /etc/netns/<client>, servers) in every outcome."""
    w = DualStackWorld()

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
def reachd_dual(request, dual_world):
    """`reachd_dual(*args, env=None)`: reachd in the dual-stack world's client namespace, ready;
    stopped (its log printed on failure) at teardown. `reachd_dual.many([args], [args])` starts
    several at once."""
    servers: list = []

    def make(*args: str, env: dict | None = None):
        server = start_reachd_in(dual_world, *args, env=env)
        servers.append(server)
        return server

    def many(*arg_lists: list[str]):
        started = start_many_in(dual_world, *arg_lists)
        servers.extend(started)
        return started

    make.many = many
    yield make
    for server in reversed(servers):
        _dump_on_failure(request, server)
        stop_reachd(server)


def family_of(address: str) -> str:
    return "ipv6" if ":" in address else "ipv4"


def wait_dns(server, predicate, timeout: float) -> dict:
    """Poll /status until `predicate(doc["dns"])`; returns the `dns` object. A document without
    `dns` fails at once."""
    def check(doc: dict) -> bool:
        assert isinstance(doc.get("dns"), dict), f"the document has no dns object: {sorted(doc)}"
        return predicate(doc["dns"])
    doc = wait_status(server, check, timeout, what="dns")
    return doc["dns"]


def server_entry(dns: dict, address: str) -> dict:
    for entry in dns.get("servers") or []:
        if entry.get("address") == address:
            return entry
    raise KeyError(f"no server {address} in {dns.get('servers')}")


__all__ = ["A", "AAAA", "DualStackWorld", "FakeDNS", "PacketCapture", "Packet", "Query", "dual_world", "reachd_dual",
           "family_of", "wait_dns", "server_entry", "status", "FAMILIES"]
