"""`--per-uplink` (DESIGN "Every uplink on its own", issue 26): the connectivity check through
every uplink on its own, pinned to it, published in `interfaces[].connectivity`; `online:IFACE`;
`reachd_interface_connectivity_state`; targets pinned to an uplink against the kernel's choice.

The world (world_uplinks.py): a client with two veth uplinks, `wan0` (default routes metric 100,
the kernel's choice) and `wan1` (metric 200, the backup), both families, to two ISP namespaces in
front of one internet namespace holding dnsmasq, the check server and a target server. An ISP is
broken past its first hop by a blackhole route inside it (no ICMP: the check times out).
"""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest

from conftest import SSEClient, http, wait_until
from reachd_process import free_port, reachd_binary
from world import readyz, status, target_of, wait_status, wait_target
from world_uplinks import (FAMILIES, WANS, check_url, families_are, interface_of, reachd_up,  # noqa: F401
                           uplink_connectivity, uplinks, uplinks_policy, wait_uplink)

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]

# The check every 2 s while full, backing off from 1 s (up to 2 s) while not; 1 s to answer.
TIMING = ("--connectivity-timeout", "1", "--connectivity-interval", "2")
UPLINK_KEYS = {"state", "url", "reason", "since", "ipv4", "ipv6", "degraded"}
ISO8601_MS_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")

full = families_are("full")
limited_timeout = families_are("limited", "timeout")


def per_uplink(world, check, *more: str) -> list[str]:
    return ["--per-uplink", "--connectivity-url", check_url(world, check), *TIMING, *more]


def check_uplink_object(connectivity: dict, url: str) -> None:
    """The shape of `interfaces[].connectivity`: the top-level object's (states, url, since, families)."""
    assert isinstance(connectivity, dict), connectivity
    assert UPLINK_KEYS <= set(connectivity), f"missing {UPLINK_KEYS - set(connectivity)}: {connectivity}"
    assert connectivity["url"] == url, connectivity
    assert isinstance(connectivity["since"], str) and ISO8601_MS_Z.match(connectivity["since"]), connectivity
    assert isinstance(connectivity["degraded"], bool), connectivity
    for family in FAMILIES:
        part = connectivity[family]
        assert part is None or {"state", "reason"} <= set(part), (family, connectivity)


def all_full(doc: dict) -> bool:
    return full(doc["connectivity"]) and all(full(uplink_connectivity(doc, wan)) for wan in WANS)


def describe(doc: dict) -> str:
    """The parts of a document these tests look at, for assertion messages."""
    def brief(c):
        if c is None:
            return None
        return (c["state"], c["reason"], *[(c[f] or {}).get("state") for f in FAMILIES])
    return (f"seq={doc['sequence']} top={brief(doc['connectivity'])} "
            + " ".join(f"{i['name']}[{i['operState']} default={i['isDefaultRoute']} {i['addresses']}]="
                       f"{brief(i.get('connectivity'))}" for i in doc["interfaces"]))


# --------------------------------------------------------------------------- 1. both ISPs fine


def test_every_uplink_is_checked_on_its_own_in_both_families(uplinks, reachd_up):
    w = uplinks
    check = w.check_server()
    url = check_url(w, check)
    per, plain = reachd_up.many(w, per_uplink(w, check), ["--connectivity-url", url, *TIMING])

    doc = wait_status(per, all_full, 10, what="top-level, wan0 and wan1 full in both families")
    for wan in WANS:
        connectivity = uplink_connectivity(doc, wan)
        check_uplink_object(connectivity, url)
        assert (connectivity["state"], connectivity["reason"], connectivity["degraded"]) == ("full", None, False), \
            (wan, connectivity)
        for family in FAMILIES:
            assert (connectivity[family]["state"], connectivity[family]["reason"]) == ("full", None), (wan, connectivity)
    for interface in doc["interfaces"]:
        if interface["name"] not in WANS:  # an interface that is no uplink (lo, if listed)
            assert interface["connectivity"] is None, interface
    assert doc["connectivity"]["url"] == url and not doc["connectivity"]["degraded"], doc["connectivity"]

    # Each uplink's check left through that uplink in each family: the server saw all four
    # client addresses (the kernel's choice alone would have shown only wan0's two).
    wanted = {*w.addresses(0), *w.addresses(1)}
    wait_until(lambda: wanted <= set(check.peers), 5, message=f"check requests from {sorted(wanted)}")

    # Without --per-uplink: the key is there, null for every interface, however long the
    # top-level check has run.
    doc = wait_status(plain, lambda d: full(d["connectivity"]), 10, what="the plain reachd's check full")
    names = {i["name"] for i in doc["interfaces"]}
    assert set(WANS) <= names, names
    for interface in doc["interfaces"]:
        assert "connectivity" in interface and interface["connectivity"] is None, interface


