"""Phase `memory`: RSS per idle stream for each connection pool size, and the request-head limit
each pool gives — a stream's memory is libmicrohttpd's pool.
"""

from __future__ import annotations

import time

import nsutil
from common import log
from nsutil import Namespace, VethNet
from servers import PORT, Reachd, http_request
from sse_clients import spawn_clients, stop_clients, wait_clients_ready


def largest_accepted_head(ns: Namespace, port: int, many: bool) -> int:
    """The longest request head (bytes) a `GET /status` may have and still get 200, by bisection:
    one long header, or (`many`) many 40-byte headers, which also spend the pool on header records."""
    def headers(size: int) -> dict[str, str]:
        if not many:
            return {"X-Pad": "a" * size}
        return {f"X-H{i:04}": "b" * 31 for i in range(size)}

    def accepted(size: int) -> bool:
        try:
            status, _, _ = http_request(ns, port, "GET", "/status", headers=headers(size), timeout=3)
            return status == 200
        except (OSError, ValueError, IndexError):
            return False  # closed without an answer, or an answer that is not HTTP: refused

    low, high = 0, (1 << 12 if many else 1 << 17)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if accepted(middle) else (low, middle)
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers(low).items())
    return len(f"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{extra}\r\n")


def phase_memory(ctx: dict, cfg: dict) -> dict:
    """Memory per idle stream for each connection pool size (`--connection-memory`), next to the
    request-head limit that pool size gives: libmicrohttpd keeps a connection's whole pool for the
    life of the connection, and the pool bounds the request head."""
    rows = []
    n = cfg["memory_streams"]
    for pool in cfg["memory_pools"]:
        net = VethNet()
        server = None
        clients: list[dict] = []
        try:
            server = Reachd(ctx["reachd"], net.ns, ctx["workdir"], heartbeat=3600, max_connections=n + 100,
                            extra=["--connection-memory", str(pool)])
            server.wait_ready()
            head = largest_accepted_head(net.ns, PORT, many=False)
            head_many = largest_accepted_head(net.ns, PORT, many=True)
            time.sleep(0.5)
            rss0 = nsutil.status_kib(server.pid)
            clients = spawn_clients(ctx, net.ns, n, 1, f"memory-{pool}", max_seconds=120)
            ok, failed = wait_clients_ready(clients, {}, timeout=60)
            time.sleep(1.0)
            rss1 = nsutil.status_kib(server.pid)
            row = {"pool": pool, "streams": ok, "failed": failed, "kib_per_stream": (rss1 - rss0) / ok if ok else None,
                   "largest_head_bytes": head, "largest_head_many_headers_bytes": head_many}
            log(f"memory: pool {pool} B → {row['kib_per_stream']:.2f} KiB per idle stream ({ok} streams), "
                f"largest request head {head} B (one long header), {head_many} B (40-byte headers)")
            rows.append(row)
        finally:
            stop_clients(clients)
            if server:
                server.stop()
            net.destroy()
    return {"rows": rows}
