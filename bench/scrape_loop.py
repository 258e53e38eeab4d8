#!/usr/bin/env python3
"""The scrape loop that drives blackbox_exporter in phase `fleet`: every target's
`/probe?module=…&target=…` once per interval, at evenly spread offsets (Prometheus spreads a
job's targets over the interval too), on keep-alive connections, with the request Prometheus
2.42 sends (its headers captured from Debian's `prometheus`: OpenMetrics `Accept`, gzip, the scrape
timeout), so the exporter does the same work per probe as under Prometheus. It exists because a
real Prometheus at 1,000 scrapes a second (scraping, parsing, storing every series) takes CPU
from the exporter measured on the same two cores; this does only the scraping.

    python3 scrape_loop.py HOST PORT MODULE INTERVAL TIMEOUT TARGETS_FILE

A target still being scraped when it is due again is skipped, as Prometheus does. SIGUSR1 prints
the counters so far as one JSON line: scrapes started, answered (any status), `200`s, probes that
succeeded (`probe_success 1`), failed (no answer in TIMEOUT, a closed connection), skipped,
connections opened, and the targets whose last probe succeeded.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import urllib.parse
import zlib

ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
          "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip().lower()
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding") == "chunked":
        parts = []
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            if size == 0:
                await reader.readline()
                break
            parts.append((await reader.readexactly(size + 2))[:-2])
        body = b"".join(parts)
    else:
        raise ValueError("a response without a length on a keep-alive connection")
    if headers.get("content-encoding") == "gzip":
        body = zlib.decompress(body, 31)
    return status, body


async def main() -> None:
    host, port, module, interval, timeout, path = sys.argv[1:7]
    port_n, interval_s, timeout_s = int(port), float(interval), float(timeout)
    with open(path) as f:
        targets = [line.strip() for line in f if line.strip()]
    requests = [(f"GET /probe?module={module}&target={urllib.parse.quote(t, safe='')} HTTP/1.1\r\n"
                 f"Host: {host}:{port}\r\nUser-Agent: Prometheus/2.42.0+ds\r\nAccept: {ACCEPT}\r\n"
                 f"Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: {timeout_s:g}\r\n\r\n").encode()
                for t in targets]
    counts = {"started": 0, "answered": 0, "ok": 0, "success": 0, "failed": 0, "skipped": 0, "connections": 0}
    idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    busy = [False] * len(targets)
    last_ok = [False] * len(targets)  # each target's last probe succeeded
    tasks: set[asyncio.Task] = set()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1,
                            lambda: print(json.dumps({**counts, "targets_ok": sum(last_ok)}), flush=True))

    async def exchange(i: int) -> tuple[int, bytes]:
        # A reused connection the exporter has closed fails before any answer: once more on a new
        # one, as Go's transport retries an idempotent request.
        for attempt in range(2):
            reused = bool(idle)
            if reused:
                conn = idle.pop()
            else:
                conn = await asyncio.open_connection(host, port_n)
                counts["connections"] += 1
            reader, writer = conn
            try:
                writer.write(requests[i])
                answer = await read_response(reader)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                writer.close()
                if reused and attempt == 0:
                    continue
                raise
            except BaseException:
                writer.close()
                raise
            idle.append(conn)
            return answer
        raise OSError("no connection")

    async def scrape(i: int) -> None:
        busy[i] = True
        counts["started"] += 1
        last_ok[i] = False
        try:
            status, body = await asyncio.wait_for(exchange(i), timeout_s)
            counts["answered"] += 1
            if status == 200:
                counts["ok"] += 1
                last_ok[i] = b"\nprobe_success 1" in body
                counts["success"] += last_ok[i]
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError):
            counts["failed"] += 1
        finally:
            busy[i] = False

    step = interval_s / len(targets)
    start = loop.time() + 0.05
    k = 0
    while True:
        delay = start + k * step - loop.time()
        if delay > 0.0005:
            await asyncio.sleep(delay)
        i = k % len(targets)
        if busy[i]:
            counts["skipped"] += 1
        else:
            task = loop.create_task(scrape(i))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        k += 1


if __name__ == "__main__":
    asyncio.run(main())
