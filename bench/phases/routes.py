"""Phase `routes`: change latency and RSS with 1k / 10k / 100k routes in the table, since every
link change makes reachd read routes again.
"""

from __future__ import annotations

import os
import socket
import time

import nsutil
from common import log, summary
from nsutil import VethNet
from servers import PORT, Reachd


def add_routes(net: VethNet, count: int, workdir: str) -> None:
    """`count` /32 routes via the gateway in the main table (10.0.0.0/8: no packet is ever sent),
    as a BGP-fed host has: added in one `ip -batch` so set-up takes seconds, not minutes."""
    path = os.path.join(workdir, f"routes-{count}.txt")
    with open(path, "w") as batch:
        for i in range(count):
            batch.write(f"route add 10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}/32 via {net.subnet}.1\n")
    net.ns.ip("-batch", path)
    os.unlink(path)


def phase_routes(ctx: dict, cfg: dict) -> dict:
    """Event latency and RSS with 1k/10k/100k routes: every link change makes reachd re-read the
    routes (the kernel flushes IPv4 routes of a downed link silently), so this is the cost of one
    change on a host with a big routing table."""
    results = {}
    for count in cfg["route_counts"]:
        net = VethNet()
        server = sse = rt = None
        try:
            add_routes(net, count, ctx["workdir"])
            server = Reachd(ctx["reachd"], net.ns, ctx["workdir"], heartbeat=3600)
            server.wait_ready(timeout=60)
            with nsutil.inside(net.ns):
                sse = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sse.settimeout(10)
            sse.connect(("127.0.0.1", PORT))
            sse.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            buf = b""
            while b"\n\n" not in buf.partition(b"data:")[2]:
                buf += sse.recv(65536)
            rt = nsutil.Rtnl(net.ns)
            time.sleep(1.0)
            rss_before = nsutil.status_kib(server.pid)
            samples = []
            extra = f"{net.subnet}.3"
            for k in range(cfg["route_flaps"]):
                # A second address added, then removed: each is one document change, and each makes
                # reachd re-read the routes (the kernel drops routes with an address silently).
                for add in (True, False):
                    t_start = time.monotonic_ns()
                    rt.addr(add, net.index, extra, 24)
                    got = None
                    deadline = time.monotonic() + 10
                    pending = b""
                    while got is None and time.monotonic() < deadline:
                        pending += sse.recv(1 << 20)
                        frames = pending.split(b"\n\n")
                        pending = frames.pop()
                        for frame in frames:
                            if b"data:" in frame and ((extra + "/24").encode() in frame) == add:
                                got = time.monotonic_ns()
                    if got is not None:
                        samples.append((got - t_start) / 1e6)
                    time.sleep(0.05)
            rss_after = nsutil.status_kib(server.pid)
            hwm = nsutil.status_kib(server.pid, "VmHWM")
            results[str(count)] = {"routes": count, "event_ms": summary(samples), "missing": 2 * cfg["route_flaps"] - len(samples),
                                   "rss_kib": rss_after, "rss_before_kib": rss_before, "hwm_kib": hwm}
            log(f"routes {count}: event p50 {results[str(count)]['event_ms'].get('p50')} ms, "
                f"p99 {results[str(count)]['event_ms'].get('p99')} ms, RSS {rss_after} KiB (peak {hwm})")
        finally:
            if rt:
                rt.close()
            if sse:
                sse.close()
            if server:
                server.stop()
            net.destroy()
    return results
