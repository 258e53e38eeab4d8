"""The cause first: the status document's `cause`, black-box, in namespaces (DESIGN.md, "The cause
first").

Every situation is built for real in the existing worlds — world.py (IPv4 only),
world_dualstack.py (both families, the far servers one hop past the gateway), world_uplinks.py
(two uplinks, `--per-uplink`) and icmp_world.py (echo replies a test drops) — and reachd runs in
the client namespace. Each test reads `cause` from `/status` and asserts its `layer`, `family`,
`subject`, and that `text` holds the facts the contract's table requires (the words are free);
where it matters, `since`, `/metrics`' `reachd_cause{layer}`, `/readyz`, `reachd status`,
`reachd watch` and the `status changed` log line.

Readings of the contract these tests rely on:
- `cause` is always present: `null` exactly when nothing is known to be wrong;
- a layer's `family` is `null` when both families (or every family there is) fail the same way, so
  an IPv4-only host losing IPv4 reads `family: null`;
- a lower layer explains the ones above it: a target or a nameserver failing because a family has
  no route reads `route` (or `link`/`address`), not `target`/`dns`;
- `path` is judged from the connectivity check when there is one: a single target family that
  times out while the check is `full` is a `target` cause, not `path`;
- the words of the texts are checked only for the facts the table lists (an interface's name,
  `down`/`no carrier`/`removed`, the family as `IPv4`/`IPv6`, `past the gateway`, `captive portal`,
  the URL's host, a target's name and reason, a nameserver's address, the file and its line).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time

import pytest

import netns
from conftest import ISO8601_MS_Z, get_status, http, start_reachd, stop_reachd
from icmp_world import icmp_world, reachd_icmp  # noqa: F401
from reachd_process import reachd_binary
from world import (HANG, NO_CONTENT, OK, PORTAL_LOGIN, UNAVAILABLE, readyz, reachd_in,  # noqa: F401
                   redirect, status, target_args, wait_status, world)
from world_dualstack import AAAA, FAMILIES, dual_world, reachd_dual  # noqa: F401
from world_uplinks import check_url, reachd_up, uplinks, wait_uplink  # noqa: F401
from test_stall_recheck import EventLog  # every /events document, read by a thread of its own

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]

LAYERS = ("link", "address", "route", "dns", "path", "portal", "check", "target", "uplink", "quality", "config")
FAMILY_WORD = {"ipv4": "IPv4", "ipv6": "IPv6"}
ANY = object()

# Short probes, so that each situation shows within seconds.
FAST_TARGETS = ("--target-interval", "1", "--target-timeout", "1", "--target-failures", "1")
FAST_CHECK = ("--connectivity-interval", "1", "--connectivity-timeout", "1")
FAST_DNS = ("--dns-interval", "1", "--dns-timeout", "0.5", "--dns-failures", "1")


# --------------------------------------------------------------------------- reading the cause


def cause_of(doc: dict) -> dict | None:
    assert "cause" in doc, f"the document has no `cause` field: {sorted(doc)}"
    return doc["cause"]


def matches(cause: dict | None, layer: str | None, family=ANY, subject=ANY) -> bool:
    if layer is None:
        return cause is None
    return (cause is not None and cause.get("layer") == layer
            and (family is ANY or cause.get("family") == family)
            and (subject is ANY or cause.get("subject") == subject))


def wait_cause(server, layer: str | None, family=ANY, subject=ANY, timeout: float = 10.0) -> dict:
    """Poll /status until the cause has this layer (and family, subject; `None` layer: no cause);
    returns the document. The error names the last cause seen."""
    try:
        return wait_status(server, lambda d: matches(cause_of(d), layer, family, subject), timeout,
                           what=f"cause {layer}/{'*' if family is ANY else family}"
                                f"/{'*' if subject is ANY else subject}")
    except TimeoutError as error:
        raise AssertionError(f"{error}\nlast cause: {status(server).get('cause')}") from None


def check_cause(cause: dict | None, layer: str, family, subject, *words: str) -> None:
    """The cause's layer, family and subject exactly; each of `words` in its text; `since` a time."""
    assert cause is not None, "no cause"
    assert set(cause) >= {"layer", "family", "subject", "text", "since"}, cause
    assert cause["layer"] == layer, cause
    assert cause["family"] == family, cause
    assert cause["subject"] == subject, cause
    assert isinstance(cause["text"], str) and cause["text"], cause
    for word in words:
        assert word in cause["text"], f"{word!r} not in the cause's text: {cause}"
    assert isinstance(cause["since"], str) and ISO8601_MS_Z.match(cause["since"]), cause


def cause_series(server) -> dict[str, float]:
    """`reachd_cause{layer}` from /metrics: {layer: value}."""
    response = http(server.port, "GET", "/metrics", ns=server.netns)
    assert response.status == 200, response
    text = response.body.decode()
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r'^reachd_cause\{layer="([^"]*)"\} (\S+)$', text, re.MULTILINE)}


def check_metrics_on(server, layer: str) -> None:
    """Every layer's series and `none` present; 1 on `layer` alone."""
    series = cause_series(server)
    assert set(series) == set(LAYERS) | {"none"}, f"reachd_cause series: {series}"
    assert {name for name, value in series.items() if value == 1} == {layer}, series
    assert all(value in (0, 1) for value in series.values()), series


def cli(server, *args: str) -> subprocess.CompletedProcess:
    """`reachd <args> --port P` run in the server's namespace."""
    return subprocess.run(["ip", "netns", "exec", server.netns, reachd_binary(), *args, "--port", str(server.port)],
                          capture_output=True, text=True, timeout=15)


def log_records(server) -> list[dict]:
    """The JSON log lines (`--log-format json`) so far."""
    records = []
    for line in server.output().splitlines():
        if line.startswith("{"):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return records


def status_changed(server) -> list[dict]:
    return [r for r in log_records(server) if r.get("message") == "status changed"]


def same_cause(a: dict | None, b: dict | None) -> bool:
    return a is not None and b is not None and all(a[k] == b[k] for k in ("layer", "family", "subject"))


