"""Per-host targets (`--target NAME=URL`) against a real outside world (see world.py).

Every row of the URL table (docs/probes.md), every state and reason, and the event-driven behaviour:
no-route at once on link loss, no flapping, no events from steady probing, 100 silent targets in
about one timeout, names that follow a rewritten resolv.conf.
"""

from __future__ import annotations

import re
import subprocess
import time

import pytest

from conftest import ISO8601_MS_Z, SSEClient, http
from reachd_process import free_port, reachd_binary
from world import (CLOSE, GARBAGE, HANG, NO_CONTENT, NOT_FOUND, OK, UNAVAILABLE, Big, Delayed, Trickle,  # noqa: F401
                   ip_sort_key, is_state, reachd_in, redirect, settled, status, target_args, target_of,
                   wait_status, wait_target, world)

pytestmark = [pytest.mark.netns, pytest.mark.timeout(90)]  # a hang fails with its stack

STATES = ("unknown", "reachable", "unreachable")
REASONS = ("dns", "no-route", "timeout", "refused", "host-unreachable", "http-status", "tls", "proxy", "error")


def check_target_object(target: dict) -> None:
    """The contract of one `targets` entry (docs/status-document.md and openapi.yaml `Target`)."""
    for key in ("name", "url", "state", "reason", "addresses", "interface", "since"):
        assert key in target, f"target lacks {key!r}: {target}"
    assert target["state"] in STATES, target
    if target["state"] == "unreachable":
        assert target["reason"] in REASONS, target
    else:
        assert target["reason"] is None, target
    assert isinstance(target["addresses"], list) and all(isinstance(a, str) for a in target["addresses"]), target
    assert target["addresses"] == sorted(target["addresses"], key=ip_sort_key), f"addresses not sorted: {target}"
    assert target["interface"] is None or isinstance(target["interface"], str), target
    assert isinstance(target["since"], str) and ISO8601_MS_Z.match(target["since"]), target


def all_settled(names):
    def predicate(doc: dict) -> bool:
        targets = {t["name"]: t for t in doc.get("targets") or []}
        return all(name in targets and settled(targets[name]) for name in names)
    return predicate


