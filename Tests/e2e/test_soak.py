"""Soak: reachd under steady churn for minutes; its memory and descriptors must stay flat.

Every second, for the whole run, inside reachd's namespace: 100 clients connect and leave (half
ask for /status and close; half follow /events for up to a second and leave), one real network
change (the default route removed or restored), and one scrape of /metrics. Ten long-lived
readers follow /events throughout. reachd's RSS and open descriptors are sampled every second.

"Flat" means, after a warm-up (a quarter of the run, at most 60 s), the highest RSS in the last
third of the remaining samples is at most 1 MiB above the highest in the first third, and the
same for descriptors with a slack of 20 (at any instant about 50 churning clients are
connected, so single samples move by that much); and once the churn stops, the descriptors
come back to what they were before it started.

Duration: 60 s in `make e2e`, 600 s with `REACHD_SCALE=full` (`make soak`);
`REACHD_SOAK_SECONDS` overrides both.
"""

from __future__ import annotations

import asyncio
import random
import socket
import threading
import time

import pytest

import netns
from conftest import SSEClient, get_status, http
from load_report import figure
from load_support import open_descriptors, rss_kib, sized
from status_prober import StatusProber

pytestmark = [pytest.mark.netns, pytest.mark.slow]

CLIENTS_PER_SECOND = 100
READERS = 10
RSS_SLACK_KIB = 1024
DESCRIPTOR_SLACK = 20
SETTLE = 20.0


