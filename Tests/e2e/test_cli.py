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
        assert result.stdout.splitlines()[0] == "/readyz: 503 fail", result.stdout
        # Liveness does not depend on the network.
        assert run("check", "--live", "--port", str(unready.port)).returncode == 0


def test_check_prints_each_failing_check_with_what_it_observed():
    with Reachd(*UNREACHABLE, "--ready-when", "always,reachable,target:db", "--target", "db=tcp://127.0.0.1:9") as server:
        _, document = readyz(server)
        result = run("check", "--port", str(server.port))
        assert result.returncode == 1, result
        lines = result.stdout.splitlines()
        assert lines[0] == "/readyz: 503 fail", lines
        expected = []
        for name, (check,) in sorted(document["checks"].items()):
            if check["status"] != "pass":
                expected.append(f"  {name} {check['observedValue']}: {check['output']}")
        # The route-based check and the target fail; `always` passes and is not printed. (The
        # target's observed value may change between the two reads: compare names and shape.)
        assert [line.split(" ")[2] for line in lines[1:]] == ["network:reachability", "target:db"], lines
        assert lines[1] == expected[0], (lines, expected)
        assert lines[2].startswith("  target:db ") and "target db is" in lines[2], lines


def test_check_exits_64_for_a_usage_mistake_and_1_for_no_answer():
    for args, env, reason in [
        (("--host", "example.org"), {}, "--host"),
        (("--port", "70000"), {}, "--port"),
        (("--port", "http"), {}, "--port"),
        (("--timeout", "0"), {}, "--timeout"),
        (("--timeout", "ten"), {}, "--timeout"),
        (("--ready", "--live"), {}, "--live"),
        ((), {"REACHD_PORT": "eighty"}, "REACHD_PORT"),
        ((), {"REACHD_HOST": "reachd.local"}, "REACHD_HOST"),
    ]:
        result = run("check", *args, env=env)
        assert result.returncode == 64, (args, env, result)
        assert reason in result.stderr, (args, env, result.stderr)
    # Nothing listens there: not a usage error, an outage.
    result = run("check", "--host", "localhost", "--port", str(free_port()), "--timeout", "1")
    assert result.returncode == 1 and "cannot connect" in result.stdout, result


