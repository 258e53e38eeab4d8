"""The dual-stack world itself (no reachd feature involved): IPv6 beside IPv4, AAAA records, servers
on both families, one family broken past the first hop, the DNS servers a test drives, the
closed DNS port, the unroutable addresses and the packet capture.

If these fail, test_partial_failures.py and test_dns_check.py would fail for the world's sake,
not reachd's: a broken world fails here, loudly and separately.
"""

from __future__ import annotations

import errno
import socket
import struct
import subprocess
import time

import pytest

import netns
from world import HANG, NO_CONTENT, UNAVAILABLE, dns_query, redirect, status  # noqa: F401
from world_dualstack import DualStackWorld, dual_world, reachd_dual  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.timeout(90)]


def get(w, host: str, port: int, path: str = "/", timeout: float = 2.0) -> bytes:
    """One HTTP GET from the client namespace to an address of either family; the raw answer."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = netns.socket_in(w.client.name, family)
    sock.settimeout(timeout)
    try:
        sock.connect((host, port))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return data
            data += chunk
    finally:
        sock.close()


def still_connecting_after(w, host: str, port: int, seconds: float) -> bool:
    """A SYN to `host` got neither an answer nor an error within `seconds` (silently dropped)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = netns.socket_in(w.client.name, family)
    sock.setblocking(False)
    try:
        assert sock.connect_ex((host, port)) == errno.EINPROGRESS
        time.sleep(seconds)
        if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
            return False
        try:
            sock.getpeername()
            return False  # connected
        except OSError as error:
            return error.errno == errno.ENOTCONN
    finally:
        sock.close()


def route_get(w, address: str) -> subprocess.CompletedProcess:
    return w.client.ip("route", "get", address, check=False)


def test_addresses_routes_and_aaaa_records(dual_world):
    w = dual_world
    c = w.client.name
    # Both families configured on the client link, usable (not tentative: nodad).
    out = w.client.ip("-6", "addr", "show", "dev", w.link).stdout
    assert w.client_ip6 in out and "tentative" not in out, out
    assert f"dev {w.link}" in route_get(w, w.both6).stdout
    assert f"dev {w.link}" in route_get(w, w.both4).stdout
    # Unroutable addresses of each family.
    assert route_get(w, w.noroute6).returncode != 0
    assert route_get(w, w.noroute_ip).returncode != 0
    # Dropped ranges are routed on the client (the gateway drops them, past the first hop).
    assert route_get(w, w.dead6).returncode == 0 and route_get(w, w.dead4).returncode == 0
    # Every name has exactly its A and AAAA records.
    for name, (v4, v6) in w.names.items():
        assert dns_query(c, w.gateway_ip, name, qtype=1) == (0, [v4] if v4 else []), name
        assert dns_query(c, w.gateway_ip, name, qtype=28) == (0, [v6] if v6 else []), name
    # The second dnsmasq knows both.test without its AAAA.
    assert dns_query(c, w.dns2_ip, "both.test", qtype=1) == (0, [w.both4])
    assert dns_query(c, w.dns2_ip, "both.test", qtype=28) == (0, [])
    # world.py's names still answer.
    assert dns_query(c, w.gateway_ip, "db.test") == (0, [w.db_ip])
    assert dns_query(c, w.gateway_ip, "nx.test")[0] == 3


def test_far_server_answers_on_both_families_and_per_family(dual_world):
    w = dual_world
    web = w.far_server(default=NO_CONTENT)
    for host in (w.both4, w.both6, w.v4only4, w.v6only6):
        assert get(w, host, web.port).startswith(b"HTTP/1.1 204"), host
    web.route("/p", redirect("http://login.test/"), family="ipv4")
    web.route("/p", UNAVAILABLE, family="ipv6")
    assert get(w, w.both4, web.port, "/p").startswith(b"HTTP/1.1 302")
    assert get(w, w.both6, web.port, "/p").startswith(b"HTTP/1.1 503")
    assert web.hit_count("/p", family="ipv4") == 1 and web.hit_count("/p", family="ipv6") == 1
    assert web.hit_count("/p") == 2
    closed = w.far_closed_port()
    for host in (w.both4, w.both6):
        with pytest.raises(ConnectionRefusedError):
            get(w, host, closed)


@pytest.mark.parametrize("broken", ["ipv6", "ipv4"])
def test_break_one_family_silently_past_the_first_hop(dual_world, broken):
    w = dual_world
    web = w.far_server(default=NO_CONTENT)
    dead, alive = (w.both6, w.both4) if broken == "ipv6" else (w.both4, w.both6)
    w.break_family(broken)
    # The client still has its route: the break is past the first hop.
    assert route_get(w, dead).returncode == 0 and f"dev {w.link}" in route_get(w, dead).stdout
    assert still_connecting_after(w, dead, web.port, 1.0), f"{broken} not silently dropped"
    assert get(w, alive, web.port).startswith(b"HTTP/1.1 204"), "the other family broke too"
    w.restore_family(broken)
    assert get(w, dead, web.port).startswith(b"HTTP/1.1 204"), f"{broken} not restored"


def test_dropped_ipv6_range_is_silent(dual_world):
    assert still_connecting_after(dual_world, dual_world.dead6, 80, 1.0)


