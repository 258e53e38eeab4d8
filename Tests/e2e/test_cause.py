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

from conftest import ISO8601_MS_Z, http
from icmp_world import icmp_world, reachd_icmp  # noqa: F401
from reachd_process import reachd_binary
from world import (HANG, NO_CONTENT, OK, PORTAL_LOGIN, UNAVAILABLE, Answer, readyz, reachd_in,  # noqa: F401
                   redirect, status, target_args, wait_status, world)
from world_dualstack import FAMILIES, dual_world, reachd_dual  # noqa: F401
from world_uplinks import check_url, reachd_up, uplinks, wait_uplink  # noqa: F401

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


# --------------------------------------------------------------------------- 2. link


@pytest.mark.parametrize("how", ["down", "no carrier", "removed"])
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
    elif how == "no carrier":
        w.gateway.ip("link", "set", "dev", w.gateway_link, "down")
    else:
        w.client.ip("link", "del", "dev", w.link)
    doc = wait_cause(server, "link", family=None)
    assert doc["state"] == "unreachable" and not doc["ipv4"] and not doc["ipv6"], doc
    cause = doc["cause"]
    check_cause(cause, "link", None, w.link, w.link, how)
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


@pytest.mark.parametrize("how", ["ipv4 removed", "ipv6 removed", "ipv6 tentative"])
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
    else:
        w.client.exec("sysctl", "-qw", f"net.ipv6.conf.{w.link}.accept_dad=1",
                      f"net.ipv6.conf.{w.link}.dad_transmits=20", check=True, capture_output=True)
        w.client.ip("addr", "del", f"{w.client_ip6}/64", "dev", w.link)
        w.client.ip("addr", "add", f"{w.client_ip6}/64", "dev", w.link)  # no nodad: tentative for ~20 s
        assert "tentative" in w.client.ip("-6", "addr", "show", "dev", w.link).stdout
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


def test_every_nameserver_silent(dual_world, reachd_dual):
    """resolv.conf names only a nameserver that never answers, with --dns-check: `dns`, subject
    null, the nameserver and how it fails in the words."""
    w = dual_world
    far = w.far_server()
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}), "--dns-check", "db.test",
                         *FAST_TARGETS, *FAST_DNS)
    wait_status(server, lambda d: (d.get("dns") or {}).get("state") == "ok", 10, what="dns ok")
    wait_all_well(server)
    w.set_nameservers(w.dns_silent_ip)
    doc = wait_cause(server, "dns", timeout=15)
    assert doc["dns"]["state"] == "failing", doc["dns"]
    check_cause(doc["cause"], "dns", None, None, w.dns_silent_ip, "timeout")
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
                         "--connectivity-timeout", str(check_timeout))
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


# --------------------------------------------------------------------------- 7. portal, 8. check


@pytest.mark.parametrize("how", ["302", "200 another body"])
def test_captive_portal(dual_world, reachd_dual, how):
    """The check answers a redirect, or (with --connectivity-response) a 200 with another body:
    `portal`, subject null, `captive portal` and the URL's host in the words."""
    w = dual_world
    far = w.far_server()
    expected = ("--connectivity-response", "ok") if how != "302" else ()
    far.route("/check", OK if expected else NO_CONTENT)
    server = reachd_dual("--connectivity-url", f"http://both.test:{far.port}/check", *expected, *FAST_CHECK)
    wait_all_well(server)
    far.route("/check", redirect("http://login.example/portal") if how == "302" else PORTAL_LOGIN)
    doc = wait_cause(server, "portal", timeout=15)
    assert doc["connectivity"]["state"] == "portal", doc["connectivity"]
    check_cause(doc["cause"], "portal", None, None, "captive portal", "both.test")
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
                                       "db": f"tcp://both.test:{w.far_closed_port()}"}), *FAST_TARGETS)
    doc = wait_cause(server, "target")
    assert doc["ipv4"] and doc["ipv6"], doc
    check_cause(doc["cause"], "target", None, "db", "db", "refused")
    check_metrics_on(server, "target")
    assert http(server.port, "GET", "/readyz", ns=server.netns).status == 200  # reachable: ready


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


# --------------------------------------------------------------------------- 10. uplink


@pytest.mark.parametrize("families", [FAMILIES, ("ipv6",)])
def test_the_backup_uplink_broken_while_the_primary_works(uplinks, reachd_up, families):
    """--per-uplink: the backup uplink's ISP black-holes everything past its first hop (both
    families, or IPv6 only) while the kernel's choice works: `uplink`, subject the backup
    interface, its name and its state in the words."""
    w = uplinks
    check = w.check_server()
    server = reachd_up(w, "--per-uplink", "--connectivity-url", check_url(w, check), *FAST_CHECK)
    wait_uplink(server, "wan1", lambda c: c is not None and c["state"] == "full" and not c["degraded"], 10)
    wait_all_well(server)
    assert cause_of(status(server)) is None
    w.break_isp(1, families)
    family = None if len(families) == 2 else families[0]
    doc = wait_cause(server, "uplink", family=family, timeout=15)
    assert doc["connectivity"]["state"] == "full" and not doc["connectivity"]["degraded"], doc["connectivity"]
    check_cause(doc["cause"], "uplink", family, "wan1", "wan1", "limited")
    check_metrics_on(server, "uplink")


# --------------------------------------------------------------------------- 11. quality


@pytest.mark.parametrize("name,family", [("far.test", None), ("far6.test", "ipv6")])
def test_an_impairment(icmp_world, reachd_icmp, name, family):
    """One small echo in three unanswered (loss above --max-loss 0.2): `quality`, subject the
    target, its name and the impairment in the words; both families impaired → family null."""
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

    temporary.write_text("local=host://127.0.0.1\n")
    os.replace(temporary, path)
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
    assert routed["cause"]["since"] == routed["changedAt"], routed


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
    the `status changed` log line carries `cause` (layer, text, subject). b refused too: the cause
    stays a (the first in document order) and that change prints no cause line. a back: the cause
    becomes b. b back: `cause: none (nothing known to be wrong)`, logged as `{"layer": "none"}`."""
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
        assert record["cause"]["layer"] == "target" and record["cause"]["subject"] == "a", record
        assert record["cause"]["text"] == doc["cause"]["text"], record
        assert "family" not in record["cause"] or record["cause"]["family"] is None, record

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
        assert records and records[0]["cause"] == {"layer": "none"}, records
        assert watch.process.poll() is None
    finally:
        watch.close()
