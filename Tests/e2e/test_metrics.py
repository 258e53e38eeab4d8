"""`GET /metrics`: the Prometheus text format, checked by Prometheus' own tools.

- `promtool check metrics` on the live output of a running reachd is clean.
- The HTTP contract: content type, HEAD, 405, no raw path ever becomes a label.
- A real Prometheus (Debian's `prometheus`) scrapes a reachd every second; PromQL through its
  HTTP API sees the state and a target change. Both run in a test namespace: nothing listens
  outside it and no packet leaves it.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

import netns
from conftest import http, wait_until
from reachd_process import free_port

PROMTOOL = shutil.which("promtool")
PROMETHEUS = shutil.which("prometheus")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$')


def samples(text: str) -> dict[str, float]:
    """`name{labels}` as written → value."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        out[match.group(1) + (match.group(2) or "")] = float(match.group(3))
    return out


def value(text: str, name: str, **labels: str) -> float | None:
    """The one sample of `name` whose labels include `labels` (None when there is none)."""
    found = []
    for key, number in samples(text).items():
        metric, _, rest = key.partition("{")
        if metric != name:
            continue
        pairs = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', rest))
        if all(pairs.get(k) == v for k, v in labels.items()):
            found.append(number)
    assert len(found) <= 1, f"{name} {labels}: several series {found}"
    return found[0] if found else None


def promtool_check(text: str) -> subprocess.CompletedProcess:
    return subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)


def metrics_text(port: int, ns: str | None = None) -> str:
    response = http(port, "GET", "/metrics", ns=ns)
    assert response.status == 200, response
    return response.body.decode()


# --------------------------------------------------------------------------- the contract


def test_metrics_is_the_prometheus_text_format(reachd):
    response = http(reachd.port, "GET", "/metrics")
    assert response.status == 200
    assert response.header("content-type") == CONTENT_TYPE
    text = response.body.decode()
    assert "# HELP reachd_state " in text and "# TYPE reachd_state gauge" in text
    for state in ("unknown", "reachable", "unreachable"):
        assert value(text, "reachd_state", state=state) in (0.0, 1.0)
    assert sum(value(text, "reachd_state", state=s) for s in ("unknown", "reachable", "unreachable")) == 1
    status = http(reachd.port, "GET", "/status").json()
    assert value(text, "reachd_state", state=status["state"]) == 1
    assert value(text, "reachd_status_updates_total") == status["sequence"]
    assert value(text, "reachd_connectivity_state", state="disabled") == 1
    assert value(text, "reachd_build_info") == 1
    for interface in status["interfaces"]:
        assert value(text, "reachd_interface_up", device=interface["name"]) == (interface["operState"] == "up")
        assert value(text, "reachd_interface_info", device=interface["name"], transport=interface["transport"],
                     kind=interface["kind"] or "") == 1


@pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian package prometheus)")
def test_promtool_finds_nothing_to_lint(reachd):
    text = metrics_text(reachd.port)
    result = promtool_check(text)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == "", (
        f"promtool check metrics:\n{result.stdout}{result.stderr}\n---\n{text}")


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_head_is_get_without_the_body(reachd, method):
    response = http(reachd.port, method, "/metrics")
    assert response.status == 200
    assert response.header("content-type") == CONTENT_TYPE
    assert int(response.header("content-length")) > 0
    if method == "HEAD":
        assert response.body == b""


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS"])
def test_other_methods_are_not_allowed(reachd, method):
    response = http(reachd.port, method, "/metrics")
    assert response.status == 405
    assert response.header("allow") == "GET, HEAD"
    assert response.content_type == "application/problem+json"


def test_requests_are_counted_by_route_never_by_path(reachd):
    before = metrics_text(reachd.port)
    for path in ("/status", "/status", "/readyz", "/no-such-thing-1", "/no-such-thing-2"):
        http(reachd.port, "GET", path)
    http(reachd.port, "POST", "/status")
    after = metrics_text(reachd.port)

    def delta(route: str, code: str) -> float:
        return (value(after, "reachd_http_requests_total", route=route, code=code)
                - value(before, "reachd_http_requests_total", route=route, code=code))

    assert delta("status", "200") == 2
    assert delta("not_found", "404") == 2
    assert delta("invalid", "405") == 1
    assert delta("metrics", "200") == 1  # the first scrape
    assert "no-such-thing" not in after
    routes = {dict(re.findall(r'(\w+)="([^"]*)"', key)).get("route")
              for key in samples(after) if key.startswith("reachd_http_requests_total{")}
    assert routes <= {"status", "events", "changes", "liveness", "readiness", "metrics", "not_found", "invalid", "page", "preflight"}