def rss_kib(server) -> int:
    with open(f"/proc/{server.process.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def mismatches(doc: dict, expected: dict[str, tuple]) -> list[str]:
    """Compare each target with (state, reason[, interface]); every difference, not just the first."""
    problems = []
    for name, want in expected.items():
        target = target_of(doc, name)
        check_target_object(target)
        got = (target["state"], target["reason"])
        if got != tuple(want[:2]):
            problems.append(f"{name} ({target['url']}): want {want[:2]}, got {got}")
        if len(want) > 2 and target["interface"] != want[2]:
            problems.append(f"{name}: want interface {want[2]!r}, got {target['interface']!r}")
    return problems


# --------------------------------------------------------------------------- the URL table


def test_every_url_form_state_and_reason(world, reachd_in):
    """One reachd, every row of the URL table and every target reason, settled together."""
    web = world.server()
    web.route("/ok", OK)
    # Not followed: following it would time out (the dropped range).
    web.route("/redirect", redirect(f"http://{world.dropped(7)}/"))
    web.route("/missing", NOT_FOUND)
    web.route("/down", UNAVAILABLE)
    web.route("/hang", HANG)
    web.route("/trickle", Trickle(every=1.0))
    web.route("/big", Big(64 * 1024 * 1024))
    web.route("/garbage", GARBAGE)
    web.route("/empty", CLOSE)
    selfsigned = world.server(tls="self-signed")
    closed = world.closed_port()
    link = world.link
    p = web.port
    table = {
        # host://: DNS and a route, nothing else.
        "host-name": (f"host://db.test", "reachable", None, link),
        "host-literal": (f"host://{world.db_ip}", "reachable", None, link),
        "host-dropped": ("host://silent.test", "reachable", None, link),  # routed; host:// sends no SYN
        "host-nx": ("host://nx.test", "unreachable", "dns", None),
        "host-noroute": ("host://noroute.test", "unreachable", "no-route", None),
        "host-noroute-literal": (f"host://{world.noroute_ip}", "unreachable", "no-route", None),
        # tcp://: and a handshake.
        "tcp-open": (f"tcp://db.test:{p}", "reachable", None, link),
        "tcp-literal": (f"tcp://{world.db_ip}:{p}", "reachable", None, link),
        "tcp-refused": (f"tcp://db.test:{closed}", "unreachable", "refused", link),
        "tcp-dropped": ("tcp://silent.test:5432", "unreachable", "timeout", link),
        "tcp-nx": ("tcp://nx.test:5432", "unreachable", "dns", None),
        "tcp-noroute": ("tcp://noroute.test:5432", "unreachable", "no-route", None),
        "tcp-mixed": (f"tcp://mixed.test:{p}", "reachable", None, link),  # one address routable
        "tcp-dual": (f"tcp://dual.test:{p}", "reachable", None, link),  # IPv6 has no route, IPv4 has
        "host-ipv6-noroute": ("host://[2001:db8::1]", "unreachable", "no-route", None),
        # http(s)://: and a GET answering 200–399, redirects not followed.
        "http-ok": (f"http://db.test:{p}/ok", "reachable", None, link),
        "http-literal": (f"http://{world.db_ip}:{p}/ok", "reachable", None, link),
        "http-redirect": (f"http://db.test:{p}/redirect", "reachable", None, link),
        "http-big-body": (f"http://db.test:{p}/big", "reachable", None, link),
        "http-404": (f"http://db.test:{p}/missing", "unreachable", "http-status", link),
        "http-503": (f"http://db.test:{p}/down", "unreachable", "http-status", link),
        "http-hang": (f"http://db.test:{p}/hang", "unreachable", "timeout", link),
        "http-trickle": (f"http://db.test:{p}/trickle", "unreachable", "timeout", link),
        "http-refused": (f"http://db.test:{closed}/", "unreachable", "refused", link),
        "http-dropped": (f"http://{world.dropped(3)}/", "unreachable", "timeout", link),
        "http-nx": ("http://nx.test/", "unreachable", "dns", None),
        "http-not-http": (f"http://db.test:{p}/garbage", "unreachable", "error", link),
        "http-empty-reply": (f"http://db.test:{p}/empty", "unreachable", "error", link),
        "https-self-signed": (f"https://secure.test:{selfsigned.port}/", "unreachable", "tls", link),
    }
    args = target_args({name: row[0] for name, row in table.items()})
    started = time.monotonic()
    server = reachd_in(world, *args, "--target-timeout", "2")
    rss_before = rss_kib(server)
    doc = wait_status(server, all_settled(table), timeout=10, what="every target settled")
    print(f"{len(table)} targets settled in {time.monotonic() - started:.2f}s")
    # The 64 MiB body was not kept (bounded memory).
    growth = rss_kib(server) - rss_before
    assert growth < 16 * 1024, f"RSS grew {growth} KiB while probing"

    assert [t["name"] for t in doc["targets"]] == list(table), "targets not in configuration order"
    for name, row in table.items():
        assert target_of(doc, name)["url"] == row[0], target_of(doc, name)
    problems = mismatches(doc, {name: row[1:] for name, row in table.items()})
    assert not problems, "\n".join(problems)

    # Addresses: what the name resolved to; for a literal, the literal.
    assert target_of(doc, "host-name")["addresses"] == [world.db_ip]
    assert target_of(doc, "host-literal")["addresses"] == [world.db_ip]
    assert target_of(doc, "tcp-literal")["addresses"] == [world.db_ip]
    assert target_of(doc, "host-noroute")["addresses"] == [world.noroute_ip]
    assert target_of(doc, "host-nx")["addresses"] == []
    assert target_of(doc, "tcp-mixed")["addresses"] == [world.noroute_ip, world.svc(100)]
    assert target_of(doc, "tcp-dual")["addresses"] == [world.db_ip, world.dual_ipv6], "IPv4 first, then IPv6"
    assert target_of(doc, "host-ipv6-noroute")["addresses"] == ["2001:db8::1"]
    # A GET, to the URL's host (the address is pinned, the name is kept for the Host header).
    methods = {(method, path) for method, path, _ in web.requests}
    assert all(method == "GET" for method, _ in methods), methods
    hosts = {headers.get("host") for method, path, headers in web.requests if path == "/ok"}
    assert f"db.test:{p}" in hosts and f"{world.db_ip}:{p}" in hosts, hosts
    # The redirect was not followed (its location is in the dropped range: it would time out).
    assert web.hit_count("/redirect") >= 1
    # The route-based state is untouched by targets.
    assert doc["state"] == "reachable" and doc["isReachable"] is True


def test_https_verified_against_system_cas(world, reachd_in):
    """With the test CA as the system bundle (reachd's own mount namespace), https verifies."""
    trusted = world.server(tls="trusted")
    trusted.route("/ok", OK)
    selfsigned = world.server(tls="self-signed")
    table = {
        "trusted": (f"https://secure.test:{trusted.port}/ok", "reachable", None, world.link),
        "trusted-other-san": (f"https://db.test:{trusted.port}/ok", "reachable", None, world.link),
        # The certificate names secure.test and db.test only.
        "wrong-name": (f"https://many.test:{trusted.port}/ok", "unreachable", "tls", world.link),
        "ip-literal": (f"https://{world.db_ip}:{trusted.port}/ok", "unreachable", "tls", world.link),
        "self-signed": (f"https://secure.test:{selfsigned.port}/", "unreachable", "tls", world.link),
        # TLS to a server that speaks plain HTTP.
        "plain-server": (f"https://db.test:{world.server().port}/", "unreachable", "tls", world.link),
    }
    server = reachd_in(world, *target_args({n: r[0] for n, r in table.items()}), "--target-timeout", "2",
                       trust_test_ca=True)
    doc = wait_status(server, all_settled(table), timeout=10)
    problems = mismatches(doc, {name: row[1:] for name, row in table.items()})
    assert not problems, "\n".join(problems)


def test_unknown_until_the_first_result(world, reachd_in):
    """`unknown` before the first probe finishes; then the first result decides at once."""
    web = world.server()
    # Slow enough that a busy machine still reads the first document before they answer.
    web.route("/slow-ok", Delayed(4.0, OK))
    web.route("/slow-fail", Delayed(4.0, UNAVAILABLE))
    server = reachd_in(world, *target_args({"slow-ok": f"http://db.test:{web.port}/slow-ok",
                                            "slow-fail": f"http://db.test:{web.port}/slow-fail"}),
                       "--target-timeout", "8")
    with SSEClient(server.port, ns=server.netns) as client:
        first = client.next_event(timeout=2).doc
        for name in ("slow-ok", "slow-fail"):
            target = target_of(first, name)
            check_target_object(target)
            assert target["state"] == "unknown" and target["reason"] is None, target
        # At the default --target-failures 3, the *first* result still decides at once.
        client.wait_for(lambda d: settled(target_of(d, "slow-ok")) and settled(target_of(d, "slow-fail")),
                        timeout=10)
    doc = status(server)
    ok, fail = target_of(doc, "slow-ok"), target_of(doc, "slow-fail")
    assert (ok["state"], ok["reason"]) == ("reachable", None), ok
    assert (fail["state"], fail["reason"]) == ("unreachable", "http-status"), fail
    assert ok["since"] > target_of(first, "slow-ok")["since"], (ok, target_of(first, "slow-ok"))


def test_dns_server_that_never_answers(world, reachd_in):
    """A resolver that never answers ends within the probe timeout (name resolution included)."""
    world.set_nameservers(world.dns_silent_ip)
    web = world.server()
    server = reachd_in(world, *target_args({"db": "tcp://db.test:5432", "web": "http://db.test/",
                                            "literal": f"tcp://{world.db_ip}:{web.port}"}),
                       "--target-timeout", "2")
    started = time.monotonic()
    doc = wait_status(server, all_settled(["db", "web"]), timeout=8)
    elapsed = time.monotonic() - started
    for name in ("db", "web"):
        target = target_of(doc, name)
        # The contract: `dns` is "the name did not resolve" — a resolver that never answers
        # included, so DNS is never blamed on the target itself.
        assert target["state"] == "unreachable" and target["reason"] == "dns", target
        assert target["ipv4"] is None and target["ipv6"] is None, target
    assert elapsed < 6, f"took {elapsed:.1f}s with --target-timeout 2"
    # A literal needs no DNS.
    assert target_of(status(server), "literal")["state"] == "reachable"
    # /status never waited for the resolver.
    t0 = time.monotonic()
    status(server)
    assert time.monotonic() - t0 < 1


# --------------------------------------------------------------------------- changes without a network change


def test_fifty_addresses_end_within_the_timeout(world, reachd_in):
    """A name with 50 addresses, all silent: one probe, one timeout — not 50 of them."""
    server = reachd_in(world, *target_args({"fifty-tcp": "tcp://fifty.test:5432", "fifty-host": "host://fifty.test"}),
                       "--target-timeout", "2")
    started = time.monotonic()
    doc = wait_status(server, all_settled(["fifty-tcp", "fifty-host"]), timeout=8)
    elapsed = time.monotonic() - started
    tcp, host = target_of(doc, "fifty-tcp"), target_of(doc, "fifty-host")
    assert is_state("unreachable", "timeout")(tcp), tcp
    assert elapsed < 6, f"{elapsed:.1f}s with --target-timeout 2"
    assert tcp["addresses"] == sorted(world.fifty_ips, key=ip_sort_key), tcp["addresses"]
    assert is_state("reachable")(host) and len(host["addresses"]) == 50, host


def test_unrelated_netlink_change_reprobes_at_once(world, reachd_in):
    """Every batch of netlink notifications re-runs the targets, even one that leaves the
    document unchanged: the server came back, an unrelated route appears, the target follows
    at once (the interval is 30 s)."""
    web = world.server()
    web.stop()
    # --target-failures 1: the first failure is confirmed, so no quick re-probe follows it.
    server = reachd_in(world, *target_args({"db": f"tcp://db.test:{web.port}"}), "--target-interval", "30",
                       "--target-failures", "1")
    wait_target(server, "db", is_state("unreachable", "refused"), timeout=5)
    web.start()
    time.sleep(1.0)
    before = status(server)
    assert is_state("unreachable", "refused")(target_of(before, "db")), "probed before the interval"
    world.client.ip("route", "add", f"{world.svc(120)}/32", "via", world.gateway_ip)
    t0 = time.monotonic()
    wait_target(server, "db", is_state("reachable"), timeout=5)
    print(f"unrelated route → target re-probed in {time.monotonic() - t0:.2f}s")


def test_server_stops_and_comes_back(world, reachd_in):
    """No netlink message announces a dead server: the interval finds it, and finds it back."""
    web = world.server()
    web.route("/ok", OK)
    targets = {"db": f"tcp://db.test:{web.port}", "api": f"http://db.test:{web.port}/ok"}
    server = reachd_in(world, *target_args(targets), "--target-interval", "1", "--target-failures", "2",
                       "--target-timeout", "1")
    doc = wait_status(server, lambda d: all(target_of(d, n)["state"] == "reachable" for n in targets), timeout=5)
    since = {n: target_of(doc, n)["since"] for n in targets}
    with SSEClient(server.port, ns=server.netns) as client:
        client.next_event(timeout=2)
        web.stop()
        down = client.wait_for(lambda d: all(is_state("unreachable", "refused")(target_of(d, n)) for n in targets),
                               timeout=8)
        for name in targets:
            target = target_of(down.doc, name)
            assert target["since"] > since[name], target
            assert target["interface"] == world.link and target["addresses"] == [world.db_ip], target
        assert down.doc["state"] == "reachable", "the route-based state must not follow a target"
        web.start()
        up = client.wait_for(lambda d: all(target_of(d, n)["state"] == "reachable" for n in targets), timeout=5)
        for name in targets:
            assert target_of(up.doc, name)["reason"] is None


def test_a_single_lost_probe_does_not_flap(world, reachd_in):
    """At the default --target-failures 3: one or two failed probes publish nothing; three do."""
    web = world.server()
    web.route("/ok", OK)
    server = reachd_in(world, *target_args({"api": f"http://db.test:{web.port}/ok"}), "--target-interval", "1",
                       "--target-timeout", "1")
    wait_target(server, "api", is_state("reachable"), timeout=5)
    with SSEClient(server.port, ns=server.netns) as client:
        first = client.next_event(timeout=2)
        reachable_since = target_of(first.doc, "api")["since"]

        hits = web.hit_count("/ok")
        web.once("/ok", UNAVAILABLE)  # exactly one lost probe
        web.wait_hits("/ok", hits + 3, timeout=6)  # the failure and two good probes after it
        web.once("/ok", UNAVAILABLE, HANG)  # two in a row (503, then a timeout)
        hits = web.hit_count("/ok")
        web.wait_hits("/ok", hits + 3, timeout=8)
        assert not client.reader.events, f"a tolerated failure published: {[e.data for e in client.reader.events]}"
        doc = status(server)
        assert doc["sequence"] == first.doc["sequence"], "the document changed"
        assert target_of(doc, "api")["since"] == reachable_since

        web.once("/ok", UNAVAILABLE, UNAVAILABLE, UNAVAILABLE)
        down = client.wait_for(lambda d: target_of(d, "api")["state"] == "unreachable", timeout=8)
        assert target_of(down.doc, "api")["reason"] == "http-status", target_of(down.doc, "api")
        assert web.hit_count("/ok") >= hits + 3 + 3
        # One successful probe makes it reachable again.
        up = client.wait_for(lambda d: target_of(d, "api")["state"] == "reachable", timeout=5)
        assert target_of(up.doc, "api")["since"] > target_of(down.doc, "api")["since"]


def test_steady_probing_publishes_no_events(world, reachd_in):
    """Probing every second, results unchanged: no new document, no event, `since` unchanged."""
    web = world.server()
    web.route("/ok", OK)
    web.route("/down", UNAVAILABLE)
    web.route("/204", NO_CONTENT)
    local = world.local_server()
    targets = {
        "up-tcp": f"tcp://db.test:{web.port}",
        "up-http": f"http://db.test:{web.port}/ok",
        "up-many": f"tcp://many.test:{web.port}",
        "local": f"tcp://127.0.0.1:{local.port}",
        "down-http": f"http://db.test:{web.port}/down",
        "down-dns": "host://nx.test",
        "down-refused": f"tcp://db.test:{world.closed_port()}",
        "down-timeout": "tcp://silent.test:80",
    }
    server = reachd_in(world, *target_args(targets), "--target-interval", "1", "--target-timeout", "1",
                       "--connectivity-url", f"http://db.test:{web.port}/204", "--connectivity-interval", "1")
    wait_status(server, lambda d: all_settled(targets)(d) and d["connectivity"]["state"] == "full", timeout=8)
    with SSEClient(server.port, ns=server.netns) as client:
        first = client.next_event(timeout=2)
        hits = {path: web.hit_count(path) for path in ("/ok", "/down", "/204")}
        for path in hits:
            web.wait_hits(path, hits[path] + 3, timeout=8)  # three more rounds of every probe
        time.sleep(0.3)  # a late publication would arrive now
        client.sock.settimeout(0.3)
        try:
            client.next_event(timeout=0.3)
            new = True
        except TimeoutError:
            new = False
        assert not new and not client.reader.events, \
            f"steady probing published: {[e.id for e in client.reader.all_events[1:]]}"
        # ...and it is probing at the interval, not in a loop.
        times = web.wait_hits("/ok", 0, timeout=0)
        assert times[-1] - times[-3] >= 1.0, f"/ok probed 3 times in {times[-1] - times[-3]:.2f}s at a 1 s interval"
        assert local.connections >= 3
        doc = status(server)
        assert doc["sequence"] == first.doc["sequence"]
        for name in targets:
            assert target_of(doc, name)["since"] == target_of(first.doc, name)["since"], name


# --------------------------------------------------------------------------- network changes


def test_link_down_every_target_no_route_at_once(world, reachd_in):
    """Link down → every remote target `no-route` at once (interval 30 s), local ones unaffected."""
    web = world.server()
    web.route("/ok", OK)
    local = world.local_server()
    remote = {
        "host": "host://db.test",
        "tcp": f"tcp://db.test:{web.port}",
        "http": f"http://db.test:{web.port}/ok",
        "literal": f"http://{world.db_ip}:{web.port}/ok",
        "many": f"tcp://many.test:{web.port}",
        "failing": f"http://db.test:{world.closed_port()}/",  # unreachable (refused) → no-route
    }
    targets = {**remote, "local": f"tcp://127.0.0.1:{local.port}"}
    server = reachd_in(world, *target_args(targets), "--target-interval", "30")
    wait_status(server, all_settled(targets), timeout=8)
    with SSEClient(server.port, ns=server.netns) as client:
        client.next_event(timeout=2)
        t0 = time.monotonic()
        world.link_down()
        event = client.wait_for(lambda d: all(is_state("unreachable", "no-route")(target_of(d, n)) for n in remote),
                                timeout=10)
        elapsed = time.monotonic() - t0
        print(f"link down → every target no-route in {elapsed * 1000:.0f} ms, "
              f"{len(client.reader.all_events) - 1} event(s)")
        assert elapsed < 5, f"{elapsed:.1f}s: not at once"
        assert event.doc["state"] == "unreachable"
        for name in remote:
            assert target_of(event.doc, name)["interface"] is None, target_of(event.doc, name)
        local_target = target_of(event.doc, "local")
        assert local_target["state"] == "reachable" and local_target["interface"] == "lo", local_target

        t0 = time.monotonic()
        world.link_up()
        back = client.wait_for(lambda d: all(target_of(d, n)["state"] == "reachable"
                                             for n in remote if n != "failing"), timeout=15)
        print(f"link up → targets reachable in {time.monotonic() - t0:.2f}s")
        assert time.monotonic() - t0 < 15
        assert target_of(back.doc, "tcp")["interface"] == world.link
    wait_target(server, "failing", is_state("unreachable", "refused"), timeout=10)


def probes_so_far(server) -> dict[str, float]:
    """Each target's probes so far: `reachd_target_probe_duration_seconds_count` by target."""
    response = http(server.port, "GET", "/metrics", ns=server.netns)
    assert response.status == 200, response
    return {name: float(count) for name, count in re.findall(
        r'^reachd_target_probe_duration_seconds_count\{target="([^"]*)"\} (\S+)$', response.body.decode(), re.M)}


def test_a_target_the_link_down_left_without_a_route_is_not_probed_for_it(world, reachd_in):
    """After a batch every target is probed again at once, but not one the batch left without a
    route to every address it had: the batch's document already says `no-route`, and its probe
    would ask the kernel only that and send nothing (docs/probes.md; at 10,000 targets those
    probes ran while the link-down's document was being made). A local target is still probed at
    once, and the remote one is again once its route is back (the interval is 30 s)."""
    web = world.server()
    local = world.local_server()
    targets = {"remote": f"tcp://db.test:{web.port}", "local": f"tcp://127.0.0.1:{local.port}"}
    server = reachd_in(world, *target_args(targets), "--target-interval", "30")
    wait_status(server, all_settled(targets), timeout=8)
    time.sleep(0.5)
    before = probes_so_far(server)
    assert before["remote"] >= 1 and before["local"] >= 1, before
    world.link_down()
    wait_target(server, "remote", is_state("unreachable", "no-route"), timeout=5)
    deadline = time.monotonic() + 5
    while probes_so_far(server)["local"] <= before["local"] and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # any probe of the remote target would be over by now: nothing to send
    after = probes_so_far(server)
    assert after["local"] > before["local"], f"the local target was not probed again at once: {before} → {after}"
    assert after["remote"] == before["remote"], f"the remote target was probed for its link-down: {before} → {after}"
    assert target_of(status(server), "local")["state"] == "reachable"

    world.link_up()
    wait_target(server, "remote", is_state("reachable"), timeout=5)
    assert probes_so_far(server)["remote"] > before["remote"]


def test_route_lost_while_probes_are_in_flight(world, reachd_in):
    """First probes still waiting on silent addresses (5 s timeout; the targets are `unknown`,
    nothing recorded yet) when the default route goes: the route decides at once — neither the
    status nor the targets wait for the probes in flight. (The 20 literals need no DNS at all.)"""
    targets = {f"s{i}": f"tcp://{world.dropped(i)}:80" for i in range(20)}
    targets["named"] = "tcp://silent.test:80"
    server = reachd_in(world, *target_args(targets), "--target-timeout", "5", "--target-interval", "30")
    doc = status(server)
    in_flight = [t["name"] for t in doc["targets"] if t["state"] == "unknown"]
    t0 = time.monotonic()
    world.del_default_route()
    wait_status(server, lambda d: d["state"] == "unreachable", timeout=2)
    doc = wait_status(server, lambda d: all(is_state("unreachable", "no-route")(target_of(d, n)) for n in targets),
                      timeout=10)
    elapsed = time.monotonic() - t0
    print(f"{len(in_flight)} probes in flight; route lost → no-route in {elapsed * 1000:.0f} ms")
    assert in_flight, "the probes were over before the route went: the test proves nothing"
    assert elapsed < 4, f"{elapsed:.2f}s: the route waited for the probes in flight (timeout 5 s)"


def test_default_route_deleted_no_route_at_once(world, reachd_in):
    web = world.server()
    server = reachd_in(world, *target_args({"db": f"tcp://db.test:{web.port}", "name": "host://db.test"}),
                       "--target-interval", "30")
    wait_status(server, lambda d: all(target_of(d, n)["state"] == "reachable" for n in ("db", "name")), timeout=5)
    t0 = time.monotonic()
    world.del_default_route()
    wait_status(server, lambda d: all(is_state("unreachable", "no-route")(target_of(d, n)) for n in ("db", "name")),
                timeout=10)
    assert time.monotonic() - t0 < 5
    world.add_default_route()
    wait_status(server, lambda d: all(target_of(d, n)["state"] == "reachable" for n in ("db", "name")), timeout=10)
    assert time.monotonic() - t0 < 15


def test_resolv_conf_rewritten_names_follow(world, reachd_in):
    """A name first NXDOMAIN, then resolvable once resolv.conf names the second server (at once:
    the interval is 30 s); a reachable target's addresses move while its `since` stays.
    (--target-failures 1 so that the way back, reachable → dns, needs one probe too.)"""
    web = world.server()
    targets = {"moved": "host://moved.test", "db": f"tcp://db.test:{web.port}"}
    server = reachd_in(world, *target_args(targets), "--target-interval", "30", "--target-failures", "1")
    doc = wait_status(server, all_settled(targets), timeout=5)
    assert is_state("unreachable", "dns")(target_of(doc, "moved")), target_of(doc, "moved")
    db = target_of(doc, "db")
    assert db["state"] == "reachable" and db["addresses"] == [world.db_ip], db

    t0 = time.monotonic()
    world.set_nameservers(world.dns2_ip)
    doc = wait_status(server, lambda d: target_of(d, "moved")["state"] == "reachable"
                      and target_of(d, "db")["addresses"] == [world.db2_ip], timeout=10,
                      what="names following resolv.conf")
    assert time.monotonic() - t0 < 10
    assert target_of(doc, "moved")["addresses"] == [world.moved_ip]
    assert target_of(doc, "db")["since"] == db["since"], "addresses changed, state did not: since must stay"

    t0 = time.monotonic()
    world.set_nameservers(world.gateway_ip)
    doc = wait_status(server, lambda d: target_of(d, "moved")["state"] == "unreachable"
                      and target_of(d, "db")["addresses"] == [world.db_ip], timeout=10,
                      what="names following resolv.conf back")
    assert time.monotonic() - t0 < 10
    assert target_of(doc, "moved")["reason"] == "dns", target_of(doc, "moved")
    assert target_of(doc, "db")["since"] == db["since"]


# --------------------------------------------------------------------------- the document's details


def test_addresses_sorted_interface_and_since(world, reachd_in):
    web = world.server()
    web.route("/s", UNAVAILABLE)
    server = reachd_in(world, *target_args({"many": "host://many.test", "svc": f"http://db.test:{web.port}/s"}),
                       "--target-interval", "1", "--target-timeout", "1")
    doc = wait_status(server, all_settled(["many", "svc"]), timeout=5)
    many = target_of(doc, "many")
    # Numerically (IPv4 before IPv6): .3 .9 .21 .100 — dnsmasq was given them as .100 .21 .9 .3.
    assert many["addresses"] == sorted(world.many_ips, key=ip_sort_key), many
    assert many["interface"] == world.link, many

    svc = target_of(doc, "svc")
    assert is_state("unreachable", "http-status")(svc), svc
    since = svc["since"]
    # Another reason, same state: a new document, the same `since`.
    web.route("/s", HANG)
    svc = wait_target(server, "svc", is_state("unreachable", "timeout"), timeout=6)
    assert svc["since"] == since, svc
    web.route("/s", OK)
    svc = wait_target(server, "svc", is_state("reachable"), timeout=5)
    assert svc["since"] > since, svc


def test_interface_follows_the_kernels_choice(world, reachd_in):
    """A more specific route through a second link: `interface` changes (one event), `state` and
    `since` do not; the route removed, back to the first link."""
    web = world.server()
    link2 = world.add_second_link()
    server = reachd_in(world, *target_args({"db": f"tcp://db.test:{web.port}", "other": f"host://{world.svc(20)}"}),
                       "--target-interval", "30")
    doc = wait_status(server, all_settled(["db", "other"]), timeout=5)
    db = target_of(doc, "db")
    assert db["state"] == "reachable" and db["interface"] == world.link, db
    with SSEClient(server.port, ns=server.netns) as client:
        first = client.next_event(timeout=2)
        world.client.ip("route", "add", f"{world.db_ip}/32", "via", world.gateway_ip2, "dev", link2)
        moved = client.wait_for(lambda d: target_of(d, "db")["interface"] == link2, timeout=5)
        target = target_of(moved.doc, "db")
        assert target["state"] == "reachable" and target["since"] == db["since"], target
        assert target_of(moved.doc, "other")["interface"] == world.link, "only the rerouted address moved"
        assert int(moved.id) > int(first.id)
        world.client.ip("route", "del", f"{world.db_ip}/32")
        back = client.wait_for(lambda d: target_of(d, "db")["interface"] == world.link, timeout=5)
        assert target_of(back.doc, "db")["since"] == db["since"]


def test_local_target_is_reachable_through_lo(world, reachd_in):
    local = world.local_server()
    local.route("/health", OK)
    targets = {"app": f"tcp://127.0.0.1:{local.port}", "app-http": f"http://127.0.0.1:{local.port}/health",
               "client-address": f"host://{world.client_ip}", "ipv6-loopback": "host://[::1]",
               # Names: 1–63 of letters, digits, `_`, `-`, `.`.
               "Db_primary.v1-x": "host://127.0.0.1", "n" * 63: "host://127.0.0.1"}
    server = reachd_in(world, *target_args(targets))
    doc = wait_status(server, all_settled(targets), timeout=5)
    for name in ("app", "app-http"):
        target = target_of(doc, name)
        assert target["state"] == "reachable" and target["interface"] == "lo", target
        assert target["addresses"] == ["127.0.0.1"], target
    own = target_of(doc, "client-address")  # an address of this host: a `local` route via lo
    assert own["state"] == "reachable" and own["interface"] == "lo", own
    assert [t["name"] for t in doc["targets"]] == list(targets)
    v6 = target_of(doc, "ipv6-loopback")
    assert v6["state"] == "reachable" and v6["interface"] == "lo" and v6["addresses"] == ["::1"], v6


def test_started_without_a_route(world, reachd_in):
    """Started with the link down: literals are `no-route` at once; nothing is left `unknown`."""
    web = world.server()
    world.link_down()
    targets = {"literal": f"tcp://{world.db_ip}:{web.port}", "name": f"tcp://db.test:{web.port}",
               "local": f"host://127.0.0.1"}
    server = reachd_in(world, *target_args(targets), "--target-interval", "30", "--target-timeout", "2")
    doc = wait_status(server, all_settled(targets), timeout=5)
    assert doc["state"] == "unreachable"
    assert is_state("unreachable", "no-route")(target_of(doc, "literal")), target_of(doc, "literal")
    # Never resolved, and the resolver itself has no route: the name cannot resolve. The contract
    # fixes the reason only for connectivity (`none`); `dns` or `no-route` both say it.
    name = target_of(doc, "name")
    assert name["state"] == "unreachable" and name["reason"] in ("dns", "no-route"), name
    assert target_of(doc, "local")["state"] == "reachable"
    world.link_up()
    wait_status(server, lambda d: all(target_of(d, n)["state"] == "reachable" for n in targets), timeout=10)


# --------------------------------------------------------------------------- scale


def test_hundred_silent_targets_settle_in_about_one_timeout(world, reachd_in):
    """100 targets the gateway drops, --target-timeout 1, from REACHD_TARGETS: all concurrent."""
    specs = " ".join(f"silent{i}=tcp://{world.dropped(i)}:{5000 + i}" for i in range(100))
    server = reachd_in(world, "--target-timeout", "1", env={"REACHD_TARGETS": specs})
    names = [f"silent{i}" for i in range(100)]
    slowest_status = 0.0

    def check(doc):
        return all_settled(names)(doc)

    deadline = time.monotonic() + 10
    while True:
        t0 = time.monotonic()
        doc = status(server)
        slowest_status = max(slowest_status, time.monotonic() - t0)
        if check(doc) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    elapsed = time.monotonic() - server.started_at
    print(f"100 silent targets settled {elapsed:.2f}s after reachd was started; slowest /status {slowest_status:.3f}s")
    assert len(doc["targets"]) == 100
    problems = [f"{t['name']}: {t['state']}/{t['reason']}" for t in doc["targets"]
                if (t["state"], t["reason"]) != ("unreachable", "timeout")]
    assert not problems, problems[:10]
    assert elapsed < 10, f"100 silent targets took {elapsed:.1f}s (1 s timeout; one after another: 100 s)"
    assert slowest_status < 1, "a probe delayed /status"
    assert all(target_of(doc, f"silent{i}")["addresses"] == [world.dropped(i)] for i in range(100))


# --------------------------------------------------------------------------- refused at start


@pytest.mark.parametrize("spec", [
    "nosign", "=tcp://a.test:1", "bad name=tcp://a.test:1", "x" * 64 + "=host://a.test",
    "a=ftp://a.test/", "a=tcp://a.test", "a=", "a=not a url",
])
def test_bad_target_spec_refused_at_start(spec):
    result = subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", str(free_port()), "--target", spec],
                            capture_output=True, text=True, timeout=10)
    assert result.returncode != 0, f"{spec!r} accepted: {result.stdout}{result.stderr}"
    assert spec in result.stdout + result.stderr, f"the message does not name {spec!r}: {result.stderr}"


def test_duplicate_target_name_refused():
    result = subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", str(free_port()),
                             "--target", "db=host://a.test", "--target", "db=host://b.test"],
                            capture_output=True, text=True, timeout=10)
    assert result.returncode != 0
    assert "db" in result.stderr + result.stdout