def test_localhost_serves_on_loopback_and_the_clients_find_it():
    port = free_port()
    server = subprocess.Popen([reachd_binary(), "--host", "localhost", "--port", str(port), "--ready-when", "always"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 15
        while run("check", "--host", "localhost", "--port", str(port)).returncode != 0:
            assert server.poll() is None, server.stderr.read()
            assert time.monotonic() < deadline, "reachd --host localhost never answered"
            time.sleep(0.1)
        assert run("check", "--host", "127.0.0.1", "--port", str(port)).stdout == "/readyz: 200 pass\n"
        result = run("status", "--json", "--host", "LocalHost", "--port", str(port))
        assert result.returncode == 0 and "sequence" in json.loads(result.stdout), result
        # IPv4 loopback only: one listening socket.
        assert run("check", "--host", "::1", "--port", str(port), "--timeout", "1").returncode == 1
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_the_clients_fall_back_to_ipv6_loopback_for_localhost():
    port = free_port()
    server = subprocess.Popen([reachd_binary(), "--host", "::1", "--port", str(port), "--ready-when", "always"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while (result := run("check", "--host", "localhost", "--port", str(port))).returncode != 0:
            assert server.poll() is None
            assert time.monotonic() < deadline, result
            time.sleep(0.1)
        assert result.stdout == "/readyz: 200 pass\n", result
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_check_fails_when_nothing_listens():
    result = run("check", "--port", str(free_port()), "--timeout", "1")
    assert result.returncode == 1
    assert "cannot connect" in result.stdout


def test_watch_once_prints_the_current_status_and_ends_with_the_stream():
    server = Reachd("--heartbeat", "0.2")
    try:
        server.wait_ready()
        watch = subprocess.Popen(
            [reachd_binary(), "watch", "--once", "--port", str(server.port)], stdout=subprocess.PIPE, text=True
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


def test_watch_once_fails_when_nothing_listens():
    result = run("watch", "--once", "--port", str(free_port()))
    assert result.returncode == 1 and "cannot connect" in result.stderr, result


def read_line(stream, timeout: float) -> str:
    """The next line of a child's pipe, or AssertionError after `timeout` seconds."""
    found: list[str] = []
    reader = threading.Thread(target=lambda: found.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert found, f"no line within {timeout} s"
    return found[0]


def test_watch_reconnects_when_the_server_restarts():
    port = free_port()
    server = Reachd("--heartbeat", "0.2", port=port)
    watch = None
    try:
        server.wait_ready()
        watch = subprocess.Popen([reachd_binary(), "watch", "--port", str(port)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = read_line(watch.stdout, 10)
        assert re.search(r" #\d+ ", first), first
        assert server.terminate(signal.SIGTERM) == 0
        # The stream ended: it says so and waits (the server's retry:, 2 s and up to 3 s jitter).
        note = read_line(watch.stderr, 10)
        assert note.startswith("reachd watch: ") and "stream ended" in note, note
        note = read_line(watch.stderr, 10)
        assert "reconnecting in" in note and "Last-Event-ID: " in note, note
        # Nothing listens for a while: failed attempts double the pause.
        time.sleep(4)
        assert watch.poll() is None, "watch gave up"
        server = Reachd("--heartbeat", "0.2", port=port)
        server.wait_ready()
        # Back: it says so (the new server's sequence may equal the old one's, or be below it),
        # then prints the document's summary.
        note = read_line(watch.stdout, 40)
        assert note.startswith(("reconnected at #", "reachd restarted: ")), note
        again = read_line(watch.stdout, 10)
        assert re.search(r" #\d+ ", again), again
        assert watch.poll() is None
    finally:
        if watch:
            watch.kill()
            watch.wait()
        server.terminate(signal.SIGKILL)


def test_watch_sends_the_last_event_id_and_backs_off():
    base = served_document()
    documents = [dict(base, sequence=1), dict(base, sequence=2)]
    with FakeReachd(documents) as fake:
        watch = subprocess.Popen([reachd_binary(), "watch", "--port", str(fake.port)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # The fake's stream ends after two events, with retry: 100; each time watch comes back.
            deadline = time.monotonic() + 10
            while len(fake.requests) < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            watch.kill()
            _, errors = watch.communicate()
        assert len(fake.requests) >= 3, (fake.requests, errors)
        assert "last-event-id" not in fake.requests[0], fake.requests[0]
        assert fake.requests[1]["last-event-id"] == "2" and fake.requests[2]["last-event-id"] == "2"
        assert "reconnecting in 0.1 s (Last-Event-ID: 2)" in errors, errors


def test_invalid_options_are_refused_with_a_reason():
    for args, env, reason in [
        (("--port", "70000"), {}, "port"),
        (("--ready-when", "sometimes"), {}, "ready-when"),
        (("--log-format", "xml"), {}, "log-format"),
        (("--host", "example.org"), {}, "host"),
        (("--host", "localhost.localdomain"), {}, "host"),
        (("--ipv4-destination", "nowhere"), {}, "not an IP address"),
        ((), {"REACHD_PORT": "eighty"}, "REACHD_PORT"),
        ((), {"REACHD_HEARTBEAT": "-1"}, "heartbeat"),
    ]:
        # Validation fails before anything binds; a server that started instead times out here.
        result = run(*args, env=env, timeout=10)
        assert result.returncode == 64, (args, env, result)
        assert reason in (result.stdout + result.stderr), (args, env, result.stderr)


def test_a_port_in_use_is_refused_with_a_reason():
    with Reachd() as server:
        result = run("--host", "127.0.0.1", "--port", str(server.port), timeout=10)
        assert result.returncode == 1
        assert "cannot listen" in result.stderr


# The contract of every serving option, as docs/options.md states it. `None`: no default shown.
OPTIONS = {
    "host": ("REACHD_HOST", "0.0.0.0 to serve, 127.0.0.1 to ask"),
    "port": ("REACHD_PORT", "9478"),
    "heartbeat": ("REACHD_HEARTBEAT", "15"),
    "ready-when": ("REACHD_READY_WHEN", "reachable"),
    "allow-origin": ("REACHD_ALLOW_ORIGIN", "none"),
    "allowed-hosts": ("REACHD_ALLOWED_HOSTS", "none"),
    "metered-interfaces": ("REACHD_METERED_INTERFACES", None),
    "max-connections": ("REACHD_MAX_CONNECTIONS", "10000"),
    "max-connections-per-ip": ("REACHD_MAX_CONNECTIONS_PER_IP", "0"),
    "connection-timeout": ("REACHD_CONNECTION_TIMEOUT", "30"),
    "connection-memory": ("REACHD_CONNECTION_MEMORY", "24576"),
    "shutdown-timeout": ("REACHD_SHUTDOWN_TIMEOUT", "10"),
    "threads": ("REACHD_THREADS", "2"),
    "history": ("REACHD_HISTORY", "500"),
    "ipv4-destination": ("REACHD_IPV4_DESTINATION", "8.8.8.8"),
    "ipv6-destination": ("REACHD_IPV6_DESTINATION", "2001:4860:4860::8888"),
    "target": ("REACHD_TARGETS", None),
    "target-interval": ("REACHD_TARGET_INTERVAL", "10"),
    "target-timeout": ("REACHD_TARGET_TIMEOUT", "3"),
    "target-failures": ("REACHD_TARGET_FAILURES", "3"),
    "icmp-count": ("REACHD_ICMP_COUNT", "3"),
    "quality-window": ("REACHD_QUALITY_WINDOW", "10"),
    "max-loss": ("REACHD_MAX_LOSS", "0.2"),
    "max-rtt": ("REACHD_MAX_RTT", "none"),
    "target-successes": ("REACHD_TARGET_SUCCESSES", "1"),
    "targets-file": ("REACHD_TARGETS_FILE", "none"),
    "connectivity-url": ("REACHD_CONNECTIVITY_URL", "none"),
    "connectivity-response": ("REACHD_CONNECTIVITY_RESPONSE", None),
    "connectivity-interval": ("REACHD_CONNECTIVITY_INTERVAL", "300"),
    "connectivity-timeout": ("REACHD_CONNECTIVITY_TIMEOUT", "5"),
    "target-successes": ("REACHD_TARGET_SUCCESSES", "1"),
    "proxy": ("REACHD_PROXY", "the environment's"),
    "dns-check": ("REACHD_DNS_CHECK", "none"),
    "dns-interval": ("REACHD_DNS_INTERVAL", "10"),
    "dns-timeout": ("REACHD_DNS_TIMEOUT", "2"),
    "dns-failures": ("REACHD_DNS_FAILURES", "3"),
    "log-level": ("REACHD_LOG_LEVEL", "info"),
    "log-format": ("REACHD_LOG_FORMAT", "text"),
    "web-config-file": ("REACHD_WEB_CONFIG_FILE", "none"),
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
        # The one switch (no value): its variable and its default all the same.
        text = " ".join(run(*command, "--help").stdout.split())
        assert re.search(r"--per-uplink Run the connectivity check .*? \(env: REACHD_PER_UPLINK, default: off\)\.",
                         text), text


def test_the_client_commands_list_host_and_port_with_their_variables():
    for command in ["status", "watch", "check"]:
        entries = help_entries(command)
        assert "(env: REACHD_HOST," in entries["host"] and "(env: REACHD_PORT," in entries["port"], command
        assert "listen on" not in entries["host"] and "status, watch and check ask" in entries["host"], entries


def test_help_lists_every_endpoint_and_that_serving_needs_no_subcommand():
    result = run("--help")
    text = " ".join(result.stdout.split())
    for endpoint in ["GET /status", "GET /events", "GET /changes", "/healthz", "/livez", "/readyz", "GET /metrics", "GET / "]:
        assert endpoint in text, (endpoint, text)
    usage = result.stdout.split("USAGE:", 1)[1].split("OPTIONS:", 1)[0]
    assert "reachd [<options>]" in usage and "<options> <subcommand>" not in usage, usage


def test_a_comma_separated_targets_variable_names_the_separator():
    stderr = refused(env={"REACHD_TARGETS": "a=host://a.test,b=host://b.test"})
    assert "REACHD_TARGETS" in stderr and "separates specs with spaces, not commas" in stderr, stderr
    # Space-separated, the same specs are accepted.
    with Reachd(env={"REACHD_TARGETS": "a=host://127.0.0.1 b=host://127.0.0.1"}, ):
        pass


def test_a_malformed_variable_is_refused_naming_it_and_a_malformed_flag_naming_the_flag():
    # Any text is a pattern (or an expected response: refused only without a URL, below; "garbage"
    # is a host name for --allowed-hosts, whose refusals test_host_header.py checks, and a DNS
    # name for --dns-check, refused below).
    for flag, (variable, _) in OPTIONS.items():
        if flag in ("metered-interfaces", "connectivity-response", "allowed-hosts", "dns-check"):
            continue
        result = run(env={variable: "garbage"})
        assert result.returncode == 64, (variable, result.stdout, result.stderr)
        assert f"{variable}=garbage" in result.stderr and f"--{flag}" in result.stderr, (variable, result.stderr)
        result = run(f"--{flag}", "garbage")
        assert result.returncode == 64, (flag, result.stdout, result.stderr)
        assert f"--{flag}" in result.stderr, (flag, result.stderr)
    # A name is a usage error too; an address this host lacks is refused when binding (exit 1).
    result = run(env={"REACHD_HOST": "garbage"})
    assert result.returncode == 64 and "REACHD_HOST=garbage" in result.stderr, result.stderr
    result = run("--host", "192.0.2.1", "--port", str(free_port()))
    assert result.returncode == 1 and "cannot listen" in result.stderr, result.stderr


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
    # at least 1; anything else is refused (`inf` seconds once crashed reachd at start).
    for flag, values in {
        "target-interval": ["0", "-1", "nan", "inf", "ten", "-0.05"],
        "target-timeout": ["0", "-3", "inf"],
        "target-failures": ["0", "-1", "1.5"],
        "target-successes": ["0", "-1", "1.5", "one", ""],
        "connectivity-interval": ["0", "-300", "inf"],
        "connectivity-timeout": ["0", "nan"],
        "dns-interval": ["0", "-1", "nan", "inf", "ten"],
        "dns-timeout": ["0", "-2", "inf", "nan"],
        "dns-failures": ["0", "-1", "2.5", "three"],
        "heartbeat": ["0", "-1", "inf", "nan"],
        "shutdown-timeout": ["0", "-1", "inf", "nan"],
        "connection-timeout": ["0", "-1", "inf", "soon"],
    }.items():
        variable = OPTIONS[flag][0]
        for value in values:
            assert f"--{flag}" in refused(f"--{flag}", value), (flag, value)
            if value == "":
                continue  # an empty variable counts as unset
            stderr = refused(env={variable: value})
            assert f"{variable}={value}" in stderr and f"--{flag}" in stderr, (flag, value, stderr)


def test_the_probe_timings_accept_every_positive_value():
    # Values beyond what reachd can honour count as the nearer bound (said in --help): no
    # positive number of seconds and no count of at least 1 is refused.
    with Reachd("--target-interval", "0.05", "--target-timeout", "100000", "--target-failures", "1",
                "--connectivity-interval", "1e300", "--connectivity-timeout", "0.001"):
        pass
    # Without --dns-check nothing is asked: the DNS timings are only read.
    with Reachd("--target-successes", "5000", "--dns-interval", "0.01", "--dns-timeout", "600",
                "--dns-failures", "1000000", "--heartbeat", "1e300", "--shutdown-timeout", "0.0001",
                "--connection-timeout", "0.5"):
        pass
    with Reachd("--dns-interval", "86401", "--dns-timeout", "0.1", "--dns-failures", "1",
                "--connection-timeout", "5000000000", env={"REACHD_TARGET_SUCCESSES": "7"}):
        pass
    help_text = run("--help").stdout
    assert "less than 0.1 counts as 0.1, more than 86400 as 86400" in " ".join(help_text.split()), help_text


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
    # An empty variable is unset: no check, so the condition could never hold.
    stderr = refused("--ready-when", "dns", env={"REACHD_DNS_CHECK": ""})
    assert "dns needs --dns-check" in stderr, stderr
    # An empty flag is not a name at all.
    stderr = refused("--dns-check", "")
    assert "--dns-check" in stderr and "DNS name" in stderr, stderr


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
    # Every field openapi.yaml requires: the client decodes the document as the contract has it.
    families = {"ipv4": None, "ipv6": None, "degraded": False}
    document = dict(base)
    document["targets"] = [{"reason": None, "addresses": [], "interface": None, "since": since, **families, **t}
                           for t in targets]
    document["connectivity"] = (
        {"state": "disabled", "url": None, "reason": None, "since": since, **families}
        if connectivity is None else {"reason": None, "since": since, **families, **connectivity}
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
        # The headers of each request, by lowercased name.
        self.requests: list[dict[str, str]] = []
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
                lines = request.decode(errors="replace").split("\r\n")[1:]
                self.requests.append({k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines if l)})
                if path == b"/events":
                    client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                   b"Transfer-Encoding: chunked\r\n\r\n")
                    client.sendall(b"b\r\nretry: 100\n\r\n")
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
    since = document["connectivity"]["since"]
    # Every field shows: a family's address and interface, each `since`, DNS and its servers.
    document["targets"][0]["ipv4"] = {"state": "reachable", "reason": None, "address": "198.18.1.10",
                                      "interface": "eth0"}
    document["dns"] = {"state": "degraded", "name": "a.test.", "reason": None, "since": since, "servers": [
        {"address": "198.18.9.1", "state": "answering", "reason": None, "since": since},
        {"address": "198.18.9.2", "state": "failing", "reason": "timeout", "since": since}]}
    with FakeReachd([document]) as fake:
        result = run("status", "--port", str(fake.port))
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert ("targets 1/3 reachable (api no-route, cache unknown), connectivity limited (timeout), "
                "dns degraded (198.18.9.2 timeout)") in lines[0]
        assert (f"  target db tcp://db.internal:5432 reachable via eth0 [198.18.1.10] since {since}; "
                "ipv4 reachable 198.18.1.10 via eth0") in lines
        assert (f"  target api https://api.internal/health unreachable (no-route) [198.18.2.1, 2001:db8::2] "
                f"since {since}") in lines
        assert f"  target cache host://cache.internal unknown since {since}" in lines
        assert f"  connectivity limited (timeout) http://check.test/generate_204 since {since}" in lines
        assert lines[-3:] == [f"  dns degraded a.test. since {since}",
                              f"    nameserver 198.18.9.1 answering since {since}",
                              f"    nameserver 198.18.9.2 failing (timeout) since {since}"], lines
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
        result = run("watch", "--once", "--port", str(fake.port))
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        # One summary per document; under the second, its diff in words (indented).
        summaries = [line for line in lines if not line.startswith("  ")]
        assert len(summaries) == 2 and lines[0] == summaries[0], lines
        assert summaries[0].endswith(", targets 1/3 reachable (api no-route, cache unknown), connectivity full"), lines
        assert summaries[1].endswith(", targets 2/3 reachable (api timeout), connectivity portal"), lines
        assert lines[2:] == ["  target api: still unreachable (timeout)", "  target cache: unknown → reachable",
                             "  connectivity: full → portal"], lines


# --------------------------------------------------------------------------- logs

RFC3339_MILLIS_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def log_lines(server: Reachd, message: str, timeout: float = 10) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        lines = [line for line in server.output().splitlines() if message in line]
        if lines:
            return lines
        time.sleep(0.05)
    raise AssertionError(server.output())


def test_a_fleets_status_change_line_lists_the_targets_that_changed_and_counts_them_all():
    # 101 targets on loopback ports nobody listens on (refused); then one starts listening. Beyond
    # 100 targets the line lists only the targets that changed, and counts every target. Each port
    # is held bound, never listening, until the end: a port merely closed was free to be taken by
    # another listener meanwhile (once in CI two such targets turned reachable beside t7).
    held = []
    for _ in range(101):
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        probe.bind(("127.0.0.1", 0))
        held.append(probe)
    closed = [probe.getsockname()[1] for probe in held]
    args = ["--log-format", "json", "--target-interval", "0.2"]
    for index, port in enumerate(closed):
        args += ["--target", f"t{index}=tcp://127.0.0.1:{port}"]
    try:
        with Reachd(*args) as server:
            def document():
                with urllib.request.urlopen(f"{server.base}/status", timeout=5) as response:
                    return json.loads(response.read())

            deadline = time.monotonic() + 20
            while not all(t["state"] == "unreachable" for t in document()["targets"]):
                assert time.monotonic() < deadline, document()
                time.sleep(0.1)
            held[7].close()
            listener = socket.create_server(("127.0.0.1", closed[7]))
            try:
                while (current := document())["targets"][7]["state"] != "reachable":
                    assert time.monotonic() < deadline, current
                    time.sleep(0.1)
                lines = [json.loads(line) for line in log_lines(server, "status changed")]
                entry = next(e for e in lines if e["sequence"] == current["sequence"])
                assert entry["targets"] == [{"name": "t7", "state": "reachable"}], entry
                assert entry["targetsChanged"] == 1, entry
                assert entry["targetCounts"] == {"reachable": 1, "unreachable": 100, "unknown": 0, "degraded": 0}, entry
                assert entry["unreachableReasons"] == {"refused": 100}, entry
                assert entry["state"] == current["state"] and entry["sequence"] == current["sequence"], entry
                # Every line lists the targets that changed, up to 100 of them; the counts add up.
                for line in lines:
                    assert len(line["targets"]) == min(100, line["targetsChanged"]), line
                    assert sum(line["targetCounts"][s] for s in ("reachable", "unreachable", "unknown")) == 101, line
            finally:
                listener.close()
    finally:
        for probe in held:
            probe.close()


def test_json_logs_are_typed_with_utc_millisecond_times():
    with Reachd("--log-format", "json", "--ready-when", "always") as server:
        (line,) = log_lines(server, "reachd listening")
        entry = json.loads(line)
        assert RFC3339_MILLIS_UTC.match(entry["time"]), entry
        assert entry["level"] == "info" and entry["message"] == "reachd listening", entry
        assert entry["targets"] == 0 and entry["connectivity"] is None, entry
        assert entry["readyWhen"] == "always" and isinstance(entry["address"], str), entry
        # A rejected request's warning: the time is typed the same way.
        try:
            urllib.request.urlopen(f"{server.base}/nowhere", timeout=5)
        except urllib.error.HTTPError:
            pass
        warning = json.loads(log_lines(server, "rejected request")[0])
        assert RFC3339_MILLIS_UTC.match(warning["time"]) and warning["level"] == "warning", warning


def test_text_logs_start_with_a_utc_millisecond_time():
    with Reachd("--ready-when", "always", "--connectivity-url", "http://127.0.0.1:9/generate_204") as server:
        (line,) = log_lines(server, "reachd listening")
        time_text, level, label, rest = line.split(" ", 3)
        assert RFC3339_MILLIS_UTC.match(time_text) and level == "info" and label == "reachd:", line
        assert "targets=0" in rest and "connectivity=http://127.0.0.1:9/generate_204" in rest, line


def test_a_status_change_logs_one_line_named_as_the_document():
    # A target on loopback that turns reachable: a change of the document, nothing leaves the host.
    listener = socket.create_server(("127.0.0.1", 0))
    try:
        target = f"db=tcp://127.0.0.1:{listener.getsockname()[1]}"
        with Reachd("--log-format", "json", "--target", target, "--target-interval", "0.2") as server:
            deadline = time.monotonic() + 10
            while True:
                with urllib.request.urlopen(f"{server.base}/status", timeout=5) as response:
                    document = json.loads(response.read())
                if document["targets"][0]["state"] == "reachable":
                    break
                assert time.monotonic() < deadline, document
                time.sleep(0.1)
            entries = [json.loads(line) for line in log_lines(server, "status changed")]
            entry = next(e for e in entries if e["sequence"] == document["sequence"])
            assert sum(1 for e in entries if e["sequence"] == document["sequence"]) == 1, entries
            for field in ["sequence", "changedAt", "state", "ipv4", "ipv6", "transport", "isDataMetered"]:
                assert entry[field] == document[field], (field, entry, document)
            assert entry["targets"] == [{"name": "db", "state": "reachable"}], entry
            assert entry["connectivity"] == {"state": "disabled"}, entry
            assert entry["dns"] == {"state": "disabled"}, entry
    finally:
        listener.close()
