"""The HTTP contract (docs/endpoints.md, openapi.yaml): endpoints, status codes, headers, bodies."""

from __future__ import annotations

import http.client as httpclient
import json
import os
import signal
import socket
import subprocess
import time

import pytest

from conftest import (
    Conn,
    ConnectionClosed,
    SSEClient,
    check_status_document,
    get_status,
    http,
)
from reachd_process import free_port, reachd_binary

ENDPOINTS = ["/status", "/events", "/healthz", "/livez", "/readyz"]
HEALTH = ["/healthz", "/livez", "/readyz"]
BAD_METHODS = ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "FOO"]


def check_problem(response, status: int) -> dict:
    assert response.status == status, (response.status, response.body)
    assert response.content_type == "application/problem+json", response.headers
    problem = response.json()
    assert isinstance(problem.get("type"), str) and problem["type"], problem
    assert isinstance(problem.get("title"), str) and problem["title"], problem
    assert problem.get("status") == status, problem
    return problem


def allow_set(response) -> set[str]:
    value = response.header("allow")
    assert value is not None, f"no Allow header: {response.headers}"
    return {part.strip() for part in value.split(",") if part.strip()}


# ------------------------------------------------------------------ /status


def test_status_document(reachd):
    response = http(reachd.port, "GET", "/status")
    assert response.status == 200
    assert response.content_type == "application/json", response.headers
    doc = response.json()
    check_status_document(doc)
    # Seeded synchronously before listening: never "unknown" once it answers.
    assert doc["state"] != "unknown", doc


def test_status_field_names_are_camel_case(reachd):
    doc = get_status(reachd.port)
    for key in ("isReachable", "isDataMetered", "changedAt"):
        assert key in doc
    for key in doc:
        assert "_" not in key, key
    for interface in doc["interfaces"]:
        assert "operState" in interface and "isDefaultRoute" in interface


def test_status_is_stable_without_changes(reachd):
    first = get_status(reachd.port)
    second = get_status(reachd.port)
    assert second["sequence"] >= first["sequence"]
    if second["sequence"] == first["sequence"]:
        assert second == first


# ------------------------------------------------------------------ health


@pytest.mark.parametrize("path", ["/healthz", "/livez"])
def test_liveness(reachd, path):
    response = http(reachd.port, "GET", path)
    assert response.status == 200, response.body
    assert response.content_type == "application/health+json", response.headers
    body = response.json()
    assert body["status"] == "pass", body
    assert isinstance(body.get("checks"), dict), body


def test_readyz_follows_reachability(reachd):
    doc = get_status(reachd.port)
    response = http(reachd.port, "GET", "/readyz")
    assert response.content_type == "application/health+json", response.headers
    body = response.json()
    assert isinstance(body.get("checks"), dict), body
    if doc["isReachable"]:
        assert (response.status, body["status"]) == (200, "pass"), body
    else:
        assert (response.status, body["status"]) == (503, "fail"), body


# ------------------------------------------------------------------ /events


def test_events_headers_and_first_bytes(reachd):
    with SSEClient(reachd.port) as client:
        head = client.read_head()
        assert head.status == 200
        assert head.content_type == "text/event-stream", head.headers
        assert (head.header("cache-control") or "").lower() == "no-cache", head.headers
        assert (head.header("x-accel-buffering") or "").lower() == "no", head.headers
        assert "chunked" in (head.header("transfer-encoding") or "").lower(), head.headers
        assert head.header("content-length") is None
        event = client.next_event(timeout=2)
        assert client.reader.text.startswith(b"retry: 2000\n"), client.reader.text[:60]
        assert event.event == "status"
        check_status_document(event.doc)
        assert event.id == str(event.doc["sequence"])


# ------------------------------------------------------------------ HEAD


