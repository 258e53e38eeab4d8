"""The page at `/` in a real browser: Debian's chromium driven by selenium, inside a namespace.

reachd, chromedriver and chromium all run in the test's network namespace (`ip netns exec`), so
the page's `http://127.0.0.1:PORT/` is the reachd under test and the network the page shows is
the one the test changes. Selenium (in this process, on the host) reaches chromedriver through
`NamespaceForward`: a listener on the host's loopback whose connections are relayed over sockets
made inside the namespace (`netns.socket_in`). Nothing is loaded from outside: the page has no
external reference, chromium's background services are off, and the namespace has no way out.

The README's screenshot comes from test_page_problems.py (`make page-screenshot`).
"""

from __future__ import annotations

import json
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
        """The list's rows, newest first, read in one script: the page redraws the list after each
        event and again when `/changes` answers, and elements read one by one can go stale."""
        return [text for text, _ in self.change_rows()]

    def change_rows(self) -> list[tuple[str, str]]:
        """(text, data-tone) of each row of the list of changes, newest first."""
        return [tuple(row) for row in self.driver.execute_script(
            "return [...document.querySelectorAll('#changes li')]"
            ".map((li) => [li.innerText.trim(), li.dataset.tone || null])")]

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


def open_page(b: Browser, server) -> None:
    b.driver.get(f"http://127.0.0.1:{server.port}/")
    b.wait_text("stream", "live", timeout=10)


class DocumentServer:
    """reachd's own page (its bytes and headers, Content-Security-Policy included, as a real reachd
    in namespace `ns` serves them) with documents the test writes: `/status` answers the latest,
    `/events` streams each `publish`, `/changes` answers the changes published with their words
    (or 404, as an older reachd, while none was). For documents this build's probes do not make
    yet (families, `degraded`, nameservers), so the page's drawing of every field of the contract
    is tested."""

    def __init__(self, ns: str, page, document: dict) -> None:
        self.page = page
        self.documents = [document]
        self.changes: list[dict] = []
        self.changed = threading.Condition()
        self.stopping = False
        self.listener = netns.socket_in(ns)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.clients: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def publish(self, document: dict, diff: list | None = None, lines: list[str] | None = None) -> None:
        """The next document; with `diff` and `lines`, also the change `/changes` says it was."""
        with self.changed:
            if lines is not None:
                self.changes.append({"sequence": document["sequence"], "changedAt": document["changedAt"],
                                     "diff": diff or [], "lines": lines})
            self.documents.append(document)
            self.changed.notify_all()

    def _accept(self) -> None:
        while not self.stopping:
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.clients.append(client)
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            request = b""
            while b"\r\n\r\n" not in request:
                data = client.recv(4096)
                if not data:
                    return
                request += data
            path = request.split(b" ")[1].decode().split("?")[0]
            if path == "/events":
                client.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                               b"Connection: close\r\n\r\nretry: 500\n\n")
                sent = 0
                while not self.stopping:
                    with self.changed:
                        self.changed.wait_for(lambda: len(self.documents) > sent or self.stopping, timeout=0.5)
                        pending = self.documents[sent:]
                    for document in pending:
                        frame = f"id: {document['sequence']}\nevent: status\ndata: {json.dumps(document)}\n\n"
                        client.sendall(frame.encode())
                    sent += len(pending)
                return
            if path == "/status":
                body, headers = json.dumps(self.documents[-1]).encode(), [("Content-Type", "application/json")]
            elif path == "/changes" and self.changes:
                body, headers = json.dumps({"changes": self.changes}).encode(), [("Content-Type", "application/json")]
            elif path == "/":
                body = self.page.body
                headers = [(k, v) for k, v in self.page.headers if k.lower() in ("content-type", "content-security-policy")]
            else:
                body, headers = b"", []
            head = f"HTTP/1.1 {200 if body else 404} X\r\nContent-Length: {len(body)}\r\nConnection: close\r\n"
            head += "".join(f"{k}: {v}\r\n" for k, v in headers)
            client.sendall(head.encode() + b"\r\n" + body)
        except OSError:
            pass
        finally:
            client.close()

    def close(self) -> None:
        self.stopping = True
        with self.changed:
            self.changed.notify_all()
        self.listener.close()
        for client in self.clients:
            try:
                client.close()
            except OSError:
                pass


