"""Through a proxy (the contract's "Through a proxy", issue 50): http(s):// checks take the way out
the application takes, against a real HTTP proxy.

tinyproxy runs in the gateway namespace of the dual-stack world (world_dualstack.py), started by
the test with its own configuration in a temporary directory; it resolves names through the
world's dnsmasq (`/etc/netns/<gateway>/resolv.conf`). reachd's own resolv.conf names the world's
silent nameserver, so a name only the proxy can resolve reads `dns` whenever a check does not go
through the proxy. tinyproxy allows CONNECT to port 443 only (`ConnectPort 443`): a CONNECT
elsewhere is answered 403. With `BasicAuth`, a request without credentials is answered 407 and
one with wrong credentials 401.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import netns
from conftest import _dump_on_failure, http, stop_reachd
from reachd_process import free_port, reachd_binary
from world import NO_CONTENT, WorldReachd, is_state, target_args, wait_status, wait_target
from world_dualstack import dual_world  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]

TINYPROXY = "/usr/bin/tinyproxy"
USER, PASSWORD, WRONG = "pxuser", "pxS3cretPass", "pxWr0ngPass"


class TinyProxy:
    """tinyproxy in `namespace`, on `port` of every address (both families), with its own
    configuration, log and pid file in a temporary directory. `stop()` ends it (connections to
    its port are then refused); `close()` also removes the directory."""

    def __init__(self, namespace: str, port: int, basic_auth: tuple[str, str] | None = None) -> None:
        self.namespace = namespace
        self.port = port
        self.dir = Path(tempfile.mkdtemp(prefix="px-tinyproxy-"))
        self.log_path = self.dir / "tinyproxy.log"
        lines = [f"Port {port}", "Timeout 10", "MaxClients 50", "LogLevel Info", f'LogFile "{self.log_path}"',
                 f'PidFile "{self.dir / "tinyproxy.pid"}"', "ConnectPort 443", "DisableViaHeader No"]
        if basic_auth:
            lines.append(f"BasicAuth {basic_auth[0]} {basic_auth[1]}")
        self.config = self.dir / "tinyproxy.conf"
        self.config.write_text("\n".join(lines) + "\n")
        self.output = open(self.dir / "stdout.log", "wb")
        self.process = subprocess.Popen(["ip", "netns", "exec", namespace, TINYPROXY, "-d", "-c", str(self.config)],
                                        stdout=self.output, stderr=subprocess.STDOUT)
        self._wait_listening()

    def _wait_listening(self) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"tinyproxy exited with {self.process.returncode}: {self.log()}")
            sock = netns.socket_in(self.namespace)
            try:
                sock.settimeout(0.5)
                sock.connect(("127.0.0.1", self.port))
                return
            except OSError:
                time.sleep(0.05)
            finally:
                sock.close()
        raise TimeoutError(f"tinyproxy does not listen on {self.port}: {self.log()}")

    def log(self) -> str:
        self.output.flush()
        parts = [path.read_text(errors="replace") for path in (self.dir / "stdout.log", self.log_path)
                 if path.exists()]
        return "\n".join(parts)[-6000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def close(self) -> None:
        self.stop()
        self.output.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def proxied(request, dual_world):
    """The world made for proxies: reachd's resolver silent, the gateway resolving through the
    world's dnsmasq, a trusted HTTPS server on the gateway's 443 and a plain one on any port.
    `proxied.proxy(basic_auth=None)` starts a tinyproxy; `proxied.reachd(*args, env=)` starts reachd
    (trusting the test CA). Everything is stopped and removed in every outcome."""
    w = dual_world
    gateway_resolv = Path("/etc/netns") / w.gateway.name
    gateway_resolv.mkdir(parents=True, exist_ok=True)
    (gateway_resolv / "resolv.conf").write_text(f"nameserver {w.gateway_ip}\n")
    w.set_nameservers(w.dns_silent_ip)
    proxies: list[TinyProxy] = []
    servers: list[WorldReachd] = []

    class Setup:
        world = w
        web = w.server()
        secure = w.server(port=443, tls="trusted")

        @staticmethod
        def proxy(basic_auth: tuple[str, str] | None = None) -> TinyProxy:
            started = TinyProxy(w.gateway.name, free_port(), basic_auth)
            proxies.append(started)
            return started

        @staticmethod
        def reachd(*args: str, env: dict | None = None) -> WorldReachd:
            server = WorldReachd(w, *args, env={**_without_proxies(), **(env or {})}, trust_test_ca=True)
            servers.append(server)
            server.wait_ready()
            return server

    yield Setup
    for server in reversed(servers):
        _dump_on_failure(request, server)
        stop_reachd(server)
    failed = any(getattr(request.node, f"rep_{when}", None) is not None
                 and getattr(request.node, f"rep_{when}").failed for when in ("setup", "call"))
    for proxy in proxies:
        if failed:
            print(f"\n---- tinyproxy {proxy.port} ----\n{proxy.log()}")
        proxy.close()
    shutil.rmtree(gateway_resolv, ignore_errors=True)


def _without_proxies() -> dict:
    """The variables a test sets, unset: only what the test gives reaches reachd (the runner's own
    proxy, if it has one, must not)."""
    return {name: "" for base in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
            for name in (base, base.upper())}


def proxy_env(address: str, port: int, credentials: str = "") -> dict:
    url = f"http://{credentials}{'[' + address + ']' if ':' in address else address}:{port}"
    return {"http_proxy": url, "https_proxy": url}


def shown(address: str, port: int) -> str:
    return f"http://{'[' + address + ']' if ':' in address else address}:{port}"


# --------------------------------------------------------------------------- through the proxy


def test_a_name_only_the_proxy_resolves_reads_reachable_through_it(proxied):
    w = proxied.world
    proxy = proxied.proxy()
    proxied.web.route("/generate_204", NO_CONTENT)
    server = proxied.reachd(
        *target_args({"web": f"http://db.test:{proxied.web.port}/health", "secure": "https://secure.test/",
                      "raw": f"tcp://{w.db_ip}:{proxied.web.port}"}),
        "--connectivity-url", f"http://db.test:{proxied.web.port}/generate_204", "--per-uplink",
        env=proxy_env(w.gateway_ip, proxy.port))
    via = shown(w.gateway_ip, proxy.port)
    for name in ("web", "secure"):
        target = wait_target(server, name, is_state("reachable"), 20)
        # The proxy's address, family and interface: what the check connected to.
        assert target["proxy"] == via, target
        assert target["addresses"] == [w.gateway_ip], target
        assert target["interface"] == w.link, target
        assert target["ipv4"]["address"] == w.gateway_ip and target["ipv6"] is None, target
    # The origin got the request through the proxy.
    assert any("tinyproxy" in headers.get("via", "") for _, path, headers in proxied.web.requests
               if path == "/health"), proxied.web.requests
    # tcp:// never takes a proxy.
    raw = wait_target(server, "raw", is_state("reachable"), 10)
    assert raw["proxy"] is None and raw["addresses"] == [w.db_ip], raw
    # The connectivity check goes through it; an uplink's own check never does.
    doc = wait_status(server, lambda d: d["connectivity"]["state"] == "full", 20)
    assert doc["connectivity"]["proxy"] == via, doc["connectivity"]
    uplink = next(i for i in doc["interfaces"] if i["name"] == w.link)
    assert uplink["connectivity"] is not None and uplink["connectivity"]["proxy"] is None, uplink


def test_an_ipv6_proxy_is_resolved_routed_and_shown_as_ipv6(proxied):
    w = proxied.world
    proxy = proxied.proxy()
    server = proxied.reachd(*target_args({"web": f"http://db.test:{proxied.web.port}/"}),
                            env=proxy_env(w.gateway_ip6, proxy.port))
    target = wait_target(server, "web", is_state("reachable"), 20)
    assert target["proxy"] == shown(w.gateway_ip6, proxy.port), target
    assert target["addresses"] == [w.gateway_ip6], target
    assert target["ipv4"] is None and target["ipv6"]["address"] == w.gateway_ip6, target
    assert target["interface"] == w.link, target


def test_no_proxy_sends_a_target_direct(proxied):
    w = proxied.world
    proxy = proxied.proxy()
    env = {**proxy_env(w.gateway_ip, proxy.port), "NO_PROXY": f"{w.db_ip.rsplit('.', 1)[0]}.0/24, secure.test"}
    server = proxied.reachd(
        *target_args({"literal": f"http://{w.db_ip}:{proxied.web.port}/", "named": f"http://db.test:{proxied.web.port}/",
                      "excepted": f"http://secure.test:{proxied.web.port}/"}),
        env=env)
    literal = wait_target(server, "literal", is_state("reachable"), 20)
    assert literal["proxy"] is None and literal["addresses"] == [w.db_ip], literal
    named = wait_target(server, "named", is_state("reachable"), 20)
    assert named["proxy"] == shown(w.gateway_ip, proxy.port), named
    # Direct, so reachd's own (silent) resolver is asked: the name does not resolve.
    excepted = wait_target(server, "excepted", is_state("unreachable", "dns"), 20)
    assert excepted["proxy"] is None, excepted


def test_proxy_none_ignores_the_environment_and_reachd_proxy_overrides_it(proxied):
    w = proxied.world
    proxy = proxied.proxy()
    # The environment names a proxy nothing listens at; REACHD_PROXY names the real one.
    dead = proxy_env(w.gateway_ip, free_port())
    ignored, chosen = (
        proxied.reachd(*target_args({"web": f"http://db.test:{proxied.web.port}/"}), "--proxy", "none", env=dead),
        proxied.reachd(*target_args({"web": f"http://db.test:{proxied.web.port}/"}),
                       env={**dead, "no_proxy": "*", "REACHD_PROXY": f"http://[{w.gateway_ip6}]:{proxy.port}"}))
    target = wait_target(ignored, "web", is_state("unreachable", "dns"), 20)
    assert target["proxy"] is None, target
    target = wait_target(chosen, "web", is_state("reachable"), 20)
    assert target["proxy"] == shown(w.gateway_ip6, proxy.port), target


def test_a_proxy_name_that_does_not_resolve_reads_dns_naming_the_proxy(proxied):
    port = free_port()
    server = proxied.reachd(*target_args({"web": f"http://db.test:{proxied.web.port}/"}),
                            env={"http_proxy": f"http://proxy.test:{port}"})
    target = wait_target(server, "web", is_state("unreachable", "dns"), 20)
    assert target["proxy"] == f"http://proxy.test:{port}", target
    assert target["detail"].startswith(f"proxy proxy.test:{port}: "), target


# --------------------------------------------------------------------------- the proxy says no


def test_a_connect_the_proxy_refuses_reads_proxy(proxied):
    w = proxied.world
    proxy = proxied.proxy()
    server = proxied.reachd(*target_args({"elsewhere": "https://secure.test:8443/"}), "--target-interval", "0.5",
                            env=proxy_env(w.gateway_ip, proxy.port))
    target = wait_target(server, "elsewhere", is_state("unreachable", "proxy"), 20)
    assert target["detail"] == "proxy answered 403 to CONNECT secure.test:8443", target
    assert target["ipv4"]["reason"] == "proxy", target
    text = http(server.port, "GET", "/metrics", ns=server.netns).body.decode()
    line = next(line for line in text.splitlines()
                if line.startswith('reachd_target_probe_failures_total{') and 'reason="proxy"' in line)
    assert float(line.rsplit(" ", 1)[1]) >= 1, line


def test_proxy_credentials_right_missing_and_wrong(proxied):
    w = proxied.world
    proxy = proxied.proxy(basic_auth=(USER, PASSWORD))
    targets = target_args({"web": f"http://db.test:{proxied.web.port}/", "secure": "https://secure.test/"})
    right = proxied.reachd(*targets, env=proxy_env(w.gateway_ip, proxy.port, f"{USER}:{PASSWORD}@"))
    missing = proxied.reachd(*targets, env=proxy_env(w.gateway_ip, proxy.port))
    wrong = proxied.reachd(*targets, env=proxy_env(w.gateway_ip, proxy.port, f"{USER}:{WRONG}@"))
    for name in ("web", "secure"):
        target = wait_target(right, name, is_state("reachable"), 20)
        assert target["proxy"] == shown(w.gateway_ip, proxy.port), target
    # No credentials: 407, whether to the request it would relay or to the CONNECT.
    target = wait_target(missing, "web", is_state("unreachable", "proxy"), 20)
    assert target["detail"] == "proxy answered 407: proxy authentication required", target
    target = wait_target(missing, "secure", is_state("unreachable", "proxy"), 20)
    assert target["detail"] == "proxy answered 407 to CONNECT secure.test:443", target
    # Wrong credentials: tinyproxy answers 401. To a CONNECT that is the proxy's refusal; to a
    # plain request it cannot be told from the origin's answer (the contract: http-status).
    target = wait_target(wrong, "secure", is_state("unreachable", "proxy"), 20)
    assert target["detail"] == "proxy answered 401 to CONNECT secure.test:443", target
    target = wait_target(wrong, "web", is_state("unreachable", "http-status"), 20)
    assert target["detail"] == "HTTP 401", target
    # The password is used, never shown: not in the document, /changes, /metrics or the log.
    for server in (right, wrong):
        for path in ("/status", "/changes", "/metrics"):
            body = http(server.port, "GET", path, ns=server.netns).body.decode(errors="replace")
            assert PASSWORD not in body and WRONG not in body, f"{path} shows a password"
        stop_reachd_keeping_log(server)
        log = server.output()
        assert PASSWORD not in log and WRONG not in log, "the log shows a password"
        # The start-up line names the proxy the checks take (without its credentials).
        listening = next(line for line in log.splitlines() if "reachd listening" in line)
        assert f"http={shown(w.gateway_ip, proxy.port)}" in listening, listening


def stop_reachd_keeping_log(server) -> None:
    """SIGTERM, so the log holds every line up to the end (the fixture removes it later)."""
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=20)


def test_a_stopped_proxy_reads_refused_naming_the_proxy(proxied):
    w = proxied.world
    proxy = proxied.proxy()
    proxied.web.route("/generate_204", NO_CONTENT)
    server = proxied.reachd(*target_args({"web": f"http://db.test:{proxied.web.port}/"}),
                            "--connectivity-url", f"http://db.test:{proxied.web.port}/generate_204",
                            "--target-interval", "0.5", "--target-failures", "1",
                            env=proxy_env(w.gateway_ip, proxy.port))
    wait_target(server, "web", is_state("reachable"), 20)
    wait_status(server, lambda d: d["connectivity"]["state"] == "full", 20)
    proxy.stop()
    target = wait_target(server, "web", is_state("unreachable", "refused"), 20)
    assert target["detail"] == f"proxy {w.gateway_ip}:{proxy.port}: ECONNREFUSED: connection refused", target
    assert target["addresses"] == [w.gateway_ip], target
    # The connectivity check backs off from 1 s while not full; a network change is not needed.
    connectivity = wait_status(server, lambda d: d["connectivity"]["state"] == "limited", 30)["connectivity"]
    assert connectivity["reason"] == "refused", connectivity
    assert connectivity["ipv4"]["detail"].startswith(f"proxy {w.gateway_ip}:{proxy.port}: "), connectivity


# --------------------------------------------------------------------------- refused at start


def _refused(args: list[str], env: dict) -> subprocess.CompletedProcess:
    result = subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", str(free_port()),
                             "--target", "web=http://api.test/", *args],
                            capture_output=True, text=True, timeout=10,
                            env={**os.environ, **_without_proxies(), **env})
    assert result.returncode != 0, f"accepted: {result.stdout}{result.stderr}"
    assert PASSWORD not in result.stdout + result.stderr, f"the message quotes the password: {result.stderr}"
    return result


@pytest.mark.parametrize("value", [
    f"http://{USER}:{PASSWORD}@proxy.test:99999", f"socks5://{USER}:{PASSWORD}@proxy.test:1080",
    f"https://{USER}:{PASSWORD}@proxy.test:3128", "http://", "http://proxy test:3128", "http://2001:db8::1:3128",
    f"http://{USER}:{PASSWORD}@proxy.test:3128/path", f"http://{USER}:%zz{PASSWORD}@proxy.test:3128",
    # The option wants its scheme (a stray word is no proxy); a variable may leave it out, as curl's.
    "garbage", f"{USER}:{PASSWORD}@proxy.test:3128",
])
def test_a_bad_proxy_option_is_refused_naming_it(value):
    result = _refused(["--proxy", value], {})
    assert "--proxy " in result.stderr, result.stderr
    assert result.returncode == 64, result.returncode
    result = _refused([], {"REACHD_PROXY": value})
    assert "REACHD_PROXY=" in result.stderr, result.stderr
    if "@" in value:
        assert "***@" in result.stderr, result.stderr


@pytest.mark.parametrize("variable", ["http_proxy", "HTTPS_PROXY", "all_proxy"])
def test_a_bad_proxy_variable_is_refused_naming_it_unless_unused(variable):
    value = f"socks5://{USER}:{PASSWORD}@proxy.test:1080"
    result = _refused([], {variable: value})
    assert f"{variable}=socks5://***@proxy.test:1080 is invalid" in result.stderr, result.stderr
    # --proxy none ignores the environment, and a reachd with no check a proxy could carry never
    # reads it: the same variable is then no reason to refuse.
    _starts(["--proxy", "none", "--target", "web=http://api.test/"], {variable: value})
    _starts(["--target", "db=tcp://db.test:5432"], {variable: value})


def _starts(args: list[str], env: dict) -> None:
    process = subprocess.Popen([reachd_binary(), "--host", "127.0.0.1", "--port", str(free_port()), *args],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, **_without_proxies(), **env})
    try:
        time.sleep(1.0)
        assert process.poll() is None, process.stderr.read().decode()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