@pytest.mark.parametrize("path", ENDPOINTS)
def test_head_same_headers_no_body(reachd, path):
    if path == "/events":
        with SSEClient(reachd.port) as client:
            get_head = client.read_head()
    else:
        get_head = http(reachd.port, "GET", path)
    with Conn.open(reachd.port, timeout=3) as conn:
        conn.request("HEAD", path, {"Connection": "close"})
        head = conn.read_head()
        # No body: after the head the server has nothing more to say and closes.
        try:
            rest = conn.read_to_eof()
        except ConnectionClosed as closed:
            pytest.fail(f"HEAD {path}: connection {closed.how} instead of a clean close")
        except socket.timeout:
            pytest.fail(f"HEAD {path}: server kept the connection open after a HEAD with Connection: close")
    assert rest == b"", f"HEAD {path} sent a body: {rest[:200]!r}"
    assert head.status == get_head.status, (path, head.status, get_head.status)
    assert head.content_type == get_head.content_type, (path, head.headers, get_head.headers)
    if path == "/events":
        assert (head.header("cache-control") or "").lower() == "no-cache"
        assert (head.header("x-accel-buffering") or "").lower() == "no"
    elif path != "/status" and get_head.header("content-length") is not None:
        assert head.header("content-length") == get_head.header("content-length")


@pytest.mark.parametrize("path", ENDPOINTS)
def test_head_keeps_connection_usable(reachd, path):
    """A HEAD answer carries no body bytes, so the next response on the connection parses."""
    with Conn.open(reachd.port) as conn:
        head = conn.get(path, method="HEAD")
        assert head.status in (200, 503)
        conn.request("GET", "/status")
        try:
            first_line = conn.read_until(b"\r\n")
        except ConnectionClosed as closed:
            assert closed.partial == b"", f"bytes after HEAD {path} response: {closed.partial!r}"
            return  # closing after a HEAD is allowed
        assert first_line.startswith(b"HTTP/1.1 200"), \
            f"after HEAD {path}, the next response starts with {first_line!r}: the HEAD answer carried body bytes"
        conn.buf = first_line + conn.buf
        response = conn.read_response()
        assert response.status == 200
        check_status_document(response.json())
        assert conn.buf == b""


def test_head_status_content_length_matches_get(reachd):
    for _ in range(3):
        get = http(reachd.port, "GET", "/status")
        head = http(reachd.port, "HEAD", "/status")
        after = http(reachd.port, "GET", "/status")
        if get.body == after.body:
            break
    else:
        pytest.skip("status kept changing")
    if head.header("content-length") is not None:
        assert int(head.header("content-length")) == len(get.body)
    assert head.content_type == "application/json"


# ------------------------------------------------------------------ 405 / 404


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize("method", BAD_METHODS)
def test_other_methods_405(reachd, method, path):
    body = b"{}" if method in ("POST", "PUT", "PATCH") else b""
    headers = {"Content-Type": "application/json"} if body else {}
    response = http(reachd.port, method, path, headers=headers, body=body)
    check_problem(response, 405)
    assert allow_set(response) == {"GET", "HEAD"}, response.header("allow")


def test_405_allow_header_spelling(reachd):
    response = http(reachd.port, "POST", "/status", body=b"x")
    assert response.header("allow").replace(" ", "") == "GET,HEAD"


@pytest.mark.parametrize("path", ["/nope", "/index.html", "/status/extra", "/eventsx", "/readyz/"])
def test_unknown_paths_404(reachd, path):
    response = http(reachd.port, "GET", path)
    check_problem(response, 404)


def test_404_head_has_no_body(reachd):
    with Conn.open(reachd.port) as conn:
        head = conn.get("/nope", method="HEAD")
        assert head.status == 404
        assert conn.get("/livez").status == 200


# ------------------------------------------------------------------ query strings


@pytest.mark.parametrize("path", ["/status", "/healthz", "/livez"])
def test_query_string_does_not_change_routing_200(reachd, path):
    plain = http(reachd.port, "GET", path)
    queried = http(reachd.port, "GET", f"{path}?x=1&y=&z")
    assert queried.status == plain.status == 200
    assert queried.content_type == plain.content_type


def test_query_string_readyz(reachd):
    plain = http(reachd.port, "GET", "/readyz")
    queried = http(reachd.port, "GET", "/readyz?verbose=1")
    assert queried.status == plain.status
    assert queried.content_type == "application/health+json"


def test_query_string_status_document(reachd):
    doc = http(reachd.port, "GET", "/status?pretty=1").json()
    check_status_document(doc)


