"""A client command that finds nothing listening says where it asked and how to ask elsewhere:
the first thing a new user meets when reachd serves on another port, or not at all."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from reachd_process import reachd_binary

HINT = "nothing listens there: start reachd, or name where it serves with --host and --port, or REACHD_HOST and REACHD_PORT"


@contextmanager
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections for as long as the block runs: bound, never
    listening, so no other process can start listening on it meanwhile."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield holder.getsockname()[1]


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("REACHD_")}
    return subprocess.run(
        [reachd_binary(), *args], capture_output=True, text=True, timeout=10, env={**environment, **(env or {})}
    )


def test_status_against_a_closed_port_names_the_address_and_the_options():
    with closed_port() as port:
        result = run("status", "--port", str(port))
    assert result.returncode == 1, result
    assert f"cannot connect to 127.0.0.1:{port}" in result.stderr, result.stderr
    assert HINT in result.stderr, result.stderr


def test_the_hint_follows_the_port_from_the_environment_and_check_and_watch_give_it_too():
    with closed_port() as port:
        status = run("status", env={"REACHD_PORT": str(port)})
        check = run("check", "--port", str(port), "--timeout", "1")
        watch = run("watch", "--once", "--port", str(port))
    assert status.returncode == 1 and f"127.0.0.1:{port}" in status.stderr and HINT in status.stderr, status
    assert check.returncode == 1 and f"127.0.0.1:{port}" in check.stdout and HINT in check.stdout, check
    assert watch.returncode == 1 and f"127.0.0.1:{port}" in watch.stderr and HINT in watch.stderr, watch


@contextmanager
def unanswered_port() -> Iterator[int]:
    """A loopback port that neither accepts nor refuses: listening with its accept queue full
    (backlog 0, filled by connections never accepted), so the kernel drops further SYNs and a
    client's connect times out — as for a host that does not answer."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port = server.getsockname()[1]
        fillers = [socket.socket() for _ in range(3)]
        try:
            for filler in fillers:
                filler.setblocking(False)
                filler.connect_ex(("127.0.0.1", port))
            yield port
        finally:
            for filler in fillers:
                filler.close()


def test_no_hint_when_nothing_refused():
    # A usage mistake is not an unreachable server: exit 64, and no advice about a server.
    result = run("status", "--port", "70000")
    assert result.returncode == 64 and "--port" in result.stderr and HINT not in result.stderr, result
    # A timeout is not a port nothing listens on: the hint would send the user to the wrong fix.
    with unanswered_port() as port:
        result = run("check", "--port", str(port), "--timeout", "1")
    assert result.returncode == 1 and f"cannot connect to 127.0.0.1:{port}: connect 127.0.0.1: timed out" in result.stdout, result
    assert HINT not in result.stdout, result
