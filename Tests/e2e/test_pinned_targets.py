"""Targets pinned to an interface (`NAME@IFACE=URL`, DESIGN "Every uplink on its own"): probed
through that interface only, `via` in the document, `no-route` at once while the interface is
no uplink (or does not exist), and nothing sent through another interface.

The world's client has its default route out of its first link; `add_second_link` gives it a
second veth to the same gateway with no route out yet. The gateway tells which link a probe came
through: a blackhole route to the second link's address swallows its answers.
"""

from __future__ import annotations

import subprocess

import pytest

from reachd_process import free_port, reachd_binary
from world import reachd_in, status, target_of, wait_target, world  # noqa: F401
from world_dualstack import dual_world, reachd_dual  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.timeout(90)]


def test_a_pinned_target_goes_through_its_interface_only(world, reachd_in):
    web = world.server()
    second = world.add_second_link()
    url = f"tcp://{world.db_ip}:{web.port}"
    server = reachd_in(world, "--target", f"plain={url}", "--target", f"pinned@{second}={url}",
                       "--target", f"missing@nosuch0={url}", "--target", f"named@{second}=tcp://db.test:{web.port}",
                       "--target-interval", "1", "--target-timeout", "1")

    plain = wait_target(server, "plain", lambda t: t["state"] == "reachable", 10)
    assert plain["via"] is None and plain["interface"] == world.link, plain
    # The second link has an address but no route out: no uplink, so no-route, nothing sent.
    pinned = wait_target(server, "pinned", lambda t: t["state"] != "unknown", 10)
    assert (pinned["state"], pinned["reason"], pinned["via"]) == ("unreachable", "no-route", second), pinned
    assert pinned["ipv4"]["reason"] == "no-route" and pinned["ipv4"]["address"] is None, pinned
    missing = wait_target(server, "missing", lambda t: t["state"] != "unknown", 10)
    assert (missing["state"], missing["reason"], missing["via"]) == ("unreachable", "no-route", "nosuch0"), missing
    # A name is not even resolved through an interface that is no uplink: each family no-route.
    named = wait_target(server, "named", lambda t: t["state"] != "unknown", 10)
    assert (named["state"], named["reason"], named["addresses"]) == ("unreachable", "no-route", []), named
    assert named["ipv4"]["reason"] == named["ipv6"]["reason"] == "no-route", named

    # A backup default route (a higher metric) makes it an uplink: the target is reached
    # through it, while the kernel's own choice stays the first link.
    world.client.ip("route", "add", "default", "via", world.gateway_ip2, "dev", second, "metric", "200")
    pinned = wait_target(server, "pinned", lambda t: t["state"] == "reachable", 10)
    assert pinned["interface"] == second and pinned["ipv4"]["interface"] == second, pinned
    # The name now resolves through it too (DNS bound to the interface); the world has no IPv6
    # route, so that family stays no-route and the target is degraded.
    named = wait_target(server, "named", lambda t: t["state"] == "reachable", 10)
    assert named["addresses"] == [world.db_ip] and named["interface"] == second, named
    assert target_of(status(server), "plain")["interface"] == world.link

    # Proof of the way out: the gateway's answers to the second link's address go nowhere (a
    # blackhole route there). The pinned target times out; the unpinned one is untouched.
    world.gateway.ip("route", "add", "blackhole", f"{world.client_ip2}/32")
    pinned = wait_target(server, "pinned", lambda t: t["state"] == "unreachable", 15)
    assert pinned["reason"] == "timeout", pinned
    assert target_of(status(server), "plain")["state"] == "reachable"

    # Its link down: no-route at once (the route gate judges it by its own egress).
    world.gateway.ip("route", "del", "blackhole", f"{world.client_ip2}/32")
    wait_target(server, "pinned", lambda t: t["state"] == "reachable", 15)
    world.client.ip("link", "set", second, "down")
    pinned = wait_target(server, "pinned", lambda t: t["reason"] == "no-route", 5)
    assert target_of(status(server), "plain")["state"] == "reachable"


