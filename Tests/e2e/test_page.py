"""The page at `/` in a real browser: Debian's chromium driven by selenium, inside a namespace.

reachd, chromedriver and chromium all run in the test's network namespace (`ip netns exec`), so
the page's `http://127.0.0.1:PORT/` is the reachd under test and the network the page shows is
the one the test changes. Selenium (in this process, on the host) reaches chromedriver through
`NamespaceForward`: a listener on the host's loopback whose connections are relayed over sockets
made inside the namespace (`netns.socket_in`). Nothing is loaded from outside: the page has no
external reference, chromium's background services are off, and the namespace has no way out.

`REACHD_PAGE_SCREENSHOT=docs/page.png` makes the targets test write the README's screenshot
(`REACHD_PAGE_SCREENSHOT_PHONE=…`: the same at a phone's width).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.proxy import Proxy, ProxyType
from selenium.webdriver.remote.client_config import ClientConfig
from selenium.webdriver.support.ui import WebDriverWait

import netns
from conftest import get_status, http
from reachd_process import Reachd, free_port
from world import NO_CONTENT, reachd_in, target_args, world  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.netns, pytest.mark.timeout(90)]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
DESKTOP = (1280, 900)
PHONE = (390, 844)


@pytest.fixture(autouse=True)
def _needs_chromium():
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        pytest.skip("Debian's chromium and chromium-driver are not installed (make test-deps installs them)")


# --------------------------------------------------------------------------- the browser in a namespace


class NamespaceForward:
    """127.0.0.1:`port` on the host → 127.0.0.1:`target` inside namespace `ns`."""

    def __init__(self, ns: str, target: int) -> None:
        self.ns, self.target = ns, target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.stopping = threading.Event()
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._accept, name=f"forward-{ns}", daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                upstream = netns.socket_in(self.ns)
                upstream.connect(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self.stopping.set()
        self.listener.close()
        self.thread.join(timeout=2)
        with self.lock:
            for s in self.sockets:
                s.close()


class Browser:
    """chromedriver + headless chromium inside namespace `ns`, driven from here."""

    def __init__(self, ns: str, map_names: dict[str, str] | None = None) -> None:
        """`map_names`: names chromium resolves to an address of the namespace (`rebind.example`
        → `127.0.0.1`); every other name is still "not found"."""
        self.ns = ns
        self.profile = tempfile.mkdtemp(prefix=f"e2e-{os.getpid()}-chromium-")
        self.log_path = Path(self.profile + ".chromedriver.log")
        self.driver = None
        self.forward = None
        probe = netns.socket_in(ns)  # a port that is free inside the namespace
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", ns, CHROMEDRIVER, f"--port={port}", f"--log-path={self.log_path}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.forward = NamespaceForward(ns, port)
            self._wait_driver()
            options = webdriver.ChromeOptions()
            options.binary_location = CHROMIUM
            # Chromium's own resolver answers every name "not found" at once: nothing is looked up
            # (without this, a name lookup the namespace cannot answer held the first
            # navigation for ~14 s) and nothing but the page's origin could be loaded.
            mapped = "".join(f"MAP {name} {address}, " for name, address in (map_names or {}).items())
            for argument in (
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--user-data-dir={self.profile}", f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
                f"--host-resolver-rules={mapped}MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--no-proxy-server",
                "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
                "--disable-features=Translate,MediaRouter",
            ):
                options.add_argument(argument)
            options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
            url = f"http://127.0.0.1:{self.forward.port}"
            config = ClientConfig(url, proxy=Proxy({"proxyType": ProxyType.DIRECT}), timeout=30)
            self.driver = webdriver.Remote(command_executor=url, options=options, client_config=config)
        except BaseException:
            self.close()
            raise

    def _wait_driver(self, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromedriver exited with {self.process.returncode}: {self.driver_log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.forward.port), timeout=1) as s:
                    s.sendall(b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    if s.recv(64).startswith(b"HTTP/1.1 200"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise TimeoutError(f"chromedriver did not answer in {self.ns}: {self.driver_log()}")

    def driver_log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    # -- reading the page

    def text(self, element_id: str) -> str:
        return self.driver.find_element(By.ID, element_id).text

    def wait_text(self, element_id: str, wanted: str, timeout: float) -> float:
        """Seconds until `#element_id`'s text is `wanted` (fails after `timeout`)."""
        start = time.monotonic()
        try:
            WebDriverWait(self.driver, timeout, poll_frequency=0.02).until(
                lambda d: d.find_element(By.ID, element_id).text == wanted)
        except Exception as error:
            raise AssertionError(
                f"#{element_id} is {self.text(element_id)!r}, not {wanted!r}, after {timeout}s") from error
        return time.monotonic() - start

    def wait_for(self, predicate, timeout: float, what: str) -> None:
        try:
            WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(lambda d: predicate())
        except Exception as error:
            raise AssertionError(f"{what} not seen within {timeout}s") from error

    def changes(self) -> list[str]:
        return [li.text for li in self.driver.find_elements(By.CSS_SELECTOR, "#changes li")]

    def console(self) -> list[dict]:
        """The console entries since the last call (`webdriver.Remote` has no `get_log`)."""
        return self.driver.execute("getLog", {"type": "browser"})["value"]

    def console_errors(self) -> list[dict]:
        """Severe console entries: script errors and CSP violations (chromium logs both)."""
        entries = self.console()
        return [e for e in entries if e["level"] == "SEVERE" or "Content Security Policy" in e["message"]]

    def screenshot(self, path: str | Path, width: int) -> None:
        """The whole page at `width` CSS pixels (the window grows to the page's height)."""
        self.driver.set_window_size(width, DESKTOP[1])
        height = self.driver.execute_script("return document.documentElement.scrollHeight")
        chrome = self.driver.execute_script("return window.outerHeight - window.innerHeight")
        self.driver.set_window_size(width, height + chrome)
        time.sleep(0.3)  # a frame for the relayout
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        assert self.driver.save_screenshot(str(path)), path

    def close(self) -> None:
        if self.driver is not None:
            try:
                self.driver.quit()
            except (WebDriverException, OSError):
                pass
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.forward is not None:
            self.forward.close()
        shutil.rmtree(self.profile, ignore_errors=True)
        try:
            self.log_path.unlink()
        except OSError:
            pass


