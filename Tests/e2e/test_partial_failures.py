"""Per family for targets and connectivity, and one change → one document (docs/probes.md; the contract's "Partial
failures: per family, DNS, one change → one document"), black-box against the real binary in the
dual-stack world (world_dualstack.py). The DNS signal has its own file, test_dns_check.py.

Written from the contract, before the implementation: every test here is marked
`partial_failures` (run the group with `-m partial_failures`).
"""

from __future__ import annotations

import time

import pytest

from conftest import SSEClient, http
from test_connectivity import check_connectivity_object
from test_metrics import promtool_check, samples, value, PROMTOOL
from test_targets import check_target_object
from world import NO_CONTENT, OK, UNAVAILABLE, ip_sort_key, readyz, redirect, status, target_args, target_of, \
    wait_status, wait_target
from world_dualstack import FAMILIES, dual_world, family_of, reachd_dual  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.partial_failures, pytest.mark.timeout(120)]

FAMILY_KEYS = ("state", "reason", "address", "interface")
CONNECTIVITY_FAMILY_STATES = ("unknown", "none", "limited", "portal", "full")
CONNECTIVITY_ORDER = {"full": 4, "limited": 3, "portal": 2, "none": 1, "unknown": 0}  # NetworkManager's


# --------------------------------------------------------------------------- the contract of one object


def family_addresses(target: dict, family: str) -> list[str]:
    return [a for a in target["addresses"] if family_of(a) == family]


def check_target_families(target: dict) -> None:
    """`ipv4`/`ipv6` and `degraded` of one target, and the rules that derive the target's own
    `state`, `reason`, `interface` and `degraded` from its families (checked whenever every family
    with addresses has a result)."""
    check_target_object(target)
    assert "degraded" in target and isinstance(target["degraded"], bool), f"degraded absent or not a bool: {target}"
    for family in FAMILIES:
        assert family in target, f"target lacks {family!r}: {target}"
        obj = target[family]
        addresses = family_addresses(target, family)
        if not addresses:
            assert obj is None, f"{family} must be null without an address of that family: {target}"
            continue
        assert isinstance(obj, dict), f"{family} must be an object while {addresses} are known: {target}"
        for key in FAMILY_KEYS:
            assert key in obj, f"{family} lacks {key!r}: {obj}"
        assert obj["state"] in ("unknown", "reachable", "unreachable"), obj
        if obj["state"] == "unreachable":
            # `dns`: the family's query failed while it had addresses at the last resolution.
            assert obj["reason"] in ("no-route", "timeout", "refused", "host-unreachable", "http-status", "tls",
                                     "error", "dns"), obj
        else:
            assert obj["reason"] is None, obj
        assert obj["address"] is None or obj["address"] in addresses, f"{family} probed {obj['address']}: {target}"
        assert obj["interface"] is None or isinstance(obj["interface"], str), obj
        if obj["address"] is None and obj["state"] != "unknown":
            assert (obj["state"], obj["reason"]) == ("unreachable", "no-route"), \
                f"{family}: no routable address, yet {obj['state']}/{obj['reason']}: {target}"
        if obj["state"] == "reachable":
            assert obj["address"] is not None and obj["interface"] is not None, obj

    present = {f: target[f] for f in FAMILIES if target[f] is not None}
    if any(obj["state"] == "unknown" for obj in present.values()):
        return
    if not present:
        if target["state"] != "unknown":
            assert (target["state"], target["reason"], target["degraded"]) == ("unreachable", "dns", False), target
        return
    any_reachable = any(obj["state"] == "reachable" for obj in present.values())
    assert target["state"] == ("reachable" if any_reachable else "unreachable"), \
        f"state is not 'any family reachable': {target}"
    dead = [f for f, obj in present.items() if obj["state"] == "unreachable"]
    assert target["degraded"] is (any_reachable and bool(dead)), f"degraded wrong: {target}"
    if any_reachable:
        deciding = "ipv6" if present.get("ipv6", {}).get("state") == "reachable" else "ipv4"
        assert target["interface"] == present[deciding]["interface"], \
            f"interface must be {deciding}'s (IPv6 when both are reachable): {target}"
    else:
        probed = [f for f in ("ipv6", "ipv4") if f in present and present[f]["address"] is not None]
        want = present[probed[0]]["reason"] if probed else "no-route"
        assert target["reason"] == want, f"reason must be {want!r} (IPv6's if probed, else IPv4's): {target}"