def test_a_pinned_target_from_the_environment_and_the_status_command(world, reachd_in):
    web = world.server()
    second = world.add_second_link()
    world.client.ip("route", "add", "default", "via", world.gateway_ip2, "dev", second, "metric", "200")
    server = reachd_in(world, env={"REACHD_TARGETS": f"db@{second}=tcp://{world.db_ip}:{web.port}"})
    target = wait_target(server, "db", lambda t: t["state"] == "reachable", 10)
    assert target["via"] == second and target["interface"] == second, target
    # `reachd status` names it as it was given.
    result = world.client.exec(reachd_binary(), "status", "--port", str(server.port), capture_output=True,
                               text=True, timeout=20)
    assert result.returncode == 0, result.stderr
    assert f"target db@{second} " in result.stdout, result.stdout


@pytest.mark.parametrize("spec", ["db@=tcp://198.18.0.1:1", "db@a/b=tcp://198.18.0.1:1",
                                  "db@abcdefghijklmnop=tcp://198.18.0.1:1"])
def test_a_bad_interface_is_refused_at_start_naming_the_spec(spec):
    result = subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", str(free_port()), "--target", spec],
                            capture_output=True, text=True, timeout=20)
    assert result.returncode != 0, result
    assert spec in result.stderr and "interface" in result.stderr, result.stderr


def test_a_pinned_target_in_both_families(dual_world, reachd_dual):
    """The dual-stack world with a second link that carries only IPv6 (and is the kernel's
    choice toward the far IPv6 range): a target pinned to the first link is probed through it in
    both families — against the kernel's IPv6 choice —, one pinned to the second has IPv4
    `no-route` (no IPv4 there) and IPv6 through it; IPv6 broken at the gateway shows in each
    pinned family on its own."""
    w = dual_world
    web = w.far_server()
    link6 = w.add_second_link_ipv6()
    # The outside addresses: an uplink of a family is an interface with a route toward them.
    server = reachd_dual("--ipv4-destination", w.both4, "--ipv6-destination", w.both6,
                         "--target", f"kernel=tcp://both.test:{web.port}",
                         "--target", f"first@{w.link}=tcp://both.test:{web.port}",
                         "--target", f"second4@{link6}=tcp://{w.both4}:{web.port}",
                         "--target", f"second6@{link6}=tcp://[{w.both6}]:{web.port}",
                         "--target-interval", "1", "--target-timeout", "1", "--target-failures", "1")

    def both_known(target: dict) -> bool:
        return all(target[f] is not None and target[f]["state"] != "unknown" for f in ("ipv4", "ipv6"))

    kernel = wait_target(server, "kernel", lambda t: both_known(t) and t["ipv6"]["state"] == "reachable", 10)
    assert (kernel["ipv4"]["interface"], kernel["ipv6"]["interface"]) == (w.link, link6), kernel
    first = wait_target(server, "first", lambda t: both_known(t) and t["state"] == "reachable", 10)
    assert first["via"] == w.link and not first["degraded"], first
    assert (first["ipv4"]["interface"], first["ipv6"]["interface"]) == (w.link, w.link), first
    second4 = wait_target(server, "second4", lambda t: t["state"] != "unknown", 10)
    assert (second4["state"], second4["reason"], second4["via"]) == ("unreachable", "no-route", link6), second4
    second6 = wait_target(server, "second6", lambda t: t["state"] == "reachable", 10)
    assert second6["ipv6"]["interface"] == link6 and second6["ipv4"] is None, second6

    # IPv6 broken past the gateway: each pinned IPv6 family fails on its own, IPv4 stays.
    w.break_family("ipv6")
    first = wait_target(server, "first", lambda t: t["degraded"], 10)
    assert first["ipv6"]["reason"] == "timeout" and first["ipv4"]["state"] == "reachable", first
    second6 = wait_target(server, "second6", lambda t: t["state"] == "unreachable", 10)
    assert second6["reason"] == "timeout", second6
    w.restore_family("ipv6")
    wait_target(server, "second6", lambda t: t["state"] == "reachable", 10)
