"""The connectivity check (`--connectivity-url`): disabled, unknown, none, limited, portal, full.

Each reachd has one check URL, so a table starts one reachd per row in the same world, all at
once, and waits for them together.
"""

from __future__ import annotations

import time

import pytest

from conftest import ISO8601_MS_Z, SSEClient
from world import (GARBAGE, HANG, NO_CONTENT, NOT_FOUND, OK, PORTAL_LOGIN, UNAVAILABLE, Answer,  # noqa: F401
                   Delayed, reachd_in, redirect, status, wait_connectivity, world)

pytestmark = [pytest.mark.netns, pytest.mark.timeout(90)]  # a hang fails with its stack

STATES = ("disabled", "unknown", "none", "limited", "portal", "full")
LIMITED_REASONS = ("dns", "timeout", "refused", "host-unreachable", "tls", "proxy", "error", "http-status")
EXPECTED_TEXT = "reachd-online"


def check_connectivity_object(connectivity: dict) -> None:
    """The contract of `connectivity` (docs/status-document.md and openapi.yaml `Connectivity`)."""
    for key in ("state", "url", "reason", "since"):
        assert key in connectivity, f"connectivity lacks {key!r}: {connectivity}"
    assert connectivity["state"] in STATES, connectivity
    if connectivity["state"] == "limited":
        assert connectivity["reason"] in LIMITED_REASONS, connectivity
    else:
        assert connectivity["reason"] is None, connectivity
    if connectivity["state"] == "disabled":
        assert connectivity["url"] is None, connectivity
    else:
        assert isinstance(connectivity["url"], str) and connectivity["url"], connectivity
    assert isinstance(connectivity["since"], str) and ISO8601_MS_Z.match(connectivity["since"]), connectivity


def checked(connectivity: dict) -> bool:
    return connectivity.get("state") not in (None, "unknown")


def run_table(world, reachd_in, table: dict, common: tuple = (), trust_test_ca: bool = False, timeout: float = 10):
    """table: name → (args, state, reason). One reachd per row, all at once; every mismatch reported."""
    names = list(table)
    servers = reachd_in.many(world, *[[*table[n][0], *common] for n in names], trust_test_ca=trust_test_ca)
    deadline = time.monotonic() + timeout
    results = {}
    for name, server in zip(names, servers):
        remaining = max(0.1, deadline - time.monotonic())
        try:
            results[name] = wait_connectivity(server, checked, timeout=remaining)
        except TimeoutError:
            results[name] = status(server).get("connectivity")
    problems = []
    for name, (args, state, reason) in table.items():
        got = results[name]
        if got is None:
            problems.append(f"{name}: no connectivity object")
            continue
        check_connectivity_object(got)
        if (got["state"], got["reason"]) != (state, reason):
            problems.append(f"{name} ({got['url']}): want {state}/{reason}, got {got['state']}/{got['reason']}")
        if "--connectivity-url" in args:
            url = args[args.index("--connectivity-url") + 1]
            if got["url"] != url:
                problems.append(f"{name}: url {got['url']!r}, configured {url!r}")
    assert not problems, "\n".join(problems)
    return servers


def url_args(url: str, *more: str) -> list[str]:
    return ["--connectivity-url", url, *more]


def test_disabled_without_url(world, reachd_in):
    server = reachd_in(world)
    doc = status(server)
    assert "connectivity" in doc, doc
    check_connectivity_object(doc["connectivity"])
    assert doc["connectivity"]["state"] == "disabled" and doc["connectivity"]["url"] is None, doc["connectivity"]
    assert doc["targets"] == [], doc.get("targets")


def test_full_and_portal(world, reachd_in):
    web = world.server()
    web.route("/generate_204", NO_CONTENT)
    web.route("/text", Answer(200, f"{EXPECTED_TEXT} and more\n".encode()))
    web.route("/redirect", redirect("http://login.test/portal"))
    web.route("/temporary", redirect("http://login.test/portal", status=307))
    web.route("/login", PORTAL_LOGIN)
    web.route("/ok", OK)
    base = f"http://db.test:{web.port}"
    table = {
        "204": (url_args(f"{base}/generate_204"), "full", None),
        "204-literal": (url_args(f"http://{world.db_ip}:{web.port}/generate_204"), "full", None),
        "text": (url_args(f"{base}/text", "--connectivity-response", EXPECTED_TEXT), "full", None),
        "302": (url_args(f"{base}/redirect"), "portal", None),
        "307": (url_args(f"{base}/temporary"), "portal", None),
        "login-page": (url_args(f"{base}/login"), "portal", None),
        "200-without-text": (url_args(f"{base}/ok"), "portal", None),
        "200-other-text": (url_args(f"{base}/login", "--connectivity-response", EXPECTED_TEXT), "portal", None),
    }
    run_table(world, reachd_in, table)
    # Redirects are never followed: nobody asked login.test (NXDOMAIN anyway) — and the check
    # did not become limited/dns for it.


