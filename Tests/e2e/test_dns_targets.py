"""`dns://SERVER[:PORT]/NAME[?type=T][&expect=V]` targets (docs/probes.md, DESIGN "Targets"):
a nameserver the system does not list, asked alone, once, for NAME's records of one type.

In the dual-stack world (world_dualstack.py): a dnsmasq of this file's own on the gateway, on an
IPv4 address (198.19.O.60) and an IPv6 one (2001:db8:O:53::60), that resolv.conf never names,
with A, AAAA, MX, TXT and SRV records; the world's silent nameserver (`timeout`), its address
where nothing listens on UDP 53 (`refused`), its unroutable addresses (`no-route`), and the far
IPv6 range made `unreachable` at the gateway (`host-unreachable`). Nothing leaves the namespaces.
"""

from __future__ import annotations

import subprocess

import pytest

from conftest import http
from reachd_process import free_port, reachd_binary
from test_metrics import value
from world import status, target_of, target_args, wait_status
from world_dualstack import dual_world, reachd_dual  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]

FAST = ["--target-interval", "1", "--target-timeout", "1", "--target-failures", "1"]


def own_nameserver(w) -> tuple[str, str]:
    """Starts this file's dnsmasq on a new IPv4 and a new IPv6 address of the gateway; returns both."""
    dk4, dk6 = w.svc(60), f"{w.v6}:53::60"
    w.gateway.ip("addr", "add", f"{dk4}/32", "dev", "lo")
    w.gateway.ip("addr", "add", f"{dk6}/128", "dev", "lo", "nodad")
    records = [
        f"--host-record=app.test,{w.both4},{w.both6}",
        f"--host-record=v4.test,{w.v4only4}",
        "--mx-host=app.test,mail.app.test,10",
        "--txt-record=app.test,v=spf1 -all",
        "--srv-host=_http._tcp.app.test,web.app.test,80",
        # 40 addresses: more than a 512-byte UDP answer holds (truncated: asked again over TCP).
        *[f"--host-record=many.test,{w.dropped(i)}" for i in range(60, 100)],
    ]
    for address in (dk4, dk6):
        w._dnsmasq(address, records).wait_ready(w.client.name, "app.test")
    assert dk4 not in w.resolv_path.read_text() and dk6 not in w.resolv_path.read_text()
    return dk4, dk6


def settled(names):
    return lambda doc: all(target_of(doc, name)["state"] != "unknown" for name in names)


def test_answers_of_both_families_every_type_and_each_failure(dual_world, reachd_dual):
    w = dual_world
    dk4, dk6 = own_nameserver(w)
    w.reject_family("ipv6")  # the far IPv6 range: ICMP no route from the gateway
    upper6 = w.both6.upper().replace("::", ":0::")  # equal as an address, not as text
    targets = {
        "a4": f"dns://{dk4}/app.test",
        "a6": f"dns://[{dk6}]:53/app.test?type=AAAA&expect={upper6}",
        "mx": f"dns://{dk4}/app.test?type=MX&expect=MAIL.app.test.",
        "txt": f"dns://[{dk6}]/app.test?type=txt&expect=v%3Dspf1%20-all",
        "srv": f"dns://{dk4}/_http._tcp.app.test?type=SRV&expect=web.app.test",
        "expected": f"dns://{dk4}/app.test?expect={w.both4}",
        # The 40th address: not in a truncated UDP answer (about 30 fit), so found over TCP only.
        "tcp": f"dns://{dk4}/many.test?expect={w.dropped(99)}",
        "nx": f"dns://{dk4}/nx.test",
        "noaaaa": f"dns://[{dk6}]/v4.test?type=AAAA",
        "wrong": f"dns://{dk4}/app.test?expect={w.v4only4}",
        "wrongmx": f"dns://{dk4}/app.test?type=MX&expect=other.app.test",
        "silent": f"dns://{w.dns_silent_ip}/app.test",
        "closed": f"dns://{w.dns_closed_ip}/app.test",
        "noroute4": f"dns://{w.noroute_ip}/app.test",
        "noroute6": f"dns://[{w.noroute6}]/app.test",
        "unreach6": f"dns://[{w.both6}]/app.test",
    }
    server = reachd_dual(*target_args(targets), *FAST)
    doc = wait_status(server, settled(targets), timeout=20, what="every target judged")
    want = {
        "a4": ("reachable", None, None),
        "a6": ("reachable", None, None),
        "mx": ("reachable", None, None),
        "txt": ("reachable", None, None),
        "srv": ("reachable", None, None),
        "expected": ("reachable", None, None),
        "tcp": ("reachable", None, None),
        "nx": ("unreachable", "dns", f"NXDOMAIN from {dk4}"),
        "noaaaa": ("unreachable", "dns", "no AAAA records"),
        "wrong": ("unreachable", "dns", f"{w.both4}, expected {w.v4only4}"),
        "wrongmx": ("unreachable", "dns", "mail.app.test, expected other.app.test"),
        "silent": ("unreachable", "timeout", None),
        "closed": ("unreachable", "refused", "ECONNREFUSED: connection refused"),
        "noroute4": ("unreachable", "no-route", None),
        "noroute6": ("unreachable", "no-route", None),
        "unreach6": ("unreachable", "host-unreachable", None),
    }
    got = {}
    for name in targets:
        target = target_of(doc, name)
        got[name] = (target["state"], target["reason"], target["detail"])
    for name, (state, reason, detail) in want.items():
        assert got[name][:2] == (state, reason), f"{name}: {got[name]} (wanted {state}/{reason}): {target_of(doc, name)}"
        if detail is not None:
            assert got[name][2] == detail, f"{name}: {target_of(doc, name)}"

    # SERVER is the one address; the other family is not the target's.
    a4, a6 = target_of(doc, "a4"), target_of(doc, "a6")
    assert a4["addresses"] == [dk4] and a4["ipv6"] is None and a4["ipv4"]["address"] == dk4, a4
    assert a6["addresses"] == [dk6] and a6["ipv4"] is None and a6["ipv6"]["address"] == dk6, a6
    assert target_of(doc, "unreach6")["detail"].startswith("ENETUNREACH"), target_of(doc, "unreach6")

    # The query's round trip is the probe's duration.
    text = http(server.port, "GET", "/metrics", ns=server.netns).body.decode()
    assert value(text, "reachd_target_probe_duration_seconds_count", target="a4") >= 1, text
    assert value(text, "reachd_target_up", target="a4") == 1, text
    assert value(text, "reachd_target_up", target="nx") == 0, text