def check_connectivity_families(connectivity: dict) -> None:
    """`connectivity.ipv4/ipv6` and `degraded`, and the overall state/reason derived from them."""
    check_connectivity_object(connectivity)
    assert isinstance(connectivity.get("degraded"), bool), f"degraded absent or not a bool: {connectivity}"
    present = {}
    for family in FAMILIES:
        assert family in connectivity, f"connectivity lacks {family!r}: {connectivity}"
        obj = connectivity[family]
        if obj is None:
            continue
        assert isinstance(obj, dict) and "state" in obj and "reason" in obj, obj
        assert obj["state"] in CONNECTIVITY_FAMILY_STATES, obj
        if obj["state"] == "limited":
            assert obj["reason"] in ("dns", "timeout", "refused", "host-unreachable", "tls", "error", "http-status"), obj
        else:
            assert obj["reason"] is None, obj
        present[family] = obj
    if connectivity["state"] in ("disabled",):
        assert not present, connectivity
        return
    if not present or any(obj["state"] == "unknown" for obj in present.values()):
        return
    best = max(CONNECTIVITY_ORDER[obj["state"]] for obj in present.values())
    winners = [f for f in ("ipv6", "ipv4") if f in present and CONNECTIVITY_ORDER[present[f]["state"]] == best]
    assert connectivity["state"] == present[winners[0]]["state"], f"overall is not the best family's: {connectivity}"
    assert connectivity["reason"] == present[winners[0]]["reason"], \
        f"reason must be {winners[0]}'s (IPv6 first on a tie): {connectivity}"
    degraded = connectivity["state"] == "full" and any(obj["state"] != "full" for obj in present.values())
    assert connectivity["degraded"] is degraded, f"degraded wrong: {connectivity}"


def families_settled(target: dict) -> bool:
    """Every family with addresses has a result. A target without `ipv4`/`ipv6`/`degraded` fails at
    once (rather than after the wait) naming what is missing."""
    missing = [key for key in (*FAMILIES, "degraded") if key not in target]
    assert not missing, f"target {target.get('name')} lacks {missing} (the contract, per family): {target}"
    if target.get("state") in (None, "unknown"):
        return False
    return all(target[f] is None or target[f].get("state") != "unknown" for f in FAMILIES)


def all_families_settled(names):
    def predicate(doc: dict) -> bool:
        targets = {t["name"]: t for t in doc.get("targets") or []}
        return all(name in targets and families_settled(targets[name]) for name in names)
    return predicate


def connectivity_settled(doc: dict) -> bool:
    """The check and every family with addresses have a result; fails at once without the fields."""
    c = doc.get("connectivity") or {}
    missing = [key for key in (*FAMILIES, "degraded") if key not in c]
    assert not missing, f"connectivity lacks {missing} (the contract, per family): {c}"
    if c.get("state") in (None, "unknown"):
        return False
    return all(c[f] is None or c[f].get("state") != "unknown" for f in FAMILIES)


def family_view(obj: dict | None):
    return None if obj is None else (obj["state"], obj["reason"], obj.get("address"), obj.get("interface"))


# --------------------------------------------------------------------------- targets: every family combination