def check_since_along(docs: list[dict]) -> None:
    """Along consecutive documents: a cause that stays (layer, family, subject) keeps its `since`
    whatever its words; a new one's `since` is the `changedAt` of the document that names it first."""
    for before, after in zip(docs, docs[1:]):
        if after["sequence"] != before["sequence"] + 1:
            continue  # a document in between was not seen: nothing to compare
        old, new = before.get("cause"), after.get("cause")
        if new is None:
            continue
        if same_cause(old, new):
            assert new["since"] == old["since"], (before["sequence"], old, after["sequence"], new)
        else:
            assert new["since"] == after["changedAt"], (after["sequence"], new, after["changedAt"])


# --------------------------------------------------------------------------- world set-ups


def wait_all_well(server, timeout: float = 10.0) -> dict:
    def well(doc: dict) -> bool:
        connectivity = doc.get("connectivity") or {}
        return (doc["state"] == "reachable"
                and connectivity.get("state") in ("full", "disabled") and not connectivity.get("degraded")
                and all(t["state"] == "reachable" and not t["degraded"] for t in doc.get("targets") or []))
    return wait_status(server, well, timeout, what="everything well")


def restore_client_link(w) -> None:
    """The dual-stack client's link up again with its addresses and default routes."""
    w.client.ip("link", "set", w.link, "up")
    w.wait_carrier()
    w.client.ip("addr", "replace", f"{w.client_ip6}/64", "dev", w.link, "nodad")
    w.client.ip("route", "replace", "default", "via", w.gateway_ip, "dev", w.link)
    w.client.ip("-6", "route", "replace", "default", "via", w.gateway_ip6, "dev", w.link)


# --------------------------------------------------------------------------- 1. null when all is well


def test_cause_is_null_when_all_is_well_and_every_layer_series_is_there(dual_world, reachd_dual):
    """Dual-stack, a target reachable over both families, connectivity full, DNS ok: `cause` is
    present and `null`; `reachd_cause{layer="none"}` is 1 and every layer's series is there (0)."""
    w = dual_world
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}),
                         "--connectivity-url", f"http://both.test:{far.port}/check", "--dns-check", "db.test",
                         *FAST_TARGETS)
    # Every layer's series from the start, before anything was probed.
    assert set(cause_series(server)) == set(LAYERS) | {"none"}, cause_series(server)
    doc = wait_all_well(server)
    doc = wait_status(server, lambda d: (d.get("dns") or {}).get("state") == "ok", 10, what="dns ok")
    assert doc["ipv4"] and doc["ipv6"], doc
    assert "cause" in doc and doc["cause"] is None, doc.get("cause")
    check_metrics_on(server, "none")
    first = cli(server, "status").stdout.splitlines()[0]
    assert " — " not in first, first


def test_an_ipv4_only_host_has_no_cause_for_its_missing_ipv6_and_losing_ipv4_is_family_null(world, reachd_in):
    """An IPv4-only host: IPv6 never had a route, so its absence is no cause (`null`); its IPv4
    default route removed: `route` with `family: null` (the only family there is)."""
    web = world.server()
    server = reachd_in(world, *target_args({"db": f"tcp://db.test:{web.port}"}), *FAST_TARGETS)
    doc = wait_all_well(server)
    assert doc["ipv4"] and not doc["ipv6"], doc
    assert cause_of(doc) is None, doc["cause"]
    check_metrics_on(server, "none")

    world.del_default_route()
    doc = wait_cause(server, "route")
    check_cause(doc["cause"], "route", None, None, "IPv4")
    check_metrics_on(server, "route")


@pytest.mark.parametrize("setup", ["loopback only", "no default route"])
def test_started_without_a_way_out_is_a_route_cause(request, setup):
    """reachd started where no family ever had a route out (`unreachable` from the start): every
    family is needed then — `route`, family null, not `null` (something is known to be wrong)."""
    if setup == "loopback only":
        ns = netns.Namespace()
        request.addfinalizer(ns.delete)
        name = ns.name
    else:
        network = netns.VethNetwork(default_route=False)
        request.addfinalizer(network.delete)
        name = network.ns.name
    server = start_reachd(netns=name)
    request.addfinalizer(lambda: stop_reachd(server))
    deadline = time.monotonic() + 10
    while True:
        doc = get_status(server.port, ns=name)
        if doc["state"] != "unknown" and cause_of(doc) is not None or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert doc["state"] == "unreachable", doc
    check_cause(cause_of(doc), "route", None, None)
    check_metrics_on(server, "route")
    if setup == "no default route":
        network.add_default_route()
        deadline = time.monotonic() + 10
        while cause_of(doc := get_status(server.port, ns=name)) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert doc["state"] == "reachable" and doc["cause"] is None, doc


def test_an_ipv4_only_host_with_a_dual_stack_check_url_is_not_null(world, reachd_in):
    """An IPv4-only host, a check URL whose host has both families: the check's IPv6 family reads
    `none` (degraded) — a connectivity family failing, so `cause` is not null, and it concerns
    IPv6 alone."""
    web = world.server()
    web.route("/check", NO_CONTENT)
    server = reachd_in(world, "--connectivity-url", f"http://dual.test:{web.port}/check", *FAST_CHECK)
    doc = wait_status(server, lambda d: d["connectivity"]["state"] == "full"
                      and (d["connectivity"].get("ipv6") or {}).get("state") not in (None, "unknown"), 10,
                      what="the check settled")
    assert doc["connectivity"]["ipv6"]["state"] == "none" and doc["connectivity"]["degraded"], doc["connectivity"]
    time.sleep(0.3)
    doc = status(server)
    assert cause_of(doc) is not None, f"a connectivity family fails, yet cause is null: {doc['connectivity']}"
    assert doc["cause"]["family"] == "ipv6", doc["cause"]
    assert "IPv6" in doc["cause"]["text"] and "dual.test" in doc["cause"]["text"], doc["cause"]


# --------------------------------------------------------------------------- 2. link


