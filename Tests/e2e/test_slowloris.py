"""1,000 slowloris connections: request heads that never end, one byte at a time.

Half of them send a byte every 1.5 s: under reachd's rule for a new connection (two seconds of
silence before the first request is complete closes it; every byte restarts the clock), so they
are held open for the whole run. The other half send a byte every 4 s: each is closed after two
seconds of silence and reconnects at once, as an attacker would. Throughout, another process
times `GET /status` on fresh connections: each answer within 200 ms (less any moment the machine
kept every process of reachd's priority off the CPU: see `status_prober.py`).

Duration: 20 s in `make e2e`, 120 s with `REACHD_SCALE=full` (`make scale`);
`REACHD_SLOWLORIS_SECONDS` overrides both.
"""

from __future__ import annotations

import heapq
import selectors
import socket
import time

import pytest

from conftest import http, raise_nofile
from load_report import figure
from load_support import open_descriptors, sized
from status_prober import StatusProber

pytestmark = pytest.mark.slow

CONNECTIONS = 1000
STEADY_INTERVAL = 1.5  # seconds between bytes, under the 2 s rule
SPARSE_INTERVAL = 4.0  # over it
STATUS_LIMIT = 0.200
HEAD = b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000  # never completed


class Loris:
    def __init__(self, slot: int, interval: float):
        self.slot = slot
        self.interval = interval
        self.sock: socket.socket | None = None
        self.sent = 0
        self.connection = 0
        self.last_byte_at = 0.0
        self.closed_by_server = 0
        self.silences_before_close: list[float] = []


def test_slowloris_connections_do_not_slow_status(reachd_factory):
    raise_nofile()
    duration = sized("REACHD_SLOWLORIS_SECONDS", ci=20, full=120)
    server = reachd_factory("--max-connections", str(CONNECTIONS + 200))
    selector = selectors.DefaultSelector()
    lorises = [Loris(slot, STEADY_INTERVAL if slot % 2 == 0 else SPARSE_INTERVAL) for slot in range(CONNECTIONS)]
    due: list[tuple[float, int, int]] = []  # (when, slot, connection number): the next byte

    def open_connection(loris: Loris, first_byte_at: float) -> None:
        loris.sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        loris.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        loris.sock.setblocking(False)
        loris.sent = 0
        loris.connection += 1
        loris.last_byte_at = time.monotonic()
        selector.register(loris.sock, selectors.EVENT_READ, loris)
        heapq.heappush(due, (first_byte_at, loris.slot, loris.connection))

    started = time.monotonic()
    peak_descriptors = 0
    descriptors_read_at = 0.0
    try:
        for index, loris in enumerate(lorises):
            # Spread the first bytes so the sends do not come in waves, but within 1.5 s of the
            # connect: the 2 s rule counts from there.
            open_connection(loris, started + STEADY_INTERVAL * index / CONNECTIONS)
        with StatusProber(server.port) as prober:
            while (now := time.monotonic()) - started < duration:
                timeout = max(0.0, min(due[0][0] - now, 0.05)) if due else 0.05
                for key, _ in selector.select(timeout):
                    loris = key.data
                    try:
                        data = loris.sock.recv(4096)
                    except (ConnectionResetError, BlockingIOError):
                        data = b""
                    assert not data, f"slot {loris.slot} was answered: {data[:80]!r}"
                    now = time.monotonic()
                    loris.closed_by_server += 1
                    loris.silences_before_close.append(now - loris.last_byte_at)
                    selector.unregister(loris.sock)
                    loris.sock.close()
                    open_connection(loris, now)
                now = time.monotonic()
                while due and due[0][0] <= now:
                    _, slot, connection = heapq.heappop(due)
                    loris = lorises[slot]
                    if connection != loris.connection or loris.sent >= len(HEAD):
                        continue  # that connection was closed and replaced
                    loris.sock.send(HEAD[loris.sent:loris.sent + 1])
                    loris.sent += 1
                    loris.last_byte_at = now
                    heapq.heappush(due, (now + loris.interval, slot, connection))
                if now - descriptors_read_at > 0.5:
                    descriptors_read_at = now
                    peak_descriptors = max(peak_descriptors, open_descriptors(server.process.pid))
        probes = prober.result
        assert server.process.poll() is None, "reachd died"
        final = http(server.port, "GET", "/status")
    finally:
        for loris in lorises:
            if loris.sock:
                loris.sock.close()
        selector.close()

    steady = [loris for loris in lorises if loris.interval == STEADY_INTERVAL]
    sparse = [loris for loris in lorises if loris.interval == SPARSE_INTERVAL]
    silences = sorted(s for loris in sparse for s in loris.silences_before_close)
    figure(f"\n{CONNECTIONS} slowloris connections for {duration} s; reachd descriptors peaked at {peak_descriptors}")
    figure(f"steady (1 byte/{STEADY_INTERVAL} s): {sum(l.closed_by_server for l in steady)} closed by reachd; "
          f"sparse (1 byte/{SPARSE_INTERVAL} s): {len(silences)} closed after "
          f"{silences[0] if silences else float('nan'):.2f}..{silences[-1] if silences else float('nan'):.2f} s "
          f"of silence")
    figure(probes.summary())
    assert final.status == 200
    assert not probes.failures, probes.failures[:5]
    assert probes.worst_own <= STATUS_LIMIT, probes.summary()
    assert sum(loris.closed_by_server for loris in steady) == 0, "a slow but steady sender was cut off"
    assert all(loris.closed_by_server >= 1 for loris in sparse) or duration < 2 * SPARSE_INTERVAL
    assert silences and silences[0] >= 1.5 and silences[-1] <= 3.9, (silences[:3], silences[-3:])