def test_limited_with_each_reason(world, reachd_in):
    web = world.server()
    web.route("/down", UNAVAILABLE)
    web.route("/missing", NOT_FOUND)
    web.route("/hang", HANG)
    web.route("/garbage", GARBAGE)
    selfsigned = world.server(tls="self-signed", default=NO_CONTENT)
    base = f"http://db.test:{web.port}"
    table = {
        "dns": (url_args("http://nx.test/generate_204"), "limited", "dns"),
        "timeout-hang": (url_args(f"{base}/hang"), "limited", "timeout"),
        "timeout-dropped": (url_args("http://silent.test/generate_204"), "limited", "timeout"),
        "refused": (url_args(f"http://db.test:{world.closed_port()}/generate_204"), "limited", "refused"),
        "tls": (url_args(f"https://secure.test:{selfsigned.port}/generate_204"), "limited", "tls"),
        "http-503": (url_args(f"{base}/down"), "limited", "http-status"),
        "http-404": (url_args(f"{base}/missing"), "limited", "http-status"),
        "error": (url_args(f"{base}/garbage"), "limited", "error"),
    }
    servers = run_table(world, reachd_in, table, common=("--connectivity-timeout", "2"))
    for server in servers:
        assert status(server)["state"] == "reachable", "connectivity never changes the route-based state"


def test_none_without_a_route_toward_the_host(world, reachd_in):
    web = world.server(default=NO_CONTENT)
    table = {
        "name": (url_args("http://noroute.test/generate_204"), "none", None),
        "literal": (url_args(f"http://{world.noroute_ip}/generate_204"), "none", None),
        "control": (url_args(f"http://db.test:{web.port}/generate_204"), "full", None),
    }
    run_table(world, reachd_in, table)


def test_full_over_verified_https(world, reachd_in):
    trusted = world.server(tls="trusted", default=NO_CONTENT)
    selfsigned = world.server(tls="self-signed", default=NO_CONTENT)
    table = {
        "trusted": (url_args(f"https://secure.test:{trusted.port}/generate_204"), "full", None),
        "self-signed": (url_args(f"https://secure.test:{selfsigned.port}/generate_204"), "limited", "tls"),
        "wrong-name": (url_args(f"https://many.test:{trusted.port}/generate_204"), "limited", "tls"),
    }
    run_table(world, reachd_in, table, trust_test_ca=True)


def test_none_when_started_without_a_route(world, reachd_in):
    """Never resolved and the route-based state is unreachable: `none`, not limited/dns."""
    world.link_down()
    server = reachd_in(world, *url_args("http://db.test/generate_204"))
    connectivity = wait_connectivity(server, checked, timeout=5)
    check_connectivity_object(connectivity)
    assert connectivity["state"] == "none", connectivity


def test_unknown_until_the_first_check(world, reachd_in):
    web = world.server()
    web.route("/slow", Delayed(4.0, NO_CONTENT))  # a busy machine still reads the first document in time
    server = reachd_in(world, *url_args(f"http://db.test:{web.port}/slow"), "--connectivity-timeout", "8")
    with SSEClient(server.port, ns=server.netns) as client:
        first = client.next_event(timeout=2).doc
        check_connectivity_object(first["connectivity"])
        assert first["connectivity"]["state"] == "unknown", first["connectivity"]
        assert first["connectivity"]["url"] == f"http://db.test:{web.port}/slow"
        full = client.wait_for(lambda d: d["connectivity"]["state"] == "full", timeout=10)
    assert full.doc["connectivity"]["since"] > first["connectivity"]["since"]


# --------------------------------------------------------------------------- changes