# --------------------------------------------------------------------------- 2. one ISP broken


def test_a_broken_isp_shows_on_its_uplink_only(uplinks, reachd_up):
    w = uplinks
    check = w.check_server()
    server = reachd_up(w, *per_uplink(w, check))
    wait_status(server, all_full, 10, what="everything full")

    # IPv6 broken past isp1: wan1 is full but degraded, its IPv6 limited (timeout).
    w.break_isp(1, ("ipv6",))
    doc = wait_uplink(server, "wan1", lambda c: c is not None and c["ipv6"]["state"] == "limited", 10)
    wan1 = uplink_connectivity(doc, "wan1")
    assert (wan1["state"], wan1["degraded"], wan1["ipv6"]["reason"], wan1["ipv4"]["state"]) == \
        ("full", True, "timeout", "full"), wan1
    assert full(doc["connectivity"]) and not doc["connectivity"]["degraded"], describe(doc)
    assert full(uplink_connectivity(doc, "wan0")), describe(doc)

    # Both families broken past isp1: wan1 limited (timeout); the kernel's choice stays full.
    w.break_isp(1)
    doc = wait_uplink(server, "wan1", limited_timeout, 10)
    wan1 = uplink_connectivity(doc, "wan1")
    assert (wan1["state"], wan1["reason"], wan1["degraded"]) == ("limited", "timeout", False), wan1
    assert full(doc["connectivity"]) and full(uplink_connectivity(doc, "wan0")), describe(doc)
    # ... and stays so over more checks of each (the interval is 2 s).
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        doc = status(server)
        assert full(doc["connectivity"]) and full(uplink_connectivity(doc, "wan0")), describe(doc)
        assert limited_timeout(uplink_connectivity(doc, "wan1")), describe(doc)
        time.sleep(0.2)

    # The preferred ISP broken instead: the top-level check and wan0 limited, the failover
    # uplink visibly healthy.
    w.restore_isp(1)
    w.break_isp(0)

    def failover(d: dict) -> bool:
        return (limited_timeout(d["connectivity"]) and limited_timeout(uplink_connectivity(d, "wan0"))
                and full(uplink_connectivity(d, "wan1")))
    doc = wait_status(server, failover, 15, what="top-level and wan0 limited, wan1 full")
    assert (doc["connectivity"]["state"], doc["connectivity"]["reason"]) == ("limited", "timeout"), describe(doc)
    wan0 = uplink_connectivity(doc, "wan0")
    assert (wan0["state"], wan0["reason"]) == ("limited", "timeout"), wan0
    assert uplink_connectivity(doc, "wan1")["state"] == "full", describe(doc)


# --------------------------------------------------------------------------- 3. a pinned target