class Soak:
    def __init__(self, namespace: str, port: int, pid: int, veth, duration: float):
        self.namespace = namespace
        self.port = port
        self.pid = pid
        self.veth = veth
        self.duration = duration
        self.samples: list[tuple[float, int, int]] = []  # (seconds since start, RSS KiB, descriptors)
        self.failures: list[str] = []
        self.clients = {"status": 0, "events": 0}
        self.changes = 0
        self.scrapes = 0
        self.spare_sockets: list[socket.socket] = []

    def fail(self, what: str) -> None:
        if len(self.failures) < 1000:
            self.failures.append(what)

    def new_socket(self) -> socket.socket:
        if not self.spare_sockets:
            self.spare_sockets = netns.sockets_in(self.namespace, CLIENTS_PER_SECOND)
        sock = self.spare_sockets.pop()
        sock.setblocking(False)
        return sock

    async def exchange(self, request: bytes, until, timeout: float = 5.0) -> bytes:
        """Send `request` on a new connection and read until `until(data)` or EOF."""
        loop = asyncio.get_running_loop()
        sock = self.new_socket()
        try:
            await asyncio.wait_for(loop.sock_connect(sock, ("127.0.0.1", self.port)), timeout)
            await loop.sock_sendall(sock, request)
            data = b""
            deadline = loop.time() + timeout
            while not until(data):
                chunk = await asyncio.wait_for(loop.sock_recv(sock, 65536), max(0.01, deadline - loop.time()))
                if not chunk:
                    break
                data += chunk
            return data
        finally:
            sock.close()

    async def status_client(self) -> None:
        data = await self.exchange(b"GET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", lambda d: False)
        if not data.startswith(b"HTTP/1.1 200 ") or b'"sequence"' not in data:
            self.fail(f"/status answered {data[:60]!r}")

    async def events_client(self, stay: float) -> None:
        loop = asyncio.get_running_loop()
        sock = self.new_socket()
        try:
            await asyncio.wait_for(loop.sock_connect(sock, ("127.0.0.1", self.port)), 5)
            await loop.sock_sendall(sock, b"GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
            data = b""
            leave_at = loop.time() + stay
            while b"\nid: " not in data or loop.time() < leave_at:
                remaining = max(0.01, leave_at - loop.time()) if b"\nid: " in data else 5
                try:
                    chunk = await asyncio.wait_for(loop.sock_recv(sock, 65536), remaining)
                except asyncio.TimeoutError:
                    if b"\nid: " not in data:
                        raise
                    break
                if not chunk:
                    break
                data += chunk
            if not data.startswith(b"HTTP/1.1 200 ") or b"\nid: " not in data:
                self.fail(f"/events answered {data[:60]!r}")
        finally:
            sock.close()

    async def guarded(self, coroutine, what: str) -> None:
        try:
            await coroutine
        except (OSError, asyncio.TimeoutError) as error:
            self.fail(f"{what}: {type(error).__name__} {error}")

    async def churn(self, stop_at: float) -> None:
        loop = asyncio.get_running_loop()
        tasks = set()
        rng = random.Random(1)
        started = loop.time()
        for tick in range(int((stop_at - started) * CLIENTS_PER_SECOND)):
            await asyncio.sleep(max(0.0, started + tick / CLIENTS_PER_SECOND - loop.time()))
            if tick % 2:
                self.clients["status"] += 1
                task = asyncio.create_task(self.guarded(self.status_client(), "status client"))
            else:
                self.clients["events"] += 1
                task = asyncio.create_task(self.guarded(self.events_client(rng.uniform(0, 1)), "events client"))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        await asyncio.gather(*tasks)

    async def every_second(self, stop_at: float, action) -> None:
        loop = asyncio.get_running_loop()
        tick = 0
        started = loop.time()
        while loop.time() < stop_at:
            await action(tick)
            tick += 1
            await asyncio.sleep(max(0.0, started + tick - loop.time()))

    async def change(self, tick: int) -> None:
        try:
            await asyncio.to_thread(self.veth.del_default_route if tick % 2 == 0 else self.veth.add_default_route)
            self.changes += 1
        except RuntimeError as error:
            self.fail(f"change {tick}: {error}")

    async def scrape(self, tick: int) -> None:
        data = await self.exchange(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", lambda d: False)
        if not data.startswith(b"HTTP/1.1 200 ") or b"reachd_sse_clients" not in data:
            self.fail(f"/metrics answered {data[:60]!r}")
        self.scrapes += 1

    async def sample(self, tick: int) -> None:
        self.samples.append((float(tick), rss_kib(self.pid), open_descriptors(self.pid)))

    async def run(self) -> None:
        stop_at = asyncio.get_running_loop().time() + self.duration
        await asyncio.gather(
            self.churn(stop_at),
            self.every_second(stop_at, lambda tick: self.guarded(self.change(tick), "change")),
            self.every_second(stop_at, lambda tick: self.guarded(self.scrape(tick), "scrape")),
            self.every_second(stop_at, self.sample),
        )


def follow(client: SSEClient, stop: threading.Event, errors: list[str]) -> None:
    """A long-lived reader: takes every event until told to stop."""
    try:
        while not stop.is_set():
            try:
                client.next_event(timeout=1)
            except TimeoutError:
                pass
    except Exception as error:  # noqa: BLE001 — reported by the test
        errors.append(f"{type(error).__name__}: {error}")


def flat(values: list[int], slack: int) -> tuple[bool, int, int]:
    third = max(1, len(values) // 3)
    first, last = max(values[:third]), max(values[-third:])
    return last <= first + slack, first, last


def series(samples: list[tuple[float, int, int]], column: int, points: int = 12) -> str:
    step = max(1, len(samples) // points)
    return " ".join(f"{int(s[0])}s:{s[column]}" for s in samples[::step])


def test_soak_churn_changes_and_scrapes_leave_rss_and_descriptors_flat(veth, reachd_factory):
    duration = sized("REACHD_SOAK_SECONDS", ci=60, full=600)
    ns = veth.ns.name
    server = reachd_factory(netns=ns)
    pid = server.process.pid
    http(server.port, "GET", "/metrics", ns=ns)
    descriptors_before = open_descriptors(pid)
    rss_before = rss_kib(pid)

    stop = threading.Event()
    reader_errors: list[str] = []
    readers = [SSEClient(server.port, ns=ns) for _ in range(READERS)]
    threads = [threading.Thread(target=follow, args=(r, stop, reader_errors), daemon=True) for r in readers]
    for thread in threads:
        thread.start()
    soak = Soak(ns, server.port, pid, veth, duration)
    try:
        with StatusProber(server.port, namespace=ns, interval=0.25) as prober:
            asyncio.run(soak.run())
        alive = server.process.poll() is None
        veth.add_default_route()
        final_sequence = get_status(server.port, ns=ns)["sequence"]
        time.sleep(1)
    finally:
        stop.set()
        for thread in threads:
            thread.join(5)
        for reader in readers:
            reader.close()
        for sock in soak.spare_sockets:
            sock.close()

    settle_started = time.monotonic()
    descriptors_after = open_descriptors(pid)
    while descriptors_after > descriptors_before and time.monotonic() - settle_started < SETTLE:
        time.sleep(0.5)
        descriptors_after = open_descriptors(pid)

    warm_up = min(60, duration // 4)
    steady = [s for s in soak.samples if s[0] >= warm_up]
    rss_flat, rss_first, rss_last = flat([s[1] for s in steady], RSS_SLACK_KIB)
    fd_flat, fd_first, fd_last = flat([s[2] for s in steady], DESCRIPTOR_SLACK)
    reader_ids = [[e.id for e in r.reader.all_events] for r in readers]
    figure(f"\nsoak {duration} s: {soak.clients} clients, {soak.changes} changes, {soak.scrapes} scrapes, "
          f"{len(soak.failures)} failures")
    figure(f"RSS KiB: before {rss_before}, series {series(soak.samples, 1)}; after warm-up ({warm_up} s) "
          f"first-third max {rss_first}, last-third max {rss_last}")
    figure(f"descriptors: before {descriptors_before}, series {series(soak.samples, 2)}; first-third max {fd_first}, "
          f"last-third max {fd_last}; after the churn {descriptors_after}")
    figure(f"readers: {[len(ids) for ids in reader_ids]} events each, final sequence {final_sequence}")
    figure(prober.result.summary())

    assert alive, f"reachd died\n{server.output()[-3000:]}"
    assert not soak.failures, f"{len(soak.failures)} failures, e.g. {soak.failures[:5]}"
    assert not reader_errors, reader_errors[:3]
    assert soak.changes >= duration - 2 and soak.scrapes >= duration - 2
    for ids in reader_ids:
        assert ids[-1] is not None and int(ids[-1]) >= final_sequence, (ids[-3:], final_sequence)
    assert rss_flat, f"RSS grew: first-third max {rss_first} KiB, last-third max {rss_last} KiB"
    assert fd_flat, f"descriptors grew: first-third max {fd_first}, last-third max {fd_last}"
    assert descriptors_after <= descriptors_before, f"descriptors {descriptors_after} > {descriptors_before} before"
