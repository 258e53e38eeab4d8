"""`GET /changes` and `reachd watch`'s diff lines against real changes: a route removed and
restored in a namespace, a target's server stopped, the ring bound of `--history`, the HTTP
contract shared with `/status`, and a restart seen by `watch`."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import get_status, http, wait_until
from reachd_process import Reachd, free_port, reachd_binary

# Multicast destinations never get a unicast route: an instance on the host that asks nothing.
UNREACHABLE = ("--ipv4-destination", "224.0.0.1", "--ipv6-destination", "ff02::1")


def changes(server, ns: str | None = None) -> list[dict]:
    response = http(server.port, "GET", "/changes", ns=ns)
    assert response.status == 200 and response.header("content-type") == "application/json", response
    return response.json()["changes"]


def change_with(server, sequence: int, ns: str | None = None, timeout: float = 10) -> dict:
    """The change of `sequence`, once `/changes` holds it."""
    return wait_until(lambda: next((c for c in changes(server, ns) if c["sequence"] == sequence), None),
                      timeout=timeout, message=f"change #{sequence} in /changes")


def state_becomes(server, ns: str, state: str) -> dict:
    return wait_until(lambda: (d := get_status(server.port, ns=ns))["state"] == state and d,
                      timeout=10, message=f"state {state}")


@pytest.mark.netns
def test_a_route_change_is_exactly_its_diff_in_order(veth, reachd_factory):
    server = reachd_factory(netns=veth.ns.name)
    before = state_becomes(server, veth.ns.name, "reachable")
    veth.del_default_route()
    down = state_becomes(server, veth.ns.name, "unreachable")
    veth.add_default_route()
    up = state_becomes(server, veth.ns.name, "reachable")
    lost = change_with(server, down["sequence"], veth.ns.name)
    back = change_with(server, up["sequence"], veth.ns.name)
    assert lost["changedAt"] == down["changedAt"] and down["sequence"] > before["sequence"]
    # The cause came with the loss: a whole object, from null (DESIGN "The cause first").
    cause = {"layer": "route", "family": None, "subject": None, "text": "no IPv4 route out",
             "since": down["changedAt"]}
    assert down["cause"] == cause, down["cause"]
    route_lost = [
        {"field": "state", "from": "reachable", "to": "unreachable"},
        {"field": "isReachable", "from": True, "to": False},
        {"field": "cause", "from": None, "to": cause},
        {"field": "ipv4", "from": True, "to": False},
        {"field": "transport.ethernet", "from": True, "to": False},
        {"field": f"interfaces.{veth.link}.isDefaultRoute", "from": True, "to": False},
    ]
    assert lost["diff"] == route_lost, lost
    assert back["diff"] == [dict(entry, **{"from": entry["to"], "to": entry["from"]}) for entry in route_lost], back
    # Oldest first, and nothing after the last document.
    sequences = [c["sequence"] for c in changes(server, veth.ns.name)]
    assert sequences == sorted(sequences) and sequences[-1] == up["sequence"], sequences


@pytest.mark.netns
def test_history_keeps_only_the_newest_changes(veth, reachd_factory):
    server = reachd_factory("--history", "3", netns=veth.ns.name)
    state_becomes(server, veth.ns.name, "reachable")
    for _ in range(3):
        veth.del_default_route()
        state_becomes(server, veth.ns.name, "unreachable")
        veth.add_default_route()
        last = state_becomes(server, veth.ns.name, "reachable")
    change_with(server, last["sequence"], veth.ns.name)
    kept = changes(server, veth.ns.name)
    assert [c["sequence"] for c in kept] == [last["sequence"] - 2, last["sequence"] - 1, last["sequence"]], kept
    metrics = http(server.port, "GET", "/metrics", ns=veth.ns.name).body.decode()
    assert re.search(r"^reachd_changes_kept 3(\.0)?$", metrics, re.M), metrics


@pytest.mark.netns
def test_a_stopped_target_server_is_its_state_diff(bare_namespace, reachd_factory):
    port = 8080
    target = subprocess.Popen(
        ["ip", "netns", "exec", bare_namespace.name, "python3", "-m", "http.server", "--bind", "127.0.0.1", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        server = reachd_factory("--target", f"web=http://127.0.0.1:{port}/", "--target-interval", "0.2",
                                "--target-failures", "1", "--ready-when", "always", netns=bare_namespace.name)
        wait_until(lambda: get_status(server.port, ns=bare_namespace.name)["targets"][0]["state"] == "reachable",
                   timeout=15, message="target reachable")
        target.terminate()
        target.wait(timeout=10)
        down = wait_until(
            lambda: (d := get_status(server.port, ns=bare_namespace.name))["targets"][0]["state"] == "unreachable" and d,
            timeout=15, message="target unreachable")
        diff = change_with(server, down["sequence"], bare_namespace.name)["diff"]
        fields = {entry["field"]: (entry["from"], entry["to"]) for entry in diff}
        assert fields["targets.web.state"] == ("reachable", "unreachable"), diff
        assert fields["targets.web.reason"] == (None, "refused"), diff
        assert not any(entry["field"].endswith(".since") for entry in diff), diff
    finally:
        if target.poll() is None:
            target.kill()
        target.wait()


def test_changes_answers_head_405_and_the_host_check_as_status_does():
    with Reachd(*UNREACHABLE) as server:
        get = http(server.port, "GET", "/changes")
        assert get.status == 200 and get.json() == {"changes": []}, get
        assert get.header("cache-control") == "no-cache"
        head = http(server.port, "HEAD", "/changes")
        assert head.status == 200 and head.body == b"", head
        assert head.header("content-length") == get.header("content-length")
        for method in ["POST", "DELETE", "OPTIONS"]:
            refused = http(server.port, method, "/changes")
            assert refused.status == 405 and refused.header("allow") == "GET, HEAD", (method, refused)
        misdirected = http(server.port, "GET", "/changes", headers={"Host": "rebound.example.com"})
        assert misdirected.status == 421, misdirected
        assert misdirected.header("content-type") == "application/problem+json"


@pytest.mark.parametrize("args, env", [
    (("--history", "0"), {}), (("--history=-1",), {}), (("--history", "many"), {}), (("--history", "1.5"), {}),
    ((), {"REACHD_HISTORY": "0"}), ((), {"REACHD_HISTORY": "x"}),
])
def test_a_bad_history_is_refused_at_start(args, env):
    result = subprocess.run([reachd_binary(), *UNREACHABLE, "--host", "127.0.0.1", "--port", str(free_port()), *args],
                            capture_output=True, text=True, timeout=10, env={**os.environ, **env})
    assert result.returncode == 64, result
    assert "history" in result.stderr.lower() and "must be at least 1" in result.stderr, result.stderr


class Listener:
    """A TCP port on loopback that accepts (reachable) until closed (refused)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            connection.close()

    def close(self) -> None:
        self.sock.close()