def test_a_target_pinned_to_wan1_follows_wan1_the_unpinned_one_the_kernel(uplinks, reachd_up):
    w = uplinks
    web = w.target_server()
    url = f"http://target.test:{web.port}/"
    server = reachd_up(w, "--target", f"kernel={url}", "--target", f"pinned@wan1={url}",
                       "--target-interval", "1", "--target-timeout", "1", "--target-failures", "1")

    def both(state: str, reason: str | None = None):
        def predicate(t: dict) -> bool:
            return t["state"] == state and all(t[f] is not None and t[f]["state"] == state
                                               and (reason is None or t[f]["reason"] == reason) for f in FAMILIES)
        return predicate

    kernel = wait_target(server, "kernel", both("reachable"), 10)
    pinned = wait_target(server, "pinned", both("reachable"), 10)
    assert kernel["via"] is None and pinned["via"] == "wan1", (kernel, pinned)
    assert [kernel[f]["interface"] for f in FAMILIES] == ["wan0", "wan0"], kernel
    assert [pinned[f]["interface"] for f in FAMILIES] == ["wan1", "wan1"], pinned
    wait_until(lambda: set(w.addresses(1)) <= set(web.peers), 5, message="requests from wan1's addresses")

    # isp1 broken: the pinned one fails in both families, the unpinned one is untouched.
    w.break_isp(1)
    pinned = wait_target(server, "pinned", both("unreachable", "timeout"), 10)
    assert pinned["reason"] == "timeout", pinned
    kernel = target_of(status(server), "kernel")
    assert both("reachable")(kernel), kernel

    # isp0 broken instead: the kernel's choice fails, the pinned one is reached through wan1.
    w.restore_isp(1)
    w.break_isp(0)
    kernel = wait_target(server, "kernel", both("unreachable", "timeout"), 10)
    pinned = wait_target(server, "pinned", both("reachable"), 10)
    assert [pinned[f]["interface"] for f in FAMILIES] == ["wan1", "wan1"], pinned
    assert target_of(status(server), "kernel")["state"] == "unreachable"


# --------------------------------------------------------------------------- 4. link down: one document


def wan1_not_uplink(doc: dict) -> bool:
    """wan1 cannot be an uplink in this document: gone, not up, without a default route or without
    addresses."""
    interface = interface_of(doc, "wan1")
    return (interface is None or interface["operState"] != "up" or not interface["isDefaultRoute"]
            or not interface["addresses"])


def check_one_document(doc: dict) -> None:
    if wan1_not_uplink(doc):
        assert uplink_connectivity(doc, "wan1") is None, \
            f"wan1 is no uplink but its connectivity is not null in the same document: {describe(doc)}"


def test_link_down_nulls_the_uplink_in_the_same_document(uplinks, reachd_up):
    w = uplinks
    check = w.check_server()
    server = reachd_up(w, *per_uplink(w, check))
    wait_status(server, all_full, 10, what="everything full")

    seen: list[dict] = []
    with SSEClient(server.port, ns=server.netns, timeout=10) as events:
        def next_doc(timeout: float) -> dict:
            while True:
                event = events.next_event(timeout)
                if event.event == "status":
                    doc = event.doc
                    seen.append(doc)
                    check_one_document(doc)
                    return doc

        first = next_doc(5)
        assert full(uplink_connectivity(first, "wan1")), describe(first)
        w.link_down(1)
        deadline = time.monotonic() + 5
        while True:
            doc = next_doc(max(0.1, deadline - time.monotonic()))
            if interface_of(doc, "wan1") is None or interface_of(doc, "wan1")["operState"] != "up":
                break
        down = doc
        assert uplink_connectivity(down, "wan1") is None, describe(down)
        # The kernel's choice is not touched.
        assert full(down["connectivity"]) and full(uplink_connectivity(down, "wan0")), describe(down)
        # Nothing afterwards brings a result for the downed link back (its checks in flight, if any,
        # must not land).
        quiet_until = time.monotonic() + 3
        try:
            while time.monotonic() < quiet_until:
                next_doc(max(0.1, quiet_until - time.monotonic()))
        except TimeoutError:
            pass

        # Back up (address and routes restored): checked again, full in both families.
        w.link_up(1)
        deadline = time.monotonic() + 10
        while not full(uplink_connectivity(doc, "wan1")):
            doc = next_doc(max(0.1, deadline - time.monotonic()))

    # /changes tells the same: the change where wan1's operState left `up` also nulls its connectivity.
    response = http(server.port, "GET", "/changes", ns=server.netns)
    assert response.status == 200, response
    changes = response.json()["changes"]
    went_down = [c for c in changes if any(e["field"] == "interfaces.wan1.operState" and e["from"] == "up"
                                           for e in c["diff"])]
    assert len(went_down) == 1, [c["diff"] for c in changes]
    fields = {e["field"]: e for e in went_down[0]["diff"]}
    assert went_down[0]["sequence"] == down["sequence"], (went_down[0], describe(down))
    assert fields.get("interfaces.wan1.connectivity", {}).get("to", "absent") is None, went_down[0]["diff"]