def test_every_family_combination(dual_world, reachd_dual):
    """One reachd, every combination of families (only one, both working, each dead past the first
    hop, both dead, no route for one or both, literals, no name), settled together."""
    w = dual_world
    web = w.far_server()
    web.route("/ok", OK)
    web.route("/v6-503", UNAVAILABLE, family="ipv6")
    web.route("/v6-503", OK, family="ipv4")
    p, closed, L = web.port, w.far_closed_port(), w.link
    up4, up6 = ("reachable", None, w.both4, L), ("reachable", None, w.both6, L)
    T = "timeout"
    table = {  # name → (url, state, reason, degraded, ipv4, ipv6, interface)
        "both-tcp": (f"tcp://both.test:{p}", "reachable", None, False, up4, up6, L),
        "both-http": (f"http://both.test:{p}/ok", "reachable", None, False, up4, up6, L),
        "both-host": ("host://both.test", "reachable", None, False, up4, up6, L),
        "v4only": (f"tcp://v4only.test:{p}", "reachable", None, False, ("reachable", None, w.v4only4, L), None, L),
        "v6only": (f"tcp://v6only.test:{p}", "reachable", None, False, None, ("reachable", None, w.v6only6, L), L),
        "v4-dead": (f"tcp://v4dead.test:{p}", "reachable", None, True, ("unreachable", T, w.dead4, L), up6, L),
        "v6-dead": (f"tcp://v6dead.test:{p}", "reachable", None, True, up4, ("unreachable", T, w.dead6, L), L),
        "both-dead": (f"tcp://bothdead.test:{p}", "unreachable", T, False,
                      ("unreachable", T, w.dead4b, L), ("unreachable", T, w.dead6b, L), L),
        # Both fail for different reasons: the target's reason is IPv6's.
        "v4-refused-v6-timeout": (f"tcp://v6dead.test:{closed}", "unreachable", "timeout", False,
                                  ("unreachable", "refused", w.both4, L), ("unreachable", T, w.dead6, L), L),
        "v4-timeout-v6-refused": (f"tcp://v4dead.test:{closed}", "unreachable", "refused", False,
                                  ("unreachable", T, w.dead4, L), ("unreachable", "refused", w.both6, L), L),
        "v6-http-status": (f"http://both.test:{p}/v6-503", "reachable", None, True,
                           up4, ("unreachable", "http-status", w.both6, L), L),
        # No route for a family: decided without a probe, address and interface null.
        "v6-noroute": (f"tcp://v6noroute.test:{p}", "reachable", None, True,
                       up4, ("unreachable", "no-route", None, None), L),
        "v4-noroute": (f"tcp://v4noroute.test:{p}", "reachable", None, True,
                       ("unreachable", "no-route", None, None), up6, L),
        # IPv6 not probed (no route), IPv4 probed and failed: IPv4's reason.
        "v4-timeout-v6-noroute": (f"tcp://v4dead-v6noroute.test:{p}", "unreachable", T, False,
                                  ("unreachable", T, w.dead4c, L), ("unreachable", "no-route", None, None), L),
        "both-noroute": (f"tcp://bothnoroute.test:{p}", "unreachable", "no-route", False,
                         ("unreachable", "no-route", None, None), ("unreachable", "no-route", None, None), None),
        # IP literals have one family.
        "literal4": (f"tcp://{w.both4}:{p}", "reachable", None, False, up4, None, L),
        "literal6": (f"tcp://[{w.both6}]:{p}", "reachable", None, False, None, up6, L),
        "literal6-dead": (f"tcp://[{w.dead6}]:{p}", "unreachable", T, False, None, ("unreachable", T, w.dead6, L), L),
        "nx": ("host://nx.test", "unreachable", "dns", False, None, None, None),
    }
    server = reachd_dual(*target_args({n: row[0] for n, row in table.items()}), "--target-timeout", "2",
                         "--target-interval", "30")
    doc = wait_status(server, all_families_settled(table), timeout=15, what="every target family settled")
    problems = []
    for name, (url, state, reason, degraded, ipv4, ipv6, interface) in table.items():
        target = target_of(doc, name)
        try:
            check_target_families(target)
        except AssertionError as error:
            problems.append(f"{name}: {error}")
            continue
        got = (target["state"], target["reason"], target["degraded"], family_view(target["ipv4"]),
               family_view(target["ipv6"]), target["interface"])
        want = (state, reason, degraded, ipv4, ipv6, interface)
        if got != want:
            problems.append(f"{name} ({url}):\n   want {want}\n   got  {got}")
    assert not problems, "\n".join(problems)
    # Addresses hold both families, sorted (IPv4 first).
    assert target_of(doc, "both-tcp")["addresses"] == [w.both4, w.both6]
    assert target_of(doc, "v6only")["addresses"] == [w.v6only6]
    assert target_of(doc, "literal6")["addresses"] == [w.both6]
    for target in doc["targets"]:
        assert target["addresses"] == sorted(target["addresses"], key=ip_sort_key), target
    # Each family was probed for real, pinned to its own address.
    assert web.hit_count("/ok", family="ipv4") >= 1 and web.hit_count("/ok", family="ipv6") >= 1
    assert doc["state"] == "reachable", "targets never change the route-based state"