def test_network_change_none_at_once_then_full(world, reachd_in):
    """Link down → `none` at once (before DNS is asked; interval 300 s), link up → re-checked at once."""
    web = world.server(default=NO_CONTENT)
    server = reachd_in(world, *url_args(f"http://db.test:{web.port}/generate_204"))
    wait_connectivity(server, lambda c: c["state"] == "full", timeout=5)
    with SSEClient(server.port, ns=server.netns) as client:
        client.next_event(timeout=2)
        t0 = time.monotonic()
        world.link_down()
        down = client.wait_for(lambda d: d["connectivity"]["state"] == "none", timeout=10)
        elapsed = time.monotonic() - t0
        print(f"link down → connectivity none in {elapsed * 1000:.0f} ms")
        assert elapsed < 5
        check_connectivity_object(down.doc["connectivity"])
        assert down.doc["state"] == "unreachable"
        t0 = time.monotonic()
        world.link_up()
        client.wait_for(lambda d: d["connectivity"]["state"] == "full", timeout=15)
        print(f"link up → connectivity full in {time.monotonic() - t0:.2f}s")


def test_none_at_once_while_a_check_is_in_flight(world, reachd_in):
    """The first check waits on a silent address (5 s timeout) when the route goes: `none` at once."""
    server = reachd_in(world, *url_args("http://silent.test/generate_204"), "--connectivity-timeout", "5")
    assert status(server)["connectivity"]["state"] == "unknown"
    t0 = time.monotonic()
    world.del_default_route()
    wait_connectivity(server, lambda c: c["state"] == "none", timeout=10)
    elapsed = time.monotonic() - t0
    assert elapsed < 4, f"{elapsed:.2f}s: `none` waited for the check in flight (timeout 5 s)"


def test_portal_cleared_is_found_by_backoff(world, reachd_in):
    """Not `full`: re-checked backing off from 1 s, so signing in to the portal is seen in
    seconds, not after the 300 s interval."""
    web = world.server()
    web.route("/check", redirect("http://login.test/"))
    server = reachd_in(world, *url_args(f"http://db.test:{web.port}/check"))
    portal = wait_connectivity(server, lambda c: c["state"] == "portal", timeout=5)
    web.wait_hits("/check", 2, timeout=5)  # re-checked within about a second
    t0 = time.monotonic()
    web.route("/check", NO_CONTENT)
    full = wait_connectivity(server, lambda c: c["state"] == "full", timeout=10)
    print(f"portal → full found after {time.monotonic() - t0:.2f}s")
    assert full["since"] > portal["since"]
    # Full now: the next check is --connectivity-interval (300 s) away, no more backing off.
    hits = web.hit_count("/check")
    time.sleep(2.5)
    assert web.hit_count("/check") == hits, "still re-checking every second or two while full"


def test_full_to_limited_without_network_change(world, reachd_in):
    """While `full` the check runs every --connectivity-interval; a changed reason keeps `since`."""
    web = world.server()
    web.route("/check", NO_CONTENT)
    server = reachd_in(world, *url_args(f"http://db.test:{web.port}/check"), "--connectivity-interval", "2",
                       "--connectivity-timeout", "1")
    wait_connectivity(server, lambda c: c["state"] == "full", timeout=5)
    web.route("/check", UNAVAILABLE)
    limited = wait_connectivity(server, lambda c: c["state"] == "limited", timeout=6)
    assert limited["reason"] == "http-status", limited
    web.route("/check", HANG)
    timed_out = wait_connectivity(server, lambda c: c["reason"] == "timeout", timeout=8)
    assert timed_out["state"] == "limited" and timed_out["since"] == limited["since"], (timed_out, limited)
    web.route("/check", NO_CONTENT)
    wait_connectivity(server, lambda c: c["state"] == "full", timeout=8)


@pytest.mark.parametrize("url", ["ftp://db.test/", "tcp://db.test:80", "host://db.test", "not a url", "http://"])
def test_bad_connectivity_url_refused_at_start(url):
    import subprocess

    from reachd_process import free_port, reachd_binary
    result = subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", str(free_port()),
                             "--connectivity-url", url], capture_output=True, text=True, timeout=10)
    assert result.returncode != 0, f"{url!r} accepted"
    assert url in result.stdout + result.stderr, f"the message does not name {url!r}: {result.stderr}"
