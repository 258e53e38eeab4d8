"""Times `GET /status` on a fresh connection, again and again, while a test loads reachd.

The prober runs in a process of its own (spawned, so it shares no lock or thread with pytest):
a test process busy driving thousands of sockets would otherwise delay the prober itself and
blame reachd for it. It asks for a higher scheduling priority (nice -10) when it may, for the
same reason; reachd's threads get no such help.

Beside it a canary thread at reachd's priority (nice 0) sleeps 10 ms at a time and notes how
late it wakes: on a machine shared with other work (CI, or other builds on two cores) every
process at that priority can be kept off the CPU for a while, reachd included. A probe's
`own` time is its latency less the longest such stall inside it — the part reachd answers for.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import socket
import threading
import time
from dataclasses import dataclass, field

CLONE_NEWNET = 0x40000000
CANARY_SLEEP = 0.010
STALL_NOTED = 0.010  # a canary waking this much later than asked is a stall


@dataclass
class ProbeResult:
    latencies: list[float] = field(default_factory=list)  # seconds, one per answered request
    failures: list[str] = field(default_factory=list)
    started: list[float] = field(default_factory=list)  # time.monotonic() of each answered request
    stalls: list[tuple[float, float]] = field(default_factory=list)  # (monotonic start, seconds) the canary lost

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.latencies)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]

    @property
    def worst(self) -> float:
        return max(self.latencies, default=float("nan"))

    def stall_within(self, start: float, end: float) -> float:
        """The longest machine stall (canary lateness) that overlaps [start, end], clipped to it."""
        longest = 0.0
        for at, seconds in self.stalls:
            overlap = min(end, at + CANARY_SLEEP + seconds) - max(start, at + CANARY_SLEEP)
            longest = max(longest, overlap)
        return longest

    def own(self) -> list[float]:
        """Each probe's latency less the longest machine stall inside it."""
        return [latency - self.stall_within(at, at + latency) for at, latency in zip(self.started, self.latencies)]

    @property
    def worst_own(self) -> float:
        return max(self.own(), default=float("nan"))

    def slowest(self, count: int = 5) -> list[tuple[float, float]]:
        """(monotonic start, seconds) of the slowest probes: to line them up with what the test did."""
        return sorted(zip(self.started, self.latencies), key=lambda pair: -pair[1])[:count]

    def summary(self) -> str:
        worst_stall = max((seconds for _, seconds in self.stalls), default=0.0)
        return (f"{len(self.latencies)} probes of /status: median {self.percentile(.5) * 1000:.1f} ms, "
                f"p99 {self.percentile(.99) * 1000:.1f} ms, max {self.worst * 1000:.1f} ms "
                f"(max {self.worst_own * 1000:.1f} ms less machine stalls; {len(self.stalls)} stalls of a nice-0 "
                f"canary, longest {worst_stall * 1000:.0f} ms), {len(self.failures)} failed")


def _enter_namespace(name: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns({name})")
    finally:
        os.close(fd)


def _one_probe(port: int, timeout: float) -> tuple[float, str | None]:
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
            head, separator, body = data.partition(b"\r\n\r\n")
            if separator:
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), None)
                if length is not None and len(body) >= length:
                    break
    elapsed = time.perf_counter() - started
    if not data.startswith(b"HTTP/1.1 200 "):
        return elapsed, f"answer {data[:40]!r}"
    return elapsed, None


def _canary(stop, stalls: list[tuple[float, float]]) -> None:
    os.setpriority(os.PRIO_PROCESS, 0, 0)  # this thread only (Linux: nice is per thread)
    while not stop.is_set():
        at = time.monotonic()
        time.sleep(CANARY_SLEEP)
        late = time.monotonic() - at - CANARY_SLEEP
        if late > STALL_NOTED:
            stalls.append((at, late))


def _probe_loop(port: int, namespace: str | None, interval: float, timeout: float, stop, results) -> None:
    if namespace:
        _enter_namespace(namespace)
    stalls: list[tuple[float, float]] = []
    canary = threading.Thread(target=_canary, args=(stop, stalls), daemon=True)
    canary.start()
    try:
        os.setpriority(os.PRIO_PROCESS, 0, -10)
    except OSError:
        pass
    latencies: list[float] = []
    failures: list[str] = []
    started: list[float] = []
    while not stop.is_set():
        at = time.monotonic()
        try:
            elapsed, problem = _one_probe(port, timeout)
            latencies.append(elapsed)
            started.append(at)
            if problem:
                failures.append(problem)
        except OSError as error:
            failures.append(f"{type(error).__name__}: {error}")
        stop.wait(max(0.0, interval - (time.monotonic() - at)))
    canary.join(1)
    results.send((latencies, failures, started, stalls))
    results.close()


class StatusProber:
    """`with StatusProber(port) as prober: ...` then `prober.result` (a ProbeResult)."""

    def __init__(self, port: int, namespace: str | None = None, interval: float = 0.05, timeout: float = 2.0):
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(target=_probe_loop, args=(port, namespace, interval, timeout, self._stop, send),
                                        daemon=True, name="status-prober")
        self._send = send
        self.result: ProbeResult | None = None

    def __enter__(self) -> "StatusProber":
        self._process.start()
        self._send.close()
        return self

    def stop(self) -> ProbeResult:
        if self.result is None:
            self._stop.set()
            try:
                answer = self._receive.recv() if self._receive.poll(30) else ([], ["prober sent nothing"], [], [])
            except EOFError:
                answer = ([], [f"the prober died (exit {self._process.exitcode})"], [], [])
            self._process.join(10)
            if self._process.is_alive():
                self._process.kill()
            self.result = ProbeResult(*answer)
        return self.result

    def __exit__(self, *exc) -> None:
        self.stop()