def test_a_target_has_its_series_from_the_start_and_every_part_of_the_document_its_own(reachd_factory):
    # Loopback only: a closed port refuses at once, nothing leaves the host.
    closed = free_port()
    started = time.time()
    server = reachd_factory("--target", f"self=tcp://127.0.0.1:{closed}", "--target-interval", "0.2")
    wait_until(lambda: http(server.port, "GET", "/status").json()["targets"][0]["state"] == "unreachable", 10)
    status = http(server.port, "GET", "/status").json()
    text = metrics_text(server.port)
    for reason in ("dns", "no-route", "timeout", "refused", "http-status", "tls", "proxy", "error"):
        assert value(text, "reachd_target_probe_failures_total", target="self", reason=reason) is not None, reason
    assert value(text, "reachd_target_up", target="self") == 0
    # unknown → unreachable: one change of state.
    assert value(text, "reachd_target_transitions_total", target="self") == 1
    for family in ("ipv4", "ipv6"):
        present = status["targets"][0][family] is not None
        assert (value(text, "reachd_target_family_up", target="self", family=family) is not None) == present, family
        for state in ("disabled", "unknown", "none", "limited", "portal", "full"):
            assert value(text, "reachd_connectivity_family_state", family=family, state=state) == 0
    for state in ("disabled", "unknown", "ok", "degraded", "failing"):
        assert value(text, "reachd_dns_state", state=state) == (state == "disabled")
    assert "reachd_dns_server_up{" not in text and "reachd_dns_query_duration_seconds_bucket{" not in text
    assert value(text, "reachd_config_last_reload_successful") == 1
    assert started - 1 <= value(text, "reachd_config_last_reload_success_timestamp_seconds") <= time.time()
    if PROMTOOL is not None:
        result = promtool_check(text)
        assert result.returncode == 0 and result.stdout == result.stderr == "", f"{result.stdout}{result.stderr}"


@pytest.mark.netns
@pytest.mark.timeout(60)
def test_interfaces_come_and_go(veth, reachd_factory):
    """A new interface gets series; a deleted one loses them (no stale series at 0)."""
    server = reachd_factory(netns=veth.ns.name)
    text = metrics_text(server.port, ns=veth.ns.name)
    assert value(text, "reachd_interface_up", device=veth.link) == 1
    assert value(text, "reachd_state", state="reachable") == 1
    # A veth pair with both ends here: two new interfaces (no dummy module needed).
    one, other = f"e2e{veth.ns.number}x", f"e2e{veth.ns.number}y"
    veth.ns.ip("link", "add", one, "type", "veth", "peer", "name", other)

    def listed() -> bool:
        text = metrics_text(server.port, ns=veth.ns.name)
        return all(value(text, "reachd_interface_info", device=name, transport="ethernet", kind="veth") == 1
                   and value(text, "reachd_interface_up", device=name) == 0 for name in (one, other))

    wait_until(listed, 5, message=f"{one} and {other} listed")
    veth.ns.ip("link", "del", one)  # takes its peer with it
    wait_until(lambda: f"{veth.ns.number}x" not in metrics_text(server.port, ns=veth.ns.name)
               and f"{veth.ns.number}y" not in metrics_text(server.port, ns=veth.ns.name), 5,
               message="their series removed")
    text = metrics_text(server.port, ns=veth.ns.name)
    if PROMTOOL:
        assert promtool_check(text).returncode == 0


# --------------------------------------------------------------------------- a real Prometheus


