#!/usr/bin/env python3
"""Records what a real reachd answers the client commands, as seed inputs for FuzzClient (root).

A namespace of its own (`fuzz-<pid>-cli`, deleted in every outcome) gets a veth pair with
addresses and a default route, and an interface whose name is not ASCII; reachd serves there
(on the namespace's loopback) with two targets and a connectivity check, all on loopback. Each
answer is written in FuzzClient's input format (ClientFuzz.swift): the command (0 `status`/
`check`, 1 `watch`), how many bytes each read returns less one, then the answer's bytes.

    python3 Fuzz/record-client.py .build/debug/reachd Fuzz/Corpus/FuzzClient
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

# The request LocalHTTPClient sends.
REQUEST = "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: reachd/0.1.0\r\nAccept: */*\r\nConnection: close\r\n\r\n"
SETUP = [
    ("link", "set", "lo", "up"),
    ("link", "add", "eth0", "type", "veth", "peer", "name", "peer0"),
    ("link", "add", "lan-\u00fc", "type", "veth", "peer", "name", "peer1"),
    ("link", "set", "peer0", "up"),
    ("link", "set", "eth0", "up"),
    ("addr", "add", "198.18.0.2/24", "dev", "eth0"),
    ("route", "add", "default", "via", "198.18.0.1", "dev", "eth0"),
]


def ask(port: int, path: str, seconds: float) -> bytes:
    """The raw answer to one GET, read until the server closes or `seconds` pass."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(REQUEST.format(path=path, port=port).encode())
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            connection.settimeout(left)
            try:
                data = connection.recv(65536)
            except socket.timeout:
                break
            if not data:
                break
            answer += data
    return answer


def inside(reachd: str, directory: str) -> None:
    for command in SETUP:
        subprocess.run(["ip", *command], check=True, capture_output=True, timeout=10)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [reachd, "--host", "127.0.0.1", "--port", str(port), "--heartbeat", "0.3",
         "--target", "db=tcp://127.0.0.1:1", "--target", f"self=http://127.0.0.1:{port}/livez",
         "--target", "v6=host://[::1]", "--connectivity-url", "http://127.0.0.1:1/generate_204"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        time.sleep(1.5)  # the targets' first probes
        answers = {
            "status": (0, 63, ask(port, "/status", 3)),
            "status-in-small-reads": (0, 6, ask(port, "/status", 3)),
            "readyz": (0, 255, ask(port, "/readyz", 3)),
            "livez": (0, 255, ask(port, "/livez", 3)),
            "not-found": (0, 255, ask(port, "/nothing", 3)),
            "events": (1, 40, ask(port, "/events", 1.0)),
        }
        subprocess.run(["ip", "link", "set", "peer1", "up"], check=True, capture_output=True, timeout=10)
        subprocess.run(["ip", "link", "set", "lan-\u00fc", "up"], check=True, capture_output=True, timeout=10)
        answers["events-after-a-change"] = (1, 255, ask(port, "/events", 1.0))
    finally:
        server.terminate()
        server.wait(timeout=15)
    for name, (command, piece, answer) in answers.items():
        with open(os.path.join(directory, name), "wb") as file:
            file.write(bytes([command, piece]) + answer)
        print(f"{name}: {len(answer)} bytes")


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--inside":
        inside(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) != 3 or os.geteuid() != 0:
        print(__doc__.strip().splitlines()[-1], "(as root)", file=sys.stderr)
        return 2
    reachd, directory = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(directory, exist_ok=True)
    name = f"fuzz-{os.getpid()}-cli"
    subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True, timeout=10)
    try:
        subprocess.run(["ip", "netns", "exec", name, sys.executable, __file__, "--inside", reachd, directory],
                       check=True, timeout=120)
    finally:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