@pytest.mark.parametrize("how", ["down", "no carrier", "no carrier, linkdown routes ignored", "removed"])
def test_link_down_no_carrier_or_removed(dual_world, reachd_dual, how):
    """The client's only interface set down, its peer set down (carrier lost) or deleted: `link`,
    subject the interface, family null (both families lost), the words `down` / `no carrier` /
    `removed`. `/readyz` fails naming only the layer; `reachd status` leads with the text;
    `reachd_cause{layer="link"}` is 1."""
    w = dual_world
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}),
                         "--connectivity-url", f"http://both.test:{far.port}/check", *FAST_TARGETS)
    wait_all_well(server)
    assert cause_of(status(server)) is None

    if how == "down":
        w.client.ip("link", "set", "dev", w.link, "down")
    elif how.startswith("no carrier"):
        if "ignored" in how:  # the kernel's lookup then skips the routes flagged linkdown
            w.client.exec("sysctl", "-qw", "net.ipv4.conf.all.ignore_routes_with_linkdown=1",
                          f"net.ipv4.conf.{w.link}.ignore_routes_with_linkdown=1",
                          "net.ipv6.conf.all.ignore_routes_with_linkdown=1",
                          f"net.ipv6.conf.{w.link}.ignore_routes_with_linkdown=1", check=True, capture_output=True)
        w.gateway.ip("link", "set", "dev", w.gateway_link, "down")
    else:
        w.client.ip("link", "del", "dev", w.link)
    doc = wait_cause(server, "link", family=None)
    assert doc["state"] == "unreachable" and not doc["ipv4"] and not doc["ipv6"], doc
    cause = doc["cause"]
    check_cause(cause, "link", None, w.link, w.link, how.split(",")[0])
    if how == "down":
        assert "no carrier" not in cause["text"], cause

    # /readyz (open to anyone): the failing check names the layer, never the words or the interface.
    ready = readyz(server)
    assert ready.status == 503, ready
    body = ready.body.decode()
    outputs = [entry.get("output") or "" for entries in ready.json()["checks"].values() for entry in entries]
    assert any(output.endswith("; cause: link") or output == "cause: link" for output in outputs), body
    assert "cause: link" in body, body
    assert w.link not in body and cause["text"] not in body, body

    # `reachd status`: the first line says it right after the state.
    result = cli(server, "status")
    first = result.stdout.splitlines()[0] if result.stdout else ""
    assert f"unreachable — {cause['text']}" in first, (result.stdout, result.stderr)

    check_metrics_on(server, "link")


@pytest.mark.parametrize("how", ["down", "no carrier"])
def test_link_of_one_family(dual_world, reachd_dual, how):
    """IPv6 leaves through a second interface (its default route there), IPv4 through the first;
    the second one goes down (or loses its carrier): `link`, family ipv6, subject the second
    interface — IPv4 still reachable."""
    w = dual_world
    link6 = w.add_second_link_ipv6()
    w.client.ip("-6", "route", "replace", "default", "via", f"{w.v6}:2::1", "dev", link6)
    server = reachd_dual()
    doc = wait_status(server, lambda d: d["ipv4"] and d["ipv6"], 10, what="both families routed")
    assert cause_of(doc) is None, doc["cause"]
    if how == "down":
        w.client.ip("link", "set", "dev", link6, "down")
    else:
        w.gateway.ip("link", "set", "dev", w.gateway_link6, "down")
    doc = wait_cause(server, "link", family="ipv6")
    assert doc["ipv4"] and not doc["ipv6"] and doc["state"] == "reachable", doc
    check_cause(doc["cause"], "link", "ipv6", link6, link6, how)


def test_link_down_then_removed_keeps_since(dual_world, reachd_dual):
    """The link set down, then deleted: the same layer, family and subject with other words
    (`down` → `removed`): `since` stays."""
    w = dual_world
    server = reachd_dual()
    wait_status(server, lambda d: d["ipv4"] and d["ipv6"], 10, what="both families routed")
    w.link_down()
    down = wait_cause(server, "link", family=None, subject=w.link)
    check_cause(down["cause"], "link", None, w.link, "down")
    w.client.ip("link", "del", "dev", w.link)
    removed = wait_status(server, lambda d: matches(d["cause"], "link", None, w.link) and "removed" in d["cause"]["text"],
                          10, what="the link removed")
    assert removed["cause"]["since"] == down["cause"]["since"], (down["cause"], removed["cause"])


def test_link_back_clears_the_cause(dual_world, reachd_dual):
    """After the link comes back (addresses and routes restored) the cause is `null` again and
    `reachd_cause{layer="none"}` is 1."""
    w = dual_world
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}),
                         "--connectivity-url", f"http://both.test:{far.port}/check", *FAST_TARGETS, *FAST_CHECK)
    wait_all_well(server)
    w.link_down()
    wait_cause(server, "link", family=None, subject=w.link)
    restore_client_link(w)
    doc = wait_cause(server, None, timeout=15)
    assert doc["state"] == "reachable", doc
    check_metrics_on(server, "none")


# --------------------------------------------------------------------------- 3. address


@pytest.mark.parametrize("how", ["ipv4 removed", "ipv6 removed", "ipv6 tentative", "ipv6 dadfailed"])
def test_address_gone_or_tentative(dual_world, reachd_dual, how):
    """The client's IPv4 or IPv6 address removed, or the IPv6 one replaced by a tentative one (DAD
    running, 20 probes long): `address`, that family, subject the interface, its name and the
    family in the words."""
    w = dual_world
    family = how.split()[0]
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}),
                         "--connectivity-url", f"http://both.test:{far.port}/check", *FAST_TARGETS)
    wait_all_well(server)

    if how == "ipv4 removed":
        w.client.ip("addr", "del", f"{w.client_ip}/24", "dev", w.link)
    elif how == "ipv6 removed":
        w.client.ip("addr", "del", f"{w.client_ip6}/64", "dev", w.link)
    elif how == "ipv6 tentative":
        w.client.exec("sysctl", "-qw", f"net.ipv6.conf.{w.link}.accept_dad=1",
                      f"net.ipv6.conf.{w.link}.dad_transmits=20", check=True, capture_output=True)
        w.client.ip("addr", "del", f"{w.client_ip6}/64", "dev", w.link)
        w.client.ip("addr", "add", f"{w.client_ip6}/64", "dev", w.link)  # no nodad: tentative for ~20 s
        assert "tentative" in w.client.ip("-6", "addr", "show", "dev", w.link).stdout
    else:
        # The gateway holds the same address: the client's DAD fails (dadfailed, for good).
        w.client.exec("sysctl", "-qw", f"net.ipv6.conf.{w.link}.accept_dad=1", check=True, capture_output=True)
        w.client.ip("addr", "del", f"{w.client_ip6}/64", "dev", w.link)
        w.gateway.ip("addr", "add", f"{w.client_ip6}/64", "dev", w.gateway_link, "nodad")
        w.client.ip("addr", "add", f"{w.client_ip6}/64", "dev", w.link)
        deadline = time.monotonic() + 10
        while "dadfailed" not in w.client.ip("-6", "addr", "show", "dev", w.link).stdout:
            assert time.monotonic() < deadline, w.client.ip("-6", "addr", "show", "dev", w.link).stdout
            time.sleep(0.05)
    doc = wait_cause(server, "address", family=family)
    assert doc[family] is False and doc["ipv4" if family == "ipv6" else "ipv6"] is True, doc
    check_cause(doc["cause"], "address", family, w.link, w.link, FAMILY_WORD[family])
    check_metrics_on(server, "address")