def test_second_link_carries_ipv6_only(dual_world):
    w = dual_world
    web = w.far_server(default=NO_CONTENT)
    link6 = w.add_second_link_ipv6()
    assert f"dev {link6}" in route_get(w, w.both6).stdout
    assert f"dev {w.link}" in route_get(w, w.both4).stdout
    assert get(w, w.both6, web.port).startswith(b"HTTP/1.1 204")


@pytest.mark.parametrize("mode,rcode", [("noerror", 0), ("nxdomain", 3), ("refused", 5), ("servfail", 2),
                                        ("notimp", 4)])
def test_fake_dns_answers_each_rcode(dual_world, mode, rcode):
    w = dual_world
    fake = w.fake_dns(0, mode)
    got = dns_query(w.client.name, fake.address, "check.test")
    assert got == (rcode, [w.both4] if mode == "noerror" else []), got
    assert dns_query(w.client.name, fake.address, "check.test", qtype=28) == (rcode, [])
    queries = fake.wait_queries(2, timeout=1)
    assert [(q.name, q.qtype, q.mode) for q in queries] == [("check.test", 1, mode), ("check.test", 28, mode)]
    assert queries[0].source == w.client_ip


def test_fake_dns_switches_delays_malformed_and_silent(dual_world):
    w = dual_world
    c = w.client.name
    fake = w.fake_dns(1, "refused")
    fake.once("servfail")
    assert dns_query(c, fake.address, "a.test")[0] == 2
    assert dns_query(c, fake.address, "a.test")[0] == 5
    fake.mode = "noerror"
    assert dns_query(c, fake.address, "a.test")[0] == 0
    fake.mode = "silent"
    with pytest.raises(TimeoutError):
        dns_query(c, fake.address, "a.test", timeout=0.5)
    fake.mode = "malformed"
    with pytest.raises((struct.error, IndexError)):
        dns_query(c, fake.address, "a.test")  # the world's own parser chokes on the cut-off answer
    fake.mode = "noerror"
    fake.delay = 1.0
    t0 = time.monotonic()
    assert dns_query(c, fake.address, "a.test", timeout=3)[0] == 0
    assert time.monotonic() - t0 >= 0.9


def test_closed_dns_port_answers_icmp_port_unreachable(dual_world):
    """Nothing listens on 198.19.O.57:53: a connected UDP socket gets ECONNREFUSED (ICMP)."""
    w = dual_world
    for _ in range(5):  # no ICMP rate limit in the gateway: every query gets its ICMP
        sock = netns.socket_in(w.client.name, socket.AF_INET, socket.SOCK_DGRAM)
        sock.settimeout(2)
        try:
            sock.connect((w.dns_closed_ip, 53))
            sock.send(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x01a\x04test\x00\x00\x01\x00\x01")
            with pytest.raises(ConnectionRefusedError):
                sock.recv(512)
        finally:
            sock.close()


def test_silent_and_unroutable_nameservers(dual_world):
    w = dual_world
    with pytest.raises(TimeoutError):
        dns_query(w.client.name, w.dns_silent_ip, "db.test", timeout=0.5)
    assert route_get(w, w.noroute_ip).returncode != 0


def test_capture_sees_what_the_client_sends(dual_world):
    w = dual_world
    capture = w.capture()
    t0 = time.monotonic()
    fake = w.fake_dns(0, "noerror")
    dns_query(w.client.name, fake.address, "seen.test")
    deadline = time.monotonic() + 2
    while not capture.udp(since=t0) and time.monotonic() < deadline:
        time.sleep(0.02)
    udp = capture.udp(since=t0)
    assert any(p.dst == fake.address and p.dport == 53 and p.src == w.client_ip for p in udp), udp
    web = w.far_server(default=NO_CONTENT)
    get(w, w.both6, web.port)
    time.sleep(0.1)
    assert any(p.family == "ipv6" and p.proto == 6 and p.dport == web.port for p in capture.snapshot())


def test_resolv_conf_and_reachd_in_the_dual_world(dual_world, reachd_dual):
    """reachd runs in the client namespace, sees both families routable, reads the world's resolv.conf;
    the /etc/netns/<client> directory is the world's and goes with it."""
    w = dual_world
    server = reachd_dual()
    doc = status(server)
    assert doc["state"] == "reachable" and doc["ipv4"] is True and doc["ipv6"] is True, doc
    w.set_nameservers(w.fake_dns_ips[0], w.dns_silent_ip, options="ndots:5")
    out = w.client.exec("cat", "/etc/resolv.conf", capture_output=True, text=True, check=True).stdout
    assert out == f"nameserver {w.fake_dns_ips[0]}\nnameserver {w.dns_silent_ip}\noptions ndots:5\n", out
    assert w.resolv_dir.is_dir()


def test_close_removes_everything():
    """Namespaces (the far one included) and /etc/netns/<client> go with the world."""
    w = DualStackWorld()
    names = {w.client.name, w.gateway.name, w.far.name}
    resolv_dir = w.resolv_dir
    w.fake_dns(0)
    w.capture()
    w.close()
    listed = set(subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split())
    assert not names & listed, names & listed
    assert not resolv_dir.exists()
