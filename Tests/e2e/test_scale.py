"""Scale, end to end: thousands of /events streams on the real binary in a namespace.

- Every reading stream gets every one of 20 real network changes (by event id, which must be
  the document's sequence), while 50 clients that never read hold their streams; reachd's RSS
  stays within a stated bound.
- SIGTERM with thousands of streams: every stream ends with the final chunk and a clean EOF,
  reachd exits 0 within 5 s.

Sizes: 10,000 streams both in `make e2e` and with `REACHD_SCALE=full` (`make scale`): the
full size takes about 15 s here, so CI runs it; `REACHD_SCALE_STREAMS` sets another. The streams come from `clients/sse_swarm.c` (one epoll
loop in C: a Python client would be the bottleneck).
"""

from __future__ import annotations

import fcntl
import resource
import signal
import socket
import termios
import time

import pytest

import netns
from conftest import get_status, percentile, raise_nofile
from load_report import figure
from load_support import build_client, open_descriptors, rss_kib, sized
from sse_swarm import Swarm

pytestmark = [pytest.mark.netns, pytest.mark.slow]

CHANGES = 20
STUCK_CLIENTS = 50
# RSS bound: what reachd holds with no client, plus 24 KiB per stream. libmicrohttpd gives each
# connection --connection-memory (24 KiB, of which an idle stream touches about 17: measured with
# 2,000 streams) and the stream's state and one pending frame come on top. Changes add nothing per
# change: a stream (reading or stuck) keeps at most one pending frame.
KIB_PER_STREAM = 24
GROWTH_OVER_CHANGES_KIB = 8 * 1024
SHUTDOWN_LIMIT = 5.0


@pytest.fixture(scope="module")
def swarm_client(tmp_path_factory):
    return build_client("sse_swarm", tmp_path_factory.mktemp("clients"))


def stream_count() -> int:
    return sized("REACHD_SCALE_STREAMS", ci=10_000, full=10_000)


def raise_file_limit(needed: int) -> None:
    raise_nofile(needed)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert soft >= needed, f"{needed} descriptors needed, the hard limit is {hard} (raise it, or set REACHD_SCALE_STREAMS)"


def open_stuck_clients(namespace: str, port: int, count: int) -> list[socket.socket]:
    """Clients that ask for /events and never read: a 1 KiB receive buffer fills at once."""
    sockets = netns.sockets_in(namespace, count)
    for sock in sockets:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        sock.settimeout(5)
        sock.connect(("127.0.0.1", port))
        sock.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    return sockets


