"""What every phase shares: the progress log line, percentile summaries of samples, and
the time budget that decides how many repetitions still fit.
"""

from __future__ import annotations

import statistics
import time


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def pct(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of `values`."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(round(q / 100 * len(ordered) + 0.5))))
    return ordered[rank - 1]


def summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50": pct(values, 50), "p90": pct(values, 90), "p99": pct(values, 99),
            "max": max(values), "min": min(values), "mean": statistics.fmean(values)}


def published_before(changed_at: float, moment: float) -> bool:
    """Whether a document whose `changedAt` reads `changed_at` (seconds) was published before
    `moment`: reachd writes `changedAt` to the millisecond, so the whole millisecond must lie before
    it. A link-up's first document, published within the millisecond after a flap read its clock
    to set the link up, read as published during the link-down (1 flap in 20 at 100 targets: the
    second document the report counted there). A document published in the last millisecond
    before `moment` is not counted: a flap reads `moment` at least its settle time (0.5 s) after
    the link-down's one document."""
    return changed_at + 0.001 <= moment


def median_of(runs: list[dict], *path: str) -> float | None:
    values = []
    for run in runs:
        value = run
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, (int, float)):
            values.append(value)
    return statistics.median(values) if values else None


class Budget:
    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def left(self) -> float:
        return self.deadline - time.monotonic()
