"""A failure never removes a series (DESIGN "/metrics") — against the real binary, scraping
`/metrics` for real.

A series exists while its subject does: a target's or the connectivity URL's family while it is
among the addresses of the last successful resolution (a failed resolution changes nothing; an
answer without the family removes it), an uplink's family while the interface is an uplink of it.
A failure changes the value: when no family of a name resolves, each family series reads the
overall state (`reachd_target_family_up` 0, `…_family_state{state="limited"}` 1).

And `/metrics` is never older than `/status`: whoever has seen a document at `/status` or
`/events` reads metrics at least that new (`reachd_status_updates_total` counts the document's
sequence). Every scrape below comes right after the document it checks, with no wait.

Worlds: world_dualstack.py (both.test resolves to both families; the second dnsmasq knows it
without AAAA; 198.19.O.54 never answers), world_uplinks.py (two ISPs; wan1's DNS broken by a
blackhole route toward the nameserver inside isp1).
"""

from __future__ import annotations

import time

import pytest

from conftest import SSEClient, http
from test_metrics import value
from world import NO_CONTENT, OK, target_args, target_of, wait_status
from world_dualstack import dual_world, reachd_dual  # noqa: F401
from world_uplinks import FAMILIES, check_url, families_are, reachd_up, uplink_connectivity, uplinks  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]

STATES = ("disabled", "unknown", "none", "limited", "portal", "full")
# Quick verdicts: a probe a second, a lookup given up after 2 s, the name given up after two.
QUICK = ("--target-interval", "1", "--target-timeout", "2", "--target-failures", "2",
         "--connectivity-interval", "1", "--connectivity-timeout", "2")


def scrape(server) -> str:
    response = http(server.port, "GET", "/metrics", ns=server.netns)
    assert response.status == 200, response
    return response.body.decode()


def family_states(text: str, name: str, **labels: str) -> dict[str, str | None]:
    """family → the state whose series of `name` (with `labels`) reads 1; every family with a
    series present maps to something (None: all its series read 0)."""
    out: dict[str, str | None] = {}
    for family in FAMILIES:
        for state in STATES:
            got = value(text, name, family=family, state=state, **labels)
            if got is None:
                continue
            out.setdefault(family, None)
            if got == 1:
                out[family] = state
    return out


def family_up(text: str, target: str) -> dict[str, float]:
    """family → `reachd_target_family_up{target,family}`, for the families that have the series."""
    found = {f: value(text, "reachd_target_family_up", target=target, family=f) for f in FAMILIES}
    return {f: v for f, v in found.items() if v is not None}


def not_older(doc: dict, text: str) -> None:
    updates = value(text, "reachd_status_updates_total")
    assert updates is not None and updates >= doc["sequence"], \
        f"/metrics older than the document read before it: updates {updates} < sequence {doc['sequence']}"


def both_full(c: dict) -> bool:
    return c["state"] == "full" and all((c[f] or {}).get("state") == "full" for f in FAMILIES)


def web_and_check(doc: dict, predicate_target, predicate_check) -> bool:
    return predicate_target(target_of(doc, "web")) and predicate_check(doc["connectivity"])


def unresolved(t: dict) -> bool:
    return (t["state"], t["reason"], t["ipv4"], t["ipv6"]) == ("unreachable", "dns", None, None)


def limited_dns(c: dict) -> bool:
    return (c["state"], c["reason"], c["ipv4"], c["ipv6"]) == ("limited", "dns", None, None)


def start_dual(w, reachd_dual):
    far = w.far_server(default=OK)
    far.route("/generate_204", NO_CONTENT)
    server = reachd_dual(*target_args({"web": f"http://both.test:{far.port}/health"}),
                         "--connectivity-url", f"http://both.test:{far.port}/generate_204", *QUICK)
    doc = wait_status(server, lambda d: web_and_check(
        d, lambda t: t["state"] == "reachable" and all((t[f] or {}).get("state") == "reachable" for f in FAMILIES),
        both_full), 15, what="web reachable and the check full, both families")
    return server, doc