# --------------------------------------------------------------------------- 4. route


@pytest.mark.parametrize("how", ["ipv6", "ipv4", "ipv6 blackhole", "both"])
def test_route_missing(dual_world, reachd_dual, how):
    """Only IPv6's (or IPv4's) default route removed, or IPv6's replaced by a `blackhole` default:
    `route`, that family, subject null, the family in the words. Both removed: `route`, family
    null."""
    w = dual_world
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}),
                         "--connectivity-url", f"http://both.test:{far.port}/check", *FAST_TARGETS)
    wait_all_well(server)

    if how == "ipv6":
        w.client.ip("-6", "route", "del", "default")
    elif how == "ipv4":
        w.client.ip("route", "del", "default")
    elif how == "ipv6 blackhole":
        w.client.ip("-6", "route", "replace", "blackhole", "default")
    else:
        w.client.ip("-6", "route", "del", "default")
        w.client.ip("route", "del", "default")
    family = None if how == "both" else how.split()[0]
    doc = wait_cause(server, "route", family=family)
    if family is None:
        assert doc["state"] == "unreachable", doc
        check_cause(doc["cause"], "route", None, None)
    else:
        assert doc[family] is False and doc["state"] == "reachable", doc
        check_cause(doc["cause"], "route", family, None, FAMILY_WORD[family])
    check_metrics_on(server, "route")


# --------------------------------------------------------------------------- 5. dns


@pytest.mark.parametrize("dns_check", [True, False], ids=["dns-check", "no-dns-check"])
def test_every_nameserver_silent(dual_world, reachd_dual, dns_check):
    """resolv.conf names only a nameserver that never answers. With --dns-check: `dns`, subject
    null, the nameserver and how it fails in the words. Without it (nothing asks the nameservers
    themselves): the targets and the check fail with reason `dns` while every family has a route —
    `dns`, the target's name in the words."""
    w = dual_world
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    check = ("--dns-check", "db.test", *FAST_DNS) if dns_check else ()
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}),
                         "--connectivity-url", f"http://both.test:{far.port}/check", *check, *FAST_TARGETS)
    if dns_check:
        wait_status(server, lambda d: (d.get("dns") or {}).get("state") == "ok", 10, what="dns ok")
    wait_all_well(server)
    w.set_nameservers(w.dns_silent_ip)
    doc = wait_cause(server, "dns", timeout=15)
    assert doc["ipv4"] and doc["ipv6"], doc
    if dns_check:
        assert doc["dns"]["state"] == "failing", doc["dns"]
        check_cause(doc["cause"], "dns", None, None, w.dns_silent_ip, "timeout")
    else:
        doc = wait_status(server, lambda d: d["targets"][0]["reason"] == "dns" and matches(d["cause"], "dns"), 15,
                          what="the target failing with dns")
        check_cause(doc["cause"], "dns", None, None, "far")
    check_metrics_on(server, "dns")


@pytest.mark.parametrize("family", FAMILIES)
def test_every_nameserver_unroutable(dual_world, reachd_dual, family):
    """The only nameserver is an address the client has an `unreachable` route to (its family's
    default route stays): `dns`, the nameserver and `no-route` in the words — not a lower layer,
    the family has a route out."""
    w = dual_world
    far = w.far_server()
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}), "--dns-check", "db.test",
                         *FAST_TARGETS, *FAST_DNS)
    wait_all_well(server)
    nameserver = w.noroute_ip if family == "ipv4" else w.noroute6
    w.set_nameservers(nameserver)
    doc = wait_cause(server, "dns", timeout=15)
    assert doc["ipv4"] and doc["ipv6"], doc
    check_cause(doc["cause"], "dns", None, None, nameserver, "no-route")


def test_a_nameserver_whose_family_has_no_route_out_is_a_route_cause(dual_world, reachd_dual):
    """The only nameserver is reached over IPv6 and IPv6's default route goes: every nameserver
    fails (`no-route`) and the target's name no longer resolves, but the lower layer explains
    both — `route`, family ipv6."""
    w = dual_world
    fake = w.fake_dns6(0, answer6=w.both6)
    w.set_nameservers(fake.address)
    far = w.far_server()
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}), "--dns-check", "db.test",
                         *FAST_TARGETS, *FAST_DNS)
    wait_status(server, lambda d: (d.get("dns") or {}).get("state") == "ok", 10, what="dns ok")
    wait_all_well(server)
    w.client.ip("-6", "route", "del", "default")
    wait_status(server, lambda d: (d.get("dns") or {}).get("state") == "failing", 10, what="dns failing")
    doc = wait_cause(server, "route", family="ipv6")
    check_cause(doc["cause"], "route", "ipv6", None, "IPv6")


def test_a_name_that_does_not_resolve_is_a_dns_cause(dual_world, reachd_dual):
    """A target whose name is NXDOMAIN (the nameserver answers, every family has a route): `dns`,
    the target's name in the words."""
    w = dual_world
    far = w.far_server()
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}", "gone": f"tcp://nx.test:{far.port}"}),
                         *FAST_TARGETS)
    doc = wait_cause(server, "dns")
    check_cause(doc["cause"], "dns", None, None, "gone")


