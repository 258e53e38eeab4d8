"""Re-checked when things start failing, and honest words for DNS — black-box in namespaces.

The contract (DESIGN.md, "The cause first"):

1. The first failed probe after a success of a target family or a nameserver, while connectivity
   reads `full`, runs the connectivity check at once — not at the next --connectivity-interval,
   left at its default of 300 s here — at most once per 10 s however many targets fail; a target
   that stays failing triggers nothing more; a check that then fails backs off from 1 s as before.
   So a stopped check server reads `limited (refused)` about when its targets read `refused`, and a
   network dark past the gateway `limited (timeout)` within one probe timeout plus one check
   timeout (3 s + 5 s) of the first failed probe, each family on its own.
2. A nameserver the kernel has no route to is `no-route`, and a target whose only nameservers are
   unroutable reads `dns` with a `detail` naming them and `no route` — never the `ECONNREFUSED`
   c-ares 1.18 reports for every socket error — and the target's reasons never flip `no-route` →
   `dns` between documents for that one change.
"""

from __future__ import annotations

import threading
import time

import pytest

from conftest import SSEClient, http
from world import (NO_CONTENT, reachd_in, status, target_args, target_of, wait_connectivity,  # noqa: F401
                   wait_target, world)
from world_dualstack import FAMILIES, dual_world, reachd_dual, server_entry, wait_dns  # noqa: F401
from world_uplinks import (check_url, families_are, reachd_up, uplink_connectivity, uplinks,  # noqa: F401
                           wait_uplink)

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]

PROBE_TIMEOUT = 3.0  # --target-timeout's default
CHECK_TIMEOUT = 5.0  # --connectivity-timeout's default
TARGET_INTERVAL = 2.0  # short, so that the first failed probe comes soon after a change
SPACING = 10.0  # at most one re-check per 10 s


class EventLog:
    """Every `status` document of `/events` from now until `close()`, read by a thread of its own
    (the stream keeps only the latest frame for a slow reader: this one never falls behind)."""

    def __init__(self, server) -> None:
        self.docs: list[dict] = []
        self._client = SSEClient(server.port, ns=server.netns, timeout=60)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stopping.is_set():
            try:
                event = self._client.next_event(timeout=0.2)
            except TimeoutError:
                continue
            except OSError:
                return
            if event.event == "status":
                self.docs.append(event.doc)

    def close(self) -> list[dict]:
        self._stopping.set()
        self._thread.join(timeout=2)
        self._client.close()
        return self.docs


def hits_between(server, path: str, start: float, end: float) -> list[float]:
    return [t for t in server.hits[path] if start <= t < end]


# --------------------------------------------------------------------------- 1. re-checked at once


def test_check_server_stopped_reads_limited_about_when_its_targets_fail(world, reachd_in):
    """The check and a target on the same host and port; the server stops. With the default
    300 s interval the check used to read `full` for minutes; now the target's first refused probe
    runs it at once: `limited (refused)`, no later than the target's own `unreachable`."""
    web = world.server()
    web.route("/check", NO_CONTENT)
    server = reachd_in(world, *target_args({"web": f"tcp://db.test:{web.port}"}),
                       "--connectivity-url", f"http://db.test:{web.port}/check",
                       "--target-interval", str(TARGET_INTERVAL))
    wait_connectivity(server, lambda c: c["state"] == "full", timeout=10)
    wait_target(server, "web", lambda t: t["state"] == "reachable", timeout=10)

    t0 = time.monotonic()
    web.stop()
    limited = wait_connectivity(server, lambda c: c["state"] == "limited", timeout=TARGET_INTERVAL + 8)
    limited_after = time.monotonic() - t0
    target = wait_target(server, "web", lambda t: t["state"] == "unreachable", timeout=10)
    unreachable_after = time.monotonic() - t0
    print(f"check server stopped: connectivity limited after {limited_after:.2f}s, "
          f"the target unreachable after {unreachable_after:.2f}s")
    assert limited["reason"] == "refused", limited
    assert target["reason"] == "refused", target
    # The first failed probe comes within one target interval of the stop; the check right after it.
    assert limited_after < TARGET_INTERVAL + 2, f"{limited_after:.2f}s: not re-checked at the first failure"