def test_a_name_that_stops_resolving_keeps_its_family_series(dual_world, reachd_dual):
    """resolv.conf → a nameserver that never answers: `/status` shows the target `unreachable
    (dns)` and the check `limited (dns)`, every family `null` — and `/metrics` still has both
    families of each: the target's at 0, the check's at `limited` 1."""
    w = dual_world
    server, doc = start_dual(w, reachd_dual)
    text = scrape(server)
    not_older(doc, text)
    assert family_up(text, "web") == {"ipv4": 1, "ipv6": 1}, family_up(text, "web")
    assert family_states(text, "reachd_connectivity_family_state") == {"ipv4": "full", "ipv6": "full"}

    w.set_nameservers(w.dns_silent_ip)
    doc = wait_status(server, lambda d: web_and_check(d, unresolved, limited_dns), 30,
                      what="web unreachable (dns), the check limited (dns)")
    text = scrape(server)
    not_older(doc, text)
    assert family_up(text, "web") == {"ipv4": 0, "ipv6": 0}, \
        f"a failed resolution removed a family series: {family_up(text, 'web')}"
    assert value(text, "reachd_target_up", target="web") == 0
    for family in FAMILIES:
        for impairment in ("loss", "latency", "mtu"):
            assert value(text, "reachd_target_impaired", target="web", family=family, impairment=impairment) == 0
    assert family_states(text, "reachd_connectivity_family_state") == {"ipv4": "limited", "ipv6": "limited"}
    assert value(text, "reachd_connectivity_state", state="limited") == 1

    # Still so after more failed resolutions.
    time.sleep(3)
    text = scrape(server)
    assert family_up(text, "web") == {"ipv4": 0, "ipv6": 0}
    assert family_states(text, "reachd_connectivity_family_state") == {"ipv4": "limited", "ipv6": "limited"}

    # Answers again: every family back at its own state.
    w.set_nameservers(w.gateway_ip)
    doc = wait_status(server, lambda d: web_and_check(
        d, lambda t: t["state"] == "reachable" and t["ipv6"] is not None and t["ipv4"] is not None, both_full),
        30, what="web reachable and the check full again")
    text = scrape(server)
    not_older(doc, text)
    assert family_up(text, "web") == {"ipv4": 1, "ipv6": 1}


def test_an_answer_without_a_family_removes_its_series_a_failure_does_not_bring_it_back(dual_world, reachd_dual):
    """The second dnsmasq knows both.test without AAAA: IPv6 leaves the addresses and its series
    goes (the check's IPv6 series all read 0). Then no answer at all: IPv4 stays (0 / limited),
    IPv6 does not come back."""
    w = dual_world
    server, _ = start_dual(w, reachd_dual)

    w.set_nameservers(w.dns2_ip)
    doc = wait_status(server, lambda d: web_and_check(
        d, lambda t: t["addresses"] == [w.both4] and t["ipv6"] is None and t["state"] == "reachable",
        lambda c: c["ipv6"] is None and c["state"] == "full"), 30, what="IPv6 gone from the target and the check")
    text = scrape(server)
    not_older(doc, text)
    assert family_up(text, "web") == {"ipv4": 1}, family_up(text, "web")
    assert family_states(text, "reachd_connectivity_family_state") == {"ipv4": "full", "ipv6": None}

    w.set_nameservers(w.dns_silent_ip)
    doc = wait_status(server, lambda d: web_and_check(d, unresolved, limited_dns), 30,
                      what="web unreachable (dns), the check limited (dns)")
    text = scrape(server)
    not_older(doc, text)
    assert family_up(text, "web") == {"ipv4": 0}, family_up(text, "web")
    assert family_states(text, "reachd_connectivity_family_state") == {"ipv4": "limited", "ipv6": None}


