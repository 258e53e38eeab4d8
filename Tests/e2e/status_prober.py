"""Times `GET /status` on a fresh connection, again and again, while a test loads reachd.

The prober runs in a process of its own (spawned, so it shares no lock or thread with pytest):
a test process busy driving thousands of sockets would otherwise delay the prober itself and
blame reachd for it. It asks for a higher scheduling priority when it may, for the same reason;
reachd's threads get no such help.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import socket
import time
from dataclasses import dataclass, field

CLONE_NEWNET = 0x40000000


@dataclass
class ProbeResult:
    latencies: list[float] = field(default_factory=list)  # seconds, one per answered request
    failures: list[str] = field(default_factory=list)

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.latencies)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]

    @property
    def worst(self) -> float:
        return max(self.latencies, default=float("nan"))

    def summary(self) -> str:
        return (f"{len(self.latencies)} probes of /status: median {self.percentile(.5) * 1000:.1f} ms, "
                f"p99 {self.percentile(.99) * 1000:.1f} ms, max {self.worst * 1000:.1f} ms, "
                f"{len(self.failures)} failed")


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


def _probe_loop(port: int, namespace: str | None, interval: float, timeout: float, stop, results) -> None:
    if namespace:
        _enter_namespace(namespace)
    try:
        os.nice(-10)
    except OSError:
        pass
    latencies: list[float] = []
    failures: list[str] = []
    while not stop.is_set():
        at = time.monotonic()
        try:
            elapsed, problem = _one_probe(port, timeout)
            latencies.append(elapsed)
            if problem:
                failures.append(problem)
        except OSError as error:
            failures.append(f"{type(error).__name__}: {error}")
        stop.wait(max(0.0, interval - (time.monotonic() - at)))
    results.send((latencies, failures))
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
            latencies, failures = self._receive.recv() if self._receive.poll(30) else ([], ["prober sent nothing"])
            self._process.join(10)
            if self._process.is_alive():
                self._process.kill()
            self.result = ProbeResult(latencies, failures)
        return self.result

    def __exit__(self, *exc) -> None:
        self.stop()