def test_every_reading_stream_gets_every_change_beside_clients_that_never_read(veth, reachd_factory, swarm_client,
                                                                              tmp_path):
    count = stream_count()
    raise_file_limit(count + STUCK_CLIENTS + 200)
    ns = veth.ns.name
    server = reachd_factory("--max-connections", str(count + STUCK_CLIENTS + 100), netns=ns)
    pid = server.process.pid
    get_status(server.port, ns=ns)
    rss_idle = rss_kib(pid)

    stuck = open_stuck_clients(ns, server.port, STUCK_CLIENTS)
    swarm = Swarm(swarm_client, ns, server.port, count, tmp_path / "streams.txt")
    try:
        started = time.monotonic()
        opened, failed = swarm.wait("ready", timeout=180)
        connect_seconds = time.monotonic() - started
        assert failed == 0, f"{failed} of {count} streams failed to open"
        rss_streams = rss_kib(pid)
        first_sequence = get_status(server.port, ns=ns)["sequence"]

        change_sequences: list[int] = []
        delivery: list[float] = []
        for change in range(CHANGES):
            down = change % 2 == 0
            expected = "unreachable" if down else "reachable"
            changed_at = time.monotonic()
            (veth.del_default_route if down else veth.add_default_route)()
            deadline = changed_at + 10
            while (doc := get_status(server.port, ns=ns))["state"] != expected:
                assert time.monotonic() < deadline, f"change {change}: /status never said {expected}"
                time.sleep(0.01)
            change_sequences.append(doc["sequence"])
            swarm.wait("seen", lambda values, s=doc["sequence"]: values[0] >= s, timeout=60)
            delivery.append(time.monotonic() - changed_at)
        rss_after = rss_kib(pid)
        descriptors = open_descriptors(pid)
        unread = [int.from_bytes(fcntl.ioctl(sock, termios.FIONREAD, b"\0" * 4), "little") for sock in stuck]
        assert server.process.poll() is None, "reachd died"
    finally:
        records = swarm.quit()
        for sock in stuck:
            sock.close()

    figure(f"\n{count} streams opened in {connect_seconds:.1f} s; {swarm.summary}")
    figure(f"change → every stream: median {percentile(delivery, .5) * 1000:.0f} ms, "
          f"max {max(delivery) * 1000:.0f} ms (20 changes, sequences {change_sequences[0]}..{change_sequences[-1]})")
    per_stream = (rss_streams - rss_idle) / count
    figure(f"RSS: idle {rss_idle / 1024:.1f} MiB, with {count} streams + {STUCK_CLIENTS} stuck "
          f"{rss_streams / 1024:.1f} MiB ({per_stream:.2f} KiB per stream), after {CHANGES} changes "
          f"{rss_after / 1024:.1f} MiB; descriptors {descriptors}; the stuck clients hold "
          f"{min(unread)}..{max(unread)} B unread each")

    problems = [r for r in records if r.end != "open"]
    assert not problems, f"{len(problems)} streams ended early, e.g. {[(r.index, r.end) for r in problems[:5]]}"
    missing = {}
    for record in records:
        lost = [s for s in change_sequences if s not in record.ids]
        if lost:
            missing[record.index] = lost
        assert record.ids[0] >= first_sequence - 1, record.ids[:3]
    assert not missing, (f"{len(missing)} of {count} streams missed changes, e.g. "
                         f"{list(missing.items())[:5]}")
    assert rss_streams - rss_idle <= count * KIB_PER_STREAM, f"{per_stream:.1f} KiB per stream"
    assert rss_after - rss_streams <= GROWTH_OVER_CHANGES_KIB, (
        f"RSS grew {(rss_after - rss_streams) / 1024:.1f} MiB over {CHANGES} changes")


def test_sigterm_with_thousands_of_streams_ends_each_with_its_final_chunk(bare_namespace, reachd_factory,
                                                                         swarm_client, tmp_path):
    count = stream_count()
    raise_file_limit(count + 200)
    ns = bare_namespace.name
    server = reachd_factory("--max-connections", str(count + 100), netns=ns)
    swarm = Swarm(swarm_client, ns, server.port, count, tmp_path / "streams.txt")
    try:
        opened, failed = swarm.wait("ready", timeout=180)
        assert failed == 0, f"{failed} of {count} streams failed to open"
        signalled = time.monotonic()
        signalled_ns = time.monotonic_ns()
        server.process.send_signal(signal.SIGTERM)
        try:
            code = server.process.wait(timeout=SHUTDOWN_LIMIT + 10)
        except Exception:
            code = None
        exited = time.monotonic() - signalled
        swarm.wait("ended", timeout=10)
    finally:
        records = swarm.quit()

    ends = {}
    for record in records:
        ends[record.end] = ends.get(record.end, 0) + 1
    last_end = max(r.ended_ns for r in records) - signalled_ns
    figure(f"\nSIGTERM with {count} streams: exit {code} after {exited:.2f} s; last stream ended "
          f"{last_end / 1e9:.2f} s after the signal; endings {ends}; {swarm.summary}")
    assert code == 0, server.output()[-3000:]
    assert exited <= SHUTDOWN_LIMIT, f"exit took {exited:.2f} s"
    assert ends == {"clean": count}, f"not every stream ended with its final chunk: {ends}"