def test_families_are_probed_concurrently(dual_world, reachd_dual):
    """Both families silent, --target-timeout 3: settled in about one timeout, not two."""
    server = reachd_dual(*target_args({"both-dead": "tcp://bothdead.test:80"}), "--target-timeout", "3",
                         "--target-interval", "30")
    doc = wait_status(server, all_families_settled(["both-dead"]), timeout=12)
    elapsed = time.monotonic() - server.started_at
    target = target_of(doc, "both-dead")
    check_target_families(target)
    assert (target["state"], target["reason"]) == ("unreachable", "timeout"), target
    print(f"both families silent, 3 s timeout: settled {elapsed:.2f}s after start")
    assert elapsed < 5.5, f"{elapsed:.1f}s: the families were probed one after the other (2 × 3 s)"


# --------------------------------------------------------------------------- targets: a family breaks while running


@pytest.mark.parametrize("broken", ["ipv6", "ipv4"])
def test_one_family_breaks_degraded_on_and_off(dual_world, reachd_dual, broken):
    """A family dies past the first hop: the target stays `reachable` (what a happy-eyeballs client
    gets), `degraded` turns true, its `since` does not move, `--ready-when target:NAME` stays ready;
    the family comes back: `degraded` false again."""
    w = dual_world
    web = w.far_server()
    web.route("/ok", OK)
    targets = {"db": f"tcp://both.test:{web.port}", "api": f"http://both.test:{web.port}/ok"}
    server = reachd_dual(*target_args(targets), "--target-interval", "1", "--target-timeout", "1",
                         "--target-failures", "2", "--ready-when", "target:db")
    doc = wait_status(server, lambda d: all_families_settled(targets)(d)
                      and all(target_of(d, n)["state"] == "reachable" for n in targets), timeout=10)
    since = {n: target_of(doc, n)["since"] for n in targets}
    for name in targets:
        target = target_of(doc, name)
        check_target_families(target)
        assert target["degraded"] is False, target
        assert target["ipv4"]["state"] == target["ipv6"]["state"] == "reachable", target
    alive = "ipv4" if broken == "ipv6" else "ipv6"
    with SSEClient(server.port, ns=server.netns) as client:
        client.next_event(timeout=2)
        w.break_family(broken)
        event = client.wait_for(lambda d: all(target_of(d, n)["degraded"] is True for n in targets), timeout=15)
        for name in targets:
            target = target_of(event.doc, name)
            check_target_families(target)
            assert target["state"] == "reachable" and target["since"] == since[name], target
            assert (target[broken]["state"], target[broken]["reason"]) == ("unreachable", "timeout"), target
            assert target[alive]["state"] == "reachable", target
        assert readyz(server).status == 200, "a target reachable over one family is ready"
        w.restore_family(broken)
        back = client.wait_for(lambda d: all(target_of(d, n)["degraded"] is False for n in targets), timeout=15)
        for name in targets:
            target = target_of(back.doc, name)
            check_target_families(target)
            assert target[broken]["state"] == "reachable" and target["since"] == since[name], target
        # Through all of it, not one document had the target or the live family unreachable.
        for seen in client.reader.all_events:
            for name in targets:
                target = target_of(seen.doc, name)
                assert target["state"] == "reachable" and target[alive]["state"] == "reachable", \
                    f"event {seen.id}: {target}"