def test_a_target_family_whose_name_stops_resolving_is_a_dns_cause(dual_world, reachd_dual):
    """The only nameserver starts failing the AAAA query of a dual-stack target's name (SERVFAIL)
    while A still answers: its IPv6 family fails with reason `dns` (it had an address) — `dns`,
    the target's name in the words, not `target`."""
    w = dual_world
    fake = w.fake_dns(0, answer6=w.both6)
    w.set_nameservers(fake.address)
    far = w.far_server()
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}), *FAST_TARGETS)
    wait_all_well(server)
    fake.modes[AAAA] = "servfail"
    doc = wait_status(server, lambda d: (d["targets"][0]["ipv6"] or {}).get("reason") == "dns", 15,
                      what="the target's IPv6 failing on dns")
    assert doc["targets"][0]["state"] == "reachable", doc["targets"]
    doc = wait_cause(server, "dns")
    check_cause(doc["cause"], "dns", None, None, "far")


def test_one_nameserver_failing_while_another_answers_only_when_nothing_else_fails(dual_world, reachd_dual):
    """Two nameservers, the second silent: `dns` with the silent one as subject. A target then
    refused: `target` — one nameserver failing is named only when nothing else fails."""
    w = dual_world
    far = w.far_server()
    other = w.far_server()
    w.set_nameservers(w.gateway_ip, w.dns_silent_ip)
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}", "other": f"tcp://both.test:{other.port}"}),
                         "--dns-check", "db.test", *FAST_TARGETS, *FAST_DNS)
    doc = wait_cause(server, "dns", subject=w.dns_silent_ip, timeout=15)
    assert doc["dns"]["state"] == "degraded", doc["dns"]
    check_cause(doc["cause"], "dns", None, w.dns_silent_ip, w.dns_silent_ip)

    other.stop()
    doc = wait_cause(server, "target", subject="other")
    check_cause(doc["cause"], "target", None, "other", "other", "refused")


def test_two_nameservers_of_three_failing_while_one_answers(dual_world, reachd_dual):
    """Three nameservers: the first answers, the second never answers, nothing listens on the
    third's port. Two fail while one answers: `dns`, subject null (not one alone), both failing
    nameservers in the words."""
    w = dual_world
    w.set_nameservers(w.gateway_ip, w.dns_silent_ip, w.dns_closed_ip)
    server = reachd_dual("--dns-check", "db.test", *FAST_DNS)
    doc = wait_status(server, lambda d: [s["state"] for s in d["dns"]["servers"]] == ["answering", "failing", "failing"],
                      15, what="one nameserver answering, two failing")
    assert doc["dns"]["state"] == "degraded", doc["dns"]
    doc = wait_cause(server, "dns")
    check_cause(doc["cause"], "dns", None, None, w.dns_silent_ip, w.dns_closed_ip)


def test_one_check_family_failing_on_dns_is_not_null(dual_world, reachd_dual):
    """The only nameserver answers the check host's A query but starts failing its AAAA query
    (SERVFAIL): the check's IPv6 family reads `limited (dns)` while IPv4 is `full`. A connectivity
    family fails, so `cause` is not null (the contract names no row for it; DNS is the layer the
    rules give the check's own host when every family fails on it)."""
    w = dual_world
    fake = w.fake_dns(0, answer6=w.both6)
    w.set_nameservers(fake.address)
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    server = reachd_dual("--connectivity-url", f"http://both.test:{far.port}/check", *FAST_CHECK)
    wait_all_well(server)
    assert cause_of(status(server)) is None
    fake.modes[AAAA] = "servfail"
    doc = wait_status(server, lambda d: (d["connectivity"].get("ipv6") or {}).get("state") == "limited", 15,
                      what="the check's IPv6 family limited")
    assert doc["connectivity"]["ipv6"]["reason"] == "dns" and doc["connectivity"]["ipv4"]["state"] == "full", \
        doc["connectivity"]
    time.sleep(0.5)
    doc = status(server)
    assert doc["connectivity"]["ipv6"]["state"] == "limited", doc["connectivity"]
    assert cause_of(doc) is not None, f"a connectivity family fails, yet cause is null: {doc['connectivity']}"
    assert doc["cause"]["layer"] in ("dns", "check"), doc["cause"]
    assert doc["cause"]["family"] in ("ipv6", None), doc["cause"]


# --------------------------------------------------------------------------- 6. path


@pytest.mark.parametrize("broken", ["ipv6", "ipv4", "both"])
def test_dark_past_the_gateway_is_path_within_seconds_at_the_default_interval(dual_world, reachd_dual, broken):
    """The gateway black-holes the far range (the client's routes stay): `path`, subject the
    client's interface (the kernel's route), `past the gateway` in the words; one family broken →
    that family, both → null. The connectivity interval is the default 300 s: the re-check at the
    first failed probe brings it within one probe timeout plus one check timeout."""
    w = dual_world
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    interval, probe_timeout, check_timeout = 1.0, 1.0, 2.0
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}),
                         "--connectivity-url", f"http://both.test:{far.port}/check",
                         "--target-interval", str(interval), "--target-timeout", str(probe_timeout),
                         "--connectivity-timeout", str(check_timeout), "--ready-when", "online")
    wait_all_well(server)
    time.sleep(1.2)  # a success of each target family since start
    assert cause_of(status(server)) is None

    t0 = time.monotonic()
    for family in (FAMILIES if broken == "both" else (broken,)):
        w.break_family(family)
    family = None if broken == "both" else broken
    doc = wait_cause(server, "path", family=family, timeout=interval + probe_timeout + check_timeout + 8)
    elapsed = time.monotonic() - t0
    print(f"{broken} dark past the gateway: cause path after {elapsed:.2f}s")
    cause = doc["cause"]
    check_cause(cause, "path", family, w.link, "past the gateway")
    if family is not None:
        assert FAMILY_WORD[family] in cause["text"], cause
        assert doc[family] is True, doc  # the route exists
    assert elapsed < interval + probe_timeout + check_timeout + 3, \
        f"{elapsed:.2f}s: not re-checked at the first failed probe (interval 300 s)"
    check_metrics_on(server, "path")
    ready = readyz(server)
    if family is None:  # connectivity limited: not ready, and only the layer is said
        body = ready.body.decode()
        assert ready.status == 503 and "cause: path" in body, body
        assert w.link not in body and cause["text"] not in body, body
    else:
        assert ready.status == 200, ready


