"""The outside world fixture itself (no reachd flags involved): DNS, servers, the dropped range.

If these fail, the target and connectivity tests would fail for the fixture's sake, not reachd's.
"""

from __future__ import annotations

import errno
import socket
import time

import pytest

import netns
from world import (CLOSE, HANG, NO_CONTENT, UNAVAILABLE, Answer, certificates, dns_query, reachd_in,  # noqa: F401
                   redirect, status, world)

pytestmark = [pytest.mark.netns, pytest.mark.timeout(90)]  # a hang fails with its stack


def client_request(w, host: str, port: int, path: str = "/", timeout: float = 2.0) -> bytes:
    sock = netns.socket_in(w.client.name)
    sock.settimeout(timeout)
    try:
        sock.connect((host, port))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        data = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return data
            data += chunk
    finally:
        sock.close()


def test_dns_answers(world):
    c = world.client.name
    assert dns_query(c, world.gateway_ip, "db.test") == (0, [world.db_ip])
    rcode, many = dns_query(c, world.gateway_ip, "many.test")
    assert rcode == 0 and sorted(many) == sorted(world.many_ips), many
    assert dns_query(c, world.gateway_ip, "nx.test")[0] == 3  # NXDOMAIN
    assert dns_query(c, world.gateway_ip, "moved.test")[0] == 3
    assert dns_query(c, world.dns2_ip, "moved.test") == (0, [world.moved_ip])
    assert dns_query(c, world.dns2_ip, "db.test") == (0, [world.db2_ip])
    with pytest.raises(TimeoutError):
        dns_query(c, world.dns_silent_ip, "db.test", timeout=0.5)
    # A real server's answer for a name without IPv6: NOERROR and no records (not REFUSED).
    assert dns_query(c, world.gateway_ip, "db.test", qtype=28) == (0, [])


def test_servers_answer_and_switch(world):
    server = world.server(default=NO_CONTENT)
    assert client_request(world, world.db_ip, server.port).startswith(b"HTTP/1.1 204")
    server.route("/p", redirect("http://login.test/"))
    assert client_request(world, world.gateway_ip, server.port, "/p").startswith(b"HTTP/1.1 302")
    server.once("/p", UNAVAILABLE)
    assert client_request(world, world.db_ip, server.port, "/p").startswith(b"HTTP/1.1 503")
    assert client_request(world, world.db_ip, server.port, "/p").startswith(b"HTTP/1.1 302")
    assert server.hit_count("/p") == 3
    server.route("/c", CLOSE)
    assert client_request(world, world.db_ip, server.port, "/c") == b""
    server.route("/h", HANG)
    with pytest.raises(socket.timeout):
        client_request(world, world.db_ip, server.port, "/h", timeout=0.5)
    server.stop()
    with pytest.raises(ConnectionRefusedError):
        client_request(world, world.db_ip, server.port)
    server.start()
    assert client_request(world, world.db_ip, server.port).startswith(b"HTTP/1.1 204")


def test_closed_port_refuses_and_dropped_range_is_silent(world):
    with pytest.raises(ConnectionRefusedError):
        client_request(world, world.db_ip, world.closed_port())
    sock = netns.socket_in(world.client.name)
    sock.setblocking(False)
    try:
        assert sock.connect_ex((world.dropped(5), 80)) == errno.EINPROGRESS
        time.sleep(1.0)
        # Still connecting: no RST, no ICMP came back.
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
        with pytest.raises(OSError) as info:
            sock.getpeername()
        assert info.value.errno == errno.ENOTCONN
    finally:
        sock.close()


def test_no_route_address(world):
    out = world.client.ip("route", "get", world.noroute_ip, check=False)
    assert out.returncode != 0, out.stdout


def test_tls_servers(world):
    import ssl
    trusted = world.server(tls="trusted", default=NO_CONTENT)
    selfsigned = world.server(tls="self-signed", default=NO_CONTENT)
    context = ssl.create_default_context(cafile=certificates()["ca"])
    for server, ok in ((trusted, True), (selfsigned, False)):
        sock = netns.socket_in(world.client.name)
        sock.settimeout(2)
        sock.connect((world.db_ip, server.port))
        try:
            if ok:
                tls = context.wrap_socket(sock, server_hostname="secure.test")
                tls.sendall(b"GET / HTTP/1.1\r\nHost: secure.test\r\n\r\n")
                assert tls.recv(100).startswith(b"HTTP/1.1 204")
            else:
                with pytest.raises(ssl.SSLCertVerificationError):
                    context.wrap_socket(sock, server_hostname="secure.test")
        finally:
            sock.close()


