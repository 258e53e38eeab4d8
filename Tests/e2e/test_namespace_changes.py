"""Real network changes inside throw-away namespaces reach /status, /events and /readyz."""

from __future__ import annotations

import queue
import threading
import time

import pytest

from conftest import (
    SSEClient,
    check_status_document,
    get_status,
    http,
    interface_named,
    percentile,
)

pytestmark = pytest.mark.netns

EVENT_TIMEOUT = 5.0
CARRIER_TIMEOUT = 10.0


def reachable(doc: dict) -> bool:
    return doc["state"] == "reachable"


def unreachable(doc: dict) -> bool:
    return doc["state"] == "unreachable"


def readyz(server, ns) -> int:
    return http(server.port, "GET", "/readyz", ns=ns.name).status


def test_seeded_state_in_namespace(veth, reachd_factory):
    server = reachd_factory(netns=veth.ns.name)
    doc = get_status(server.port, ns=veth.ns.name)
    check_status_document(doc)
    assert doc["state"] == "reachable", doc
    assert doc["ipv4"] is True and doc["ipv6"] is False, doc
    assert doc["transport"] == {"wifi": False, "cellular": False, "ethernet": True, "other": False}, doc
    assert doc["isDataMetered"] is False
    interface = interface_named(doc, veth.link)
    assert interface is not None, doc["interfaces"]
    assert interface["kind"] == "veth", interface
    assert interface["transport"] == "ethernet", interface
    assert interface["operState"] == "up", interface
    assert interface["isDefaultRoute"] is True, interface
    assert veth.address in interface["addresses"], interface
    assert readyz(server, veth.ns) == 200
    lo = interface_named(doc, "lo")
    if lo is not None:
        assert lo["isDefaultRoute"] is False


def test_bare_namespace_is_unreachable_not_unknown(bare_namespace, reachd_factory):
    server = reachd_factory(netns=bare_namespace.name)
    doc = get_status(server.port, ns=bare_namespace.name)
    assert doc["state"] == "unreachable", doc
    assert doc["ipv4"] is False and doc["ipv6"] is False
    assert not any(doc["transport"].values()), doc["transport"]
    ready = http(server.port, "GET", "/readyz", ns=bare_namespace.name)
    assert ready.status == 503 and ready.json()["status"] == "fail", ready.body
    live = http(server.port, "GET", "/livez", ns=bare_namespace.name)
    assert live.status == 200 and live.json()["status"] == "pass"


def test_ready_when_always(bare_namespace, reachd_factory):
    server = reachd_factory("--ready-when", "always", netns=bare_namespace.name)
    assert get_status(server.port, ns=bare_namespace.name)["state"] == "unreachable"
    ready = http(server.port, "GET", "/readyz", ns=bare_namespace.name)
    assert ready.status == 200 and ready.json()["status"] == "pass", ready.body


def test_ready_when_from_environment(bare_namespace, reachd_factory):
    server = reachd_factory(netns=bare_namespace.name, env={"REACHD_READY_WHEN": "always"})
    assert http(server.port, "GET", "/readyz", ns=bare_namespace.name).status == 200


def test_metered_interfaces(veth, reachd_factory):
    server = reachd_factory("--metered-interfaces", "nomatch*,e2e*", netns=veth.ns.name)
    doc = get_status(server.port, ns=veth.ns.name)
    assert doc["state"] == "reachable"
    assert doc["isDataMetered"] is True, doc


def test_metered_interfaces_no_match(veth, reachd_factory):
    server = reachd_factory("--metered-interfaces", "wwan*", netns=veth.ns.name)
    assert get_status(server.port, ns=veth.ns.name)["isDataMetered"] is False


def test_link_down_and_up(veth, reachd_factory):
    server = reachd_factory(netns=veth.ns.name)
    with SSEClient(server.port, ns=veth.ns.name) as client:
        first = client.next_event(timeout=1)
        assert reachable(first.doc), first.doc
        assert readyz(server, veth.ns) == 200

        veth.link_down()
        down = client.wait_for(unreachable, timeout=EVENT_TIMEOUT)
        assert int(down.id) == down.doc["sequence"] > first.doc["sequence"]
        assert down.doc["ipv4"] is False and not any(down.doc["transport"].values()), down.doc
        assert readyz(server, veth.ns) == 503
        ready_body = http(server.port, "GET", "/readyz", ns=veth.ns.name).json()
        assert ready_body["status"] == "fail"

        # `ip link set down` flushed the IPv4 routes through the link: restore the default route.
        veth.link_up()
        veth.add_default_route()
        up = client.wait_for(reachable, timeout=CARRIER_TIMEOUT)
        assert up.doc["sequence"] > down.doc["sequence"]
        assert up.doc["transport"]["ethernet"] is True
        assert readyz(server, veth.ns) == 200

        ids = [int(e.id) for e in client.reader.all_events]
        assert ids == sorted(set(ids)), f"event ids not strictly increasing: {ids}"
        for event in client.reader.all_events:
            assert event.event == "status"
            assert int(event.id) == event.doc["sequence"]
            check_status_document(event.doc)

    # Quiet now: /status is the last document the stream delivered, or newer.
    status = get_status(server.port, ns=veth.ns.name)
    assert status["state"] == "reachable"
    assert status["sequence"] >= up.doc["sequence"]


def test_carrier_loss_from_peer(veth, reachd_factory):
    """The peer end goes down: carrier lost, routes stay; carrier back → reachable again."""
    server = reachd_factory(netns=veth.ns.name)
    with SSEClient(server.port, ns=veth.ns.name) as client:
        assert reachable(client.next_event(timeout=1).doc)
        veth.peer.ip("link", "set", veth.peer_link, "down")
        down = client.wait_for(unreachable, timeout=EVENT_TIMEOUT)
        interface = interface_named(down.doc, veth.link)
        assert interface is not None and interface["operState"] != "up", interface
        assert readyz(server, veth.ns) == 503
        veth.peer.ip("link", "set", veth.peer_link, "up")
        up = client.wait_for(reachable, timeout=CARRIER_TIMEOUT)
        assert interface_named(up.doc, veth.link)["operState"] == "up"
        assert readyz(server, veth.ns) == 200