@pytest.mark.parametrize("how", ["ipv6 rejected", "both dropped"])
def test_without_a_check_every_target_of_a_family_failing_past_the_gateway_is_path(dual_world, reachd_dual, how):
    """No connectivity check: every target's IPv6 answered by the gateway with ICMP unreachable
    (`host-unreachable`/`no-route`), or every target dropped in both families (`timeout`), while
    the routes stay: `path` (that family, or null for both), subject the client's interface."""
    w = dual_world
    far = w.far_server()
    server = reachd_dual(*target_args({"a": f"tcp://both.test:{far.port}", "b": f"http://both.test:{far.port}/"}),
                         *FAST_TARGETS)
    wait_all_well(server)
    if how == "ipv6 rejected":
        w.reject_family("ipv6")
        family = "ipv6"
    else:
        w.break_family("ipv4")
        w.break_family("ipv6")
        family = None
    doc = wait_cause(server, "path", family=family, timeout=15)
    assert doc["ipv4"] and doc["ipv6"], doc
    check_cause(doc["cause"], "path", family, w.link, "past the gateway", w.link)
    if family is not None:
        assert FAMILY_WORD[family] in doc["cause"]["text"], doc["cause"]


def test_without_a_check_one_target_of_a_family_failing_is_a_target_cause(dual_world, reachd_dual):
    """No connectivity check: one target's IPv6 address is dropped, another target's IPv6 answers —
    not every target of the family fails, so not `path`: `target`, family ipv6."""
    w = dual_world
    far = w.far_server()
    server = reachd_dual(*target_args({"ok": f"tcp://both.test:{far.port}", "half": f"tcp://v6dead.test:{far.port}"}),
                         *FAST_TARGETS)
    doc = wait_cause(server, "target", family="ipv6", timeout=15)
    check_cause(doc["cause"], "target", "ipv6", "half", "half", "IPv6", "timeout")


# --------------------------------------------------------------------------- 7. portal, 8. check


@pytest.mark.parametrize("how,family", [("302", None), ("200 another body", None), ("302", "ipv6")])
def test_captive_portal(dual_world, reachd_dual, how, family):
    """The check answers a redirect, or (with --connectivity-response) a 200 with another body:
    `portal`, subject null, `captive portal` and the URL's host in the words; over one family
    only → that family."""
    w = dual_world
    far = w.far_server()
    expected = ("--connectivity-response", "ok") if how != "302" else ()
    far.route("/check", OK if expected else NO_CONTENT)
    server = reachd_dual("--connectivity-url", f"http://both.test:{far.port}/check", *expected, *FAST_CHECK)
    wait_all_well(server)
    far.route("/check", redirect("http://login.example/portal") if how == "302" else PORTAL_LOGIN, family=family)
    doc = wait_cause(server, "portal", family=family, timeout=15)
    if family is None:
        assert doc["connectivity"]["state"] == "portal", doc["connectivity"]
    else:
        assert doc["connectivity"][family]["state"] == "portal", doc["connectivity"]
    check_cause(doc["cause"], "portal", family, None, "captive portal", "both.test")
    check_metrics_on(server, "portal")


@pytest.mark.parametrize("family", [None, "ipv4", "ipv6"])
def test_check_server_misbehaves(dual_world, reachd_dual, family):
    """The check answers 503 (for both families, or for one): `check`, subject null, the URL's host
    and the reason in the words; one family → that family."""
    w = dual_world
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    server = reachd_dual("--connectivity-url", f"http://both.test:{far.port}/check", *FAST_CHECK)
    wait_all_well(server)
    far.route("/check", UNAVAILABLE, family=family)
    doc = wait_cause(server, "check", family=family, timeout=15)
    check_cause(doc["cause"], "check", family, None, "both.test", "503")
    check_metrics_on(server, "check")


# --------------------------------------------------------------------------- 9. target


def test_a_target_refused(dual_world, reachd_dual):
    """One target of two refused (nothing listens on its port, both families): `target`, subject
    its name, family null, its name and `refused` in the words."""
    w = dual_world
    far = w.far_server()
    server = reachd_dual(*target_args({"ok": f"tcp://both.test:{far.port}",
                                       "db": f"tcp://both.test:{w.far_closed_port()}"}), *FAST_TARGETS,
                         "--ready-when", "reachable,target:db")
    doc = wait_cause(server, "target")
    assert doc["ipv4"] and doc["ipv6"], doc
    db = next(t for t in doc["targets"] if t["name"] == "db")
    assert db["reason"] == "refused" and db["detail"], db
    check_cause(doc["cause"], "target", None, "db", "db", "refused", db["detail"])
    check_metrics_on(server, "target")
    ready = readyz(server)
    body = ready.body.decode()
    assert ready.status == 503 and "cause: target" in body, body
    assert doc["cause"]["text"] not in body and db["detail"] not in body, body


@pytest.mark.parametrize("family", FAMILIES)
def test_one_family_of_a_dual_stack_target_dropped(dual_world, reachd_dual, family):
    """A dual-stack target whose address of one family is in a range the gateway drops, while the
    connectivity check is full over both families: `target`, that family, subject the target, its
    name, the family and the reason in the words."""
    w = dual_world
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    name = "v6dead.test" if family == "ipv6" else "v4dead.test"
    server = reachd_dual(*target_args({"half": f"tcp://{name}:{far.port}"}),
                         "--connectivity-url", f"http://both.test:{far.port}/check", *FAST_TARGETS)
    doc = wait_cause(server, "target", family=family, timeout=15)
    assert doc["connectivity"]["state"] == "full" and not doc["connectivity"]["degraded"], doc["connectivity"]
    check_cause(doc["cause"], "target", family, "half", "half", FAMILY_WORD[family], "timeout")


