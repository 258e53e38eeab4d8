"""The client commands a person reaches for first: `reachd status`, `watch` and `check`,
run as real processes against a real server; and the serving options' validation."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request

from reachd_process import Reachd, free_port, reachd_binary

# Multicast destinations never get a unicast route: an instance that is always unreachable.
UNREACHABLE = ("--ipv4-destination", "224.0.0.1", "--ipv6-destination", "ff02::1")


def run(*args: str, env: dict | None = None, timeout: float = 10) -> subprocess.CompletedProcess:
    return subprocess.run(
        [reachd_binary(), *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


def test_status_json_is_the_served_document():
    with Reachd() as server:
        result = run("status", "--json", "--port", str(server.port))
        assert result.returncode == 0, result.stderr
        with urllib.request.urlopen(f"{server.base}/status", timeout=5) as response:
            assert json.loads(result.stdout) == json.loads(response.read())


def test_status_prints_a_readable_summary():
    with Reachd() as server:
        result = run("status", "--port", str(server.port))
        assert result.returncode == 0, result.stderr
        document = json.loads(run("status", "--json", "--port", str(server.port)).stdout)
        first = result.stdout.splitlines()[0]
        assert f"#{document['sequence']}" in first and document["state"] in first
        for interface in document["interfaces"]:
            assert interface["name"] in result.stdout


def test_status_reads_the_port_from_the_environment():
    with Reachd() as server:
        result = run("status", "--json", env={"REACHD_PORT": str(server.port)})
        assert result.returncode == 0, result.stderr
        assert "sequence" in json.loads(result.stdout)


def test_check_ready_passes_and_fails_with_readiness():
    with Reachd("--ready-when", "always") as ready:
        assert run("check", "--ready", "--port", str(ready.port)).returncode == 0
    with Reachd(*UNREACHABLE) as unready:
        result = run("check", "--ready", "--port", str(unready.port))
        assert result.returncode == 1, result.stdout
        assert "503" in result.stdout
        # Liveness does not depend on the network.
        assert run("check", "--live", "--port", str(unready.port)).returncode == 0


def test_check_fails_when_nothing_listens():
    result = run("check", "--port", str(free_port()), "--timeout", "1")
    assert result.returncode == 1
    assert "cannot connect" in result.stdout


def test_watch_prints_the_current_status_and_ends_with_the_stream():
    server = Reachd("--heartbeat", "0.2")
    try:
        server.wait_ready()
        watch = subprocess.Popen(
            [reachd_binary(), "watch", "--port", str(server.port)], stdout=subprocess.PIPE, text=True
        )
        try:
            line = watch.stdout.readline()
            document = json.loads(run("status", "--json", "--port", str(server.port)).stdout)
            assert f"#{document['sequence']}" in line and document["state"] in line
            time.sleep(0.5)  # heartbeats print nothing
            assert server.terminate(signal.SIGTERM) == 0
            assert watch.wait(timeout=10) == 0
            assert watch.stdout.read() == ""
        finally:
            watch.kill()
    finally:
        server.terminate(signal.SIGKILL)


def test_invalid_options_are_refused_with_a_reason():
    for args, env, reason in [
        (("--port", "70000"), {}, "port"),
        (("--ready-when", "sometimes"), {}, "ready-when"),
        (("--log-format", "xml"), {}, "log-format"),
        (("--host", "example.org"), {}, "host"),
        (("--ipv4-destination", "nowhere"), {}, "not an IP address"),
        ((), {"REACHD_PORT": "eighty"}, "REACHD_PORT"),
        ((), {"REACHD_HEARTBEAT": "-1"}, "heartbeat"),
    ]:
        # Validation fails before anything binds; a server that started instead times out here.
        result = run(*args, env=env, timeout=10)
        assert result.returncode != 0, (args, env)
        assert reason in (result.stdout + result.stderr), (args, env, result.stderr)


def test_a_port_in_use_is_refused_with_a_reason():
    with Reachd() as server:
        result = run("--host", "127.0.0.1", "--port", str(server.port), timeout=10)
        assert result.returncode == 1
        assert "cannot listen" in result.stderr