def target_rows(b: Browser) -> dict:
    return {row.find_element(By.CLASS_NAME, "name").text: row
            for row in b.driver.find_elements(By.CSS_SELECTOR, "#targets .row")}


def family_lines(row) -> dict[str, str]:
    return {line.get_attribute("data-family"): line.text for line in row.find_elements(By.CSS_SELECTOR, ".family")}


def page_agrees_with(b: Browser, doc: dict) -> bool:
    """Every target's families and `degraded`, connectivity's families and DNS with each server
    as `doc` has them (a family that is null has no line)."""
    rows = target_rows(b)
    for target in doc["targets"]:
        row = rows.get(target["name"])
        if row is None or target["state"] not in row.text:
            return False
        if bool(row.find_elements(By.CSS_SELECTOR, ".degraded")) != target["degraded"]:
            return False
        lines = family_lines(row)
        if set(lines) != {f for f in ("ipv4", "ipv6") if target[f]}:
            return False
        for family, line in lines.items():
            wanted = target[family]
            if wanted["state"] not in line or any(v not in line for v in (wanted["reason"], wanted["address"],
                                                                           wanted["interface"]) if v):
                return False
    connectivity = b.driver.find_element(By.ID, "connectivity")
    check = doc["connectivity"]
    if set(family_lines(connectivity)) != {f for f in ("ipv4", "ipv6") if check[f]}:
        return False
    if bool(connectivity.find_elements(By.CSS_SELECTOR, ".degraded")) != check["degraded"]:
        return False
    dns = doc["dns"]
    text = b.text("dns")
    if not text.startswith(dns["state"]) or (dns["name"] and dns["name"] not in text):
        return False
    servers = [line.text for line in b.driver.find_elements(By.CSS_SELECTOR, "#dns .server")]
    return len(servers) == len(dns["servers"]) and all(
        server["address"] in line and server["state"] in line and (server["reason"] or "") in line
        for server, line in zip(dns["servers"], servers))


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
    # Down and without an address, the pair is folded away: named only under "down without addresses".
    b.wait_for(lambda: hostile in b.driver.find_element(By.ID, "folded").get_attribute("textContent"), 5,
               "the new interface, literally, folded")
    assert "2 down without addresses" in b.text("interfaces") and hostile not in b.text("interfaces")
    assert b.driver.find_elements(By.CSS_SELECTOR, "#interfaces b, #changes b") == []
    # The list follows `/changes`, read after the event: a moment after the document is drawn.
    b.wait_for(lambda: any(f"interface {hostile} added" in c for c in b.changes()), 3, "the interface in the list")
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
    b.wait_for(lambda: "unreachable → reachable" in b.changes()[0], 3, "the way back in the list")
    after = b.changes()
    assert len(after) >= len(before) + 2, after
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
    }), "--connectivity-url", f"http://db.test:{web.port}/generate_204", "--target-interval", "2",
        "--dns-check", "db.test.")
    b = browser(world.client.name)
    open_page(b, server)
    b.wait_for(lambda: "full" in b.text("connectivity") and "refused" in b.text("targets"), 10, "probe results")
    # Each family, `degraded` and DNS with its servers, as /status has them (read again each
    # time: the probes keep going).
    b.wait_for(lambda: page_agrees_with(b, get_status(server.port, ns=world.client.name)), 10,
               "families, degraded and DNS as in /status")
    assert "db.test." in b.text("dns")
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
    b.wait_for(lambda: "connectivity: none → full" in "\n".join(b.changes()), 3, "the way back in the list")
    strip = "\n".join(b.changes())
    assert "target db: reachable → unreachable (no-route" in strip and "connectivity: full → none" in strip, strip
    assert b.console_errors() == []


