"""`reachd wait` (docs/wait.md): the monitor and the probes in the process itself,
no port bound, until every condition of `--for` holds (exit 0); at `--timeout`, or on SIGTERM or
SIGINT, the same lines and exit 1; usage errors exit 64 before anything is probed.

Black-box against the real binary, in namespaces this test creates: an online one (veth with a
default route), one whose default route arrives later, a bare one (nothing reachable), and the
world of world.py for a target that never answers and for nameservers that do or do not answer.
On the host only usage errors run, with IP literals (nothing to resolve, nothing sent).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time

import pytest

import netns
from reachd_process import reachd_binary
from world import world  # noqa: F401

LINE_FORMAT = "CONDITION pass|fail [STATE] [(REASON)]"


class Waiter:
    """One `reachd wait` process (in a namespace, or on the host); stderr read as it comes."""

    def __init__(self, *args: str, ns: str | None = None, env: dict | None = None) -> None:
        command = [reachd_binary(), "wait", *args]
        if ns:
            command = ["ip", "netns", "exec", ns, *command]  # ip execs: the pid is reachd's
        self.started = time.monotonic()
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env={**os.environ, **(env or {})})
        self.stderr: list[str] = []
        self._waiting = threading.Event()
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        self.stdout = ""
        self.ended: float | None = None

    def _read_stderr(self) -> None:
        for line in self.process.stderr:
            self.stderr.append(line)
            if "reachd waiting" in line:
                self._waiting.set()

    def wait_waiting(self, timeout: float = 15) -> None:
        """Until the process says it waits: its signal handlers are in place from then on."""
        if not self._waiting.wait(timeout):
            self.process.kill()
            raise AssertionError(f"reachd wait did not start waiting: {self.error_text()}")

    def finish(self, timeout: float) -> int:
        """Its exit status; stdout kept in `stdout`, the exit time in `ended`. (Not `communicate`:
        it would read stderr too, racing the reader thread. A few lines fit the pipe's buffer.)"""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"reachd wait still running after {timeout} s: {self.error_text()}")
        self.ended = time.monotonic()
        self.stdout = self.process.stdout.read()
        self._reader.join(5)
        return self.process.returncode

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()

    @property
    def elapsed(self) -> float:
        assert self.ended is not None
        return self.ended - self.started

    def error_text(self) -> str:
        return "".join(self.stderr)[-3000:]

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def waiters():
    """Every `reachd wait` a test starts is gone at its end, whatever the outcome."""
    started: list[Waiter] = []

    def make(*args: str, ns: str | None = None, env: dict | None = None) -> Waiter:
        waiter = Waiter(*args, ns=ns, env=env)
        started.append(waiter)
        return waiter

    yield make
    for waiter in started:
        waiter.kill()


@pytest.fixture
def routeless():
    """A namespace with a veth link (carrier up) and its address, but no default route yet."""
    network = netns.VethNetwork(default_route=False)
    try:
        network.wait_carrier()
        yield network
    finally:
        network.delete()


def listening_sockets(ns: str) -> str:
    """Every listening TCP socket and bound UDP socket in `ns`, as `ss` lists them."""
    result = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Hlntu"], capture_output=True, text=True, timeout=10)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


# --------------------------------------------------------------------------- online, or not yet


@pytest.mark.netns
def test_an_online_namespace_passes_at_once(veth, waiters):
    waiter = waiters("--timeout", "30", ns=veth.ns.name)
    assert waiter.finish(timeout=15) == 0, waiter.error_text()
    assert waiter.lines == ["reachable pass reachable"]
    # Nothing to wait for: far from the timeout (the time includes `ip netns exec` and start-up).
    assert waiter.elapsed < 3, waiter.elapsed
    assert "reachd waiting" in waiter.error_text(), "logs go to stderr"


@pytest.mark.netns
def test_timeout_0_is_accepted_and_an_online_namespace_still_passes_at_once(veth, waiters):
    waiter = waiters("--timeout", "0", ns=veth.ns.name)
    assert waiter.finish(timeout=15) == 0, waiter.error_text()
    assert waiter.lines == ["reachable pass reachable"]


@pytest.mark.netns
def test_it_passes_soon_after_a_default_route_arrives_not_at_the_timeout(routeless, waiters):
    waiter = waiters("--timeout", "30", ns=routeless.ns.name)
    waiter.wait_waiting()
    time.sleep(2)
    assert waiter.process.poll() is None, f"exited before the route: {waiter.process.poll()} {waiter.error_text()}"
    added = time.monotonic()
    routeless.add_default_route()
    assert waiter.finish(timeout=15) == 0, waiter.error_text()
    assert waiter.lines == ["reachable pass reachable"]
    # Event-driven: the route's netlink notification ends the wait, not a poll or the timeout.
    assert waiter.ended - added < 1.0, waiter.ended - added


@pytest.mark.netns
def test_the_environment_gives_the_conditions_and_the_timeout(routeless, waiters):
    waiter = waiters(ns=routeless.ns.name, env={"REACHD_WAIT_FOR": "reachable,always", "REACHD_WAIT_TIMEOUT": "1.5"})
    assert waiter.finish(timeout=15) == 1, waiter.error_text()
    assert waiter.lines == ["reachable fail unreachable", "always pass"]
    assert 1.5 <= waiter.elapsed < 5, waiter.elapsed


# --------------------------------------------------------------------------- failing at the timeout


@pytest.mark.netns
def test_a_target_that_never_answers_fails_at_the_timeout_with_its_reason(world, waiters):
    # An address the gateway drops silently: every probe times out.
    waiter = waiters("--for", "reachable,target:silent", "--target", f"silent=tcp://{world.silent_ip}:5432",
                     "--target-timeout", "1", "--timeout", "4", ns=world.client.name)
    assert waiter.finish(timeout=20) == 1, waiter.error_text()
    assert waiter.lines == ["reachable pass reachable", "target:silent fail unreachable (timeout)"]
    assert 4 <= waiter.elapsed < 7, waiter.elapsed


@pytest.mark.netns
def test_a_target_that_answers_passes_as_soon_as_it_is_probed(world, waiters):
    server = world.server()
    waiter = waiters("--for", "target:db", "--target", f"db=tcp://db.test:{server.port}", "--timeout", "30",
                     ns=world.client.name)
    assert waiter.finish(timeout=20) == 0, waiter.error_text()
    assert waiter.lines == ["target:db pass reachable"]
    assert waiter.elapsed < 5, waiter.elapsed


@pytest.mark.netns
def test_a_failing_dns_check_fails_at_the_timeout_and_an_answering_one_passes(world, waiters):
    # The only nameserver never answers: every server (and so the check) fails with timeout.
    world.set_nameservers(world.dns_silent_ip)
    failing = waiters("--for", "dns", "--dns-check", "db.test.", "--dns-timeout", "1", "--timeout", "3",
                      ns=world.client.name)
    assert failing.finish(timeout=20) == 1, failing.error_text()
    assert failing.lines == ["dns fail failing (timeout)"]
    assert 3 <= failing.elapsed < 6, failing.elapsed

    world.set_nameservers(world.gateway_ip)
    answering = waiters("--for", "dns", "--dns-check", "db.test.", "--timeout", "30", ns=world.client.name)
    assert answering.finish(timeout=20) == 0, answering.error_text()
    assert answering.lines == ["dns pass ok"]
    assert answering.elapsed < 5, answering.elapsed


# --------------------------------------------------------------------------- signals, no port


@pytest.mark.netns
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_waiting_prints_the_lines_and_exits_1(bare_namespace, waiters, sig):
    waiter = waiters("--for", "reachable,always", "--timeout", "0", ns=bare_namespace.name)
    waiter.wait_waiting()
    time.sleep(0.3)
    assert waiter.process.poll() is None, waiter.error_text()
    sent = time.monotonic()
    waiter.process.send_signal(sig)
    assert waiter.finish(timeout=10) == 1, waiter.error_text()
    assert waiter.lines == ["reachable fail unreachable", "always pass"]
    assert waiter.ended - sent < 3, waiter.ended - sent


@pytest.mark.netns
def test_it_binds_no_port_even_with_probes(world, waiters):
    waiter = waiters("--for", "target:silent", "--target", f"silent=tcp://{world.silent_ip}:5432",
                     "--target-timeout", "1", "--dns-check", "db.test.", "--timeout", "0", ns=world.client.name)
    waiter.wait_waiting()
    time.sleep(1.5)  # the DNS check has answered, the target's first probe has timed out
    assert waiter.process.poll() is None, waiter.error_text()
    assert listening_sockets(world.client.name) == ""
    fds = os.listdir(f"/proc/{waiter.process.pid}/fd")
    assert fds, "the process is there"
    waiter.process.send_signal(signal.SIGTERM)
    assert waiter.finish(timeout=10) == 1, waiter.error_text()
    assert waiter.lines == ["target:silent fail unreachable (timeout)"]


# --------------------------------------------------------------------------- usage errors: 64


def run_wait(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([reachd_binary(), "wait", *args], capture_output=True, text=True, timeout=15,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("args, env, named", [
    (["--for", "reachable,bogus"], None, ['--for', 'unknown condition "bogus"']),
    (["--for", ""], None, ["--for", "no condition given"]),
    (["--for", "target:db"], None, ["--for", "target:db names no configured target"]),
    (["--for", "online"], None, ["--for", "online needs --connectivity-url"]),
    (["--for", "dns"], None, ["--for", "dns needs --dns-check"]),
    ([], {"REACHD_WAIT_FOR": "bogus"}, ["REACHD_WAIT_FOR=bogus", 'unknown condition "bogus"']),
    (["--for", "online:wan1", "--connectivity-url", "http://127.0.0.1:9/"], None,
     ["--for", "online:wan1 needs --per-uplink"]),
    (["--for", "online:abcdefghijklmnop", "--connectivity-url", "http://127.0.0.1:9/", "--per-uplink"], None,
     ["--for", "online:abcdefghijklmnop", "no interface name"]),
    (["--per-uplink"], None, ["--per-uplink needs --connectivity-url"]),
    ([], {"REACHD_PER_UPLINK": "1"}, ["REACHD_PER_UPLINK (--per-uplink) needs --connectivity-url"]),
    ([], {"REACHD_PER_UPLINK": "maybe"}, ["REACHD_PER_UPLINK=maybe is invalid for --per-uplink"]),
], ids=["unknown", "empty", "unknown-target", "online-without-url", "dns-without-check", "variable",
        "uplink-without-per-uplink", "uplink-name-too-long", "per-uplink-without-url", "per-uplink-variable",
        "per-uplink-variable-word"])
def test_a_bad_condition_exits_64_naming_it(args, env, named):
    result = run_wait(*args, env=env)
    assert result.returncode == 64, (result.returncode, result.stdout, result.stderr)
    for text in named:
        assert text in result.stderr, (text, result.stderr)
    assert result.stdout == "", "no condition line for a usage error"


@pytest.mark.parametrize("args, env, named", [
    (["--target", "bad name=tcp://127.0.0.1:1"], None, ["--target"]),
    (["--target", "db=ftp://127.0.0.1/"], None, ["--target"]),
    (["--target", "db=tcp://127.0.0.1:1", "--target", "db=tcp://127.0.0.1:2"], None, ["--target", "db"]),
    (["--connectivity-url", "gopher://127.0.0.1/"], None, ["--connectivity-url"]),
    (["--dns-check", "bad..name"], None, ["--dns-check"]),
    (["--timeout", "-1"], None, ["--timeout"]),
    (["--timeout", "inf"], None, ["--timeout"]),
    (["--timeout", "soon"], None, ["--timeout"]),
    ([], {"REACHD_WAIT_TIMEOUT": "nan"}, ["REACHD_WAIT_TIMEOUT"]),
    (["--target-interval", "0"], None, ["--target-interval"]),
], ids=["target-name", "target-scheme", "target-twice", "connectivity-url", "dns-name", "timeout-negative",
        "timeout-inf", "timeout-word", "timeout-variable", "interval"])
def test_a_bad_spec_exits_64_naming_the_option(args, env, named):
    result = run_wait(*args, env=env)
    assert result.returncode == 64, (result.returncode, result.stdout, result.stderr)
    for text in named:
        assert text in result.stderr, (text, result.stderr)


def test_a_usage_error_is_refused_before_anything_is_probed():
    # A target on a loopback port that counts connections, and a condition naming another one:
    # refused at start, so the target is never probed.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.5)
    try:
        port = listener.getsockname()[1]
        result = run_wait("--for", "target:other", "--target", f"here=tcp://127.0.0.1:{port}", "--timeout", "5")
        assert result.returncode == 64, result.stderr
        assert "target:other names no configured target; the targets are here" in result.stderr, result.stderr
        with pytest.raises(socket.timeout):
            listener.accept()
        # The same target with a condition that names it is probed (the check above can fail).
        result = run_wait("--for", "target:here", "--target", f"here=tcp://127.0.0.1:{port}", "--timeout", "5")
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == ["target:here pass reachable"]
        connection, _ = listener.accept()
        connection.close()
    finally:
        listener.close()


def test_help_documents_the_lines_the_exit_status_and_takes_no_serving_option():
    result = run_wait("--help")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert LINE_FORMAT in text, text
    for words in ["0 when every condition holds", "1 at --timeout, on SIGTERM or SIGINT", "64 for a usage error",
                  "binds no port", "(env: REACHD_WAIT_FOR, default: reachable)",
                  "(env: REACHD_WAIT_TIMEOUT, default: 60)", "--dns-check", "--target", "--connectivity-url"]:
        assert words in text, words
    for serving in ["--port", "--host", "--threads", "--ready-when", "--max-connections", "--heartbeat"]:
        assert f"{serving} <" not in text, serving
