"""`--allow-origin` (CORS) for /status and /events, against the real binary over raw sockets:
off by default, `*`, an exact list, the preflight on a kept-alive connection, and refusals."""

from __future__ import annotations

import os
import subprocess

from conftest import Conn, SSEClient, http
from reachd_process import Reachd, reachd_binary

DASH = "http://127.0.0.1:3000"


def test_off_by_default_no_cors_headers_and_options_is_405(reachd_factory):
    server = reachd_factory()
    answer = http(server.port, "GET", "/status", headers={"Origin": DASH})
    assert answer.status == 200 and answer.header("Access-Control-Allow-Origin") is None
    preflight = http(server.port, "OPTIONS", "/status",
                     headers={"Origin": DASH, "Access-Control-Request-Method": "GET"})
    assert preflight.status == 405 and preflight.header("Allow") == "GET, HEAD"


def test_star_opens_status_and_events_to_every_origin(reachd_factory):
    server = reachd_factory("--allow-origin", "*")
    answer = http(server.port, "GET", "/status", headers={"Origin": "https://anywhere.example"})
    assert answer.header("Access-Control-Allow-Origin") == "*"
    assert answer.json()["state"] in ("reachable", "unreachable", "unknown")
    with SSEClient(server.port, headers={"Origin": "https://anywhere.example"}) as client:
        head = client.read_head()
        assert head.status == 200 and head.header("Access-Control-Allow-Origin") == "*"
        assert client.next_event().event == "status"
    assert http(server.port, "GET", "/readyz").header("Access-Control-Allow-Origin") is None
    assert http(server.port, "OPTIONS", "/livez", headers={"Origin": DASH}).status == 405


def test_a_preflight_then_the_request_on_one_connection(reachd_factory):
    server = reachd_factory("--allow-origin", f"{DASH},https://dash.example:8443")
    with Conn.open(server.port) as conn:
        conn.request("OPTIONS", "/events", {"Origin": DASH, "Access-Control-Request-Method": "GET",
                                            "Access-Control-Request-Headers": "last-event-id"})
        preflight = conn.read_response("OPTIONS")
        assert preflight.status == 204, preflight
        assert preflight.header("Access-Control-Allow-Origin") == DASH
        assert "GET" in preflight.header("Access-Control-Allow-Methods")
        assert "Last-Event-ID" in preflight.header("Access-Control-Allow-Headers")
        assert preflight.header("Vary") == "Origin"
        conn.request("GET", "/status", {"Origin": DASH})
        answer = conn.read_response("GET")
        assert answer.status == 200 and answer.header("Access-Control-Allow-Origin") == DASH
        assert answer.header("Vary") == "Origin"
        assert answer.json()["sequence"] >= 1


def test_an_unlisted_origin_is_named_nowhere(reachd_factory):
    server = reachd_factory("--allow-origin", DASH)
    answer = http(server.port, "GET", "/status", headers={"Origin": "https://evil.example"})
    assert answer.status == 200 and answer.header("Access-Control-Allow-Origin") is None
    assert answer.header("Vary") == "Origin"
    preflight = http(server.port, "OPTIONS", "/status",
                     headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"})
    assert preflight.status == 403, preflight
    assert preflight.header("Content-Type") == "application/problem+json"
    assert preflight.header("Access-Control-Allow-Origin") is None


def test_malformed_origins_are_refused_at_start():
    for value in ["dash.example", "https://dash.example/", "ftp://x.example", "*,https://a.example", ","]:
        for args, env in [(("--allow-origin", value), {}), ((), {"REACHD_ALLOW_ORIGIN": value})]:
            result = subprocess.run([reachd_binary(), "--port", "0", *args], capture_output=True, text=True,
                                    timeout=10, env={**os.environ, **env})
            assert result.returncode != 0, (value, env)
            assert "allow-origin" in result.stderr.lower() or "ALLOW_ORIGIN" in result.stderr, (value, result.stderr)
