"""At --max-connections a new connection is closed at once (never left waiting in the backlog),
the streams already open are untouched, and slots come back when their clients leave — found
by the next heartbeat, since a suspended stream cannot see its client go."""

from __future__ import annotations

import socket
import time

from reachd_process import Reachd


def open_stream(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    return sock


def status_answer(port: int, timeout: float = 3) -> bytes:
    """What a new connection gets for GET /status: the answer, b"" for a close, or an error."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return sock.recv(64)
        except ConnectionResetError:
            return b""


def test_connections_over_the_limit_are_closed_at_once_and_slots_return():
    with Reachd("--max-connections", "5", "--heartbeat", "0.5") as server:
        streams = [open_stream(server.port) for _ in range(5)]
        try:
            started = time.monotonic()
            for _ in range(3):
                assert status_answer(server.port) == b""  # closed, not answered, not hanging
            assert time.monotonic() - started < 2

            for sock in streams[2:]:
                # Still open and served: the next heartbeat arrives (the first event came with
                # the head or comes now; read until a keep-alive comment shows up).
                received = b""
                while b": keep-alive" not in received:
                    chunk = sock.recv(4096)
                    assert chunk, "an open stream was closed"
                    received += chunk
            for sock in streams[:2]:
                sock.close()
            deadline = time.monotonic() + 5
            answer = b""
            while time.monotonic() < deadline and not answer.startswith(b"HTTP/1.1 200"):
                time.sleep(0.2)
                answer = status_answer(server.port)
            assert answer.startswith(b"HTTP/1.1 200"), "slots of departed clients were not reclaimed"
        finally:
            for sock in streams:
                sock.close()