def break_dns_through(w, index: int) -> None:
    """ISP <index> drops what it would forward to the nameserver: its uplink's pinned lookups
    time out, the other uplink's answer."""
    w.isps[index].ip("route", "replace", "blackhole", f"{w.dns_ip}/32")


@pytest.mark.parametrize("when", ["after-answers", "from-the-start"])
def test_an_uplink_whose_dns_fails_keeps_its_series_reading_limited(uplinks, reachd_up, when):
    """`--per-uplink`: wan1's ISP stops forwarding to the nameserver (after wan1's check had
    answered, or before it ever did): wan1's connectivity is `limited (dns)` with both families
    `null`, and `reachd_interface_connectivity_state{device="wan1"}` is there for both families,
    1 on `limited`; wan0 stays `full`."""
    w = uplinks
    check = w.check_server()
    if when == "from-the-start":
        break_dns_through(w, 1)
    server = reachd_up(w, "--per-uplink", "--connectivity-url", check_url(w, check),
                       "--connectivity-timeout", "1", "--connectivity-interval", "2")
    if when == "after-answers":
        wait_status(server, lambda d: families_are("full")(uplink_connectivity(d, "wan1")), 10,
                    what="wan1 full in both families")
        break_dns_through(w, 1)
    doc = wait_status(server, lambda d: (uplink_connectivity(d, "wan1") or {}).get("reason") == "dns"
                      and families_are("full")(uplink_connectivity(d, "wan0")), 20,
                      what="wan1 limited (dns), wan0 full")
    wan1 = uplink_connectivity(doc, "wan1")
    assert (wan1["state"], wan1["ipv4"], wan1["ipv6"]) == ("limited", None, None), wan1
    text = scrape(server)
    not_older(doc, text)
    assert family_states(text, "reachd_interface_connectivity_state", device="wan1") == \
        {"ipv4": "limited", "ipv6": "limited"}, \
        [line for line in text.splitlines() if line.startswith("reachd_interface_connectivity_state")]
    assert family_states(text, "reachd_interface_connectivity_state", device="wan0") == \
        {"ipv4": "full", "ipv6": "full"}


def test_metrics_are_never_older_than_the_document_just_seen(dual_world, reachd_dual):
    """Each `/events` document, then at once `/metrics`: `reachd_status_updates_total` is at least
    its sequence, and the target's series say what it says — while the documents change as fast
    as the nameserver is switched."""
    w = dual_world
    far = w.far_server(default=OK)
    names = {f"web{i}": f"http://both.test:{far.port}/health" for i in range(100)}
    server = reachd_dual(*target_args(names), "--target-interval", "0.5", "--target-timeout", "1",
                         "--target-failures", "1")
    wait_status(server, lambda d: all(target_of(d, n)["state"] == "reachable" for n in names), 15,
                what="every target reachable")
    checked = 0
    nameservers = [w.dns2_ip, w.gateway_ip]  # both.test without AAAA, with it
    with SSEClient(server.port, ns=server.netns) as client:
        deadline = time.monotonic() + 12
        switched = time.monotonic()
        while time.monotonic() < deadline:
            if time.monotonic() - switched > 1.5:
                w.set_nameservers(nameservers[0])
                nameservers.reverse()
                switched = time.monotonic()
            try:
                event = client.next_event(timeout=0.2)
            except TimeoutError:
                continue
            if event.event != "status":
                continue
            doc = event.doc
            text = scrape(server)
            not_older(doc, text)
            if value(text, "reachd_status_updates_total") == doc["sequence"]:
                # Exactly this document: each target's families are its series.
                for name in names:
                    shown = {f for f in FAMILIES if target_of(doc, name)[f] is not None}
                    assert set(family_up(text, name)) == shown, (name, target_of(doc, name), family_up(text, name))
            checked += 1
    assert checked >= 5, f"only {checked} documents in 12 s"
