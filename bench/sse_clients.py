"""The C SSE client (`sseclient.c`) as processes: thousands of streams are spread over a few
of them so the client is never the bottleneck; started, awaited, read back and stopped here.
"""

from __future__ import annotations

import os
import signal
import subprocess

import nsutil
from nsutil import Namespace
from servers import PORT, read_lines_until


def stop_clients(clients: list) -> None:
    """Kill SSE client processes and remove their output files (every outcome, failure included)."""
    for c in clients:
        nsutil.stop(c["proc"], signal.SIGKILL, timeout=5)
        if not c["err"].closed:
            c["err"].close()
        if os.path.exists(c["out"]):
            os.remove(c["out"])


def spawn_clients(ctx: dict, ns: Namespace, total: int, procs: int, tag: str, max_seconds: float) -> list[dict]:
    clients = []
    per = [total // procs + (1 if i < total % procs else 0) for i in range(procs)]
    for i, n in enumerate(per):
        if n == 0:
            continue
        out = os.path.join(ctx["workdir"], f"clients-{tag}-{i}.txt")
        err = open(os.path.join(ctx["workdir"], f"clients-{tag}-{i}.err"), "ab")
        proc = ns.popen(ctx["client"], "-p", str(PORT), "-n", str(n), "-i", "256", "-t", str(int(max_seconds)),
                        "-o", out, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        clients.append({"proc": proc, "out": out, "err": err, "n": n})
    return clients


def wait_clients_ready(clients: list[dict], buffers: dict, timeout: float) -> tuple[int, int]:
    procs = [c["proc"] for c in clients]

    def ready(b: dict) -> bool:
        return all(any(line.startswith("ready ") for line in b.get(p.pid, [])) for p in procs)

    read_lines_until(procs, buffers, ready, timeout)
    ok = failed = 0
    for p, c in zip(procs, clients):
        line = next((line for line in buffers.get(p.pid, []) if line.startswith("ready ")), None)
        if line:
            ok += int(line.split()[1])
            failed += int(line.split()[2])
        else:
            failed += c["n"]
    return ok, failed


def finish_clients(clients: list[dict], buffers: dict) -> list[dict]:
    summaries = []
    for c in clients:
        with_suppress_pipe(lambda: (c["proc"].stdin.write(b"quit\n"), c["proc"].stdin.flush()))
    procs = [c["proc"] for c in clients]

    def done(b: dict) -> bool:
        return all(any(line.startswith("summary ") for line in b.get(p.pid, [])) for p in procs)

    read_lines_until(procs, buffers, done, 60)
    for c in clients:
        line = next((line for line in buffers.get(c["proc"].pid, []) if line.startswith("summary ")), "")
        fields = dict(kv.split("=", 1) for kv in line.split()[1:]) if line else {}
        summaries.append(fields)
        nsutil.stop(c["proc"], timeout=10)
        c["err"].close()
    return summaries


def with_suppress_pipe(fn) -> None:
    try:
        fn()
    except (BrokenPipeError, OSError):
        pass


def load_records(paths: list[str], offsets: list[int]) -> list[tuple[int, int, int, int]]:
    rows = []
    for path, offset in zip(paths, offsets):
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                conn, seq, user, kern = line.split()
                rows.append((int(conn) + offset, int(seq), int(user), int(kern)))
    return rows
