#!/usr/bin/env python3
"""Instructions per request of two reachd builds, counted by callgrind: a guard that sees 2 %.

Wall-clock on this kind of machine moves by tens of percent from run to run; the instructions a
request costs do not. Each binary is copied and stripped (valgrind 3.19 cannot read the Swift
binary's DWARF 5), started under callgrind with collection off, warmed up, then counted over
N keep-alive requests of each workload on loopback. The ratio new ÷ base per request is the
figure; above --limit (1.02) it fails.

valgrind counts each iteration of `rep stosb` as an instruction, so libmicrohttpd's zeroing of
its connection pool weighs far more here than in time: compare, don't read it as a profile.

    python3 bench/instructions.py BASE_BIN NEW_BIN [--requests 500] [--limit 1.02]

Exit 0: no workload above the limit; 1: one is; 2: it could not measure.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

# (name, request bytes, extra reachd arguments)
WORKLOADS = [
    ("/status keep-alive", b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", []),
    ("/healthz keep-alive", b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", []),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_response(sock: socket.socket) -> None:
    """One whole response with a Content-Length (every workload's is)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise OSError("closed")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += sock.recv(65536)


def count(binary: str, request: bytes, extra: list[str], requests: int, workdir: str) -> float:
    """Instructions per request of `binary` for `request`, over `requests` keep-alive requests."""
    port = free_port()
    out = os.path.join(workdir, f"callgrind.{port}")
    process = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
         binary, "--host", "127.0.0.1", "--port", str(port), *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"{binary} did not listen under valgrind")
                time.sleep(0.2)
        with sock:
            for _ in range(50):  # warm-up: first-use paths, the pool, the caches
                sock.sendall(request)
                read_response(sock)
            subprocess.run(["callgrind_control", "-i", "on", str(process.pid)], check=True, capture_output=True)
            for _ in range(requests):
                sock.sendall(request)
                read_response(sock)
            subprocess.run(["callgrind_control", "-i", "off", str(process.pid)], check=True, capture_output=True)
            subprocess.run(["callgrind_control", "-d", str(process.pid)], check=True, capture_output=True)
    finally:
        process.terminate()
        process.wait(timeout=60)
    total = 0
    for path in glob.glob(out + "*"):
        with open(path) as dump:
            for line in dump:
                if line.startswith("summary:") or line.startswith("totals:"):
                    total = max(total, int(line.split()[1]))
    if total == 0:
        raise RuntimeError("callgrind wrote no totals")
    return total / requests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--limit", type=float, default=1.02)
    args = parser.parse_args()
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        print("instructions: valgrind is needed (apt-get install valgrind)", file=sys.stderr)
        return 2
    worse = False
    with tempfile.TemporaryDirectory(prefix="reachd-instructions-") as workdir:
        stripped = {}
        for label, binary in (("base", args.base), ("new", args.new)):
            stripped[label] = os.path.join(workdir, f"reachd-{label}")
            subprocess.run(["strip", "-o", stripped[label], binary], check=True)
        print(f"| workload | base instr/request | new instr/request | new ÷ base |")
        print(f"|---|---|---|---|")
        for name, request, extra in WORKLOADS:
            try:
                base = count(stripped["base"], request, extra, args.requests, workdir)
                new = count(stripped["new"], request, extra, args.requests, workdir)
            except (OSError, RuntimeError, subprocess.CalledProcessError) as error:
                print(f"instructions: {name}: {error}", file=sys.stderr)
                return 2
            ratio = new / base
            verdict = "" if ratio <= args.limit else f" — above {args.limit}"
            worse |= ratio > args.limit
            print(f"| {name} | {base:,.0f} | {new:,.0f} | {ratio:.3f}{verdict} |")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