def test_within_the_target_layer_both_families_first_then_ipv6_then_document_order(dual_world, reachd_dual):
    """Targets in this order: `half4` (its IPv4 dropped), `half6` (its IPv6 dropped), `whole`
    (refused over both families); the check full. The cause is `whole` (both families before one
    family) although it comes last; once it answers, `half6` (IPv6 before IPv4) although `half4`
    comes first."""
    w = dual_world
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    web = w.far_server()
    web.stop()
    server = reachd_dual(*target_args({"half4": f"tcp://v4dead.test:{far.port}", "half6": f"tcp://v6dead.test:{far.port}",
                                       "whole": f"tcp://both.test:{web.port}"}),
                         "--connectivity-url", f"http://both.test:{far.port}/check", *FAST_TARGETS)
    doc = wait_status(server, lambda d: all(t["state"] != "unknown" and all((t[f] or {}).get("state") != "unknown"
                                                                               for f in FAMILIES) for t in d["targets"]),
                      10, what="every target family settled")
    assert [t["name"] for t in doc["targets"]] == ["half4", "half6", "whole"], doc["targets"]
    doc = wait_cause(server, "target", subject="whole")
    check_cause(doc["cause"], "target", None, "whole", "whole", "refused")
    web.start()
    doc = wait_cause(server, "target", family="ipv6", subject="half6")
    check_cause(doc["cause"], "target", "ipv6", "half6", "half6", "IPv6")


# --------------------------------------------------------------------------- 10. uplink


@pytest.mark.parametrize("families", [FAMILIES, ("ipv6",)])
def test_the_backup_uplink_broken_while_the_primary_works(uplinks, reachd_up, families):
    """--per-uplink: the backup uplink's ISP black-holes everything past its first hop (both
    families, or IPv6 only) while the kernel's choice works: `uplink`, subject the backup
    interface, its name and its state in the words. A target then refused: `target` (a backup's
    trouble never hides a target's)."""
    w = uplinks
    check = w.check_server()
    target = w.target_server()
    server = reachd_up(w, "--per-uplink", "--connectivity-url", check_url(w, check), *FAST_CHECK,
                       *target_args({"t": f"tcp://target.test:{target.port}"}), *FAST_TARGETS)
    wait_uplink(server, "wan1", lambda c: c is not None and c["state"] == "full" and not c["degraded"], 10)
    wait_all_well(server)
    assert cause_of(status(server)) is None
    w.break_isp(1, families)
    family = None if len(families) == 2 else families[0]
    doc = wait_cause(server, "uplink", family=family, timeout=15)
    assert doc["connectivity"]["state"] == "full" and not doc["connectivity"]["degraded"], doc["connectivity"]
    check_cause(doc["cause"], "uplink", family, "wan1", "wan1", "limited")
    check_metrics_on(server, "uplink")
    # A backup's trouble never hides a target's.
    target.stop()
    doc = wait_cause(server, "target", subject="t")
    check_cause(doc["cause"], "target", None, "t", "t", "refused")


# --------------------------------------------------------------------------- 11. quality


@pytest.mark.parametrize("name,family", [("far.test", None), ("far6.test", None)])
def test_an_impairment(icmp_world, reachd_icmp, name, family):
    """One small echo in three unanswered (loss above --max-loss 0.2): `quality`, subject the
    target, its name and the impairment in the words; every family the target has impaired →
    family null (far6.test has IPv6 alone: as a target of one family unreachable, or an IPv4-only
    host losing IPv4, the cause is all there is of it)."""
    w = icmp_world
    w.responder.drop_every = 3
    server = reachd_icmp("--target", f"far=icmp://{name}", "--max-loss", "0.2", "--quality-window", "4",
                         "--target-failures", "1", "--target-interval", "0.5", "--target-timeout", "1")
    doc = wait_cause(server, "quality", family=family, timeout=25)
    assert doc["targets"][0]["state"] == "reachable", doc["targets"]
    check_cause(doc["cause"], "quality", family, "far", "far", "loss")
    check_metrics_on(server, "quality")


# --------------------------------------------------------------------------- 12. config


def test_a_bad_targets_file(dual_world, reachd_dual, tmp_path):
    """The targets file rewritten with a bad third line (picked up by the file watch): `config`,
    subject null, the file and the line in the words; fixed again: `null`."""
    path = tmp_path / "targets"
    path.write_text("local=host://127.0.0.1\n")
    server = reachd_dual("--targets-file", str(path), *FAST_TARGETS)
    wait_all_well(server)
    assert cause_of(status(server)) is None

    temporary = tmp_path / ".targets.new"
    temporary.write_text("local=host://127.0.0.1\n# a typo follows\nthis is not a target\n")
    os.replace(temporary, path)
    doc = wait_cause(server, "config")
    check_cause(doc["cause"], "config", None, None, str(path), "line 3")
    check_metrics_on(server, "config")

    # Another bad line: other words, the same cause — its `since` stays.
    temporary.write_text("local=host://127.0.0.1\n\n\n\nweb=tcp://127.0.0.1\n")
    os.replace(temporary, path)
    later = wait_status(server, lambda d: matches(d["cause"], "config") and "line 5" in d["cause"]["text"], 10,
                        what="the second refusal")
    check_cause(later["cause"], "config", None, None, str(path), "line 5")
    assert later["cause"]["since"] == doc["cause"]["since"], (doc["cause"], later["cause"])

    temporary.write_text("local=host://127.0.0.1\n")
    os.replace(temporary, path)
    wait_cause(server, None)


def test_a_refused_web_config(dual_world, reachd_dual, tmp_path):
    """--web-config-file rewritten with a key reachd does not support (picked up by the file
    watch; the previous configuration stays): `config`, subject null, the file and its error in
    the words; the file good again: `null`."""
    path = tmp_path / "web.yml"
    path.write_text("")
    server = reachd_dual("--web-config-file", str(path))
    wait_status(server, lambda d: d["state"] == "reachable", 10, what="reachable")
    assert cause_of(status(server)) is None
    path.write_text("http_server_config:\n  http2: false\n")
    doc = wait_cause(server, "config")
    check_cause(doc["cause"], "config", None, None, str(path), "http_server_config")
    check_metrics_on(server, "config")
    path.write_text("")
    wait_cause(server, None)


