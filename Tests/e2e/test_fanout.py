"""Fan-out: one change reaches 1000 SSE subscribers; clients that never read slow no one down."""

from __future__ import annotations

import errno
import fcntl
import json
import selectors
import socket
import subprocess
import termios
import time

import pytest

import netns
from conftest import SSEReader, SSEClient, get_status, percentile, raise_nofile

pytestmark = pytest.mark.netns


class Client:
    def __init__(self, sock: socket.socket, reads: bool):
        self.sock = sock
        self.reads = reads
        self.reader = SSEReader()
        self.sent = False
        self.error: str | None = None
        self.started = time.monotonic()

    def events_matching(self, predicate, after: int = 0):
        return [e for e in self.reader.all_events[after:] if e.event == "status" and predicate(e.doc)]


class Swarm:
    """Many SSE clients on non-blocking sockets inside a namespace, driven by one selector."""

    def __init__(self, ns: str, port: int, count: int, reads: bool = True, rcvbuf: int | None = None,
                 path: str = "/events"):
        self.selector = selectors.DefaultSelector()
        self.clients: list[Client] = []
        self.request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode()
        for sock in netns.sockets_in(ns, count):
            if rcvbuf:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            sock.setblocking(False)
            client = Client(sock, reads)
            self.clients.append(client)
            code = sock.connect_ex(("127.0.0.1", port))
            if code not in (0, errno.EINPROGRESS):
                client.error = f"connect: {errno.errorcode.get(code, code)}"
                continue
            self.selector.register(sock, selectors.EVENT_WRITE, client)

    def pump(self, until, timeout: float) -> bool:
        """Process I/O until `until()` is true; False if the deadline passed first."""
        deadline = time.monotonic() + timeout
        while not until():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            for key, mask in self.selector.select(min(remaining, 0.2)):
                self._handle(key.data, mask)
        return True

    def _handle(self, client: Client, mask: int) -> None:
        sock = client.sock
        if not client.sent and mask & selectors.EVENT_WRITE:
            code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                client.error = f"connect: {errno.errorcode.get(code, code)}"
                self.selector.unregister(sock)
                return
            sock.send(self.request)
            client.sent = True
            if client.reads:
                self.selector.modify(sock, selectors.EVENT_READ, client)
            else:
                self.selector.unregister(sock)
            return
        if mask & selectors.EVENT_READ:
            try:
                data = sock.recv(262144)
            except ConnectionResetError:
                client.error = "reset"
                self.selector.unregister(sock)
                return
            except BlockingIOError:
                return
            if not data:
                client.error = client.error or "eof"
                self.selector.unregister(sock)
                return
            client.reader.feed(data)

    def close(self) -> None:
        for client in self.clients:
            try:
                self.selector.unregister(client.sock)
            except (KeyError, ValueError):
                pass
            client.sock.close()
        self.selector.close()


def summary(values: list[float]) -> str:
    return (f"median {percentile(values, .5) * 1000:.1f} ms, p99 {percentile(values, .99) * 1000:.1f} ms, "
            f"worst {max(values) * 1000:.1f} ms")


@pytest.mark.slow
def test_1000_subscribers_all_receive_a_change(veth, reachd_factory):
    raise_nofile()
    server = reachd_factory(netns=veth.ns.name)
    swarm = Swarm(veth.ns.name, server.port, 1000)
    try:
        connected = swarm.pump(lambda: all(c.reader.all_events or c.error for c in swarm.clients), timeout=60)
        errors = [c.error for c in swarm.clients if c.error]
        assert not errors, f"{len(errors)} clients failed: {sorted(set(errors))}"
        assert connected, f"{sum(1 for c in swarm.clients if not c.reader.all_events)} clients got no first event"
        firsts = [c.reader.all_events[0] for c in swarm.clients]
        assert all(c.reader.response.status == 200 for c in swarm.clients)
        assert all(e.doc["state"] == "reachable" for e in firsts)
        assert len({e.doc["sequence"] for e in firsts}) == 1, "subscribers disagree on the current document"
        print(f"\n1000 subscribers: first event after connect: "
              f"{summary([e.received_at - c.started for c, e in zip(swarm.clients, firsts)])}")

        for change, predicate, action in (
            ("unreachable", lambda d: d["state"] == "unreachable", veth.del_default_route),
            ("reachable", lambda d: d["state"] == "reachable", veth.add_default_route),
        ):
            marks = [len(c.reader.all_events) for c in swarm.clients]
            action()
            changed = time.monotonic()
            done = swarm.pump(
                lambda: all(c.events_matching(predicate, m) or c.error for c, m in zip(swarm.clients, marks)),
                timeout=30)
            errors = [c.error for c in swarm.clients if c.error]
            missing = sum(1 for c, m in zip(swarm.clients, marks) if not c.events_matching(predicate, m))
            assert not errors, f"{len(errors)} clients lost their stream: {sorted(set(errors))}"
            assert done and missing == 0, f"{missing} of 1000 subscribers never saw the {change} event"
            latencies = [c.events_matching(predicate, m)[0].received_at - changed
                         for c, m in zip(swarm.clients, marks)]
            sequences = {c.events_matching(predicate, m)[0].doc["sequence"] for c, m in zip(swarm.clients, marks)}
            print(f"{change} event at 1000 subscribers: {summary(latencies)}; sequences {sorted(sequences)}")
            assert max(latencies) < 10
        assert server.process.poll() is None
    finally:
        swarm.close()
    assert get_status(server.port, ns=veth.ns.name)["state"] == "reachable"


