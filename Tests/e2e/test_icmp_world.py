"""The ICMP world itself (no reachd involved), checked with iputils ping from the client namespace:
the responder answers both families (the far kernel does not), delays and drops as told and
counts truthfully; the shrunk onward link makes the router send "fragmentation needed" /
"packet too big" naming the smaller MTU, and blocking the router's ICMP makes them vanish while
small echoes still pass; `prohibit` gets administratively-prohibited errors; the client's
`unreachable` routes send nothing.

If these fail, test_icmp_targets.py would fail for the world's sake, not reachd's.
"""

from __future__ import annotations

import re
import shutil

import pytest

from icmp_world import IcmpWorld, icmp_world  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.timeout(90),
              pytest.mark.skipif(shutil.which("ping") is None, reason="iputils-ping is not installed")]


def test_the_responder_answers_both_families_and_counts(icmp_world):
    w = icmp_world
    for address, family in ((w.far4, "ipv4"), (w.far6, "ipv6")):
        result = w.ping(address, "-c", "3", "-i", "0.2", "-W", "1")
        assert result.returncode == 0, result.stdout + result.stderr
        assert "3 received" in result.stdout, result.stdout
        requests = w.responder.of(family, dst=address)
        assert len(requests) == 3 and all(r.small and r.action == "answered" for r in requests), requests
        assert [r.payload for r in requests] == [56, 56, 56], requests
        assert w.responder.answered[family] == 3
    # A name through the router's dnsmasq.
    result = w.ping("far.test", "-6", "-c", "1", "-W", "1")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_far_kernel_does_not_answer(icmp_world):
    """The replies are the responder's: dropping all of them leaves the ping unanswered."""
    w = icmp_world
    w.responder.drop_all = True
    for address in (w.far4, w.far6):
        result = w.ping(address, "-c", "2", "-i", "0.2", "-W", "1")
        assert "0 received" in result.stdout, result.stdout
    assert w.responder.answered == {"ipv4": 0, "ipv6": 0}
    assert len(w.responder.snapshot()) == 4, w.responder.summary()
    assert sum(r.action == "dropped" for r in w.responder.snapshot()) == 4


def test_delay_and_drop(icmp_world):
    w = icmp_world
    w.responder.delay = 0.3
    result = w.ping(w.far4, "-c", "2", "-i", "0.2", "-W", "2")
    rtts = [float(x) for x in re.findall(r"time=([\d.]+) ms", result.stdout)]
    assert len(rtts) == 2 and all(290 <= t <= 600 for t in rtts), result.stdout
    w.responder.reset()
    w.responder.drop_every = 3
    result = w.ping(w.far6, "-c", "9", "-i", "0.1", "-W", "1")
    assert "9 packets transmitted, 6 received" in result.stdout, result.stdout
    seqs = [r.seq for r in w.responder.of("ipv6") if r.action == "dropped"]
    assert seqs == [3, 6, 9], seqs  # every third small request, counted per family
    w.responder.reset()
    w.responder.delay_next(1, 0.3)
    result = w.ping(w.far4, "-c", "3", "-i", "0.2", "-W", "2")
    rtts = {int(seq): float(t) for seq, t in re.findall(r"icmp_seq=(\d+) ttl=\d+ time=([\d.]+) ms", result.stdout)}
    assert len(rtts) == 3 and rtts[1] >= 290 and rtts[2] < 100 and rtts[3] < 100, result.stdout


