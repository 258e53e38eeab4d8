"""Phase `idle`: CPU and wake-ups with 1,000 idle streams, so a quiet host stays quiet.
"""

from __future__ import annotations

import time

import nsutil
from common import Budget, log
from cpu_readings import thread_deltas
from nsutil import VethNet
from servers import Reachd
from sse_clients import finish_clients, spawn_clients, stop_clients, wait_clients_ready


def idle_window(ctx: dict, heartbeat: float, clients_n: int, seconds: float, label: str) -> dict:
    net = VethNet()
    server = None
    clients: list[dict] = []
    buffers: dict = {}
    try:
        server = Reachd(ctx["reachd"], net.ns, ctx["workdir"], heartbeat=heartbeat)
        server.wait_ready()
        clients = spawn_clients(ctx, net.ns, clients_n, 1, f"idle-{label}", max_seconds=seconds + 120)
        ok, failed = wait_clients_ready(clients, buffers, timeout=60)
        time.sleep(2)
        before = nsutil.threads(server.pid)
        client_cpu0 = nsutil.cpu_ns(clients[0]["proc"].pid)
        t0 = time.monotonic()
        time.sleep(seconds)
        wall = time.monotonic() - t0
        after = nsutil.threads(server.pid)
        client_cpu = (nsutil.cpu_ns(clients[0]["proc"].pid) - client_cpu0) / 1e9
        per_thread = thread_deltas(before, after)
        cpu_s = sum(t["cpu_ms"] for t in per_thread.values()) / 1e3
        wakeups = sum(t["wakeups"] for t in per_thread.values())
        summaries = finish_clients(clients, buffers)
        heartbeats = sum(int(s.get("heartbeats", 0)) for s in summaries)
        events = sum(int(s.get("events", 0)) for s in summaries)
        result = {
            "heartbeat_s": heartbeat, "clients_ok": ok, "clients_failed": failed, "seconds": wall,
            "cpu_s": cpu_s, "cpu_pct_of_core": 100 * cpu_s / wall, "wakeups": wakeups,
            "wakeups_per_s": wakeups / wall, "threads_total": len(after), "threads_active": per_thread,
            "heartbeats_received": heartbeats, "events_received": events, "client_cpu_s": client_cpu,
        }
        log(f"idle {label}: {ok} streams, {wall:.0f}s: CPU {cpu_s * 1e3:.1f} ms ({result['cpu_pct_of_core']:.4f} % "
            f"of a core), {wakeups} wake-ups, {heartbeats} heartbeats received")
        return result
    finally:
        stop_clients(clients)
        if server:
            server.stop()
        net.destroy()


def phase_idle(ctx: dict, cfg: dict, budget: Budget) -> dict:
    out = {"quiet": idle_window(ctx, 3600, cfg["idle_clients"], cfg["idle_seconds"], "quiet")}
    if cfg["heartbeat_check_seconds"] and budget.left() > cfg["heartbeat_check_seconds"] + 20 + ctx["reserve"]:
        out["heartbeats"] = idle_window(ctx, cfg["heartbeat_check_interval"], cfg["idle_clients"],
                                        cfg["heartbeat_check_seconds"], "heartbeat")
    return out
