"""The `Host` check against DNS rebinding, on the running binary over raw sockets: which `Host`
values are answered, `421` as a problem document on every path for the others, `--allowed-hosts`
(flag and variable, patterns and `*`), the machine's host name, and bad values refused at start.

A rebound page sends its own name (`rebind.example`) in `Host`; what reachd is reached by — an
IP literal, `localhost`, a Kubernetes name — passes, so kubelet probes and Prometheus scrapes by
IP are answered as before (`test_kubelet_and_prometheus_by_ip_pass_unchanged`)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time

import pytest

from conftest import Conn, get_status, http
from reachd_process import Reachd, free_port, reachd_binary

PATHS = ["/", "/status", "/events", "/changes", "/healthz", "/livez", "/readyz", "/metrics"]


def raw(port: int, request: bytes, host: str = "127.0.0.1", family: int = socket.AF_INET,
        ns: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """Sends `request` as given (Connection: close expected) and reads the whole answer."""
    with Conn.open(port, host=host, family=family, ns=ns) as conn:
        conn.send(request)
        if request.startswith(b"GET /events "):
            response = conn.read_head()  # a stream has no end: its head says enough
            if response.status != 200:
                response.body = conn.read_exact(int(response.header("content-length")))
        else:
            response = conn.read_response("HEAD" if request.startswith(b"HEAD ") else "GET")
        return response.status, {k.lower(): v for k, v in response.headers}, response.body


def get(port: int, path: str, host_header: str | None, method: str = "GET", version: str = "HTTP/1.1",
        **where) -> tuple[int, dict[str, str], bytes]:
    lines = [f"{method} {path} {version}"]
    if host_header is not None:
        lines.append(f"Host: {host_header}")
    lines.append("Connection: close")
    return raw(port, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"), **where)


def assert_misdirected(answer: tuple[int, dict[str, str], bytes], method: str = "GET") -> None:
    status, headers, body = answer
    assert status == 421, answer
    assert headers["content-type"] == "application/problem+json", headers
    assert "access-control-allow-origin" not in headers, headers
    if method == "HEAD":
        assert body == b""
        return
    problem = json.loads(body)
    assert problem["status"] == 421 and problem["title"] == "Misdirected Request", problem
    assert "--allowed-hosts" in problem["detail"], problem


def requests_counted(port: int, route: str, code: int) -> float:
    body = http(port, "GET", "/metrics").body.decode()
    wanted = f'reachd_http_requests_total{{route="{route}",code="{code}"}} '
    return float(next(line for line in body.splitlines() if line.startswith(wanted)).split()[-1])


ALLOWED = [
    "127.0.0.1", "127.0.0.1:{port}", "198.18.0.2:9478", "[::1]", "[::1]:{port}", "[2001:db8::2]:9478",
    "localhost", "localhost:{port}", "LocalHost.", "LOCALHOST.:{port}", "reachd", "reachd:{port}", "My-Pod_1",
    "app.localhost", "reachd.monitoring.svc:{port}", "reachd.monitoring.svc.cluster.local",
    "REACHD.Monitoring.SVC.Cluster.Local.:{port}",
]
REFUSED = [
    "rebind.example", "rebind.example:{port}", "Rebind.EXAMPLE.", "REBIND.example.:{port}", "cluster.local",
    "localhost.example", "reachd.svc.example", "::1", "::1:{port}", "[::1", "[127.0.0.1]", "127.0.0.1:http",
    "a..example", "rebind.example..",
]


@pytest.mark.parametrize("host", ALLOWED)
def test_ip_literals_and_built_in_names_are_answered(reachd, host):
    status, headers, body = get(reachd.port, "/status", host.format(port=reachd.port))
    assert status == 200, (host, status, body)
    assert json.loads(body)["state"]


def test_an_empty_host_is_a_bad_request(reachd):
    """HTTP/1.1 framing (RFC 9112 §3.2): an empty Host is malformed, not a name to judge."""
    status, _, body = get(reachd.port, "/status", "")
    assert status == 400, (status, body)


@pytest.mark.parametrize("host", REFUSED)
def test_other_names_are_misdirected(reachd, host):
    assert_misdirected(get(reachd.port, "/status", host.format(port=reachd.port)))


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("path", PATHS + ["/no-such-path"])
def test_every_path_and_method_is_misdirected(reachd, path, method):
    assert_misdirected(get(reachd.port, path, f"rebind.example:{reachd.port}", method=method), method)


def test_events_are_refused_before_a_stream_opens(reachd):
    with Conn.open(reachd.port) as conn:
        conn.send(b"GET /events HTTP/1.1\r\nHost: rebind.example\r\nAccept: text/event-stream\r\n\r\n")
        response = conn.read_response()
        assert response.status == 421 and response.content_type == "application/problem+json"
        # The connection is kept for the next request, which an allowed name gets answered.
        conn.request("GET", "/livez", {"Connection": "close"})
        assert conn.read_response().status == 200


@pytest.mark.parametrize("path", PATHS)
def test_http_1_0_without_host_passes(reachd, path):
    status, _, _ = get(reachd.port, path, None, version="HTTP/1.0")
    assert status == 200, path


def test_http_1_1_without_host_is_a_bad_request_and_http_1_0_passes(reachd):
    # RFC 9112 §3.2: an HTTP/1.1 request needs its Host; HTTP/1.0 has none to send.
    assert get(reachd.port, "/status", None)[0] == 400
    assert raw(reachd.port, b"GET /status HTTP/1.0\r\n\r\n")[0] == 200


def test_spaces_around_the_value_do_not_matter(reachd):
    assert get(reachd.port, "/status", " 127.0.0.1 \t")[0] == 200
    assert_misdirected(get(reachd.port, "/status", "  rebind.example  "))


def test_a_second_host_cannot_smuggle_a_name(reachd):
    # Two Host lines are malformed (RFC 9112 §3.2): refused before any name is judged.
    request = b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: rebind.example\r\nConnection: close\r\n\r\n"
    assert raw(reachd.port, request)[0] == 400
    request = b"GET /status HTTP/1.1\r\nHost: rebind.example\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    assert raw(reachd.port, request)[0] == 400


def test_misdirected_requests_are_counted_and_logged(reachd):
    # The rejection log says one line a second at most: past the earlier tests' second.
    time.sleep(1.1)
    before = requests_counted(reachd.port, "invalid", 421)
    for path in ["/status", "/metrics", "/nope"]:
        assert_misdirected(get(reachd.port, path, "counted.rebind.example"))
    assert requests_counted(reachd.port, "invalid", 421) == before + 3
    deadline = time.monotonic() + 5
    while "host=" not in reachd.output() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "status=421" in reachd.output() and "rebind.example" in reachd.output()


@pytest.mark.netns
def test_ipv6_and_the_client_command_over_ipv6(bare_namespace, reachd_factory):
    # `::` serves both families; in a namespace of its own, only its loopback reaches it.
    ns = bare_namespace.name
    server = reachd_factory("--host", "::", netns=ns)
    v6 = {"host": "::1", "family": socket.AF_INET6, "ns": ns}
    assert get(server.port, "/status", f"[::1]:{server.port}", **v6)[0] == 200
    assert get(server.port, "/status", "[::1]", **v6)[0] == 200
    assert_misdirected(get(server.port, "/status", f"rebind.example:{server.port}", **v6))
    # `reachd status` sends `Host: [::1]:PORT`: an IPv6 literal is one only in brackets.
    result = bare_namespace.exec(reachd_binary(), "status", "--json", "--host", "::1", "--port", str(server.port),
                                 capture_output=True, text=True, timeout=10)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["state"]


@pytest.mark.netns
def test_kubelet_and_prometheus_by_ip_pass_unchanged(veth, reachd_factory):
    # reachd on every address of its namespace; the peer namespace asks by the pod's IP, as the
    # kubelet's probes and a Prometheus scrape do (curl sends `Host: 198.18.n.2:PORT`).
    server = reachd_factory("--host", "0.0.0.0", "--ready-when", "always", netns=veth.ns.name)
    address = veth.address.split("/")[0]
    for path in ["/readyz", "/livez", "/healthz", "/metrics"]:
        result = veth.peer.exec("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                f"http://{address}:{server.port}{path}", capture_output=True, text=True)
        assert result.stdout == "200", (path, result.stdout, result.stderr)
    result = veth.peer.exec("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Host: rebind.example",
                            f"http://{address}:{server.port}/metrics", capture_output=True, text=True)
    assert result.stdout == "421", result.stdout


# --------------------------------------------------------------------------- --allowed-hosts


def test_allowed_hosts_adds_names_and_the_names_under_a_domain(reachd_factory):
    server = reachd_factory("--allowed-hosts", "reachd.example.org, *.Internal.Example.")
    for host in ["reachd.example.org", "REACHD.example.org.:{port}", "a.internal.example",
                 "a.b.internal.example:{port}", "127.0.0.1:{port}", "localhost"]:
        assert get(server.port, "/status", host.format(port=server.port))[0] == 200, host
    for host in ["internal.example", "xinternal.example", "other.example.org", "reachd.example.org.evil"]:
        assert_misdirected(get(server.port, "/status", host))


def test_the_variable_gives_the_same_patterns(reachd_factory):
    server = reachd_factory(env={"REACHD_ALLOWED_HOSTS": "*.example.org"})
    assert get(server.port, "/status", "reachd.example.org")[0] == 200
    assert_misdirected(get(server.port, "/status", "rebind.example"))
    # The flag wins over the variable.
    server = reachd_factory("--allowed-hosts", "rebind.example", env={"REACHD_ALLOWED_HOSTS": "*.example.org"})
    assert get(server.port, "/status", "rebind.example")[0] == 200
    assert_misdirected(get(server.port, "/status", "reachd.example.org"))


def test_a_star_turns_the_check_off(reachd_factory):
    server = reachd_factory("--allowed-hosts", "*")
    for host in ["rebind.example", "::1", "anything.at.all:1"]:
        assert get(server.port, "/status", host)[0] == 200, host


@pytest.mark.parametrize("value, reason", [
    ("", "is empty"),
    ("a.example,,b.example", "is empty"),
    ("a.example,", "is empty"),
    ("reachd.example.org:9478", "port"),
    ("[::1]", "port"),
    ("a.*.example", "`*` other than at its start"),
    ("*example.org", "`*` other than at its start"),
    ("*,a.example", "cannot be combined"),
    (".example.org", "starts with a dot"),
    ("https://reachd.example.org", "is a URL"),
    ("bad name.example", "is not a host name"),
])
def test_a_bad_value_is_refused_at_start_naming_the_option(value, reason):
    result = subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", "0", "--allowed-hosts", value],
                            capture_output=True, text=True, timeout=10)
    assert result.returncode == 64, (value, result.stdout, result.stderr)
    assert "--allowed-hosts" in result.stderr and reason in result.stderr, result.stderr
    if value:  # an empty variable counts as unset, as for every option
        result = subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", "0"], capture_output=True,
                                text=True, timeout=10, env={**os.environ, "REACHD_ALLOWED_HOSTS": value})
        assert result.returncode == 64, (value, result.stdout, result.stderr)
        assert f"REACHD_ALLOWED_HOSTS={value}" in result.stderr and "--allowed-hosts" in result.stderr
        assert reason in result.stderr, result.stderr


# --------------------------------------------------------------------------- the machine's host name


def test_the_machines_host_name_is_answered(request):
    """reachd in a UTS namespace of its own whose host name has dots (as on many servers)."""
    port = free_port()
    process = subprocess.Popen(
        ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', "Box7.Lab.Example",
         reachd_binary(), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def stop() -> None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    request.addfinalizer(stop)
    deadline = time.monotonic() + 15
    while True:
        assert process.poll() is None, process.stderr.read()
        try:
            get_status(port)
            break
        except OSError:
            assert time.monotonic() < deadline, "reachd did not answer"
            time.sleep(0.05)
    for host in ["box7.lab.example", "BOX7.lab.example.:{port}"]:
        assert get(port, "/status", host.format(port=port))[0] == 200, host
    assert_misdirected(get(port, "/status", "box8.lab.example"))
    assert_misdirected(get(port, "/status", "lab.example"))