def test_both_families_break_reason_is_ipv6s(dual_world, reachd_dual):
    """Both families die: `unreachable`, reason IPv6's, `degraded` false, `since` moves; back again."""
    w = dual_world
    web = w.far_server()
    server = reachd_dual(*target_args({"db": f"tcp://both.test:{web.port}"}), "--target-interval", "1",
                         "--target-timeout", "1", "--target-failures", "1")
    up = wait_target(server, "db", lambda t: families_settled(t) and t["state"] == "reachable", timeout=10)
    w.break_family("ipv4")
    half = wait_target(server, "db", lambda t: t.get("degraded") is True, timeout=10)
    assert half["ipv4"]["state"] == "unreachable" and half["since"] == up["since"], half
    web.stop()  # IPv6 now refused: both fail, for different reasons
    down = wait_target(server, "db", lambda t: t["state"] == "unreachable", timeout=10)
    check_target_families(down)
    assert (down["ipv4"]["reason"], down["ipv6"]["reason"]) == ("timeout", "refused"), down
    assert down["reason"] == "refused" and down["degraded"] is False, down
    assert down["since"] > up["since"], down
    w.break_family("ipv6")
    web.start()
    timed_out = wait_target(server, "db", lambda t: t.get("ipv6", {}) and t["ipv6"]["reason"] == "timeout",
                            timeout=10)
    check_target_families(timed_out)
    assert timed_out["reason"] == "timeout" and timed_out["since"] == down["since"], timed_out
    w.restore_family("ipv4")
    w.restore_family("ipv6")
    back = wait_target(server, "db", lambda t: t["state"] == "reachable" and t["degraded"] is False
                       and t["ipv6"]["state"] == "reachable", timeout=10)
    check_target_families(back)


def test_interface_is_the_deciding_familys(dual_world, reachd_dual):
    """IPv6 leaves through a second link: each family names its own interface, the target IPv6's
    while both are reachable, IPv4's while only IPv4 is."""
    w = dual_world
    web = w.far_server()
    link6 = w.add_second_link_ipv6()
    server = reachd_dual(*target_args({"db": f"tcp://both.test:{web.port}"}), "--target-interval", "1",
                         "--target-timeout", "1", "--target-failures", "1")
    db = wait_target(server, "db", lambda t: families_settled(t) and t["state"] == "reachable"
                     and t["ipv6"]["state"] == "reachable", timeout=10)
    check_target_families(db)
    assert db["ipv4"]["interface"] == w.link and db["ipv6"]["interface"] == link6, db
    assert db["interface"] == link6, f"IPv6 decides when both are reachable: {db}"
    w.break_family("ipv6")
    db = wait_target(server, "db", lambda t: t["degraded"] is True, timeout=10)
    check_target_families(db)
    assert db["interface"] == w.link, f"IPv4 decides while IPv6 is dead: {db}"
    assert db["ipv6"]["interface"] == link6, db


def test_a_family_leaves_the_addresses(dual_world, reachd_dual):
    """resolv.conf moves to a server that knows the name without its AAAA: `ipv6` turns null and
    its metric series goes; back again."""
    w = dual_world
    web = w.far_server()
    server = reachd_dual(*target_args({"db": f"tcp://both.test:{web.port}"}), "--target-interval", "30")
    db = wait_target(server, "db", lambda t: families_settled(t) and t["state"] == "reachable", timeout=10)
    assert db["ipv6"] is not None
    text = http(server.port, "GET", "/metrics", ns=server.netns).body.decode()
    assert value(text, "reachd_target_family_up", target="db", family="ipv6") == 1, text
    w.set_nameservers(w.dns2_ip)
    db = wait_target(server, "db", lambda t: t["addresses"] == [w.both4], timeout=10)
    check_target_families(db)
    assert db["ipv6"] is None and db["ipv4"]["state"] == "reachable" and db["degraded"] is False, db
    text = http(server.port, "GET", "/metrics", ns=server.netns).body.decode()
    assert value(text, "reachd_target_family_up", target="db", family="ipv6") is None, \
        "reachd_target_family_up{family=ipv6} present without an IPv6 address"
    assert value(text, "reachd_target_family_up", target="db", family="ipv4") == 1
    w.set_nameservers(w.gateway_ip)
    db = wait_target(server, "db", lambda t: t["addresses"] == [w.both4, w.both6] and families_settled(t),
                     timeout=10)
    check_target_families(db)


