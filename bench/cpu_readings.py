"""What a server's threads cost over a window (CPU, wake-ups), read from `/proc` through
nsutil, so two servers measured over the same window compare fairly.
"""

from __future__ import annotations

import time

import nsutil


def cpu_percent(pid: int, seconds: float) -> float:
    """CPU of every thread of `pid` over `seconds`, threads that end or start within it included."""
    t0 = time.monotonic()
    per_thread = nsutil.sample_threads([pid], seconds)[pid]
    return sum(t["cpu_ms"] for t in per_thread.values()) / 1e3 / (time.monotonic() - t0) * 100


def thread_deltas(before: dict, after: dict) -> dict:
    """Per thread of `after` that ran or woke between the two `nsutil.threads` readings: CPU ms and
    wake-ups (voluntary + involuntary context switches)."""
    per_thread = {}
    for tid, a in after.items():
        b = before.get(tid, {"cpu_ns": 0, "voluntary": 0, "involuntary": 0})
        d = {"comm": a["comm"], "cpu_ms": (a["cpu_ns"] - b["cpu_ns"]) / 1e6,
             "wakeups": (a["voluntary"] - b["voluntary"]) + (a["involuntary"] - b["involuntary"])}
        if d["cpu_ms"] or d["wakeups"]:
            per_thread[str(tid)] = d
    return per_thread


def own_wakeups(per_thread: dict) -> int:
    """Wake-ups of reachd's own threads: all but libdispatch's manager (`…qos.overcommit`), which
    re-arms a 1 s timer of its own (see the idle section of the report)."""
    return sum(t["wakeups"] for t in per_thread.values() if not t["comm"].endswith("qos.overcommit"))