def test_reachd_resolves_through_the_world(world, reachd_in):
    """reachd starts in the client namespace with the world's resolv.conf bind-mounted."""
    server = reachd_in(world)
    doc = status(server)
    assert doc["state"] == "reachable", doc
    out = world.client.exec("cat", "/etc/resolv.conf", capture_output=True, text=True, check=True).stdout
    assert f"nameserver {world.gateway_ip}" in out
    world.set_nameservers(world.dns2_ip)
    out = world.client.exec("cat", "/etc/resolv.conf", capture_output=True, text=True, check=True).stdout
    assert f"nameserver {world.dns2_ip}" in out


def test_curl_in_the_client_sees_each_behaviour(world):
    """What libcurl inside the client namespace gets from each behaviour (curl's exit codes):
    the ground truth the target reasons are judged against. Names resolve through the
    bind-mounted resolv.conf."""
    import subprocess

    from world import GARBAGE, NOT_FOUND, OK, PORTAL_LOGIN, UNAVAILABLE, Big, Trickle

    web = world.server()
    for path, behaviour in {"/ok": OK, "/204": NO_CONTENT, "/302": redirect("http://login.test/"),
                            "/login": PORTAL_LOGIN, "/404": NOT_FOUND, "/503": UNAVAILABLE, "/hang": HANG,
                            "/close": CLOSE, "/garbage": GARBAGE, "/trickle": Trickle(), "/big": Big()}.items():
        web.route(path, behaviour)
    selfsigned = world.server(tls="self-signed")
    trusted = world.server(tls="trusted")
    base = f"http://db.test:{web.port}"
    cases = {  # url → (curl exit code, HTTP code)
        f"{base}/ok": (0, "200"), f"{base}/204": (0, "204"), f"{base}/302": (0, "302"),
        f"{base}/login": (0, "200"), f"{base}/404": (0, "404"), f"{base}/503": (0, "503"),
        f"{base}/hang": (28, "000"), f"{base}/close": (52, "000"), f"{base}/garbage": (1, "000"),
        f"{base}/trickle": (28, "000"), f"{base}/big": (0, "200"),
        f"http://db.test:{world.closed_port()}/": (7, "000"),
        "http://silent.test/": (28, "000"), "http://nx.test/": (6, "000"),
        f"https://secure.test:{selfsigned.port}/": (60, "000"),
        f"https://secure.test:{trusted.port}/ok": (60, "000"),  # not in the system's CAs
        f"http://many.test:{web.port}/ok": (0, "200"),
        f"https://db.test:{web.port}/ok": (35, "000"),  # TLS to a plain server: a TLS error
    }
    procs = {url: subprocess.Popen(
        ["ip", "netns", "exec", world.client.name, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
         "--max-time", "2", url], stdout=subprocess.PIPE, text=True) for url in cases}
    got = {}
    for url, proc in procs.items():
        out, _ = proc.communicate(timeout=10)
        got[url] = (proc.returncode, out.strip())
    problems = [f"{url}: want {want}, got {got[url]}" for url, want in cases.items() if got[url] != want]
    assert not problems, "\n".join(problems)
    trusted_ok = subprocess.run(
        ["ip", "netns", "exec", world.client.name, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
         "--cacert", certificates()["ca"], "--max-time", "2", f"https://secure.test:{trusted.port}/ok"],
        capture_output=True, text=True, timeout=10)
    assert (trusted_ok.returncode, trusted_ok.stdout) == (0, "200"), trusted_ok
    # trust_test_ca's mechanism: the bundle bind-mounted in the private mount namespace that
    # `ip netns exec` makes, so curl's default CA file is the test CA — and the host's is untouched.
    from world import SYSTEM_CA_BUNDLE
    before = open(SYSTEM_CA_BUNDLE, "rb").read()
    mounted = subprocess.run(
        ["ip", "netns", "exec", world.client.name, "sh", "-c",
         f'mount --bind "$0" {SYSTEM_CA_BUNDLE} && exec "$@"', certificates()["ca"],
         "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "2",
         f"https://secure.test:{trusted.port}/ok"], capture_output=True, text=True, timeout=10)
    assert (mounted.returncode, mounted.stdout) == (0, "200"), mounted
    assert open(SYSTEM_CA_BUNDLE, "rb").read() == before
    assert SYSTEM_CA_BUNDLE not in open("/proc/self/mountinfo").read()