# --------------------------------------------------------------------------- connectivity per family


def run_connectivity_table(w, reachd_dual, table: dict, timeout: float = 15):
    """table: name → (url, state, reason, degraded, ipv4, ipv6) with ipv4/ipv6 None or (state, reason).
    One reachd per row, all at once; every mismatch reported."""
    names = list(table)
    servers = reachd_dual.many(*[["--connectivity-url", table[n][0], "--connectivity-timeout", "2"] for n in names])
    deadline = time.monotonic() + timeout
    problems = []
    for name, server in zip(names, servers):
        url, state, reason, degraded, ipv4, ipv6 = table[name]
        try:
            doc = wait_status(server, connectivity_settled, timeout=max(0.1, deadline - time.monotonic()))
        except TimeoutError:
            doc = status(server)
        c = doc.get("connectivity") or {}
        try:
            check_connectivity_families(c)
        except AssertionError as error:
            problems.append(f"{name}: {error}")
            continue
        view = lambda o: None if o is None else (o["state"], o["reason"])  # noqa: E731
        got = (c["state"], c["reason"], c["degraded"], view(c["ipv4"]), view(c["ipv6"]))
        want = (state, reason, degraded, ipv4, ipv6)
        if got != want:
            problems.append(f"{name} ({url}):\n   want {want}\n   got  {got}")
    assert not problems, "\n".join(problems)


def test_connectivity_per_family_working_and_dead(dual_world, reachd_dual):
    w = dual_world
    web = w.far_server(default=NO_CONTENT)
    p, closed = web.port, w.far_closed_port()
    F, T = ("full", None), ("limited", "timeout")
    table = {
        "both-full": (f"http://both.test:{p}/generate_204", "full", None, False, F, F),
        "v6-dead": (f"http://v6dead.test:{p}/generate_204", "full", None, True, F, T),
        "v4-dead": (f"http://v4dead.test:{p}/generate_204", "full", None, True, T, F),
        "both-dead": (f"http://bothdead.test:{p}/generate_204", "limited", "timeout", False, T, T),
        # A tie (both limited): the reason is IPv6's.
        "tie-v6-timeout": (f"http://v6dead.test:{closed}/generate_204", "limited", "timeout", False,
                           ("limited", "refused"), T),
        "tie-v6-refused": (f"http://v4dead.test:{closed}/generate_204", "limited", "refused", False,
                           T, ("limited", "refused")),
        "v4-only-host": (f"http://v4only.test:{p}/generate_204", "full", None, False, F, None),
    }
    run_connectivity_table(w, reachd_dual, table)


def test_connectivity_overall_is_the_best_family(dual_world, reachd_dual):
    """full > limited > portal > none > unknown (NetworkManager's order)."""
    w = dual_world
    web = w.far_server(default=NO_CONTENT)
    web.route("/v4-portal", redirect("http://login.test/"), family="ipv4")
    web.route("/v4-portal-v6-down", redirect("http://login.test/"), family="ipv4")
    web.route("/v4-portal-v6-down", UNAVAILABLE, family="ipv6")
    web.route("/v6-portal", redirect("http://login.test/"), family="ipv6")
    p = web.port
    F = ("full", None)
    table = {
        "full-beats-portal": (f"http://both.test:{p}/v4-portal", "full", None, True, ("portal", None), F),
        "limited-beats-portal": (f"http://both.test:{p}/v4-portal-v6-down", "limited", "http-status", False,
                                 ("portal", None), ("limited", "http-status")),
        "portal-beats-none": (f"http://v4noroute.test:{p}/v6-portal", "portal", None, False,
                              ("none", None), ("portal", None)),
        "full-beats-none": (f"http://v6noroute.test:{p}/generate_204", "full", None, True, F, ("none", None)),
        "none-both": (f"http://bothnoroute.test:{p}/generate_204", "none", None, False, ("none", None), ("none", None)),
        "v6-literal": (f"http://[{w.both6}]:{p}/generate_204", "full", None, False, None, F),
    }
    run_connectivity_table(w, reachd_dual, table)