def read_line(stream, timeout: float) -> str:
    found: list[str] = []
    reader = threading.Thread(target=lambda: found.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert found and found[0], f"no line within {timeout} s"
    return found[0].rstrip("\n")


def read_until(stream, predicate, timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    lines: list[str] = []
    while not lines or not predicate(lines[-1]):
        lines.append(read_line(stream, max(0.1, deadline - time.monotonic())))
    return lines


def test_watch_prints_a_target_flip_and_says_when_the_server_restarted():
    listener = Listener()
    port = free_port()
    probing = ("--target", f"db=tcp://127.0.0.1:{listener.port}", "--target-interval", "0.2", "--target-failures", "1",
               "--ready-when", "always", *UNREACHABLE)
    server = Reachd(*probing, port=port)
    watch = None
    try:
        server.wait_ready()
        wait_until(lambda: get_status(server.port)["targets"][0]["state"] == "reachable", timeout=10,
                   message="target reachable")
        watch = subprocess.Popen([reachd_binary(), "watch", "--port", str(port)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = read_line(watch.stdout, 10)
        assert re.search(r" #\d+ ", first), first
        listener.close()
        lines = read_until(watch.stdout, lambda line: line.startswith("  target db: "), 15)
        assert lines[-1].startswith("  target db: reachable → unreachable (refused"), lines
        last_sequence = get_status(server.port)["sequence"]
        assert server.terminate(signal.SIGTERM) == 0
        # Restarted on the same port: its sequence starts again below the last one seen.
        server = Reachd(*probing, port=port)
        server.wait_ready()
        note = read_until(watch.stdout, lambda line: "restarted" in line or line.startswith("reconnected"), 40)[-1]
        assert note.startswith("reachd restarted: its sequence went back from "
                               f"#{last_sequence} to #"), (note, last_sequence)
        assert watch.poll() is None
    finally:
        if watch:
            watch.kill()
            watch.wait()
        server.terminate(signal.SIGKILL)
        listener.close()


def test_a_targets_file_reload_is_exactly_its_diffs_in_order(tmp_path):
    """A refused read, then a good one adding a target: two changes, in order, each holding only
    what it changed (targets are host:// literals on loopback: nothing is resolved or sent)."""
    path = tmp_path / "targets"
    path.write_text("a=host://127.0.0.1\n")
    server = Reachd("--targets-file", str(path), "--target-interval", "60", *UNREACHABLE)
    try:
        server.wait_ready()
        first = wait_until(lambda: (d := get_status(server.port))["targets"][0]["state"] != "unknown" and d,
                           timeout=10, message="target a probed")

        def replace(text: str) -> None:
            temporary = tmp_path / ".targets.new"
            temporary.write_text(text)
            os.replace(temporary, path)

        replace("a=host://127.0.0.1\noops\n")
        refused = wait_until(lambda: (d := get_status(server.port))["targetsFile"]["error"] and d,
                             timeout=10, message="the refusal in the document")
        replace("a=host://127.0.0.1\nb=host://[::1]\n")
        applied = wait_until(
            lambda: (d := get_status(server.port))["targetsFile"]["error"] is None and len(d["targets"]) == 2 and d,
            timeout=10, message="the good file applied")

        assert refused["sequence"] == first["sequence"] + 1, (first["sequence"], refused["sequence"])
        assert change_with(server, refused["sequence"])["diff"] == [
            {"field": "targetsFile.error", "from": None, "to": refused["targetsFile"]["error"]}]
        # The reload's own change (b's first probe may follow at once, as a change of its own).
        reload = wait_until(
            lambda: next((c for c in changes(server) if any(e["field"] == "targets.b" for e in c["diff"])), None),
            timeout=10, message="the change that added b")
        assert refused["sequence"] < reload["sequence"] <= applied["sequence"]
        fields = {entry["field"]: entry for entry in reload["diff"]}
        added = fields["targets.b"]
        assert added["from"] is None and added["to"]["name"] == "b" and added["to"]["url"] == "host://[::1]", reload
        assert fields["targetsFile.error"]["to"] is None and "targetsFile.appliedAt" in fields, reload
        assert not any(field.startswith("targets.a") for field in fields), "target a was kept as it was"
        sequences = [c["sequence"] for c in changes(server)]
        assert sequences == sorted(sequences), sequences
    finally:
        server.terminate()