def test_query_string_events(reachd):
    with SSEClient(reachd.port, path="/events?foo=bar&last_event_id=abc") as client:
        assert client.read_head().status == 200
        assert client.response.content_type == "text/event-stream"
        assert client.next_event(timeout=2).event == "status"


def test_query_string_unknown_path_and_bad_method(reachd):
    check_problem(http(reachd.port, "GET", "/nope?status=1"), 404)
    response = http(reachd.port, "DELETE", "/status?x=1")
    check_problem(response, 405)
    assert allow_set(response) == {"GET", "HEAD"}


# ------------------------------------------------------------------ connections


def test_keep_alive_several_requests_one_connection(reachd):
    with Conn.open(reachd.port) as conn:
        local = conn.sock.getsockname()
        paths = ["/status", "/livez", "/healthz", "/readyz", "/status", "/nope", "/status"]
        for path in paths:
            response = conn.get(path)
            assert response.status in (200, 404, 503), (path, response.status)
            assert (response.header("connection") or "").lower() != "close", (path, response.headers)
        assert conn.sock.getsockname() == local


def test_keep_alive_http_client(reachd):
    conn = httpclient.HTTPConnection("127.0.0.1", reachd.port, timeout=5)
    try:
        conn.connect()
        sock = conn.sock
        for _ in range(5):
            conn.request("GET", "/status")
            response = conn.getresponse()
            body = response.read()
            assert response.status == 200
            json.loads(body)
            assert not response.will_close
            assert conn.sock is sock, "client had to reconnect"
    finally:
        conn.close()


def test_http_1_0(reachd):
    with Conn.open(reachd.port) as conn:
        conn.send(b"GET /status HTTP/1.0\r\n\r\n")
        response = conn.read_response()
        assert response.status == 200
        check_status_document(response.json())


def test_concurrent_plain_requests(reachd):
    conns = [Conn.open(reachd.port) for _ in range(50)]
    try:
        for conn in conns:
            conn.request("GET", "/status")
        for conn in conns:
            assert conn.read_response().status == 200
    finally:
        for conn in conns:
            conn.close()


# ------------------------------------------------------------------ command line


def _run_reachd(args: list[str], env: dict | None = None) -> subprocess.Popen:
    base = {k: v for k, v in os.environ.items() if not k.startswith("REACHD_") or k == "REACHD_BIN"}
    return subprocess.Popen([reachd_binary(), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**base, **(env or {})})


def _wait_livez(port: int, process: subprocess.Popen, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"reachd exited with {process.returncode}"
        try:
            if http(port, "GET", "/livez", timeout=2).status == 200:
                return
        except (OSError, ConnectionClosed):
            pass
        time.sleep(0.05)
    raise TimeoutError(f"nothing answered /livez on port {port}")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


SERVE_OPTIONS = ("--host", "--port", "--heartbeat", "--ready-when", "--metered-interfaces", "--max-connections",
                 "--max-connections-per-ip", "--connection-timeout", "--shutdown-timeout", "--log-level",
                 "--log-format", "--ipv4-destination", "--ipv6-destination")


@pytest.mark.parametrize("argv", [["--help"], ["serve", "--help"]], ids=["reachd--help", "serve--help"])
def test_help_lists_options(argv):
    """The contract: every option reads an environment variable; `reachd --help` lists them."""
    result = subprocess.run([reachd_binary(), *argv], capture_output=True, text=True, timeout=15)
    assert result.returncode == 0, result.stderr
    text = result.stdout + result.stderr
    for option in SERVE_OPTIONS:
        assert option in text, f"`reachd {' '.join(argv)}` does not mention {option}"
        env = "REACHD_" + option[2:].upper().replace("-", "_")
        assert env in text, f"`reachd {' '.join(argv)}` does not mention {env}"


def test_port_from_environment():
    port = free_port()
    process = _run_reachd(["--host", "127.0.0.1"], env={"REACHD_PORT": str(port)})
    try:
        _wait_livez(port, process)
    finally:
        _stop(process)
    assert process.returncode == 0


def test_default_port_9478():
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", 9478))
        except OSError:
            pytest.skip("port 9478 is in use on this machine")
    process = _run_reachd(["--host", "127.0.0.1"])
    try:
        _wait_livez(9478, process)
    finally:
        _stop(process)
    assert process.returncode == 0