def test_connectivity_family_recovers_on_the_shorter_interval(dual_world, reachd_dual):
    """Started with IPv6 dead: full, degraded. IPv6 comes back: found within seconds although the
    interval is 300 s (the shorter one applies while a family is not full); then it stops asking."""
    w = dual_world
    web = w.far_server(default=NO_CONTENT)
    w.break_family("ipv6")
    server = reachd_dual("--connectivity-url", f"http://both.test:{web.port}/generate_204",
                         "--connectivity-interval", "300", "--connectivity-timeout", "1")
    c = wait_status(server, connectivity_settled, timeout=10)["connectivity"]
    check_connectivity_families(c)
    assert (c["state"], c["degraded"]) == ("full", True), c
    assert (c["ipv6"]["state"], c["ipv6"]["reason"]) == ("limited", "timeout"), c
    since = c["since"]
    w.restore_family("ipv6")
    t0 = time.monotonic()
    c = wait_status(server, lambda d: d["connectivity"].get("degraded") is False, timeout=20)["connectivity"]
    print(f"IPv6 back → connectivity not degraded after {time.monotonic() - t0:.2f}s (interval 300 s)")
    check_connectivity_families(c)
    assert c["ipv6"]["state"] == "full" and c["since"] == since, f"overall state did not change: {c}"
    hits = web.hit_count("/generate_204", family="ipv6")
    time.sleep(3)  # the absence of checks is what is measured here
    assert web.hit_count("/generate_204", family="ipv6") == hits, "still re-checking while both families are full"


# --------------------------------------------------------------------------- one change → one document


def test_link_down_is_one_event(dual_world, reachd_dual):
    """Three targets (both families, IPv4 only, IPv6 only), the connectivity check and DNS, all fine;
    the uplink goes down: exactly ONE new event, already showing every target family
    `unreachable`/`no-route`, connectivity `none`, every nameserver `failing`/`no-route`; nothing
    after it."""
    w = dual_world
    web = w.far_server(default=NO_CONTENT)
    web.route("/ok", OK)
    p = web.port
    targets = {"api": f"http://both.test:{p}/ok", "db": f"tcp://v4only.test:{p}", "cache": f"tcp://v6only.test:{p}"}
    w.set_nameservers(w.gateway_ip, w.dns2_ip)
    server = reachd_dual(*target_args(targets), "--target-interval", "30",
                         "--connectivity-url", f"http://both.test:{p}/generate_204",
                         "--dns-check", "db.test", "--dns-interval", "30")

    def all_fine(d: dict) -> bool:
        c, dns = d.get("connectivity") or {}, d.get("dns") or {}
        return (all_families_settled(targets)(d) and all(target_of(d, n)["state"] == "reachable" for n in targets)
                and connectivity_settled(d) and c.get("state") == "full" and c.get("degraded") is False
                and dns.get("state") == "ok")
    before = wait_status(server, all_fine, timeout=15, what="everything fine")
    with SSEClient(server.port, ns=server.netns) as client:
        first = client.next_event(timeout=2)
        assert all_fine(first.doc) and first.doc["sequence"] >= before["sequence"]
        t0 = time.monotonic()
        w.link_down()
        event = client.next_event(timeout=10)
        elapsed = time.monotonic() - t0
        doc = event.doc
        print(f"link down → first event after {elapsed * 1000:.0f} ms")
        assert int(event.id) == doc["sequence"] > first.doc["sequence"]
        assert doc["state"] == "unreachable", doc["state"]
        problems = []
        for name in targets:
            target = target_of(doc, name)
            if (target["state"], target["reason"]) != ("unreachable", "no-route"):
                problems.append(f"target {name}: {target['state']}/{target['reason']}")
            for family in FAMILIES:
                obj = target.get(family, "absent")
                if obj is None:
                    continue
                if obj == "absent" or (obj["state"], obj["reason"], obj["address"], obj["interface"]) != \
                        ("unreachable", "no-route", None, None):
                    problems.append(f"target {name} {family}: {obj}")
        c = doc["connectivity"]
        if c["state"] != "none" or any((c.get(f) or {}).get("state") != "none" for f in FAMILIES):
            problems.append(f"connectivity: {c}")
        dns = doc.get("dns") or {}
        if (dns.get("state"), dns.get("reason")) != ("failing", "no-route"):
            problems.append(f"dns: {dns.get('state')}/{dns.get('reason')}")
        servers = dns.get("servers") or []
        if [s.get("address") for s in servers] != [w.gateway_ip, w.dns2_ip]:
            problems.append(f"dns servers: {servers}")
        for entry in servers:
            if (entry.get("state"), entry.get("reason")) != ("failing", "no-route"):
                problems.append(f"nameserver {entry.get('address')}: {entry.get('state')}/{entry.get('reason')}")
        assert not problems, "the first event after link down is half-updated:\n" + "\n".join(problems)
        for name in targets:
            check_target_families(target_of(doc, name))
        check_connectivity_families(c)
        try:
            extra = client.next_event(timeout=2.5)
        except TimeoutError:
            extra = None
        assert extra is None, f"a second event followed the link going down: {extra.data[:2000]}"