def test_network_dark_past_the_gateway_reads_limited_within_a_probe_and_a_check_timeout(
        dual_world, reachd_dual):
    """Both families black-holed past the gateway (no ICMP: everything times out): `limited
    (timeout)` within one probe timeout plus one check timeout of the first failed probe, for
    each family — not at the next 300 s check."""
    w = dual_world
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}),
                         "--connectivity-url", f"http://both.test:{far.port}/check",
                         "--target-interval", str(TARGET_INTERVAL))
    doc = wait_connectivity(server, lambda c: c["state"] == "full" and not c.get("degraded"), timeout=10)
    assert all(doc[f]["state"] == "full" for f in FAMILIES), doc
    wait_target(server, "far", lambda t: t["state"] == "reachable" and not t["degraded"], timeout=10)

    t0 = time.monotonic()
    w.break_family("ipv4")
    w.break_family("ipv6")
    limited = wait_connectivity(server, lambda c: c["state"] == "limited",
                                timeout=TARGET_INTERVAL + PROBE_TIMEOUT + CHECK_TIMEOUT + 4)
    elapsed = time.monotonic() - t0
    print(f"dark past the gateway: connectivity limited after {elapsed:.2f}s "
          f"(first failed probe within {TARGET_INTERVAL + PROBE_TIMEOUT:.0f}s, then a {CHECK_TIMEOUT:.0f}s check)")
    assert limited["reason"] == "timeout", limited
    assert all(limited[f]["state"] == "limited" and limited[f]["reason"] == "timeout" for f in FAMILIES), limited
    assert elapsed < TARGET_INTERVAL + PROBE_TIMEOUT + CHECK_TIMEOUT + 2, f"{elapsed:.2f}s"


@pytest.mark.parametrize("family", FAMILIES)
def test_one_family_dark_past_the_gateway_is_rechecked_alone(dual_world, reachd_dual, family):
    """Only one family black-holed: the target's probe of that family starts failing, the check
    runs at once and that family reads `limited (timeout)`; the other stays `full` (overall
    `full`, degraded)."""
    w = dual_world
    other = "ipv6" if family == "ipv4" else "ipv4"
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}),
                         "--connectivity-url", f"http://both.test:{far.port}/check",
                         "--target-interval", str(TARGET_INTERVAL))
    wait_connectivity(server, lambda c: c["state"] == "full" and not c.get("degraded"), timeout=10)
    wait_target(server, "far", lambda t: t["state"] == "reachable" and not t["degraded"], timeout=10)

    t0 = time.monotonic()
    w.break_family(family)
    connectivity = wait_connectivity(server, lambda c: (c.get(family) or {}).get("state") == "limited",
                                     timeout=TARGET_INTERVAL + PROBE_TIMEOUT + CHECK_TIMEOUT + 4)
    elapsed = time.monotonic() - t0
    print(f"{family} dark past the gateway: connectivity.{family} limited after {elapsed:.2f}s")
    assert connectivity[family]["reason"] == "timeout", connectivity
    assert connectivity[other]["state"] == "full", connectivity
    assert connectivity["state"] == "full" and connectivity["degraded"] is True, connectivity
    assert elapsed < TARGET_INTERVAL + PROBE_TIMEOUT + CHECK_TIMEOUT + 2, f"{elapsed:.2f}s"