# --------------------------------------------------------------------------- 13. since


def test_since_stays_while_the_words_change_and_a_new_cause_gets_a_new_one(dual_world, reachd_dual):
    """A target refused, then the same target timing out (its server back, never answering): the
    same layer, family and subject with other words keeps `since`. IPv6's route then removed: a
    new cause with a new `since`."""
    w = dual_world
    check = w.far_server()
    check.route("/check", NO_CONTENT)
    web = w.far_server()
    web.route("/t", OK)
    server = reachd_dual(*target_args({"web": f"http://both.test:{web.port}/t"}),
                         "--connectivity-url", f"http://both.test:{check.port}/check", *FAST_TARGETS)
    wait_all_well(server)
    events = EventLog(server)
    try:
        web.stop()
        refused = wait_cause(server, "target", family=None, subject="web")
        assert "refused" in refused["cause"]["text"], refused["cause"]
        assert refused["cause"]["since"] <= refused["changedAt"]

        web.route("/t", HANG)
        web.start()
        timing_out = wait_status(server, lambda d: matches(cause_of(d), "target", None, "web")
                                 and "timeout" in d["cause"]["text"], 15, what="the target timing out")
        assert timing_out["cause"]["text"] != refused["cause"]["text"]
        assert timing_out["cause"]["since"] == refused["cause"]["since"], (refused["cause"], timing_out["cause"])
        assert timing_out["sequence"] > refused["sequence"]

        w.client.ip("-6", "route", "del", "default")
        routed = wait_cause(server, "route", family="ipv6")
        assert routed["cause"]["since"] > refused["cause"]["since"], (refused["cause"], routed["cause"])
        assert routed["cause"]["since"] <= routed["changedAt"], routed
        time.sleep(0.5)  # the route's document on the stream too
    finally:
        events.close()
    docs = events.docs
    assert len(docs) >= 3, docs
    causes = [(d["sequence"], d["cause"] and d["cause"]["layer"], d["cause"] and d["cause"]["text"]) for d in docs]
    print("causes along the stream:", causes)
    assert any(matches(d["cause"], "route", "ipv6") for d in docs), causes
    check_since_along(docs)


# --------------------------------------------------------------------------- 14. watch and the log


class Watch:
    """`reachd watch` in the server's namespace; its stdout lines collected by a thread."""

    def __init__(self, server) -> None:
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", server.netns, reachd_binary(), "watch", "--port", str(server.port)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            with self._lock:
                self.lines.append(line.rstrip("\n"))

    def blocks(self) -> dict[int, list[str]]:
        """{sequence: the indented diff lines under its line}."""
        with self._lock:
            lines = list(self.lines)
        out: dict[int, list[str]] = {}
        current = None
        for line in lines:
            match = re.search(r" #(\d+) ", line)
            if not line.startswith(" ") and match:
                current = int(match.group(1))
                out[current] = []
            elif current is not None and line.startswith("  "):
                out[current].append(line)
        return out

    def wait_block(self, sequence: int, timeout: float = 10.0) -> list[str]:
        """The diff lines of `sequence`, once a later line (or a pause) shows the block complete."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            blocks = self.blocks()
            if sequence in blocks and (any(s > sequence for s in blocks) or blocks[sequence]):
                time.sleep(0.3)  # the rest of its lines, written together
                return self.blocks()[sequence]
            time.sleep(0.05)
        with self._lock:
            raise AssertionError(f"watch printed no change #{sequence}: {self.lines[-20:]}")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


def test_watch_prints_the_cause_first_and_the_log_line_carries_it(dual_world, reachd_dual):
    """Targets a and b. a refused: watch prints `cause: <text>` first among that change's lines and
    the `status changed` log line carries `cause` (the layer) and `causeText`. b refused too: the cause
    stays a (the first in document order) and that change prints no cause line. a back: the cause
    becomes b. b back: `cause: none (nothing known to be wrong)`, logged as `cause=none`."""
    w = dual_world
    a_server, b_server = w.far_server(), w.far_server()
    server = reachd_dual(*target_args({"a": f"tcp://both.test:{a_server.port}", "b": f"tcp://both.test:{b_server.port}"}),
                         "--target-interval", "0.5", "--target-timeout", "1", "--target-failures", "1",
                         "--log-format", "json")
    wait_all_well(server)
    watch = Watch(server)
    try:
        deadline = time.monotonic() + 10
        while not watch.lines and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watch.lines, "watch printed nothing"

        a_server.stop()
        doc = wait_cause(server, "target", subject="a")
        block = watch.wait_block(doc["sequence"])
        assert block and block[0] == f"  cause: {doc['cause']['text']}", block
        assert sum(line.lstrip().startswith("cause:") for line in block) == 1, block
        record = next((r for r in status_changed(server) if r.get("sequence") in (doc["sequence"], str(doc["sequence"]))),
                      None)
        assert record is not None, status_changed(server)[-3:]
        assert record["cause"] == "target" and record["causeText"] == doc["cause"]["text"], record

        b_server.stop()
        doc_b = wait_status(server, lambda d: next(t for t in d["targets"] if t["name"] == "b")["state"] == "unreachable",
                            10, what="b unreachable")
        assert matches(doc_b["cause"], "target", None, "a") and doc_b["cause"]["since"] == doc["cause"]["since"], \
            doc_b["cause"]
        block = watch.wait_block(doc_b["sequence"])
        assert block and not any(line.lstrip().startswith("cause:") for line in block), block

        a_server.start()
        doc = wait_cause(server, "target", subject="b")
        block = watch.wait_block(doc["sequence"])
        assert block and block[0] == f"  cause: {doc['cause']['text']}", block

        b_server.start()
        doc = wait_cause(server, None)
        block = watch.wait_block(doc["sequence"])
        assert block and block[0] == "  cause: none (nothing known to be wrong)", block
        deadline = time.monotonic() + 5
        while True:
            records = [r for r in status_changed(server) if str(r.get("sequence")) == str(doc["sequence"])]
            if records or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert records and records[0]["cause"] == "none" and "causeText" not in records[0], records
        assert watch.process.poll() is None
    finally:
        watch.close()