@pytest.mark.slow
def test_clients_that_never_read_do_not_slow_readers(veth, reachd_factory):
    raise_nofile()
    # A large document (150 extra addresses) so the non-readers' buffers fill quickly.
    subnet = f"198.19.{veth.ns.number % 250}"
    commands = "".join(f"addr add {subnet}.{i}/32 dev {veth.link}\n" for i in range(1, 151))
    veth.ns.exec("ip", "-batch", "-", input=commands.encode(), check=True, capture_output=True)
    server = reachd_factory("--heartbeat", "0.05", netns=veth.ns.name)
    with SSEClient(server.port, ns=veth.ns.name) as probe:
        document_size = len(probe.next_event(timeout=2).data)

    stuck = Swarm(veth.ns.name, server.port, 50, reads=False, rcvbuf=1024)
    readers = Swarm(veth.ns.name, server.port, 20)
    try:
        assert readers.pump(lambda: all(c.reader.all_events or c.error for c in readers.clients), timeout=10)
        assert stuck.pump(lambda: all(c.sent or c.error for c in stuck.clients), timeout=10)
        assert not [c.error for c in readers.clients + stuck.clients if c.error]

        worst_per_change: list[float] = []
        all_latencies: list[float] = []
        for round_number in range(40):
            remove = round_number % 2 == 0
            state = "unreachable" if remove else "reachable"
            predicate = (lambda d, s=state: d["state"] == s)
            marks = [len(c.reader.all_events) for c in readers.clients]
            (veth.del_default_route if remove else veth.add_default_route)()
            changed = time.monotonic()
            done = readers.pump(
                lambda: all(c.events_matching(predicate, m) or c.error for c, m in zip(readers.clients, marks)),
                timeout=10)
            assert not [c.error for c in readers.clients if c.error]
            assert done, f"change {round_number} ({state}) did not reach every reader within 10 s"
            latencies = [c.events_matching(predicate, m)[0].received_at - changed
                         for c, m in zip(readers.clients, marks)]
            all_latencies += latencies
            worst_per_change.append(max(latencies))
            # Keep the stuck clients' pipes full: heartbeats keep coming meanwhile.
            readers.pump(lambda: False, timeout=0.05)

        queued = []
        for client in stuck.clients:
            queued.append(int.from_bytes(fcntl.ioctl(client.sock, termios.FIONREAD, b"\0" * 4), "little"))
        print(f"\ndocument {document_size} B; 50 non-readers hold {min(queued)}..{max(queued)} B unread each")
        print(f"20 readers, 40 changes: {summary(all_latencies)}")
        assert max(worst_per_change) < 2.0, worst_per_change
        assert percentile(all_latencies, .5) < 0.5

        # A newcomer still gets the present at once.
        with SSEClient(server.port, ns=veth.ns.name) as late:
            started = time.monotonic()
            event = late.next_event(timeout=2)
            assert event.received_at - started < 1.0
        assert server.process.poll() is None
    finally:
        stuck.close()
        readers.close()


def send_queues(ns: str, port: int) -> list[int]:
    """Bytes the kernel holds unsent on each of the server's established connections (`ss`)."""
    output = subprocess.run(["ip", "netns", "exec", ns, "ss", "-tnH", "state", "established", f"sport = :{port}"],
                            capture_output=True, text=True, check=True).stdout
    return [int(line.split()[1]) for line in output.splitlines() if line.strip()]


@pytest.mark.slow
def test_a_client_that_never_reads_costs_the_kernel_a_bounded_send_queue(veth, reachd_factory):
    # A 3 KB document (150 extra addresses), and 60 changes of it: 190 KB per stream if the kernel
    # queues every event, as it did while the send buffer was left to autotuning (which allows up to
    # tcp_wmem's 4 MiB per stream). reachd's fixed send buffer stops it at about 12 KB; beyond
    # that reachd keeps only the newest frame itself.
    subnet = f"198.19.{veth.ns.number % 250}"
    commands = "".join(f"addr add {subnet}.{i}/32 dev {veth.link}\n" for i in range(1, 151))
    veth.ns.exec("ip", "-batch", "-", input=commands.encode(), check=True, capture_output=True)
    server = reachd_factory(netns=veth.ns.name)
    first = get_status(server.port, ns=veth.ns.name)
    stuck = Swarm(veth.ns.name, server.port, 5, reads=False, rcvbuf=1024)
    try:
        assert stuck.pump(lambda: all(c.sent or c.error for c in stuck.clients), timeout=10)
        assert not [c.error for c in stuck.clients if c.error]
        for round_number in range(60):
            (veth.del_default_route if round_number % 2 == 0 else veth.add_default_route)()
            time.sleep(0.02)
        time.sleep(0.5)
        last = get_status(server.port, ns=veth.ns.name)
        changes = last["sequence"] - first["sequence"]
        queued = send_queues(veth.ns.name, server.port)
        print(f"\n{changes} changes of a {len(json.dumps(last))} B document; send queues {sorted(queued)} B")
        assert changes >= 40, "too few changes to fill an unbounded send queue"
        assert len(queued) >= 5
        assert max(queued) <= 64 * 1024, f"the kernel holds {max(queued)} B for a client that never reads"
        assert server.process.poll() is None
    finally:
        stuck.close()