def test_at_most_one_recheck_per_ten_seconds_however_many_targets_fail(world, reachd_in):
    """Twelve targets start failing one after another within 6 s while the check server keeps
    answering 204: one check, not twelve. Those targets staying failing run nothing more; a
    thirteenth starting to fail more than 10 s after that check runs one more."""
    check = world.server()
    check.route("/check", NO_CONTENT)
    servers = [world.server() for _ in range(13)]
    targets = {f"t{i}": f"tcp://db.test:{s.port}" for i, s in enumerate(servers)}
    server = reachd_in(world, *target_args(targets), "--connectivity-url", f"http://db.test:{check.port}/check",
                       "--target-interval", "1")
    wait_connectivity(server, lambda c: c["state"] == "full", timeout=10)
    for name in targets:
        wait_target(server, name, lambda t: t["state"] == "reachable", timeout=10)
    time.sleep(1.5)  # every target has had a success since start, and the start's checks are over
    assert status(server)["connectivity"]["state"] == "full"

    t0 = time.monotonic()
    for s in servers[:12]:
        s.stop()
        time.sleep(0.5)
    # Every one of the twelve has failed by now (a probe a second), most of them several times.
    wait_target(server, "t11", lambda t: t["state"] == "unreachable", timeout=8)
    time.sleep(max(0.0, t0 + SPACING + 3.5 - time.monotonic()))
    window = hits_between(check, "/check", t0, time.monotonic())
    print(f"12 targets failing within 6 s: {len(window)} check(s) at "
          f"{[round(t - t0, 2) for t in window]} s")
    assert len(window) == 1, f"{len(window)} checks for one stall: {[round(t - t0, 2) for t in window]}"
    assert window[0] - t0 < 2, "the first failure did not run the check at once"

    # A thirteenth target starts failing more than 10 s after that check: one more.
    t1 = time.monotonic()
    servers[12].stop()
    check.wait_hits("/check", len(check.hits["/check"]) + 1, timeout=3)
    time.sleep(2.5)
    later = hits_between(check, "/check", t1, time.monotonic())
    print(f"a thirteenth target failing {t1 - window[0]:.1f}s after the check: {len(later)} check(s)")
    assert len(later) == 1, later
    assert status(server)["connectivity"]["state"] == "full"


def test_per_uplink_the_failing_targets_uplink_is_checked_at_once(uplinks, reachd_up):
    """--per-uplink: a target pinned to the backup uplink wan1 starts failing (its ISP black-holes
    everything past its first hop): wan1's own check runs at once and reads `limited (timeout)`;
    the top-level check and wan0's, run too or not, stay `full`."""
    w = uplinks
    check = w.check_server()
    target = w.target_server()
    server = reachd_up(w, "--per-uplink", "--connectivity-url", check_url(w, check),
                       "--target", f"backup@wan1=tcp://target.test:{target.port}",
                       "--target-interval", str(TARGET_INTERVAL))
    full = families_are("full")
    wait_uplink(server, "wan1", full, timeout=10)
    wait_target(server, "backup", lambda t: t["state"] == "reachable" and not t["degraded"], timeout=10)
    doc = status(server)
    assert full(doc["connectivity"]) and all(full(uplink_connectivity(doc, wan)) for wan in ("wan0", "wan1")), doc

    t0 = time.monotonic()
    w.break_isp(1)
    doc = wait_uplink(server, "wan1", lambda c: c is not None and c["state"] == "limited",
                      timeout=TARGET_INTERVAL + PROBE_TIMEOUT + CHECK_TIMEOUT + 4)
    elapsed = time.monotonic() - t0
    wan1 = uplink_connectivity(doc, "wan1")
    print(f"wan1's ISP dark: wan1's check limited after {elapsed:.2f}s")
    assert wan1["reason"] == "timeout", wan1
    assert full(doc["connectivity"]) and full(uplink_connectivity(doc, "wan0")), doc
    assert elapsed < TARGET_INTERVAL + PROBE_TIMEOUT + CHECK_TIMEOUT + 2, f"{elapsed:.2f}s"