def test_a_server_that_starts_answering_makes_the_target_reachable(dual_world, reachd_dual):
    """The same target over time: its server's answer changes, the target follows within an interval."""
    w = dual_world
    fake = w.fake_dns(0, "nxdomain")
    server = reachd_dual(*target_args({"f": f"dns://{fake.address}/app.test"}), *FAST)
    doc = wait_status(server, settled(["f"]), timeout=10)
    assert (target_of(doc, "f")["reason"], target_of(doc, "f")["detail"]) == ("dns", f"NXDOMAIN from {fake.address}")
    fake.mode = "servfail"
    doc = wait_status(server, lambda d: target_of(d, "f")["detail"] == "SERVFAIL", timeout=10)
    fake.mode = "refused"
    doc = wait_status(server, lambda d: target_of(d, "f")["detail"] == "REFUSED", timeout=10)
    assert target_of(doc, "f")["reason"] == "dns"
    fake.mode = "noerror"
    wait_status(server, lambda d: target_of(d, "f")["state"] == "reachable", timeout=10)
    # One query per probe: no retry on SERVFAIL or REFUSED, nothing but A asked.
    assert all(query.qtype == 1 for query in fake.wait_queries(1, timeout=1)), "only A asked"


@pytest.mark.parametrize("spec", [
    "d=dns://ns.test/app.test",
    "d=dns://198.18.0.1/app.test?type=AXFR",
    "d=dns://198.18.0.1:0/app.test",
    "d=dns://198.18.0.1:70000/app.test",
    "d=dns://198.18.0.1/",
    "d=dns://198.18.0.1?type=A",
    "d=dns://198.18.0.1/app.test?class=IN",
    "d=dns://198.18.0.1/app.test?type=A&expect=notanip",
    "d=dns://[2001:db8::53]/app.test?type=AAAA&expect=198.18.0.1",
    "d=dns://198.18.0.1/app.test?type=MX&expect=not%20a%20name",
])
def test_bad_dns_spec_refused_at_start(spec):
    result = subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", str(free_port()), "--target", spec],
                            capture_output=True, text=True, timeout=10)
    assert result.returncode != 0, f"{spec!r} accepted: {result.stdout}{result.stderr}"
    assert spec in result.stdout + result.stderr, f"the message does not name {spec!r}: {result.stderr}"


def test_a_pinned_dns_target_asks_through_its_interface(dual_world, reachd_dual):
    """`NAME@IFACE=dns://…`: the query's socket bound to IFACE and its source address (c-ares binds
    none of the sockets reachd makes for it); a missing interface is `no-route`, nothing sent."""
    w = dual_world
    dk4, dk6 = own_nameserver(w)
    server = reachd_dual("--target", f"p4@{w.link}=dns://{dk4}/app.test?type=MX",
                         "--target", f"p6@{w.link}=dns://[{dk6}]/app.test?type=AAAA&expect={w.both6}",
                         "--target", "missing@nosuch0=dns://" + dk4 + "/app.test", *FAST)
    doc = wait_status(server, settled(["p4", "p6", "missing"]), timeout=15)
    for name in ("p4", "p6"):
        target = target_of(doc, name)
        assert (target["state"], target["via"], target["interface"]) == ("reachable", w.link, w.link), target
    missing = target_of(doc, "missing")
    assert (missing["state"], missing["reason"]) == ("unreachable", "no-route"), missing
