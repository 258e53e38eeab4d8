"""The client commands a person reaches for first: `reachd status`, `watch` and `check`,
run as real processes against a real server; and the serving options' validation."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.error
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
    "allow-origin": ("REACHD_ALLOW_ORIGIN", "none"),
    "metered-interfaces": ("REACHD_METERED_INTERFACES", None),
    "max-connections": ("REACHD_MAX_CONNECTIONS", "10000"),
    "max-connections-per-ip": ("REACHD_MAX_CONNECTIONS_PER_IP", "0"),
    "connection-timeout": ("REACHD_CONNECTION_TIMEOUT", "30"),
    "connection-memory": ("REACHD_CONNECTION_MEMORY", "8192"),
    "shutdown-timeout": ("REACHD_SHUTDOWN_TIMEOUT", "10"),
    "threads": ("REACHD_THREADS", "2"),
    "ipv4-destination": ("REACHD_IPV4_DESTINATION", "8.8.8.8"),
    "ipv6-destination": ("REACHD_IPV6_DESTINATION", "2001:4860:4860::8888"),
    "target": ("REACHD_TARGETS", None),
    "target-interval": ("REACHD_TARGET_INTERVAL", "10"),
    "target-timeout": ("REACHD_TARGET_TIMEOUT", "3"),
    "target-failures": ("REACHD_TARGET_FAILURES", "3"),
    "connectivity-url": ("REACHD_CONNECTIVITY_URL", "none"),
    "connectivity-response": ("REACHD_CONNECTIVITY_RESPONSE", None),
    "connectivity-interval": ("REACHD_CONNECTIVITY_INTERVAL", "300"),
    "connectivity-timeout": ("REACHD_CONNECTIVITY_TIMEOUT", "5"),
    "target-successes": ("REACHD_TARGET_SUCCESSES", "1"),
    "dns-check": ("REACHD_DNS_CHECK", "none"),
    "dns-interval": ("REACHD_DNS_INTERVAL", "10"),
    "dns-timeout": ("REACHD_DNS_TIMEOUT", "2"),
    "dns-failures": ("REACHD_DNS_FAILURES", "3"),
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
    # Any text is a pattern (or an expected response: refused only without a URL, below); --host
    # is refused by the server when it cannot bind (below); "garbage" is a DNS name (refusals below).
    for flag, (variable, _) in OPTIONS.items():
        if flag in ("metered-interfaces", "host", "connectivity-response", "dns-check"):
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



# --------------------------------------------------------------------------- targets, connectivity, readiness


def refused(*args: str, env: dict | None = None) -> str:
    """Runs reachd expecting a refusal at start (nothing served): its stderr."""
    result = run(*args, env=env, timeout=10)
    assert result.returncode == 64, (args, env, result.returncode, result.stdout, result.stderr)
    assert result.stdout == "", (args, env, result.stdout)
    return result.stderr


MALFORMED_TARGETS = [
    "garbage",  # no '='
    "=host://db.test",  # empty name
    "bad name=host://db.test",
    "a/b=host://db.test",
    "x" * 64 + "=host://db.test",  # a name of 64 characters
    "db=",  # no URL
    "db=db.test:5432",  # no scheme
    "db=ftp://db.test",
    "db=udp://db.test:53",
    "db=tcp://db.test",  # tcp without a port
    "db=tcp://db.test:0",
    "db=tcp://db.test:70000",
    "db=tcp://db.test:http",
    "db=tcp://db.test:5432/path",
    "db=host://db.test:53",  # host takes no port
    "db=host://",
    "db=http://",
    "db=http://user:secret@db.test/",
    "db=http://db.test/a path",
    "db=http://bad_host!/",
    "db=tcp://[2001:db8::1:5432",
    "db=tcp://2001:db8::1:5432",  # IPv6 without brackets
]


def test_every_malformed_target_is_refused_naming_the_spec():
    for spec in MALFORMED_TARGETS:
        stderr = refused("--target", spec)
        assert f'"{spec}"' in stderr and "--target" in stderr, (spec, stderr)
        if " " in spec:
            continue  # in the variable, a space separates specs
        stderr = refused(env={"REACHD_TARGETS": f"ok=host://ok.test {spec}"})
        assert f'"{spec}"' in stderr and "REACHD_TARGETS=" in stderr and "--target" in stderr, (spec, stderr)


def test_a_target_name_used_twice_is_refused_from_flags_and_from_the_variable():
    stderr = refused("--target", "db=tcp://db.test:5432", "--target", "db=host://other.test")
    assert '"db=host://other.test"' in stderr and "same name" in stderr, stderr
    stderr = refused(env={"REACHD_TARGETS": "db=tcp://db.test:5432\n  db=host://other.test"})
    assert '"db=host://other.test"' in stderr and "same name" in stderr and "REACHD_TARGETS" in stderr, stderr
    # Names are case-sensitive, as Prometheus labels are: these are two targets.
    with Reachd("--target", "db=host://127.0.0.1", "--target", "DB=host://127.0.0.1", "--ready-when", "always"):
        pass


def test_a_flag_holds_one_target_the_variable_several():
    # A flag is never split: its text is one spec (this one with an invalid host).
    stderr = refused("--target", "a=host://a.test b=host://b.test")
    assert '"a=host://a.test b=host://b.test"' in stderr and "--target" in stderr, stderr


def test_every_malformed_connectivity_url_is_refused_naming_it():
    for url in ["garbage", "ftp://check.test/", "tcp://check.test:80", "host://check.test", "http://",
                "http://user:pw@check.test/", "https://check.test:99999/", "http://check.test/a b"]:
        stderr = refused("--connectivity-url", url)
        assert f'"{url}"' in stderr and "--connectivity-url" in stderr, (url, stderr)
        stderr = refused(env={"REACHD_CONNECTIVITY_URL": url})
        assert f'"{url}"' in stderr and "REACHD_CONNECTIVITY_URL=" in stderr, (url, stderr)


def test_a_connectivity_response_needs_a_url_and_a_bounded_length():
    stderr = refused("--connectivity-response", "Success")
    assert "--connectivity-response" in stderr and "--connectivity-url" in stderr, stderr
    stderr = refused(env={"REACHD_CONNECTIVITY_RESPONSE": "Success"})
    assert "REACHD_CONNECTIVITY_RESPONSE" in stderr and "--connectivity-url" in stderr, stderr
    stderr = refused("--connectivity-url", "http://127.0.0.1:9/", "--connectivity-response", "x" * 4097)
    assert "--connectivity-response" in stderr and "4096" in stderr, stderr


def test_probe_timings_out_of_bounds_are_refused_naming_the_flag():
    # Every interval and timeout takes a positive number of seconds, every count an integer of
    # at least 1 (and each has a bound: `inf` seconds once crashed reachd at start).
    for flag, values in {
        "target-interval": ["0", "-1", "0.05", "86401", "nan", "inf", "ten"],
        "target-timeout": ["0", "-3", "601", "inf"],
        "target-failures": ["0", "-1", "1.5", "1001"],
        "target-successes": ["0", "-1", "1.5", "1001", "one", ""],
        "connectivity-interval": ["0", "-300", "86401", "inf"],
        "connectivity-timeout": ["0", "601", "nan"],
        "dns-interval": ["0", "-1", "0.05", "86401", "nan", "inf", "ten"],
        "dns-timeout": ["0", "-2", "601", "inf", "nan"],
        "dns-failures": ["0", "-1", "2.5", "1001", "three"],
        "heartbeat": ["0", "-1", "0.01", "inf", "nan", "1e300"],
        "shutdown-timeout": ["0", "-1", "inf", "nan", "1e300"],
        "connection-timeout": ["0", "-1", "1.5", "86401", "5000000000"],
    }.items():
        variable = OPTIONS[flag][0]
        for value in values:
            assert f"--{flag}" in refused(f"--{flag}", value), (flag, value)
            if value == "":
                continue  # an empty variable counts as unset
            stderr = refused(env={variable: value})
            assert f"{variable}={value}" in stderr and f"--{flag}" in stderr, (flag, value, stderr)


def test_the_probe_timings_accept_their_bounds():
    with Reachd("--target-interval", "0.1", "--target-timeout", "600", "--target-failures", "1",
                "--connectivity-interval", "86400", "--connectivity-timeout", "0.1"):
        pass
    # Without --dns-check nothing is asked: the DNS timings are only read.
    with Reachd("--target-successes", "1000", "--dns-interval", "0.1", "--dns-timeout", "600",
                "--dns-failures", "1000", "--heartbeat", "86400", "--shutdown-timeout", "0.05",
                "--connection-timeout", "86400"):
        pass
    with Reachd("--dns-interval", "86400", "--dns-timeout", "0.1", "--dns-failures", "1",
                env={"REACHD_TARGET_SUCCESSES": "7"}):
        pass


MALFORMED_DNS_NAMES = [
    ".",  # the root: no label
    "..",
    ".example.test",  # an empty first label
    "a..test",
    "example.test..",  # two trailing dots
    "a b.test",
    "a/b.test",
    "*.test",
    "a.test:53",
    "http://a.test",
    "bücher.test",  # not in its ASCII form (xn--bcher-kva.test)
    "a\tb.test",
    "x" * 64 + ".test",  # a label of 64
    ".".join(["a" * 63] * 4),  # 255 characters
    ".".join(["a" * 63] * 3) + "." + "a" * 62,  # 254
]

# At the limits: a label of 63, 253 characters (254 with the trailing dot), underscores, digits.
VALID_DNS_NAMES = [
    "kubernetes.default.svc.cluster.local.",
    "x" * 63 + ".test",
    ".".join(["a" * 63] * 3) + "." + "a" * 61,
    ".".join(["a" * 63] * 3) + "." + "a" * 61 + ".",
    "_dns._udp.example.test",
    "localhost",
    "0-9.test",
]


def test_every_malformed_dns_check_name_is_refused_naming_the_option():
    for name in MALFORMED_DNS_NAMES:
        stderr = refused("--dns-check", name)
        assert "--dns-check" in stderr and "DNS name" in stderr, (name, stderr)
        stderr = refused(env={"REACHD_DNS_CHECK": name})
        assert f"REACHD_DNS_CHECK={name}" in stderr and "--dns-check" in stderr, (name, stderr)


def test_a_valid_dns_check_name_passes_its_own_check():
    # Refused for something else (a target condition that names no target, checked after the
    # name): the name itself passed, and reachd never started asking anyone for it.
    for name in VALID_DNS_NAMES:
        for args, env in [(("--dns-check", name), {}), ((), {"REACHD_DNS_CHECK": name})]:
            stderr = refused(*args, "--ready-when", "target:none", env=env)
            assert "target:none" in stderr and "dns-check" not in stderr, (name, stderr)


def test_ready_when_dns_without_a_dns_check_is_refused():
    stderr = refused("--ready-when", "reachable,dns")
    assert "dns needs --dns-check" in stderr and "REACHD_DNS_CHECK" in stderr and "never" in stderr, stderr
    stderr = refused(env={"REACHD_READY_WHEN": "dns"})
    assert "REACHD_READY_WHEN" in stderr and "--dns-check" in stderr, stderr
    # An empty flag wins over the variable: no check, so the condition could never hold.
    stderr = refused("--ready-when", "dns", "--dns-check", "", env={"REACHD_DNS_CHECK": "a.test."})
    assert "dns needs --dns-check" in stderr, stderr


def test_every_malformed_ready_when_is_refused_naming_it():
    for value in ["sometimes", "Reachable", "reachable;online", "target", "target:", ",", "reachable,,nope"]:
        stderr = refused("--ready-when", value)
        assert "--ready-when" in stderr and "target:NAME" in stderr, (value, stderr)
        stderr = refused(env={"REACHD_READY_WHEN": value})
        assert f"REACHD_READY_WHEN={value}" in stderr, (value, stderr)


def test_a_ready_when_target_that_is_not_configured_is_refused():
    stderr = refused("--ready-when", "target:unknown")
    assert "target:unknown" in stderr and "no target is configured" in stderr, stderr
    stderr = refused("--target", "db=tcp://127.0.0.1:9", "--ready-when", "reachable,target:unknown")
    assert "target:unknown" in stderr and "db" in stderr, stderr
    stderr = refused(env={"REACHD_TARGETS": "db=tcp://127.0.0.1:9", "REACHD_READY_WHEN": "target:unknown"})
    assert "target:unknown" in stderr and "REACHD_READY_WHEN" in stderr, stderr
    # A flag wins over the variable: the variable's db is not configured then.
    stderr = refused("--target", "web=tcp://127.0.0.1:9", "--ready-when", "target:db",
                     env={"REACHD_TARGETS": "db=tcp://127.0.0.1:9"})
    assert "target:db" in stderr and "web" in stderr, stderr


def test_ready_when_online_without_a_connectivity_url_is_refused():
    stderr = refused("--ready-when", "online")
    assert "online" in stderr and "--connectivity-url" in stderr and "never" in stderr, stderr
    stderr = refused("--ready-when", "online", "--connectivity-url", "", env={"REACHD_CONNECTIVITY_URL": "http://x/"})
    assert "online" in stderr, stderr


def readyz(server: Reachd) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"{server.base}/readyz", timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_target_condition_serves_with_its_own_check():
    with Reachd("--target", "db=tcp://127.0.0.1:9", "--ready-when", "target:db") as server:
        status, document = readyz(server)
        # Not reachable yet (not probed, or nothing listens on the discard port): not ready.
        assert status == 503 and document["status"] == "fail", document
        assert document["description"] == "ready when target:db"
        assert list(document["checks"]) == ["target:db"], document
        (check,) = document["checks"]["target:db"]
        assert check["status"] == "fail" and check["componentType"] == "component", check
        assert check["observedValue"] in ("unknown", "unreachable"), check
        # Liveness never follows a target.
        with urllib.request.urlopen(f"{server.base}/livez", timeout=5) as response:
            assert response.status == 200
        assert "readyWhen=target:db" in listening_line(server)


def test_readiness_lists_one_check_per_condition_in_order():
    with Reachd(
        "--ready-when", "always,online,target:api,target:db,always",
        "--connectivity-url", "http://127.0.0.1:9/generate_204",
        env={"REACHD_TARGETS": "db=tcp://127.0.0.1:9  api=http://127.0.0.1:9/health"},
    ) as server:
        status, document = readyz(server)
        assert status == 503, document
        assert document["description"] == "ready when always,online,target:api,target:db"
        assert list(document["checks"]) == ["reachd:serving", "network:connectivity", "target:api", "target:db"]
        assert document["checks"]["reachd:serving"][0]["status"] == "pass"
        connectivity = document["checks"]["network:connectivity"][0]
        assert connectivity["componentType"] == "system" and connectivity["status"] == "fail", connectivity
        # Not checked yet, or refused (nothing listens on port 9): never `disabled`, a URL is set.
        assert connectivity["observedValue"] in ("unknown", "limited"), connectivity


def test_the_reachability_check_keeps_its_shape():
    with Reachd("--ready-when", "reachable") as server:
        status, document = readyz(server)
        assert document["description"] == "ready when reachable"
        (check,) = document["checks"]["network:reachability"]
        assert check["componentType"] == "system" and check["observedValue"] in ("reachable", "unreachable", "unknown")
        assert set(check) <= {"status", "componentType", "observedValue", "time", "output"}
        assert (status == 200) == (check["status"] == "pass") == ("output" not in check)


# --------------------------------------------------------------------------- status and watch, read


def document_with_probes(base: dict, targets: list[dict], connectivity: dict | None) -> dict:
    since = "2026-11-23T06:00:00.000Z"
    document = dict(base)
    document["targets"] = [{"reason": None, "addresses": [], "interface": None, "since": since, **t} for t in targets]
    document["connectivity"] = (
        {"state": "disabled", "url": None, "reason": None, "since": since}
        if connectivity is None else {"reason": None, "since": since, **connectivity}
    )
    return document


TARGETS = [
    {"name": "db", "url": "tcp://db.internal:5432", "state": "reachable", "addresses": ["198.18.1.10"],
     "interface": "eth0"},
    {"name": "api", "url": "https://api.internal/health", "state": "unreachable", "reason": "no-route",
     "addresses": ["198.18.2.1", "2001:db8::2"]},
    {"name": "cache", "url": "host://cache.internal", "state": "unknown"},
]


class FakeReachd:
    """A server that answers `/status` and `/events` with documents a test chose: how the client
    commands show targets and connectivity, before any probe runs."""

    def __init__(self, documents: list[dict]):
        self.documents = documents
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with client:
                request = b""
                while b"\r\n\r\n" not in request:
                    data = client.recv(4096)
                    if not data:
                        break
                    request += data
                path = request.split(b" ", 2)[1] if request.count(b" ") >= 2 else b"/"
                if path == b"/events":
                    client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                   b"Transfer-Encoding: chunked\r\n\r\n")
                    for sequence, document in enumerate(self.documents, start=1):
                        frame = f"id: {sequence}\nevent: status\ndata: {json.dumps(document)}\n\n".encode()
                        client.sendall(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
                    client.sendall(b"0\r\n\r\n")
                else:
                    body = json.dumps(self.documents[-1]).encode()
                    client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                   + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)

    def __enter__(self) -> "FakeReachd":
        return self

    def __exit__(self, *exc) -> None:
        self.listener.close()


def served_document() -> dict:
    with Reachd() as server:
        with urllib.request.urlopen(f"{server.base}/status", timeout=5) as response:
            return json.loads(response.read())


def test_status_shows_targets_and_connectivity():
    document = document_with_probes(
        served_document(), TARGETS,
        {"state": "limited", "url": "http://check.test/generate_204", "reason": "timeout"},
    )
    with FakeReachd([document]) as fake:
        result = run("status", "--port", str(fake.port))
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert "targets 1/3 reachable (api no-route, cache unknown), connectivity limited (timeout)" in lines[0]
        assert "  target db tcp://db.internal:5432 reachable via eth0 [198.18.1.10]" in lines
        assert "  target api https://api.internal/health unreachable (no-route) [198.18.2.1, 2001:db8::2]" in lines
        assert "  target cache host://cache.internal unknown" in lines
        assert "  connectivity limited (timeout) http://check.test/generate_204" in lines
        # --json is the document as served, untouched.
        result = run("status", "--json", "--port", str(fake.port))
        assert json.loads(result.stdout) == document


def test_status_shows_no_probe_lines_when_none_are_configured():
    document = document_with_probes(served_document(), [], None)
    with FakeReachd([document]) as fake:
        result = run("status", "--port", str(fake.port))
        assert result.returncode == 0, result.stderr
        assert "target" not in result.stdout and "connectivity" not in result.stdout, result.stdout


def test_watch_shows_targets_and_connectivity_one_line_per_change():
    base = served_document()
    full = {"state": "full", "url": "http://check.test/generate_204"}
    changed = [dict(TARGETS[0]), dict(TARGETS[1], reason="timeout"), dict(TARGETS[2], state="reachable")]
    documents = [
        document_with_probes(dict(base, sequence=1), TARGETS, full),
        document_with_probes(dict(base, sequence=2), changed, {"state": "portal", "url": full["url"]}),
    ]
    with FakeReachd(documents) as fake:
        result = run("watch", "--port", str(fake.port))
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert len(lines) == 2, lines
        assert lines[0].endswith(", targets 1/3 reachable (api no-route, cache unknown), connectivity full"), lines
        assert lines[1].endswith(", targets 2/3 reachable (api timeout), connectivity portal"), lines