def test_default_route_deleted_and_restored(veth, reachd_factory):
    server = reachd_factory(netns=veth.ns.name)
    with SSEClient(server.port, ns=veth.ns.name) as client:
        assert reachable(client.next_event(timeout=1).doc)
        veth.del_default_route()
        gone = client.wait_for(unreachable, timeout=EVENT_TIMEOUT)
        assert interface_named(gone.doc, veth.link)["isDefaultRoute"] is False, gone.doc
        assert readyz(server, veth.ns) == 503
        veth.add_default_route()
        back = client.wait_for(reachable, timeout=EVENT_TIMEOUT)
        assert interface_named(back.doc, veth.link)["isDefaultRoute"] is True
        assert readyz(server, veth.ns) == 200


def test_unreachable_route_type(veth, reachd_factory):
    """The kernel's answer counts, not the presence of a default route: `unreachable default`."""
    server = reachd_factory(netns=veth.ns.name)
    with SSEClient(server.port, ns=veth.ns.name) as client:
        assert reachable(client.next_event(timeout=1).doc)
        veth.del_default_route()
        client.wait_for(unreachable, timeout=EVENT_TIMEOUT)
        veth.ns.ip("route", "add", "unreachable", "default")
        veth.ns.ip("route", "add", "default", "via", veth.gateway, "dev", veth.link, "table", "100")
        veth.ns.ip("rule", "add", "pref", "100", "lookup", "100")
        client.wait_for(reachable, timeout=EVENT_TIMEOUT)
        veth.ns.ip("rule", "del", "pref", "100")
        client.wait_for(unreachable, timeout=EVENT_TIMEOUT)


def test_burst_is_coalesced(veth, reachd_factory):
    """50 address changes in one `ip -batch` yield far fewer events than messages."""
    server = reachd_factory(netns=veth.ns.name)
    with SSEClient(server.port, ns=veth.ns.name) as client:
        first = client.next_event(timeout=1)
        commands = "".join(f"addr add 198.19.{veth.ns.number % 250}.{i}/32 dev {veth.link}\n" for i in range(1, 51))
        veth.ns.exec("ip", "-batch", "-", input=commands.encode(), check=True, capture_output=True)
        last = client.wait_for(
            lambda d: len(interface_named(d, veth.link)["addresses"]) >= 51, timeout=EVENT_TIMEOUT)
        events = [e for e in client.reader.all_events if e is not first]
        print(f"50 address additions → {len(events)} events")
        assert len(events) < 50
        # Every delivered event is a new sequence; a frame may be replaced, never duplicated.
        assert last.doc["sequence"] - first.doc["sequence"] >= len(events)


class EventPump:
    """Reads an SSEClient on a thread so every event is timestamped when it arrives."""

    def __init__(self, client: SSEClient):
        self.client = client
        self.queue: queue.Queue = queue.Queue()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopping.is_set():
            try:
                self.queue.put(self.client.next_event(timeout=0.2))
            except TimeoutError:
                continue
            except Exception as error:  # noqa: BLE001 - handed to the test
                self.queue.put(error)
                return

    def wait_for(self, predicate, timeout: float):
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no matching event within {timeout}s")
            try:
                item = self.queue.get(timeout=remaining)
            except queue.Empty:
                continue
            if isinstance(item, Exception):
                raise item
            if item.event == "status" and predicate(item.doc):
                return item

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=2)


@pytest.mark.slow
def test_flap_latency_100(veth, reachd_factory):
    """100 × (link down → unreachable event, link up → reachable event), timed at the client.

    Latency is measured from the moment `ip link set down` returned (negative: the event was
    already at the client before `ip` exited) and, as an upper bound, from just before it started.
    """
    server = reachd_factory(netns=veth.ns.name)
    after_return: list[float] = []
    from_start: list[float] = []
    up_latencies: list[float] = []
    with SSEClient(server.port, ns=veth.ns.name) as client:
        assert reachable(client.next_event(timeout=1).doc)
        pump = EventPump(client)
        try:
            for _ in range(100):
                started = time.monotonic()
                veth.link_down()
                returned = time.monotonic()
                event = pump.wait_for(unreachable, timeout=EVENT_TIMEOUT)
                after_return.append(event.received_at - returned)
                from_start.append(event.received_at - started)

                veth.link_up()
                veth.add_default_route()
                returned = time.monotonic()
                event = pump.wait_for(reachable, timeout=CARRIER_TIMEOUT)
                up_latencies.append(event.received_at - returned)
        finally:
            pump.stop()
    ms = lambda v: f"{v * 1000:.2f} ms"  # noqa: E731
    median, worst = percentile(after_return, .5), max(after_return)
    print(f"\nflap: `ip link set down` returned → unreachable event at client, n=100: "
          f"median {ms(median)}, p90 {ms(percentile(after_return, .9))}, worst {ms(worst)}")
    print(f"flap: `ip link set down` started → event: median {ms(percentile(from_start, .5))}, "
          f"worst {ms(max(from_start))}")
    print(f"link up + route returned → reachable event (carrier included): "
          f"median {ms(percentile(up_latencies, .5))}, worst {ms(max(up_latencies))}")
    assert server.process.poll() is None
    assert worst < 1.0, f"worst down latency {worst:.3f}s"
    assert median < 0.1, f"median down latency {median:.3f}s"