def test_full_size_echo_and_the_shrunk_link(icmp_world):
    w = icmp_world
    # The whole path carries 1500 first: a full-size echo (MTU − 28 / − 48) is answered.
    for address, size in ((w.far4, 1472), (w.far6, 1452)):
        result = w.ping(address, "-c", "1", "-M", "do", "-s", str(size), "-W", "1")
        assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(r.packet_size for r in w.responder.snapshot() if not r.small) == [1500, 1500]

    w.shrink_mtu(1280, 1000)
    flush(w)
    result = w.ping(w.far4, "-c", "1", "-M", "do", "-s", "1472", "-W", "1")
    assert "Frag needed and DF set (mtu = 1000)" in result.stdout, result.stdout
    result = w.ping(w.far6, "-c", "1", "-M", "do", "-s", "1452", "-W", "1")
    assert "Packet too big: mtu=1280" in result.stdout, result.stdout
    # What fits still passes.
    for address, size in ((w.far4, 972), (w.far6, 1232)):
        result = w.ping(address, "-c", "1", "-M", "do", "-s", str(size), "-W", "1")
        assert result.returncode == 0, result.stdout + result.stderr

    # The router's own ICMP vanishes: no error, no reply — a path-MTU blackhole; small echoes pass.
    w.block_router_errors()
    flush(w)
    for address, size in ((w.far4, 1472), (w.far6, 1452)):
        result = w.ping(address, "-c", "1", "-M", "do", "-s", str(size), "-W", "1")
        assert "0 received" in result.stdout and "From " not in result.stdout, result.stdout
        assert "+1 errors" not in result.stdout, result.stdout
        result = w.ping(address, "-c", "2", "-i", "0.2", "-W", "1")
        assert "2 received" in result.stdout, result.stdout

    w.allow_router_errors()
    flush(w)
    result = w.ping(w.far4, "-c", "1", "-M", "do", "-s", "1472", "-W", "1")
    assert "(mtu = 1000)" in result.stdout, result.stdout
    result = w.ping(w.far6, "-c", "1", "-M", "do", "-s", "1452", "-W", "1")
    assert "mtu=1280" in result.stdout, result.stdout
    # Nothing full-size ever reached the far namespace after the shrink.
    assert sorted(r.packet_size for r in w.responder.snapshot() if not r.small and r.payload > 1300) == [1500, 1500]


def test_prohibited_and_no_route(icmp_world):
    w = icmp_world
    w.prohibit(w.far4b)
    w.prohibit(w.far6b)
    # Four echoes over 1.5 s: the router's first IPv4 error toward a source it has no tokens for
    # yet is not sent (`ip_error` starts a peer empty and earns one error a second, see
    # icmp_world), so a single echo met an error or nothing depending on earlier tests.
    result = w.ping(w.far4b, "-c", "4", "-i", "0.5", "-W", "1")
    assert "Packet filtered" in result.stdout, result.stdout  # ICMP type 3 code 13
    result = w.ping(w.far6b, "-c", "1", "-W", "1")
    assert "Administratively prohibited" in result.stdout, result.stdout
    for address in (w.noroute4, w.noroute6):
        result = w.ping(address, "-c", "1", "-W", "1")
        assert result.returncode != 0 and "No route to host" in result.stderr, result.stdout + result.stderr
    assert w.responder.snapshot() == [], w.responder.summary()
    w.unprohibit(w.far4b)
    result = w.ping(w.far4b, "-c", "1", "-W", "1")
    assert result.returncode == 0, result.stdout


def flush(w: IcmpWorld) -> None:
    """Forget the path MTUs the client learnt (ping -M do obeys them)."""
    w.client.ip("route", "flush", "cache")
    w.client.ip("-6", "route", "flush", "cache")


def test_mangled_replies(icmp_world):
    """`mangle`: the replies carry another identifier (ping, matching by identifier, gets nothing
    back) or another sequence (ping shows the sequence it got)."""
    w = icmp_world
    w.responder.mangle = "ident"
    for address in (w.far4, w.far6):
        result = w.ping(address, "-c", "2", "-i", "0.2", "-W", "1")
        assert "0 received" in result.stdout, result.stdout
    w.responder.mangle = "seq"
    for address in (w.far4, w.far6):
        result = w.ping(address, "-c", "1", "-W", "1")
        assert "icmp_seq=1001 " in result.stdout, result.stdout
    assert w.responder.answered == {"ipv4": 3, "ipv6": 3}
    w.responder.reset()
    result = w.ping(w.far4, "-c", "1", "-W", "1")
    assert result.returncode == 0 and "icmp_seq=1 " in result.stdout, result.stdout