def test_default_routes_removed_one_family_then_the_other(uplinks, reachd_up):
    """wan1 loses its IPv6 default route: the next document already has no IPv6 result for it (the
    family `none` — DESIGN: "or the family `none` while the interface is still an uplink of the
    other family" — or null), IPv4 still full. Then its IPv4 default route: `connectivity` null in
    the document where `isDefaultRoute` turns false. Routes back: checked at once (the interval
    is 30 s here, so waiting for it would fail)."""
    w = uplinks
    check = w.check_server()
    server = reachd_up(w, "--per-uplink", "--connectivity-url", check_url(w, check), "--connectivity-timeout", "1",
                       "--connectivity-interval", "30")
    wait_status(server, all_full, 10, what="everything full")

    with SSEClient(server.port, ns=server.netns, timeout=10) as events:
        def next_doc(timeout: float) -> dict:
            while True:
                event = events.next_event(timeout)
                if event.event == "status":
                    doc = event.doc
                    check_one_document(doc)
                    assert full(doc["connectivity"]) and full(uplink_connectivity(doc, "wan0")), describe(doc)
                    return doc

        assert full(uplink_connectivity(next_doc(5), "wan1"))
        w.client.ip("-6", "route", "del", "default", "dev", "wan1")
        doc = next_doc(5)
        wan1 = uplink_connectivity(doc, "wan1")
        assert wan1 is not None and wan1["ipv4"]["state"] == "full" and wan1["state"] == "full", describe(doc)
        assert wan1["ipv6"] is None or wan1["ipv6"]["state"] == "none", \
            f"wan1 is no IPv6 uplink any more, yet its IPv6 reads {wan1['ipv6']}: {describe(doc)}"
        # Nothing later brings an IPv6 result back for it.
        quiet_until = time.monotonic() + 2
        try:
            while time.monotonic() < quiet_until:
                later = uplink_connectivity(next_doc(max(0.1, quiet_until - time.monotonic())), "wan1")
                assert later is not None and (later["ipv6"] is None or later["ipv6"]["state"] == "none"), later
        except TimeoutError:
            pass

        w.client.ip("route", "del", "default", "dev", "wan1")
        doc = next_doc(5)
        assert interface_of(doc, "wan1")["isDefaultRoute"] is False, describe(doc)
        assert uplink_connectivity(doc, "wan1") is None, describe(doc)

        started = time.monotonic()
        w.add_default_routes(1)
        deadline = started + 5
        while not full(uplink_connectivity(doc, "wan1")):
            doc = next_doc(max(0.1, deadline - time.monotonic()))
        assert time.monotonic() - started < 5


# --------------------------------------------------------------------------- 5. nothing through the other interface


def test_a_pinned_check_never_leaves_through_the_other_interface(uplinks, reachd_up):
    w = uplinks
    check = w.check_server()
    sent0, sent1 = w.capture(0), w.capture(1)
    w.break_isp(1)
    server = reachd_up(w, *per_uplink(w, check))

    doc = wait_status(server, lambda d: limited_timeout(uplink_connectivity(d, "wan1"))
                      and full(uplink_connectivity(d, "wan0")) and full(d["connectivity"]), 10,
                      what="wan1 limited (timeout), wan0 and the top-level check full")
    # More rounds of the wan1 check (backing off from 1 s, at most 2 s apart).
    time.sleep(3)
    assert limited_timeout(uplink_connectivity(status(server), "wan1"))

    wan0, wan1 = set(w.addresses(0)), set(w.addresses(1))
    ip_out0 = [p for p in sent0.snapshot() if p.family in FAMILIES]
    ip_out1 = [p for p in sent1.snapshot() if p.family in FAMILIES]
    leaked = [p for p in ip_out0 if p.src in wan1]
    assert not leaked, f"wan1's pinned check sent through wan0: {leaked[:5]}"
    strays = [p for p in ip_out1 if p.src in wan0]
    assert not strays, f"wan0's address used on wan1: {strays[:5]}"
    # The pinned check did go out through wan1, both families, DNS and HTTP alike (the capture
    # could have seen a leak).
    http_out = {p.family for p in ip_out1 if p.src in wan1 and p.proto == 6 and p.dport == check.port}
    assert http_out == {"ipv4", "ipv6"}, f"HTTP check packets on wan1 by family: {http_out}"
    assert any(p.src in wan1 and p.proto == 17 and p.dport == 53 for p in ip_out1), "no DNS query through wan1"
    # And the check server never heard from wan1's addresses (an IPv4 leak through wan0 is
    # answered: isp0 forwards it, the reply comes back through isp1).
    assert check.peers_from(*wan1) == [], check.peers
    assert set(check.peers_from(*wan0)) == wan0, check.peers