# --------------------------------------------------------------------------- /metrics


def test_metrics_per_family(dual_world, reachd_dual):
    w = dual_world
    web = w.far_server(default=NO_CONTENT)
    p = web.port
    targets = {"both": f"tcp://both.test:{p}", "v4only": f"tcp://v4only.test:{p}",
               "v6dead": f"tcp://v6dead.test:{p}", "nx": "host://nx.test"}
    server = reachd_dual(*target_args(targets), "--target-timeout", "1", "--target-interval", "30",
                         "--connectivity-url", f"http://v6dead.test:{p}/generate_204", "--connectivity-timeout", "1")
    wait_status(server, lambda d: all_families_settled(targets)(d) and connectivity_settled(d), timeout=10)
    text = http(server.port, "GET", "/metrics", ns=server.netns).body.decode()
    up = lambda target, family: value(text, "reachd_target_family_up", target=target, family=family)  # noqa: E731
    assert (up("both", "ipv4"), up("both", "ipv6")) == (1, 1), text
    assert (up("v4only", "ipv4"), up("v4only", "ipv6")) == (1, None), "a family without addresses has no series"
    assert (up("v6dead", "ipv4"), up("v6dead", "ipv6")) == (1, 0)
    assert (up("nx", "ipv4"), up("nx", "ipv6")) == (None, None)
    assert value(text, "reachd_target_up", target="v6dead") == 1, "reachable over one family is up"
    assert "# TYPE reachd_target_family_up gauge" in text
    assert "# TYPE reachd_connectivity_family_state gauge" in text
    current = {"ipv4": "full", "ipv6": "limited"}
    for family, state in current.items():
        assert value(text, "reachd_connectivity_family_state", family=family, state=state) == 1, text
        series = {k: v for k, v in samples(text).items()
                  if k.startswith("reachd_connectivity_family_state{") and f'family="{family}"' in k}
        assert sum(series.values()) == 1, series
        for other in ("full", "limited", "portal", "none", "unknown"):
            if other != state:
                assert value(text, "reachd_connectivity_family_state", family=family, state=other) in (0, None)
    if PROMTOOL is not None:
        result = promtool_check(text)
        assert result.returncode == 0 and result.stdout == "" and result.stderr == "", result.stdout + result.stderr
