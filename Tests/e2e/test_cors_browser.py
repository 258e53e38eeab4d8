"""`--allow-origin` in a real browser: a dashboard page served from another port (another
origin) reads /status with fetch and follows /events with EventSource — only when reachd allows
its origin. Debian's chromium inside a namespace, driven as in test_page.py."""

from __future__ import annotations

import subprocess
import tempfile
import shutil
import time
from pathlib import Path

import pytest

import netns
from test_page import Browser, _needs_chromium, browser  # noqa: F401 (fixtures)

pytestmark = pytest.mark.netns

# The team's own dashboard: a page on another origin that only knows reachd's address.
DASHBOARD = """<!doctype html><meta charset=utf-8><link rel=icon href="data:,"><title>dashboard</title>
<pre id=out>waiting</pre>
<script>
const out = document.getElementById('out');
const reachd = new URLSearchParams(location.search).get('reachd');
fetch(reachd + '/status').then(r => r.json()).then(doc => {
  out.textContent = 'status:' + doc.state;
  const events = new EventSource(reachd + '/events');
  events.addEventListener('status', e => { out.textContent = 'event:' + JSON.parse(e.data).state; });
}).catch(() => { out.textContent = 'blocked'; });
</script>
"""


@pytest.fixture
def dashboard(veth, request):
    """The dashboard, served by Python's http.server on another port inside the namespace."""
    directory = Path(tempfile.mkdtemp(prefix="e2e-cors-"))
    (directory / "index.html").write_text(DASHBOARD)
    probe = netns.socket_in(veth.ns.name)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    server = subprocess.Popen(
        ["ip", "netns", "exec", veth.ns.name, "python3", "-m", "http.server", str(port), "--bind", "127.0.0.1",
         "--directory", str(directory)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    request.addfinalizer(lambda: (server.kill(), server.wait(), shutil.rmtree(directory, ignore_errors=True)))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with netns.socket_in(veth.ns.name) as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}"


def open_dashboard(b: Browser, dashboard: str, reachd_port: int) -> None:
    b.driver.get(f"{dashboard}/index.html?reachd=http://127.0.0.1:{reachd_port}")


def test_an_allowed_origin_reads_status_and_follows_events(veth, reachd_factory, browser, dashboard):
    server = reachd_factory("--allow-origin", dashboard, netns=veth.ns.name)
    b = browser(veth.ns.name)
    open_dashboard(b, dashboard, server.port)
    b.wait_text("out", "event:reachable", timeout=10)
    veth.link_down()
    b.wait_text("out", "event:unreachable", timeout=5)
    assert b.console_errors() == []


def test_without_allow_origin_the_browser_refuses_the_answer(veth, reachd_factory, browser, dashboard):
    server = reachd_factory(netns=veth.ns.name)
    b = browser(veth.ns.name)
    open_dashboard(b, dashboard, server.port)
    b.wait_text("out", "blocked", timeout=10)
    assert any("CORS" in e["message"] or "Access-Control-Allow-Origin" in e["message"]
               for e in b.console()), "the browser said why"