class TCPListener:
    """A TCP server in a namespace that accepts and closes; `stop()` closes the port (refused)."""

    def __init__(self, ns: str, address: str) -> None:
        self.sock = netns.socket_in(ns)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((address, 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        self.sock.settimeout(0.1)
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
                conn.close()
            except (socket.timeout, OSError):
                continue

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        self.sock.close()


class Prometheus:
    """Debian's prometheus inside namespace `ns`, scraping reachd there every second."""

    def __init__(self, ns: str, target_port: int) -> None:
        self.ns = ns
        self.dir = Path(tempfile.mkdtemp(prefix="reachd-prometheus-"))
        self.port = self._free_port_in(ns)
        config = self.dir / "prometheus.yml"
        config.write_text(
            "global:\n"
            "  scrape_interval: 1s\n"
            "  scrape_timeout: 1s\n"
            "  evaluation_interval: 1s\n"
            "scrape_configs:\n"
            "  - job_name: reachd\n"
            "    static_configs:\n"
            f"      - targets: ['127.0.0.1:{target_port}']\n")
        self.log = open(self.dir / "prometheus.log", "wb")
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", ns, PROMETHEUS, f"--config.file={config}",
             f"--storage.tsdb.path={self.dir / 'data'}", f"--web.listen-address=127.0.0.1:{self.port}",
             "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT)

    @staticmethod
    def _free_port_in(ns: str) -> int:
        with netns.socket_in(ns) as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    def output(self) -> str:
        self.log.flush()
        return (self.dir / "prometheus.log").read_text(errors="replace")

    def api(self, path: str, **params: str) -> dict:
        query = urllib.parse.urlencode(params)
        response = http(self.port, "GET", f"{path}?{query}", ns=self.ns)
        assert response.status == 200, (response.status, response.body[:500])
        body = json.loads(response.body)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, promql: str) -> list[dict]:
        """An instant query; the result vector."""
        return self.api("/api/v1/query", query=promql)["result"]

    def wait_for(self, promql: str, timeout: float = 15.0) -> list[dict]:
        """Until the query returns something (a comparison such as `== 1` filters to a match)."""
        def attempt():
            if self.process.poll() is not None:
                raise RuntimeError(f"prometheus exited: {self.output()}")
            try:
                return self.query(promql)
            except (OSError, AssertionError, ValueError):
                return None
        return wait_until(attempt, timeout, interval=0.2, message=f"PromQL {promql!r}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def prometheus_in(request):
    started: list[Prometheus] = []

    def start(ns: str, target_port: int) -> Prometheus:
        prometheus = Prometheus(ns, target_port)
        started.append(prometheus)
        return prometheus

    yield start
    for prometheus in started:
        failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
        if failed:
            print(f"\n---- prometheus output ----\n{prometheus.output()[-4000:]}")
        prometheus.stop()


@pytest.mark.netns
@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian package prometheus)")
def test_a_real_prometheus_sees_the_state_and_a_target_change(veth, reachd_factory, prometheus_in, request):
    # The target's server lives in the peer namespace (the "outside" of the veth).
    db = TCPListener(veth.peer.name, veth.gateway)
    request.addfinalizer(db.stop)
    server = reachd_factory(
        "--target", f"db=tcp://{veth.gateway}:{db.port}", "--target-interval", "1", "--target-timeout", "1",
        "--target-failures", "1", netns=veth.ns.name)
    prometheus = prometheus_in(veth.ns.name, server.port)

    prometheus.wait_for('up{job="reachd"} == 1', timeout=30)
    prometheus.wait_for('reachd_state{state="reachable"} == 1')
    prometheus.wait_for('reachd_target_up{target="db"} == 1')
    prometheus.wait_for(f'reachd_interface_up{{device="{veth.link}"}} == 1')
    prometheus.wait_for('reachd_target_probe_duration_seconds_count{target="db"} > 0')
    # Prometheus found nothing wrong with what it scraped.
    assert prometheus.query('scrape_samples_scraped{job="reachd"} > 50')

    # The link goes down: unreachable, the interface down, the target unreachable (no route).
    veth.link_down()
    prometheus.wait_for('reachd_state{state="unreachable"} == 1')
    prometheus.wait_for('reachd_state{state="reachable"} == 0')
    prometheus.wait_for(f'reachd_interface_up{{device="{veth.link}"}} == 0')
    prometheus.wait_for('reachd_target_up{target="db"} == 0')

    # Back up: reachable and the target with it.
    veth.link_up()
    veth.wait_carrier()
    veth.add_default_route()
    prometheus.wait_for('reachd_state{state="reachable"} == 1')
    prometheus.wait_for('reachd_target_up{target="db"} == 1')

    # The target's server stops (connection refused) while the network stays up.
    db.stop()
    prometheus.wait_for('reachd_target_up{target="db"} == 0')
    prometheus.wait_for('reachd_state{state="reachable"} == 1')
    # Every change counted: the first reading, the target's first result, down, up, and the
    # target's refusal at least (a change may carry several of these at once).
    sequence = http(server.port, "GET", "/status", ns=veth.ns.name).json()["sequence"]
    assert sequence >= 4
    prometheus.wait_for(f'reachd_status_updates_total == {sequence}')
