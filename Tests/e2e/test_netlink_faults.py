"""The binary's kernel connection fails for real (an LD_PRELOAD shim fails recvmsg on netlink
sockets while a trigger file exists): /status says unknown at once, /readyz fails, /livez fails
only once reopening has failed for a while, and everything recovers when the kernel answers."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import get_status, http

pytestmark = pytest.mark.netns

SHIM_SOURCE = Path(__file__).parent / "faults" / "netlink_recv_fault.c"


@pytest.fixture(scope="module")
def fault_shim(tmp_path_factory) -> Path:
    library = tmp_path_factory.mktemp("shim") / "netlink_recv_fault.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(library), str(SHIM_SOURCE), "-ldl"], check=True)
    return library


def wait_until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; last: {last}")


def test_netlink_failure_is_unknown_then_fails_liveness_then_recovers(veth, reachd_factory, fault_shim, tmp_path):
    trigger = tmp_path / "fail-netlink"
    server = reachd_factory(
        netns=veth.ns.name, env={"LD_PRELOAD": str(fault_shim), "REACHD_FAULT_FILE": str(trigger)}
    )
    ns = veth.ns.name
    assert get_status(server.port, ns=ns)["state"] == "reachable"

    trigger.touch()
    # Any change makes reachd read its event socket, and that read fails.
    veth.ns.ip("address", "add", "198.18.77.1/32", "dev", veth.link)
    wait_until(lambda: get_status(server.port, ns=ns)["state"] == "unknown", 5, "state unknown")
    assert http(server.port, "GET", "/readyz", ns=ns).status == 503
    assert http(server.port, "GET", "/livez", ns=ns).status == 200, "not a failure for good yet"

    # Reopening keeps failing (every dump reads with recvmsg): liveness fails after the retries.
    wait_until(lambda: http(server.port, "GET", "/livez", ns=ns).status == 503, 20, "/livez 503")
    live = http(server.port, "GET", "/livez", ns=ns).json()
    assert live["status"] == "fail"
    assert "kernel connection" in str(live), live
    assert get_status(server.port, ns=ns)["state"] == "unknown"

    # The kernel answers again: the next attempt reopens, dumps, and every endpoint follows.
    trigger.unlink()
    doc = wait_until(
        lambda: (d := get_status(server.port, ns=ns))["state"] == "reachable" and d, 30, "reachable again"
    )
    assert any("198.18.77.1/32" in i["addresses"] for i in doc["interfaces"]), "the change made meanwhile"
    assert http(server.port, "GET", "/livez", ns=ns).status == 200
    assert http(server.port, "GET", "/readyz", ns=ns).status == 200
    assert server.process.poll() is None


def metric(port: int, ns: str, name: str) -> float:
    for line in http(port, "GET", "/metrics", ns=ns).body.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} not in /metrics")


def test_lost_notifications_are_recovered_by_reading_everything_again(veth, reachd_factory):
    """A real overflow, no shim: reachd is stopped (SIGSTOP) while 30,000 routes are added and
    then the default route is removed, so its 8 MiB event buffer overflows and the kernel drops
    notifications (ENOBUFS). Running again, reachd must read everything again and tell the
    truth — unreachable — with the resync counted and liveness never failing."""
    ns = veth.ns.name
    server = reachd_factory(netns=ns)
    assert get_status(server.port, ns=ns)["state"] == "reachable"
    assert metric(server.port, ns, "reachd_netlink_resyncs_total") == 0
    routes = "".join(f"route add 198.19.{i // 256}.{i % 256}/32 dev {veth.link}\n" for i in range(30_000))
    os.kill(server.process.pid, signal.SIGSTOP)
    try:
        veth.ns.exec("ip", "-batch", "-", input=routes.encode(), check=True, capture_output=True)
        veth.del_default_route()
    finally:
        os.kill(server.process.pid, signal.SIGCONT)
    wait_until(lambda: get_status(server.port, ns=ns)["state"] == "unreachable", 20, "unreachable after the overflow")
    assert metric(server.port, ns, "reachd_netlink_resyncs_total") >= 1, "no resync: the buffer did not overflow"
    assert http(server.port, "GET", "/livez", ns=ns).status == 200
    # And it keeps following changes after the resync.
    veth.add_default_route()
    wait_until(lambda: get_status(server.port, ns=ns)["state"] == "reachable", 10, "reachable again")
    assert server.process.poll() is None