@pytest.fixture
def browser(request):
    """`browser(ns_name)`: a Browser in that namespace; closed (log shown on failure) at teardown."""
    browsers: list[Browser] = []

    def make(ns: str, **options) -> Browser:
        b = Browser(ns, **options)
        browsers.append(b)
        return b

    yield make
    failed = any(getattr(request.node, f"rep_{when}", None) is not None
                 and getattr(request.node, f"rep_{when}").failed for when in ("setup", "call"))
    for b in browsers:
        if failed:
            print(f"\n---- chromedriver log ({b.ns}) ----\n{b.driver_log()}")
            try:
                print(f"---- console ----\n{b.console()}")
            except Exception:  # noqa: BLE001
                pass
        b.close()


def open_page(b: Browser, server: Reachd) -> None:
    b.driver.get(f"http://127.0.0.1:{server.port}/")
    b.wait_text("stream", "live", timeout=10)


# --------------------------------------------------------------------------- tests


def test_page_follows_the_link_down_and_up(veth, reachd_factory, browser):
    server = reachd_factory(netns=veth.ns.name)
    b = browser(veth.ns.name)
    open_page(b, server)
    doc = get_status(server.port, ns=veth.ns.name)
    assert b.text("state") == doc["state"] == "reachable"
    assert b.driver.title == "reachable · reachd"
    assert veth.link in b.text("interfaces")
    assert veth.address in b.text("interfaces")
    before = b.changes()
    assert before and before[0].endswith("opened: reachable"), before

    # Interface names are the kernel's, chosen by whoever may create links: text, never markup.
    hostile = "<b>x&amp;"
    veth.ns.ip("link", "add", hostile, "type", "veth", "peer", "name", f"e2e{veth.ns.number}z")
    b.wait_for(lambda: hostile in b.text("interfaces"), 5, "the new interface, literally")
    assert b.driver.find_elements(By.CSS_SELECTOR, "#interfaces b, #changes b") == []
    assert any(f"{hostile} appeared" in c for c in b.changes()), b.changes()
    before = b.changes()

    veth.link_down()
    seconds = b.wait_text("state", "unreachable", timeout=1.0)
    print(f"link down → page shows unreachable after {seconds * 1000:.0f} ms (no reload)")
    assert get_status(server.port, ns=veth.ns.name)["state"] == "unreachable"
    b.wait_for(lambda: any("reachable → unreachable" in c for c in b.changes()), 2, "the change in the strip")

    # A phone's width: one column, nothing wider than the screen, the longest state on one line.
    b.driver.set_window_size(*PHONE)
    b.wait_for(lambda: b.driver.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth"), 2, "no horizontal overflow")
    lines = b.driver.execute_script(
        "const r = document.createRange(); r.selectNodeContents(document.getElementById('state'));"
        "return r.getClientRects().length")
    assert lines == 1, f"'unreachable' takes {lines} lines on a phone"
    b.driver.set_window_size(*DESKTOP)

    veth.link_up()
    veth.add_default_route()
    seconds = b.wait_text("state", "reachable", timeout=10.0)
    print(f"link up → page shows reachable after {seconds * 1000:.0f} ms")
    after = b.changes()
    assert len(after) >= len(before) + 2, after
    assert "unreachable → reachable" in after[0], after
    assert b.text("stream") == "live"
    assert b.text("state") == get_status(server.port, ns=veth.ns.name)["state"]

    assert b.console_errors() == []


def test_page_shows_targets_and_connectivity(world, reachd_in, browser):
    web = world.server(default=NO_CONTENT)
    closed = world.closed_port()
    server = reachd_in(world, *target_args({
        "db": f"tcp://db.test:{web.port}",
        "cache": f"tcp://db.test:{closed}",
        "api": f"http://db.test:{web.port}/healthz",
    }), "--connectivity-url", f"http://db.test:{web.port}/generate_204", "--target-interval", "2")
    b = browser(world.client.name)
    open_page(b, server)
    b.wait_for(lambda: "full" in b.text("connectivity") and "refused" in b.text("targets"), 10, "probe results")
    targets = b.text("targets")
    for expected in ("db", "cache", "api", "refused", f"tcp://db.test:{closed}", world.db_ip, world.link):
        assert expected in targets, (expected, targets)
    rows = {row.find_element(By.CLASS_NAME, "name").text: row.text
            for row in b.driver.find_elements(By.CSS_SELECTOR, "#targets .row")}
    assert "unreachable" in rows["cache"] and "refused" in rows["cache"], rows
    assert "reachable" in rows["db"] and "unreachable" not in rows["db"], rows
    assert f"http://db.test:{web.port}/generate_204" in b.text("connectivity")

    world.link_down()
    b.wait_text("state", "unreachable", timeout=1.0)
    b.wait_for(lambda: "no-route" in b.text("targets") and b.text("connectivity").startswith("none"), 5,
               "targets without a route, connectivity none")
    world.link_up()
    b.wait_text("state", "reachable", timeout=10.0)
    b.wait_for(lambda: b.text("connectivity").startswith("full") and b.text("targets").count("no-route") == 0
               and "refused" in b.text("targets"), 10, "targets and connectivity back")
    strip = "\n".join(b.changes())
    assert "db unreachable (no-route)" in strip and "connectivity none" in strip, strip
    assert b.console_errors() == []

    for variable, width in (("REACHD_PAGE_SCREENSHOT", DESKTOP[0]), ("REACHD_PAGE_SCREENSHOT_PHONE", PHONE[0])):
        if path := os.environ.get(variable):
            b.screenshot(path, width)
            print(f"screenshot: {path}")


def test_page_says_when_the_stream_is_reconnecting(veth, browser):
    port = free_port()
    first = Reachd(netns=veth.ns.name, port=port)
    second = None
    try:
        first.wait_ready()
        b = browser(veth.ns.name)
        open_page(b, first)
        assert b.text("state") == "reachable"

        first.terminate(signal.SIGTERM)
        b.wait_text("stream", "reconnecting…", timeout=3)
        assert "stale" in b.driver.find_element(By.TAG_NAME, "body").get_attribute("class")

        second = Reachd(netns=veth.ns.name, port=port)
        second.wait_ready()
        # The last `retry:` of a draining reachd is 2 s plus up to 3 s of jitter.
        b.wait_text("stream", "live", timeout=10)
        b.wait_for(lambda: "reachd restarted: reachable" in b.changes()[0], 3, "the restart in the strip")
        assert b.text("state") == "reachable"
        assert http(port, "GET", "/status", ns=veth.ns.name).status == 200
    finally:
        for server in (first, second):
            if server is not None:
                server.terminate(signal.SIGKILL)
                try:
                    server.log_path.unlink()
                except OSError:
                    pass
