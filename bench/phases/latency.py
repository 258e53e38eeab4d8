"""Phase `latency`: link flaps, from the kernel's ACK of the netlink request to the SSE event,
next to `ip monitor link` reading the same kernel in the same loop.
"""

from __future__ import annotations

import os
import random
import re
import select
import socket
import subprocess
import time

import nsutil
from common import log, median_of, summary
from nsutil import VethNet
from servers import PORT, Reachd


def phase_latency(ctx: dict, cfg: dict) -> dict:
    net = VethNet()
    server = mon = sse = rt = None
    try:
        server = Reachd(ctx["reachd"], net.ns, ctx["workdir"], heartbeat=3600)
        server.wait_ready()
        mon = net.ns.popen("ip", "-o", "monitor", "link", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL)
        with nsutil.inside(net.ns):
            sse = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sse.settimeout(5)
        sse.connect(("127.0.0.1", PORT))
        sse.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        buf = b""
        deadline = time.monotonic() + 5
        while b"\n\n" not in buf.partition(b"data:")[2] and time.monotonic() < deadline:
            buf += sse.recv(65536)
        sse.setblocking(False)
        mon_fd = mon.stdout.fileno()
        os.set_blocking(mon_fd, False)
        rt = nsutil.Rtnl(net.ns)
        time.sleep(0.5)

        def drain() -> tuple[int, int]:
            extra_sse = extra_mon = 0
            for _ in range(100):
                ready, _, _ = select.select([sse, mon_fd], [], [], 0)
                if not ready:
                    break
                for r in ready:
                    if r is sse:
                        extra_sse += sse.recv(65536).count(b"event: status")
                    else:
                        extra_mon += os.read(mon_fd, 65536).count(b"\n")
            return extra_sse, extra_mon

        # Warm-up: a few unmeasured flaps, then more than a second of quiet, so the kernel's
        # linkwatch (which defers non-urgent carrier events to at most one run per second) starts
        # from rest. Deferrals that still happen hit reachd and ip monitor alike; see "deferred".
        for k in range(10):
            rt.link_set(net.index, k % 2 == 1)
            time.sleep(0.03)
        time.sleep(1.2)
        drain()
        rows = []
        transitions = 2 * cfg["flaps"]
        for k in range(transitions):
            up = k % 2 == 1
            want = b"state UP" if up else b"state DOWN"
            t_start = time.monotonic_ns()
            rt.link_set(net.index, up)
            t_ret = time.monotonic_ns()
            got_sse = got_mon_first = got_mon_match = None
            sse_buf = mon_buf = b""
            op_state = None
            deadline = t_ret + 3_000_000_000
            while (got_sse is None or got_mon_match is None) and time.monotonic_ns() < deadline:
                ready, _, _ = select.select([sse, mon_fd], [], [], 0.5)
                now = time.monotonic_ns()
                for r in ready:
                    if r is sse:
                        sse_buf += sse.recv(65536)
                        if got_sse is None and b"\n\n" in sse_buf.partition(b"data:")[2]:
                            got_sse = now
                            m = re.search(rb'"operState":"(\w+)"', sse_buf)
                            op_state = m.group(1).decode() if m else None
                    else:
                        mon_buf += os.read(mon_fd, 65536)
                        lines = mon_buf.split(b"\n")[:-1]
                        if lines and got_mon_first is None:
                            got_mon_first = now
                        if got_mon_match is None and any(want in line for line in lines):
                            got_mon_match = now
            time.sleep(random.uniform(0.02, 0.04))
            extra_sse, extra_mon = drain()
            rows.append({
                "up": up, "call_ms": (t_ret - t_start) / 1e6,
                "reachd_ms": None if got_sse is None else (got_sse - t_ret) / 1e6,
                "monitor_ms": None if got_mon_match is None else (got_mon_match - t_ret) / 1e6,
                "monitor_first_line_ms": None if got_mon_first is None else (got_mon_first - t_ret) / 1e6,
                "reachd_operstate": op_state, "extra_reachd_events": extra_sse, "k": k,
            })
        blocks = []
        per_block = max(1, len(rows) // cfg["flap_blocks"])
        for b in range(cfg["flap_blocks"]):
            chunk = rows[b * per_block:(b + 1) * per_block]
            blocks.append({"reachd": summary([r["reachd_ms"] for r in chunk if r["reachd_ms"] is not None]),
                           "monitor": summary([r["monitor_ms"] for r in chunk if r["monitor_ms"] is not None])})

        def pooled(key: str, sel=lambda r: True) -> dict:
            return summary([r[key] for r in rows if sel(r) and r[key] is not None])

        result = {
            "flaps": cfg["flaps"], "transitions": len(rows),
            "reachd_missing": sum(1 for r in rows if r["reachd_ms"] is None),
            "monitor_missing": sum(1 for r in rows if r["monitor_ms"] is None),
            "reachd_extra_events": sum(r["extra_reachd_events"] for r in rows),
            "wrong_operstate": sum(1 for r in rows if r["reachd_operstate"] != ("up" if r["up"] else "down")),
            "reachd": pooled("reachd_ms"), "monitor": pooled("monitor_ms"),
            "monitor_first_line": pooled("monitor_first_line_ms"), "call": pooled("call_ms"),
            "reachd_down": pooled("reachd_ms", lambda r: not r["up"]), "reachd_up": pooled("reachd_ms", lambda r: r["up"]),
            "monitor_down": pooled("monitor_ms", lambda r: not r["up"]), "monitor_up": pooled("monitor_ms", lambda r: r["up"]),
            "reachd_minus_monitor": summary([r["reachd_ms"] - r["monitor_ms"] for r in rows
                                             if r["reachd_ms"] is not None and r["monitor_ms"] is not None]),
            "deferred_by_kernel": sum(1 for r in rows if (r["monitor_ms"] or 0) > 100),
            "reachd_not_deferred": pooled("reachd_ms", lambda r: (r["monitor_ms"] or 0) <= 100),
            "monitor_not_deferred": pooled("monitor_ms", lambda r: (r["monitor_ms"] or 0) <= 100),
            "blocks": blocks, "samples": rows,
            "block_median": {
                "reachd_p50": median_of(blocks, "reachd", "p50"), "reachd_p99": median_of(blocks, "reachd", "p99"),
                "monitor_p50": median_of(blocks, "monitor", "p50"), "monitor_p99": median_of(blocks, "monitor", "p99"),
            },
        }
        log(f"change latency: reachd p50 {result['reachd'].get('p50'):.3f} p99 {result['reachd'].get('p99'):.3f} ms; "
            f"ip monitor p50 {result['monitor'].get('p50'):.3f} p99 {result['monitor'].get('p99'):.3f} ms")
        return result
    finally:
        if rt:
            rt.close()
        if sse:
            sse.close()
        if mon:
            nsutil.stop(mon)
        if server:
            server.stop()
        net.destroy()
