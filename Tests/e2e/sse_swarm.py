"""Drives `clients/sse_swarm.c`: thousands of /events streams in one C process inside a namespace."""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class StreamRecord:
    index: int
    end: str  # open, clean, eof, reset, error-WHY
    ended_ns: int  # CLOCK_MONOTONIC, 0 while open
    ids: list[int]


class Swarm:
    def __init__(self, executable: Path, namespace: str | None, port: int, count: int, output: Path,
                 inflight: int = 200, max_seconds: float = 900):
        command = [str(executable), "-p", str(port), "-n", str(count), "-i", str(inflight), "-t", str(max_seconds),
                   "-o", str(output)]
        if namespace:
            command = ["ip", "netns", "exec", namespace, *command]
        self.count = count
        self.output = output
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.summary = ""
        threading.Thread(target=self._read, daemon=True, name="swarm-stdout").start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(line.strip())
        self.lines.put("")  # the client is gone

    def wait(self, word: str, predicate=lambda values: True, timeout: float = 60) -> list[int]:
        """The numbers of the next line starting with `word` whose numbers satisfy `predicate`."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"sse_swarm said no matching {word!r} within {timeout}s")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line == "":
                raise RuntimeError(f"sse_swarm exited ({self.process.poll()}) before {word!r}")
            parts = line.split()
            if parts[0] == "summary":
                self.summary = line
            elif parts[0] == word and predicate([int(p) for p in parts[1:]]):
                return [int(p) for p in parts[1:]]

    def quit(self) -> list[StreamRecord]:
        """Close every stream; what each one received and how it ended."""
        if self.process.poll() is None:
            try:
                self.process.stdin.write("quit\n")
                self.process.stdin.flush()
            except BrokenPipeError:
                pass
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        while not self.summary:
            try:
                line = self.lines.get(timeout=5)
            except queue.Empty:
                break
            if line == "":
                break
            if line.startswith("summary"):
                self.summary = line
        records = []
        for line in self.output.read_text().splitlines():
            index, end, ended_ns, *ids = line.split()
            records.append(StreamRecord(int(index), end, int(ended_ns), [int(i) for i in ids]))
        return records

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
