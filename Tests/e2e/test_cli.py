"""The client commands a person reaches for first: `reachd status`, `watch` and `check`,
run as real processes against a real server; and the serving options' validation."""

from __future__ import annotations

import json
import os
import re
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


# The contract of every serving option, as the README's table states it. `None`: no default shown.
OPTIONS = {
    "host": ("REACHD_HOST", "0.0.0.0 to serve, 127.0.0.1 to ask"),
    "port": ("REACHD_PORT", "9478"),
    "heartbeat": ("REACHD_HEARTBEAT", "15"),
    "ready-when": ("REACHD_READY_WHEN", "reachable"),
    "metered-interfaces": ("REACHD_METERED_INTERFACES", None),
    "max-connections": ("REACHD_MAX_CONNECTIONS", "10000"),
    "max-connections-per-ip": ("REACHD_MAX_CONNECTIONS_PER_IP", "0"),
    "connection-timeout": ("REACHD_CONNECTION_TIMEOUT", "30"),
    "connection-memory": ("REACHD_CONNECTION_MEMORY", "8192"),
    "shutdown-timeout": ("REACHD_SHUTDOWN_TIMEOUT", "10"),
    "threads": ("REACHD_THREADS", "2"),
    "ipv4-destination": ("REACHD_IPV4_DESTINATION", "8.8.8.8"),
    "ipv6-destination": ("REACHD_IPV6_DESTINATION", "2001:4860:4860::8888"),
    "log-level": ("REACHD_LOG_LEVEL", "info"),
    "log-format": ("REACHD_LOG_FORMAT", "text"),
}


def help_entries(*command: str) -> dict[str, str]:
    """Each option of `reachd [command] --help` that takes a value, with its help text on one line."""
    result = run(*command, "--help")
    assert result.returncode == 0, result.stderr
    options = result.stdout.split("OPTIONS:", 1)[1].split("SUBCOMMANDS:", 1)[0]
    text = " ".join(options.split())
    return {m[1]: m[2] for m in re.finditer(r"--([a-z0-9-]+) <[a-z0-9-]+> (.*?)(?= --[a-z]| -h,|$)", text)}


def test_help_shows_every_options_variable_and_default():
    for command in [(), ("serve",)]:
        entries = help_entries(*command)
        assert set(entries) == set(OPTIONS), command
        for flag, (variable, default) in OPTIONS.items():
            suffix = f"(env: {variable}, default: {default})." if default else f"(env: {variable})."
            assert entries[flag].endswith(suffix), (command, flag, entries[flag])


def test_the_client_commands_list_host_and_port_with_their_variables():
    for command in ["status", "watch", "check"]:
        entries = help_entries(command)
        assert "(env: REACHD_HOST," in entries["host"] and "(env: REACHD_PORT," in entries["port"], command


def test_a_malformed_variable_is_refused_naming_it_and_a_malformed_flag_naming_the_flag():
    # Any text is a pattern; --host is refused by the server when it cannot bind (below).
    for flag, (variable, _) in OPTIONS.items():
        if flag in ("metered-interfaces", "host"):
            continue
        result = run(env={variable: "garbage"})
        assert result.returncode == 64, (variable, result.stdout, result.stderr)
        assert f"{variable}=garbage" in result.stderr and f"--{flag}" in result.stderr, (variable, result.stderr)
        result = run(f"--{flag}", "garbage")
        assert result.returncode == 64, (flag, result.stdout, result.stderr)
        assert f"--{flag}" in result.stderr, (flag, result.stderr)
    result = run(env={"REACHD_HOST": "garbage"})
    assert result.returncode == 1 and "host" in result.stderr, result.stderr


def listening_line(server: Reachd) -> str:
    """The start-up log line (written just after the socket listens, so it may trail /livez)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        for line in server.output().splitlines():
            if "reachd listening" in line:
                return line
        time.sleep(0.05)
    raise AssertionError(server.output())


def test_a_flag_wins_over_its_variable_which_wins_over_the_default():
    with Reachd(env={"REACHD_READY_WHEN": "always", "REACHD_LOG_FORMAT": "json"}) as server:
        assert json.loads(listening_line(server))["readyWhen"] == "always"
    with Reachd("--ready-when", "reachable", "--log-format", "text", env={"REACHD_READY_WHEN": "always"}) as server:
        assert "readyWhen=reachable" in listening_line(server)
    # An empty variable counts as unset.
    with Reachd(env={"REACHD_READY_WHEN": "", "REACHD_LOG_FORMAT": ""}) as server:
        assert "readyWhen=reachable" in listening_line(server)
