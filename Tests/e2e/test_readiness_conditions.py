"""`--ready-when` with `online` and `target:NAME`: /readyz follows connectivity and targets.

The health document has one `checks` entry per condition; `target:NAME` is keyed `target:NAME`,
`online` is keyed `network:connectivity`. Only the keys and each entry's health+json `status`
are relied on here, not the wording of other fields.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from conftest import http
from reachd_process import free_port, reachd_binary
from world import (NO_CONTENT, OK, UNAVAILABLE, Delayed, reachd_in, readyz, redirect, target_args,  # noqa: F401
                   wait_connectivity, wait_target, world)

pytestmark = [pytest.mark.netns, pytest.mark.timeout(90)]  # a hang fails with its stack


def wait_ready_code(server, code: int, timeout: float):
    """Poll /readyz until it answers `code`; returns that response."""
    deadline = time.monotonic() + timeout
    while True:
        response = readyz(server)
        if response.status == code:
            return response
        if time.monotonic() >= deadline:
            raise TimeoutError(f"/readyz still {response.status} after {timeout}s: {response.body[:600]!r}")
        time.sleep(0.05)


def check_entry(body: dict, key: str, status: str) -> None:
    assert key in body["checks"], f"no {key!r} check: {list(body['checks'])}"
    entries = body["checks"][key]
    assert isinstance(entries, list) and entries, body["checks"]
    assert entries[0]["status"] == status, (key, entries)


def test_ready_when_target(world, reachd_in):
    """unknown → 503, reachable → 200, the server stops → 503, back → 200. Liveness never moves."""
    web = world.server()
    web.route("/ok", Delayed(3.0, OK))  # the first probe is still running when reachd is up
    server = reachd_in(world, *target_args({"db": f"http://db.test:{web.port}/ok"}), "--ready-when", "target:db",
                       "--target-interval", "1", "--target-failures", "1", "--target-timeout", "5")
    first = readyz(server)
    assert first.status == 503, f"an unknown target must not be ready: {first.body!r}"
    assert first.content_type == "application/health+json"
    check_entry(first.json(), "target:db", "fail")

    ready = wait_ready_code(server, 200, timeout=8)
    body = ready.json()
    assert body["status"] == "pass"
    check_entry(body, "target:db", "pass")
    assert len(body["checks"]) == 1, f"one entry per condition: {list(body['checks'])}"
    web.route("/ok", OK)

    web.stop()
    failed = wait_ready_code(server, 503, timeout=6)
    assert failed.json()["status"] == "fail"
    check_entry(failed.json(), "target:db", "fail")
    assert http(server.port, "GET", "/livez", ns=server.netns).status == 200, "liveness followed a target"

    web.start()
    wait_ready_code(server, 200, timeout=6)


def test_ready_when_online(world, reachd_in):
    """portal → 503; signed in (204) → 200; the check fails (503) → 503 again."""
    web = world.server()
    web.route("/check", redirect("http://login.test/"))
    server = reachd_in(world, "--connectivity-url", f"http://db.test:{web.port}/check", "--ready-when", "online",
                       "--connectivity-interval", "1", "--connectivity-timeout", "1")
    wait_connectivity(server, lambda c: c["state"] == "portal", timeout=5)
    portal = readyz(server)
    assert portal.status == 503, portal.body
    check_entry(portal.json(), "network:connectivity", "fail")

    web.route("/check", NO_CONTENT)
    ready = wait_ready_code(server, 200, timeout=8)
    check_entry(ready.json(), "network:connectivity", "pass")
    assert len(ready.json()["checks"]) == 1, list(ready.json()["checks"])

    web.route("/check", UNAVAILABLE)
    failed = wait_ready_code(server, 503, timeout=6)
    check_entry(failed.json(), "network:connectivity", "fail")
    assert http(server.port, "GET", "/livez", ns=server.netns).status == 200


def test_ready_when_several_conditions(world, reachd_in):
    """All must hold: one entry per condition; each failing alone fails /readyz."""
    web = world.server()
    web.route("/check", NO_CONTENT)
    api = world.server()
    server = reachd_in(world, *target_args({"db": f"tcp://db.test:{web.port}", "api": f"tcp://db.test:{api.port}"}),
                       "--connectivity-url", f"http://db.test:{web.port}/check",
                       "--ready-when", "reachable,online,target:db,target:api",
                       "--target-interval", "1", "--target-failures", "1", "--target-timeout", "1",
                       "--connectivity-interval", "1", "--connectivity-timeout", "1")
    body = wait_ready_code(server, 200, timeout=6).json()
    assert len(body["checks"]) == 4, f"one entry per condition: {list(body['checks'])}"
    for key in ("target:db", "target:api", "network:connectivity"):
        check_entry(body, key, "pass")

    api.stop()  # only target:api fails
    body = wait_ready_code(server, 503, timeout=6).json()
    check_entry(body, "target:api", "fail")
    check_entry(body, "target:db", "pass")
    check_entry(body, "network:connectivity", "pass")
    api.start()
    wait_ready_code(server, 200, timeout=6)

    web.route("/check", redirect("http://login.test/"))  # only online fails
    body = wait_ready_code(server, 503, timeout=6).json()
    check_entry(body, "network:connectivity", "fail")
    check_entry(body, "target:db", "pass")
    web.route("/check", NO_CONTENT)
    wait_ready_code(server, 200, timeout=8)

    world.link_down()  # everything fails (the route state may be published a moment before the probes')
    t0 = time.monotonic()
    wait_ready_code(server, 503, timeout=5)
    keys = ("target:db", "target:api", "network:connectivity")
    deadline = time.monotonic() + 5
    while True:
        body = readyz(server).json()
        if all(body["checks"].get(key, [{}])[0].get("status") == "fail" for key in keys):
            break
        assert time.monotonic() < deadline, f"not every check failed after link down: {body['checks']}"
        time.sleep(0.02)
    assert time.monotonic() - t0 < 5
    world.link_up()
    wait_ready_code(server, 200, timeout=15)


def test_ready_when_target_ignores_the_route_state_unless_asked(world, reachd_in):
    """`target:NAME` alone: a local target keeps the pod ready while the network is down."""
    local = world.local_server()
    server = reachd_in(world, *target_args({"app": f"tcp://127.0.0.1:{local.port}"}), "--ready-when", "target:app")
    wait_ready_code(server, 200, timeout=5)
    world.link_down()
    wait_target(server, "app", lambda t: t["state"] == "reachable", timeout=2)
    time.sleep(0.3)
    assert readyz(server).status == 200, "target:app holds; `reachable` was not asked for"


def test_unknown_target_in_ready_when_refused_at_start():
    result = subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", str(free_port()),
                             "--target", "db=host://db.test", "--ready-when", "reachable,target:nope"],
                            capture_output=True, text=True, timeout=10)
    assert result.returncode != 0, "an unknown target name in --ready-when was accepted"
    assert "nope" in result.stdout + result.stderr, result.stderr