def test_a_nameserver_that_starts_failing_rechecks_too(dual_world, reachd_dual):
    """The DNS check's only nameserver stops answering (the check URL is a literal, so the check
    itself needs no DNS): its first failed answer runs the connectivity check at once."""
    w = dual_world
    fake = w.fake_dns(0, "noerror")
    w.set_nameservers(fake.address)
    far = w.far_server()
    far.route("/check", NO_CONTENT)
    server = reachd_dual("--dns-check", "both.test", "--dns-interval", "2",
                         "--connectivity-url", f"http://{w.both4}:{far.port}/check")
    wait_connectivity(server, lambda c: c["state"] == "full", timeout=10)
    wait_dns(server, lambda d: d["state"] == "ok", timeout=10)
    time.sleep(2.5)  # a second answer: the next failure is the first after a success
    before = far.hit_count("/check")

    t0 = time.monotonic()
    fake.mode = "servfail"
    far.wait_hits("/check", before + 1, timeout=2 + 2)
    elapsed = far.hits["/check"][before] - t0
    print(f"nameserver SERVFAIL: connectivity re-checked {elapsed:.2f}s later")
    assert elapsed < 2 + 1, f"{elapsed:.2f}s"


# --------------------------------------------------------------------------- 2. honest words for DNS


def test_unroutable_nameserver_is_no_route_and_a_target_reads_dns_without_flipping(dual_world, reachd_dual):
    """The only nameserver (IPv4, past the gateway) loses its route with the IPv4 default route; the
    dual-stack target keeps its IPv6 route. The DNS check says `no-route`; the target's IPv4 family
    is `no-route` in the batch's document and stays so; the target then reads `dns` with a detail
    naming the nameserver and `no route` — never ECONNREFUSED — and no document flips a reason of
    the target from `no-route` to `dns`."""
    w = dual_world
    fake = w.fake_dns(0, "noerror", answer6=w.both6)
    w.set_nameservers(fake.address)
    far = w.far_server()
    server = reachd_dual(*target_args({"far": f"tcp://both.test:{far.port}"}), "--dns-check", "both.test")
    wait_target(server, "far", lambda t: t["state"] == "reachable" and not t["degraded"]
                and t["ipv4"] and t["ipv6"], timeout=10)
    wait_dns(server, lambda d: d["state"] == "ok", timeout=10)

    log = EventLog(server)
    time.sleep(0.3)
    t0 = time.monotonic()
    w.del_default_route()
    dns = wait_dns(server, lambda d: server_entry(d, fake.address)["state"] == "failing", timeout=5)
    assert server_entry(dns, fake.address)["reason"] == "no-route", dns
    target = wait_target(server, "far", lambda t: t["state"] == "unreachable", timeout=10)
    elapsed = time.monotonic() - t0
    time.sleep(1.5)
    docs = log.close()
    print(f"IPv4 default route removed: the target unreachable after {elapsed:.2f}s: "
          f"{target['reason']} ({target['detail']})")

    # Every document of the change, in order: no reason of the target goes no-route → dns.
    entries = [target_of(doc, "far") for doc in docs]
    sequence = [(e["reason"], (e["ipv4"] or {}).get("reason"), (e["ipv6"] or {}).get("reason")) for e in entries]
    print("(target, ipv4, ipv6) reasons per document:", sequence)
    for before, after in zip(sequence, sequence[1:]):
        for which, (was, now) in zip(("target", "ipv4", "ipv6"), zip(before, after)):
            assert not (was == "no-route" and now == "dns"), f"{which} flipped no-route → dns: {sequence}"
    details = [d for e in entries for d in (e["detail"], (e["ipv4"] or {}).get("detail"),
                                            (e["ipv6"] or {}).get("detail")) if d]
    assert not [d for d in details if "ECONNREFUSED" in d], details
    assert target["reason"] == "dns", target
    detail = target["detail"] or ""
    assert fake.address in detail and "no route" in detail, target
    assert "ECONNREFUSED" not in detail and "refused" not in detail, target

    first_ipv4_no_route = next(i for i, s in enumerate(sequence) if s[1] == "no-route")
    assert all(s[1] in ("no-route", None) for s in sequence[first_ipv4_no_route:]), sequence

    # /changes says the same: no diff entry of the target from no-route to dns.
    response = http(server.port, "GET", "/changes", ns=server.netns)
    flips = [entry for change in response.json()["changes"] for entry in change["diff"]
             if entry["field"].startswith("targets.far") and entry["field"].endswith("reason")
             and entry["from"] == "no-route" and entry["to"] == "dns"]
    assert not flips, flips
