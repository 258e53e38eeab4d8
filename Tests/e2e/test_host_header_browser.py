"""DNS rebinding in a real browser: a page served under a name reachd is not known by
(`rebind.example`, which chromium resolves to reachd's address through `--host-resolver-rules`)
cannot read `/status` — neither from another origin with `--allow-origin '*'`, nor as its own
origin once the name's server on that address and port has been replaced by reachd (what
rebinding the name's DNS record achieves). Debian's chromium in a namespace, as test_page.py.
Each test first shows that the same page does read `/status` where the check lets it, so a
page that could read nothing would fail here."""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import netns
from conftest import http
from reachd_process import Reachd
from test_page import Browser, _needs_chromium, browser  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]

REBOUND = "rebind.example"

# The attacker's page: reads `?reachd=` + /status (cross-origin), or its own /status over and
# over (same origin: the rebinding attack itself), and shows what it got.
PAGE = """<!doctype html><meta charset=utf-8><link rel=icon href="data:,"><title>rebind</title>
<pre id=out>waiting</pre><pre id=seen></pre>
<script>
const out = document.getElementById('out'), seen = document.getElementById('seen');
const reachd = new URLSearchParams(location.search).get('reachd');
function read() {
  fetch((reachd || '') + '/status', {cache: 'no-store'})
    .then(r => r.text().then(t => {
      let state = '';
      try { state = JSON.parse(t).state || ''; } catch (e) {}
      out.textContent = r.status + ':' + (state ? 'document' : '');
      if (state) seen.textContent = 'read the document';
    }))
    .catch(() => { out.textContent = 'blocked'; })
    .finally(() => { if (!reachd) setTimeout(read, 100); });
}
read();
</script>
"""


def free_port_in(ns: str) -> int:
    with netns.socket_in(ns) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_listening(ns: str, port: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with netns.socket_in(ns) as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {port} in {ns}")


class PageServer:
    """The page, served by Python's http.server on 127.0.0.1:`port` inside namespace `ns`."""

    def __init__(self, ns: str, port: int) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="e2e-rebind-"))
        (self.directory / "index.html").write_text(PAGE)
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", ns, "python3", "-m", "http.server", str(port), "--bind", "127.0.0.1",
             "--directory", str(self.directory)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(ns, port)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture
def page_servers(request):
    servers: list[PageServer] = []

    def make(ns: str, port: int) -> PageServer:
        server = PageServer(ns, port)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def reachds(request):
    """reachd processes on a chosen port; stopped at teardown (their output shown on failure)."""
    servers: list[Reachd] = []

    def make(*args: str, ns: str, port: int) -> Reachd:
        server = Reachd(*args, netns=ns, port=port)
        servers.append(server)
        server.wait_ready()
        return server

    yield make
    failed = any(getattr(request.node, f"rep_{when}", None) is not None
                 and getattr(request.node, f"rep_{when}").failed for when in ("setup", "call"))
    for server in servers:
        if failed:
            print(f"\n---- reachd output ----\n{server.output()[-4000:]}")
        if server.process.poll() is None:
            server.terminate(signal.SIGKILL)
        else:
            server.log.close()


def misdirected_count(ns: str, port: int) -> float:
    body = http(port, "GET", "/metrics", ns=ns).body.decode()
    line = next(line for line in body.splitlines()
                if line.startswith('reachd_http_requests_total{route="invalid",code="421"} '))
    return float(line.split()[-1])


def test_a_page_under_a_rebound_name_cannot_read_status_even_with_cors_star(
        bare_namespace, browser, page_servers, reachds):
    ns = bare_namespace.name
    page_port = free_port_in(ns)
    page_servers(ns, page_port)
    open_reachd = reachds("--allow-origin", "*", "--allowed-hosts", REBOUND, ns=ns, port=free_port_in(ns))
    guarded = reachds("--allow-origin", "*", ns=ns, port=free_port_in(ns))
    b = browser(ns, map_names={REBOUND: "127.0.0.1"})
    page = f"http://{REBOUND}:{page_port}/index.html"

    # CORS '*' lets this page read reachd by its address, and by the name where it is allowed.
    b.driver.get(f"{page}?reachd=http://127.0.0.1:{guarded.port}")
    b.wait_text("out", "200:document", timeout=10)
    b.driver.get(f"{page}?reachd=http://{REBOUND}:{open_reachd.port}")
    b.wait_text("out", "200:document", timeout=10)

    # Under the rebound name, the guarded reachd answers 421 without CORS headers: nothing is read.
    before = misdirected_count(ns, guarded.port)
    b.driver.get(f"{page}?reachd=http://{REBOUND}:{guarded.port}")
    b.wait_text("out", "blocked", timeout=10)
    assert b.text("seen") == ""
    # At least once: chromium sends a request answered 421 again on a new connection.
    assert misdirected_count(ns, guarded.port) >= before + 1, "reachd itself refused the request"


def test_a_rebound_page_cannot_read_status_as_its_own_origin(bare_namespace, browser, page_servers, reachds):
    """The attack as it happens: the page comes from the name's server; then the name points at
    reachd (here: reachd takes over the same address and port) and the page, still open, asks its
    own origin for /status. Same origin, so CORS plays no part; only the Host check stops it."""
    ns = bare_namespace.name
    port = free_port_in(ns)
    page = page_servers(ns, port)
    b = browser(ns, map_names={REBOUND: "127.0.0.1"})
    b.driver.get(f"http://{REBOUND}:{port}/index.html")
    b.wait_text("out", "404:", timeout=10)  # the page's own server has no /status

    # Without the check (`*`), the rebound page reads the whole document: the attack works.
    page.stop()
    unguarded = reachds("--allowed-hosts", "*", "--allow-origin", "*", ns=ns, port=port)
    b.wait_text("out", "200:document", timeout=10)
    assert b.text("seen") == "read the document"
    unguarded.terminate()

    # With the default check, the same page, still open, gets 421 on every read.
    b.driver.execute_script("document.getElementById('seen').textContent = ''")
    guarded = reachds("--allow-origin", "*", ns=ns, port=port)
    b.wait_text("out", "421:", timeout=10)
    time.sleep(1)  # about ten more reads
    assert b.text("out") == "421:" and b.text("seen") == ""
    assert misdirected_count(ns, guarded.port) >= 5