# --------------------------------------------------------------------------- 6. policy routing


def test_an_uplink_through_a_table_selected_by_a_from_rule(uplinks_policy, reachd_up):
    w = uplinks_policy
    check = w.check_server()
    for flag in ("-4", "-6"):
        main = w.client.ip(flag, "route", "show", "table", "main", "default").stdout
        assert "wan0" in main and "wan1" not in main, main
        assert "wan1" in w.client.ip(flag, "route", "show", "table", "100").stdout
    server = reachd_up(w, *per_uplink(w, check))

    # No rule selects table 100 yet: wan1 has an address and a route nothing uses — no uplink.
    doc = wait_status(server, lambda d: full(d["connectivity"]) and full(uplink_connectivity(d, "wan0")), 10,
                      what="wan0 and the top-level check full")
    assert uplink_connectivity(doc, "wan1") is None, describe(doc)
    time.sleep(2)  # a check round later, still nothing for wan1, nothing sent from its addresses
    doc = status(server)
    assert uplink_connectivity(doc, "wan1") is None, describe(doc)
    assert check.peers_from(*w.addresses(1)) == [], check.peers

    # `from <wan1's address> table 100`, both families: an uplink now, checked through that table.
    w.add_policy_rules()
    doc = wait_uplink(server, "wan1", full, 10)
    assert interface_of(doc, "wan1")["isDefaultRoute"] is True, describe(doc)
    assert uplink_connectivity(doc, "wan1")["state"] == "full", describe(doc)
    wait_until(lambda: set(w.addresses(1)) <= set(check.peers), 5, message="check requests from wan1's addresses")
    main = w.client.ip("route", "show", "table", "main", "default").stdout
    assert "wan1" not in main, main

    w.break_isp(1)
    doc = wait_uplink(server, "wan1", limited_timeout, 10)
    assert full(doc["connectivity"]) and full(uplink_connectivity(doc, "wan0")), describe(doc)


# --------------------------------------------------------------------------- 7. readiness and bad input


def wait_ready_code(server, code: int, timeout: float):
    deadline = time.monotonic() + timeout
    while True:
        response = readyz(server)
        if response.status == code:
            return response
        if time.monotonic() >= deadline:
            raise TimeoutError(f"/readyz still {response.status} after {timeout}s: {response.body[:600]!r}")
        time.sleep(0.05)


def test_ready_when_online_of_an_interface(uplinks, reachd_up):
    w = uplinks
    check = w.check_server()
    ready, nosuch = reachd_up.many(w, per_uplink(w, check, "--ready-when", "online:wan1"),
                                   per_uplink(w, check, "--ready-when", "online:nosuch0"))
    wait_uplink(ready, "wan1", full, 10)
    wait_ready_code(ready, 200, 5)
    # An interface that does not exist is no usage error: the condition fails until it does.
    wait_status(nosuch, all_full, 10, what="the second reachd's checks full")
    response = readyz(nosuch)
    assert response.status == 503, (response.status, response.body[:600])

    w.break_isp(1)
    wait_ready_code(ready, 503, 10)
    assert limited_timeout(uplink_connectivity(status(ready), "wan1"))
    assert full(status(ready)["connectivity"]), "the kernel's choice is full: only wan1 fails the condition"
    w.restore_isp(1)
    wait_ready_code(ready, 200, 10)