def test_page_shows_each_family_degraded_and_every_nameserver(veth, reachd_factory, browser):
    server = reachd_factory(netns=veth.ns.name)
    page = http(server.port, "GET", "/", ns=veth.ns.name)
    assert page.status == 200 and "Content-Security-Policy" in [k for k, _ in page.headers]
    base = get_status(server.port, ns=veth.ns.name)
    since = base["changedAt"]

    def family(state, reason=None, address=None, interface=None):
        return {"state": state, "reason": reason, "address": address, "interface": interface}

    def target(name, state, reason, addresses, ipv4, ipv6, degraded, interface=None):
        return {"name": name, "url": f"tcp://{name}.test:5432", "state": state, "reason": reason,
                "addresses": addresses, "interface": interface, "since": since, "ipv4": ipv4, "ipv6": ipv6,
                "degraded": degraded}

    hostile = "<b>eth9"  # interface names reach the page as text, never as markup
    first = dict(base, sequence=base["sequence"] + 1, targets=[
        target("web", "reachable", None, ["198.18.1.10", "2001:db8::10"],
               family("reachable", None, "198.18.1.10", hostile),
               family("unreachable", "timeout", "2001:db8::10", hostile), True, hostile),
        target("db", "unreachable", "refused", ["198.18.1.11", "2001:db8::11"],
               family("unreachable", "timeout", "198.18.1.11", "eth0"),
               family("unreachable", "refused", "2001:db8::11", "eth0"), False),
        target("v4", "reachable", None, ["198.18.1.12"], family("reachable", None, "198.18.1.12", "eth0"), None,
               False, "eth0"),
        target("nx", "unreachable", "dns", [], None, None, False),
    ], connectivity={
        "state": "full", "url": "http://check.test/generate_204", "reason": None, "since": since,
        "ipv4": {"state": "full", "reason": None}, "ipv6": {"state": "limited", "reason": "timeout"}, "degraded": True,
    }, dns={
        "state": "degraded", "name": "kubernetes.default.svc.cluster.local.", "reason": None, "since": since,
        "servers": [{"address": "10.96.0.10", "state": "answering", "reason": None, "since": since},
                    {"address": "10.96.0.11", "state": "failing", "reason": "timeout", "since": since},
                    {"address": "2001:db8::53", "state": "failing", "reason": "servfail", "since": since}],
    })
    documents = DocumentServer(veth.ns.name, page, first)
    try:
        b = browser(veth.ns.name)
        open_page(b, documents)
        b.wait_for(lambda: page_agrees_with(b, first), 5, "every family, degraded and nameserver")
        # The comparison sees a difference in each part it checks.
        for change in (lambda d: d["targets"][0].update(degraded=False),
                       lambda d: d["targets"][2].update(ipv6=family("unreachable", "timeout", "2001:db8::12")),
                       lambda d: d["targets"][1]["ipv6"].update(reason="timeout"),
                       lambda d: d["connectivity"].update(ipv6=None),
                       lambda d: d["dns"]["servers"][2].update(state="answering", reason=None),
                       lambda d: d["dns"]["servers"].pop()):
            other = json.loads(json.dumps(first))
            change(other)
            assert not page_agrees_with(b, other), other
        rows = target_rows(b)
        web = family_lines(rows["web"])
        for expected in ("IPv4", "reachable", "198.18.1.10", hostile):
            assert expected in web["ipv4"], (expected, web)
        for expected in ("IPv6", "unreachable", "timeout", "2001:db8::10"):
            assert expected in web["ipv6"], (expected, web)
        assert "degraded" in rows["web"].text and "degraded" not in rows["db"].text
        assert set(family_lines(rows["v4"])) == {"ipv4"} and family_lines(rows["nx"]) == {}
        assert b.driver.find_elements(By.CSS_SELECTOR, "#targets b, #dns b, #connectivity b") == []
        assert b.text("dns").startswith("degraded") and "kubernetes.default.svc.cluster.local." in b.text("dns")
        # Each check's and each nameserver's `since`, as the targets' (how long; the time on hover).
        for part, count in (("connectivity", 1), ("dns", 1 + len(first["dns"]["servers"]))):
            spans = b.driver.find_elements(By.CSS_SELECTOR, f"#{part} [data-since]")
            assert len(spans) == count and all(s.get_attribute("title") == since for s in spans), (part, spans)
        assert "degraded" in b.text("connectivity") and "limited" in family_lines(
            b.driver.find_element(By.ID, "connectivity"))["ipv6"]

        # IPv6 comes back and the slow nameserver answers: one event, the page follows.
        second = json.loads(json.dumps(first))
        second["sequence"] += 1
        second["targets"][0]["ipv6"] = family("reachable", None, "2001:db8::10", hostile)
        second["targets"][0]["degraded"] = False
        second["connectivity"]["ipv6"] = {"state": "full", "reason": None}
        second["connectivity"]["degraded"] = False
        second["dns"]["servers"][1].update(state="answering", reason=None)
        documents.publish(second)
        b.wait_for(lambda: page_agrees_with(b, second), 5, "the next document")
        # This server is an older reachd so far: `/changes` answers 404. The page follows the
        # documents; its list holds only what it saw itself, and it words no change of its own.
        time.sleep(0.5)
        assert len(b.changes()) == 1 and b.changes()[0].endswith("opened: reachable"), b.changes()

        # Every server failing: reachd's words for the change are the list's, as they are (markup
        # as text), coloured by the worst state the diff went to; the DNS strip reads the diff.
        third = json.loads(json.dumps(second))
        third["sequence"] += 1
        # Now, not the start's time the documents so far carry: the strip draws the state before
        # the change up to it (a change at the record's first instant leaves nothing before it).
        third["changedAt"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        third["dns"].update(state="failing", reason="timeout")
        for entry in third["dns"]["servers"]:
            entry.update(state="failing", reason="timeout")
        words = ["dns: degraded → failing (timeout)", f"nameserver {hostile}: answering → failing (timeout)"]
        documents.publish(third, diff=[{"field": "dns.state", "from": "degraded", "to": "failing"}], lines=words)
        b.wait_for(lambda: page_agrees_with(b, third), 5, "DNS failing")
        b.wait_for(lambda: "dns: degraded → failing (timeout)" in b.changes()[0], 5, "reachd's words in the list")
        assert words[1] in b.changes()[0] and b.driver.find_elements(By.CSS_SELECTOR, "#changes b") == []
        assert b.driver.find_element(By.CSS_SELECTOR, "#changes li").get_attribute("data-tone") == "bad"
        dns = [span.get_attribute("data-state")
               for span in b.driver.find_elements(By.CSS_SELECTOR, '[data-timeline="dns"] span')]
        assert dns[-2:] == ["degraded", "failing"], dns
        fourth = dict(third, sequence=third["sequence"] + 1,
                      dns=dict(third["dns"], reason="no-servers", servers=[]))
        documents.publish(fourth)
        b.wait_for(lambda: page_agrees_with(b, fourth) and "no-servers" in b.text("dns"), 5, "no servers")
        # The browser logged the 404s of `/changes` while it had none; the page's script logs
        # nothing, and its record starts when it was opened.
        errors = b.console_errors()
        assert [e for e in errors if not (e["source"] == "network" and "/changes " in e["message"]
                                         and "404" in e["message"])] == [], errors
        assert b.changes()[-1].endswith("opened: reachable"), b.changes()
        assert b.driver.find_elements(By.CSS_SELECTOR, '[data-timeline="target:web"] span')
    finally:
        documents.close()


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