def test_reachd_wait_for_online_of_an_interface(uplinks):
    w = uplinks
    check = w.check_server()

    def run(timeout: str) -> subprocess.CompletedProcess:
        return w.client.exec(reachd_binary(), "wait", *w.destinations(), *per_uplink(w, check),
                             "--for", "online:wan1", "--timeout", timeout, capture_output=True, text=True, timeout=30)

    result = run("10")
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert result.stdout.splitlines() == ["online:wan1 pass full"], result.stdout
    w.break_isp(1)
    started = time.monotonic()
    result = run("3")
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stdout.splitlines()[0].startswith("online:wan1 fail limited"), result.stdout
    assert time.monotonic() - started < 15


def start_refused(args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", str(free_port()), *args],
                          capture_output=True, text=True, timeout=20, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("args, env, named", [
    (["--per-uplink"], None, ["--per-uplink", "--connectivity-url"]),
    ([], {"REACHD_PER_UPLINK": "1"}, ["REACHD_PER_UPLINK", "--connectivity-url"]),
    (["--connectivity-url", "http://check.test/generate_204", "--ready-when", "online:wan1"], None,
     ["online:wan1", "--per-uplink"]),
    (["--connectivity-url", "http://check.test/generate_204"], {"REACHD_PER_UPLINK": "maybe"},
     ["REACHD_PER_UPLINK=maybe"]),
], ids=["flag-without-url", "variable-without-url", "online-iface-without-per-uplink", "variable-maybe"])
def test_bad_input_is_refused_at_start_naming_it(args, env, named):
    result = start_refused(args, env)
    assert result.returncode != 0, (result.returncode, result.stdout, result.stderr)
    for text in named:
        assert text in result.stderr, (text, result.stderr)


def test_wait_for_online_of_an_interface_without_per_uplink_exits_64():
    result = subprocess.run([reachd_binary(), "wait", "--connectivity-url", "http://check.test/generate_204",
                             "--for", "online:wan1", "--timeout", "5"], capture_output=True, text=True, timeout=20)
    assert result.returncode == 64, (result.returncode, result.stdout, result.stderr)
    assert "online:wan1" in result.stderr and "--per-uplink" in result.stderr, result.stderr
    assert result.stdout == "", result.stdout


# --------------------------------------------------------------------------- 8. /metrics


SAMPLE = re.compile(r'^(\w+)\{(.*)\} (\S+)$')


def interface_states(text: str, device: str) -> dict[tuple[str, str], float]:
    """(family, state) → value of every `reachd_interface_connectivity_state` series of `device`."""
    out = {}
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if not match or match.group(1) != "reachd_interface_connectivity_state":
            continue
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2)))
        if labels.get("device") == device:
            out[(labels.get("family"), labels.get("state"))] = float(match.group(3))
    return out


def metrics(server) -> str:
    response = http(server.port, "GET", "/metrics", ns=server.netns)
    assert response.status == 200, response
    return response.body.decode()


def test_metrics_per_interface_connectivity_state(uplinks, reachd_up):
    w = uplinks
    check = w.check_server()
    server = reachd_up(w, *per_uplink(w, check))
    wait_status(server, all_full, 10, what="everything full")

    def ones(device: str) -> dict[str, str]:
        """family → the state whose series is 1."""
        return {family: state for (family, state), value in interface_states(metrics(server), device).items()
                if value == 1}

    # /metrics is never older than /status: read at once after the document (a scrape that comes
    # before the server set the series applies the document /status serves).
    assert ones("wan1") == {"ipv4": "full", "ipv6": "full"} == ones("wan0")
    text = metrics(server)
    assert 'reachd_interface_connectivity_state{device="wan1",family="ipv4",state="full"} 1' in text, \
        [line for line in text.splitlines() if "interface" in line]

    w.break_isp(1)
    wait_uplink(server, "wan1", limited_timeout, 10)
    assert ones("wan1") == {"ipv4": "limited", "ipv6": "limited"}
    assert ones("wan0") == {"ipv4": "full", "ipv6": "full"}

    # No uplink, no series.
    w.link_down(1)
    wait_uplink(server, "wan1", lambda c: c is None, 5)
    assert interface_states(metrics(server), "wan1") == {}
