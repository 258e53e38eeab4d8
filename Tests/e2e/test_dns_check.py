"""DNS as its own signal (docs/probes.md, "DNS"): `--dns-check NAME`, each nameserver
of resolv.conf asked separately, every state and reason, the failure threshold, resolv.conf
rewritten while running, `--ready-when dns`, the metrics, bad input, and nothing sent when not
configured. Black-box against the real binary in the dual-stack world (world_dualstack.py): two
dnsmasqs, a nameserver that never answers, FakeDNS servers whose rcode the test switches, a port
where nothing listens (ICMP port unreachable) and an address with no route.

Written from the contract, before the implementation: the tests of the new behaviour are marked
`partial_failures` (run the group with `-m partial_failures`).
"""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from conftest import ISO8601_MS_Z, SSEClient, http
from reachd_process import Reachd, free_port, reachd_binary
from test_metrics import PROMTOOL, promtool_check, samples, value
from test_readiness_conditions import wait_ready_code
from world import readyz, status
from world_dualstack import dual_world, reachd_dual, server_entry, wait_dns  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]
contract = pytest.mark.partial_failures

DNS_STATES = ("disabled", "unknown", "ok", "degraded", "failing")
SERVER_REASONS = ("no-route", "timeout", "refused", "servfail", "error")


def check_dns_object(dns: dict) -> None:
    """The contract of `dns` (docs/status-document.md and openapi.yaml), and `state`/`reason` derived from the servers."""
    for key in ("state", "name", "reason", "since", "servers"):
        assert key in dns, f"dns lacks {key!r}: {dns}"
    assert dns["state"] in DNS_STATES, dns
    assert isinstance(dns["since"], str) and ISO8601_MS_Z.match(dns["since"]), dns
    assert isinstance(dns["servers"], list), dns
    if dns["state"] == "disabled":
        assert dns["name"] is None and dns["servers"] == [] and dns["reason"] is None, dns
        return
    assert isinstance(dns["name"], str) and dns["name"], dns
    for entry in dns["servers"]:
        for key in ("address", "state", "reason", "since"):
            assert key in entry, f"server lacks {key!r}: {entry}"
        assert isinstance(entry["address"], str) and entry["address"], entry
        assert isinstance(entry["since"], str) and ISO8601_MS_Z.match(entry["since"]), entry
        # "unknown" before a server's first result is this file's reading of "not checked yet".
        assert entry["state"] in ("unknown", "answering", "failing"), entry
        if entry["state"] == "failing":
            assert entry["reason"] in SERVER_REASONS, entry
        else:
            assert entry["reason"] is None, entry
    states = [entry["state"] for entry in dns["servers"]]
    if dns["state"] == "failing":
        if not dns["servers"]:
            assert dns["reason"] == "no-servers", dns
        elif "unknown" not in states:  # (a server just added to resolv.conf has no result yet)
            assert dns["reason"] == dns["servers"][0]["reason"], f"failing: the reason is the first server's: {dns}"
    else:
        assert dns["reason"] is None, dns
    if dns["servers"] and "unknown" not in states and dns["state"] != "unknown":
        answering = states.count("answering")
        want = "ok" if answering == len(states) else "failing" if answering == 0 else "degraded"
        assert dns["state"] == want, f"dns.state must be {want!r} for servers {states}: {dns}"


def settled(dns: dict) -> bool:
    return dns.get("state") not in (None, "unknown") and all(
        s.get("state") not in (None, "unknown") for s in dns.get("servers") or [])


def write_resolv_conf(w, text: str) -> None:
    """Rewrite the client's resolv.conf in place (the bind mount follows the inode)."""
    with open(w.resolv_path, "w") as f:
        f.write(text)


def dns_args(name: str = "db.test", *more: str) -> list[str]:
    return ["--dns-check", name, *more]


def metrics(server) -> str:
    response = http(server.port, "GET", "/metrics", ns=server.netns)
    assert response.status == 200
    return response.body.decode()


# --------------------------------------------------------------------------- states


@contract
def test_disabled_without_dns_check(dual_world, reachd_dual):
    server = reachd_dual()
    doc = status(server)
    assert "dns" in doc, f"no dns object: {sorted(doc)}"
    check_dns_object(doc["dns"])
    assert doc["dns"]["state"] == "disabled", doc["dns"]
    text = metrics(server)
    assert value(text, "reachd_dns_state", state="disabled") == 1, text
    for state in ("unknown", "ok", "degraded", "failing"):
        assert value(text, "reachd_dns_state", state=state) == 0, f"reachd_dns_state{{state={state}}} not at 0"


@contract
def test_ok_every_server_in_resolv_conf_order(dual_world, reachd_dual):
    """Both dnsmasqs answer (NXDOMAIN counts: the server works): `ok`, servers in resolv.conf order."""
    w = dual_world
    w.set_nameservers(w.dns2_ip, w.gateway_ip)  # not in numeric order on purpose
    servers = reachd_dual.many(dns_args("db.test"), dns_args("nx.test"), dns_args("db.test."),
                               [])  # the last one: nothing configured
    for server, name in zip(servers[:3], ("db.test", "nx.test", "db.test.")):
        dns = wait_dns(server, settled, timeout=10)
        check_dns_object(dns)
        assert (dns["state"], dns["name"], dns["reason"]) == ("ok", name, None), dns
        assert [s["address"] for s in dns["servers"]] == [w.dns2_ip, w.gateway_ip], dns["servers"]
        assert all(s["state"] == "answering" for s in dns["servers"]), dns["servers"]
    assert status(servers[3])["dns"]["state"] == "disabled"


@contract
def test_unknown_until_the_first_answer(dual_world, reachd_dual):
    w = dual_world
    fake = w.fake_dns(0, "noerror")
    fake.delay = 3.0  # still in flight while the first document is read
    w.set_nameservers(fake.address)
    server = reachd_dual(*dns_args("check.test", "--dns-timeout", "8"))
    with SSEClient(server.port, ns=server.netns) as client:
        first = client.next_event(timeout=2).doc["dns"]
        check_dns_object(first)
        assert first["state"] == "unknown" and first["name"] == "check.test" and first["reason"] is None, first
        assert [s["address"] for s in first["servers"]] == [fake.address], first
        assert first["servers"][0]["state"] == "unknown", first
        ok = client.wait_for(lambda d: d["dns"]["state"] == "ok", timeout=12).doc["dns"]
    check_dns_object(ok)
    assert ok["since"] > first["since"], (ok, first)


@contract
def test_every_rcode_reason_and_since(dual_world, reachd_dual):
    """One FakeDNS switched through every answer: each rcode's reason; `since` of the server and of
    `dns` move with the state, not with the reason."""
    w = dual_world
    fake = w.fake_dns(0, "refused")
    w.set_nameservers(fake.address)
    server = reachd_dual(*dns_args("check.test", "--dns-interval", "1", "--dns-failures", "1",
                                   "--dns-timeout", "1"))
    dns = wait_dns(server, settled, timeout=10)
    check_dns_object(dns)
    assert (dns["state"], dns["reason"]) == ("failing", "refused"), dns
    failing_since, server_since = dns["since"], dns["servers"][0]["since"]
    for mode, reason in (("servfail", "servfail"), ("notimp", "error"), ("formerr", "error"),
                         ("silent", "timeout"), ("refused", "refused")):
        fake.mode = mode
        dns = wait_dns(server, lambda d, r=reason: settled(d) and d["servers"][0]["reason"] == r, timeout=10)
        check_dns_object(dns)
        assert (dns["state"], dns["reason"]) == ("failing", reason), (mode, dns)
        assert dns["since"] == failing_since and dns["servers"][0]["since"] == server_since, \
            f"{mode}: another reason, the same state: since must stay: {dns}"
    fake.mode = "nxdomain"
    dns = wait_dns(server, lambda d: d["state"] == "ok", timeout=10)
    check_dns_object(dns)
    assert dns["servers"][0]["state"] == "answering" and dns["since"] > failing_since, dns
    assert dns["servers"][0]["since"] > server_since, dns
    fake.mode = "noerror"
    time.sleep(2.5)  # two more checks; the document must not change
    assert status(server)["dns"] == dns


@contract
def test_malformed_answer_is_error(dual_world, reachd_dual):
    w = dual_world
    fake = w.fake_dns(0, "malformed")
    w.set_nameservers(fake.address)
    server = reachd_dual(*dns_args("check.test", "--dns-interval", "1", "--dns-failures", "1",
                                   "--dns-timeout", "2"))
    dns = wait_dns(server, settled, timeout=10)
    check_dns_object(dns)
    assert fake.query_count() >= 1
    assert (dns["state"], dns["reason"], dns["servers"][0]["reason"]) == ("failing", "error", "error"), dns


@contract
def test_closed_port_unroutable_and_silent_servers(dual_world, reachd_dual):
    """ICMP port unreachable → `refused`; no route → `no-route`; never answers → `timeout`.
    `failing` with the first server's reason; reordered, the reason follows."""
    w = dual_world
    w.set_nameservers(w.dns_closed_ip, w.noroute_ip, w.dns_silent_ip)
    server = reachd_dual(*dns_args("db.test", "--dns-timeout", "1", "--dns-interval", "30"))
    dns = wait_dns(server, settled, timeout=10)
    check_dns_object(dns)
    got = [(s["address"], s["state"], s["reason"]) for s in dns["servers"]]
    assert got == [(w.dns_closed_ip, "failing", "refused"), (w.noroute_ip, "failing", "no-route"),
                   (w.dns_silent_ip, "failing", "timeout")], got
    assert (dns["state"], dns["reason"]) == ("failing", "refused"), dns
    w.set_nameservers(w.noroute_ip, w.dns_silent_ip)
    dns = wait_dns(server, lambda d: settled(d) and len(d["servers"]) == 2, timeout=5)
    check_dns_object(dns)
    assert (dns["state"], dns["reason"]) == ("failing", "no-route"), dns
    w.set_nameservers(w.dns_silent_ip, w.noroute_ip)
    dns = wait_dns(server, lambda d: settled(d) and d["servers"][0]["address"] == w.dns_silent_ip, timeout=5)
    check_dns_object(dns)
    assert (dns["state"], dns["reason"]) == ("failing", "timeout"), dns


@contract
def test_degraded_when_some_answer(dual_world, reachd_dual):
    w = dual_world
    w.set_nameservers(w.dns_silent_ip, w.gateway_ip)
    server = reachd_dual(*dns_args("db.test", "--dns-timeout", "1"))
    # The gateway answers at once, the silent server only times out: no `ok` before `degraded`
    # (`ok` means every server answers; the state stays `unknown` until each has been asked).
    seen = []
    with SSEClient(server.port, ns=server.netns) as client:
        deadline = time.monotonic() + 10
        while not seen or seen[-1] != "degraded":
            assert time.monotonic() < deadline, seen
            seen.append(client.next_event(timeout=5).doc["dns"]["state"])
    assert "ok" not in seen and "failing" not in seen, seen
    dns = wait_dns(server, settled, timeout=10)
    check_dns_object(dns)
    assert (dns["state"], dns["reason"]) == ("degraded", None), dns
    assert [(s["address"], s["state"], s["reason"]) for s in dns["servers"]] == [
        (w.dns_silent_ip, "failing", "timeout"), (w.gateway_ip, "answering", None)], dns["servers"]


@contract
def test_no_servers(dual_world, reachd_dual):
    """resolv.conf lists no nameserver: `failing` / `no-servers`, `servers` empty; one appears: at once."""
    w = dual_world
    write_resolv_conf(w, "options ndots:1\n")
    server = reachd_dual(*dns_args("db.test", "--dns-interval", "30"))
    dns = wait_dns(server, lambda d: d["state"] != "unknown", timeout=10)
    check_dns_object(dns)
    assert (dns["state"], dns["reason"], dns["servers"]) == ("failing", "no-servers", []), dns
    w.set_nameservers(w.gateway_ip)
    t0 = time.monotonic()
    dns = wait_dns(server, lambda d: d["state"] == "ok", timeout=8)
    assert time.monotonic() - t0 < 8
    check_dns_object(dns)


@contract
def test_name_asked_exactly_as_given_for_its_a_record_at_each_server(dual_world, reachd_dual):
    """No search list (ndots:5 would make the system's resolver try check.test.sub.test first), an
    A query, and each server asked itself (a resolver would stop at the first that answers)."""
    w = dual_world
    first, second = w.fake_dns(0, "noerror"), w.fake_dns(1, "nxdomain")
    write_resolv_conf(w, f"search sub.test\nnameserver {first.address}\nnameserver {second.address}\n"
                         "options ndots:5 attempts:1\n")
    server = reachd_dual(*dns_args("check.test.", "--dns-interval", "1"))
    dns = wait_dns(server, settled, timeout=10)
    check_dns_object(dns)
    assert dns["state"] == "ok" and dns["name"] == "check.test.", dns
    first.wait_queries(2, timeout=5)
    second.wait_queries(2, timeout=5)
    for fake in (first, second):
        asked = {(q.name.lower(), q.qtype) for q in fake.queries}
        assert asked == {("check.test", 1)}, f"{fake.address} was asked {asked}"
        assert {q.source for q in fake.queries} == {w.client_ip}


# --------------------------------------------------------------------------- thresholds and events


@contract
def test_failures_threshold(dual_world, reachd_dual):
    """--dns-failures 3: the first result decides at once; fewer than 3 failures in a row publish
    nothing; 3 turn the server `failing`; one answer restores it."""
    w = dual_world
    fake = w.fake_dns(0, "refused")
    w.set_nameservers(fake.address)
    server = reachd_dual(*dns_args("check.test", "--dns-interval", "2", "--dns-failures", "3",
                                   "--dns-timeout", "1"))
    dns = wait_dns(server, settled, timeout=3.5)  # three checks at 2 s would take ≥ 4 s
    check_dns_object(dns)
    assert (dns["state"], dns["reason"]) == ("failing", "refused"), dns
    fake.mode = "noerror"
    dns = wait_dns(server, lambda d: d["state"] == "ok", timeout=6)  # one answer restores it
    with SSEClient(server.port, ns=server.netns) as client:
        start = client.next_event(timeout=2)
        # Failing for 2.5 s: at most two checks at a 2 s interval (retries inside one check count once).
        fake.mode = "refused"
        switched = time.monotonic()
        time.sleep(2.5)
        fake.mode = "noerror"
        back = time.monotonic()
        failed = [q for q in fake.queries if switched <= q.at < back and q.mode == "refused"]
        assert failed, "no check ran while the server refused: the test proves nothing"
        deadline = time.monotonic() + 8
        while not any(q.at >= back and q.mode == "noerror" for q in fake.queries):
            assert time.monotonic() < deadline, "no check after the server answered again"
            time.sleep(0.05)
        time.sleep(0.3)
        assert not client.reader.events, f"fewer than 3 failures published: {[e.data for e in client.reader.events]}"
        assert status(server)["sequence"] == start.doc["sequence"]
        # Now for good: failing after the third failure in a row, not before.
        fake.mode = "refused"
        switched = time.monotonic()
        down = client.wait_for(lambda d: d["dns"]["state"] == "failing", timeout=15)
        elapsed = time.monotonic() - switched
        assert elapsed >= 3.0, f"failing {elapsed:.1f}s after the first refusal: fewer than 3 checks at 2 s"
        check_dns_object(down.doc["dns"])
        assert down.doc["dns"]["reason"] == "refused"


@contract
def test_missing_route_decides_at_once_and_netlink_reruns_the_check(dual_world, reachd_dual):
    """--dns-failures 3, interval 30: a server's route goes → `failing`/`no-route` at once; back →
    re-checked at once (every netlink batch re-runs the check)."""
    w = dual_world
    w.set_nameservers(w.gateway_ip, w.dns2_ip)
    server = reachd_dual(*dns_args("db.test", "--dns-interval", "30", "--dns-failures", "3"))
    wait_dns(server, lambda d: d["state"] == "ok", timeout=10)
    t0 = time.monotonic()
    w.client.ip("route", "add", "unreachable", f"{w.dns2_ip}/32")
    dns = wait_dns(server, lambda d: d["state"] == "degraded", timeout=5)
    print(f"route to a nameserver gone → degraded in {(time.monotonic() - t0) * 1000:.0f} ms")
    check_dns_object(dns)
    assert (server_entry(dns, w.dns2_ip)["state"], server_entry(dns, w.dns2_ip)["reason"]) == ("failing", "no-route")
    assert server_entry(dns, w.gateway_ip)["state"] == "answering"
    w.client.ip("route", "del", "unreachable", f"{w.dns2_ip}/32")
    wait_dns(server, lambda d: d["state"] == "ok", timeout=5)


@contract
def test_unrelated_netlink_change_reruns_the_check(dual_world, reachd_dual):
    w = dual_world
    fake = w.fake_dns(0, "servfail")
    w.set_nameservers(fake.address)
    server = reachd_dual(*dns_args("check.test", "--dns-interval", "30", "--dns-failures", "1"))
    wait_dns(server, lambda d: d["state"] == "failing", timeout=10)
    fake.mode = "noerror"
    time.sleep(1.0)
    assert status(server)["dns"]["state"] == "failing", "checked again before the interval or a change"
    w.client.ip("route", "add", f"{w.svc(120)}/32", "via", w.gateway_ip)
    wait_dns(server, lambda d: d["state"] == "ok", timeout=5)


@contract
def test_resolv_conf_rewritten_servers_follow_at_once(dual_world, reachd_dual):
    w = dual_world
    w.set_nameservers(w.gateway_ip)
    server = reachd_dual(*dns_args("db.test", "--dns-interval", "30", "--dns-timeout", "1"))
    dns = wait_dns(server, lambda d: d["state"] == "ok", timeout=10)
    gateway_since = server_entry(dns, w.gateway_ip)["since"]

    w.set_nameservers(w.gateway_ip, w.dns_silent_ip)
    dns = wait_dns(server, lambda d: settled(d) and len(d["servers"]) == 2, timeout=6)
    check_dns_object(dns)
    assert dns["state"] == "degraded", dns
    assert server_entry(dns, w.gateway_ip)["since"] == gateway_since, "an unchanged server keeps its since"

    w.set_nameservers(w.dns2_ip)
    dns = wait_dns(server, lambda d: settled(d) and [s["address"] for s in d["servers"]] == [w.dns2_ip], timeout=6)
    check_dns_object(dns)
    assert dns["state"] == "ok", dns

    write_resolv_conf(w, "")
    dns = wait_dns(server, lambda d: d["servers"] == [], timeout=6)
    check_dns_object(dns)
    assert (dns["state"], dns["reason"]) == ("failing", "no-servers"), dns


# --------------------------------------------------------------------------- readiness


@contract
def test_ready_when_dns(dual_world, reachd_dual):
    """503 while unknown and failing, 200 while ok or degraded; liveness never moves."""
    w = dual_world
    fake = w.fake_dns(0, "noerror")
    fake.delay = 3.0
    w.set_nameservers(fake.address)
    server = reachd_dual(*dns_args("check.test", "--ready-when", "dns", "--dns-interval", "1",
                                   "--dns-failures", "1", "--dns-timeout", "5"))
    first = readyz(server)
    assert status(server)["dns"]["state"] == "unknown"
    assert first.status == 503 and first.content_type == "application/health+json", first
    ready = wait_ready_code(server, 200, timeout=10).json()
    assert ready["status"] == "pass" and len(ready["checks"]) == 1, ready
    fake.delay = 0.0
    fake.mode = "refused"
    failed = wait_ready_code(server, 503, timeout=8).json()
    assert failed["status"] == "fail"
    assert status(server)["dns"]["state"] == "failing"
    assert http(server.port, "GET", "/livez", ns=server.netns).status == 200, "liveness followed DNS"
    w.set_nameservers(fake.address, w.gateway_ip)
    wait_ready_code(server, 200, timeout=8)
    assert status(server)["dns"]["state"] == "degraded"


def start_in(namespace: str, *args: str) -> Reachd:
    """reachd in a namespace with nothing but loopback (a name given to it resolves nowhere)."""
    return Reachd(*args, netns=namespace)


def refused(namespace: str, *args: str) -> subprocess.CompletedProcess:
    """Run reachd with `args`; it must exit by itself (a refusal at start) within 10 s."""
    command = ["ip", "netns", "exec", namespace, reachd_binary(), "--host", "127.0.0.1", "--port",
               str(free_port()), *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=15)
        raise AssertionError(f"{args} accepted: reachd kept running\n{out}{err}")
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def accepted(namespace: str, *args: str) -> None:
    """The control: the same option with a good value starts and serves."""
    server = start_in(namespace, *args)
    try:
        server.wait_ready(timeout=15)
    finally:
        server.terminate()
        try:
            server.log_path.unlink()
        except OSError:
            pass


@contract
def test_ready_when_dns_needs_dns_check(bare_namespace):
    accepted(bare_namespace.name, "--ready-when", "dns", "--dns-check", "db.test")
    result = refused(bare_namespace.name, "--ready-when", "dns")
    assert result.returncode > 0, result
    assert "dns" in (result.stdout + result.stderr).lower(), result.stderr


# --------------------------------------------------------------------------- bad input


BAD_INPUT = [
    # (option, bad value, a good value for the control)
    ("--dns-check", "", "db.test"),
    ("--dns-check", "two words.test", "db.test"),
    ("--dns-check", "a..b.test", "db.test"),
    ("--dns-check", "x" * 64 + ".test", "db.test"),
    ("--dns-check", "a." * 127 + "a", "db.test"),  # 255 characters: longer than a name can be
    ("--dns-interval", "0", "5"),
    ("--dns-interval", "-1", "5"),
    ("--dns-interval", "soon", "5"),
    ("--dns-timeout", "-1", "1.5"),
    ("--dns-timeout", "0", "1.5"),
    ("--dns-failures", "0", "2"),
    ("--dns-failures", "1.5", "2"),
    ("--dns-failures", "-3", "2"),
    ("--target-successes", "0", "2"),
    ("--target-successes", "-1", "2"),
]


@contract
@pytest.mark.parametrize("option,bad,good", BAD_INPUT, ids=[f"{o}={b[:12]!r}" for o, b, _ in BAD_INPUT])
def test_bad_value_refused_at_start_naming_the_option(bare_namespace, option, bad, good):
    """Refused before serving, exit status non-zero, the message names the option; the same option
    with a good value is accepted (so the refusal is about the value, not an unknown option)."""
    base = [] if option == "--dns-check" or not option.startswith("--dns") else ["--dns-check", "db.test"]
    accepted(bare_namespace.name, *base, option, good)
    result = refused(bare_namespace.name, *base, option, bad)
    assert result.returncode > 0, f"{option} {bad!r}: exit {result.returncode}"
    assert option in result.stdout + result.stderr, f"the message does not name {option}: {result.stderr}"


@contract
def test_dns_check_from_the_environment(dual_world, reachd_dual):
    server = reachd_dual(env={"REACHD_DNS_CHECK": "db.test"})
    dns = wait_dns(server, settled, timeout=10)
    check_dns_object(dns)
    assert (dns["state"], dns["name"]) == ("ok", "db.test"), dns


# --------------------------------------------------------------------------- /metrics


@contract
def test_metrics(dual_world, reachd_dual):
    w = dual_world
    w.set_nameservers(w.gateway_ip, w.dns_silent_ip)
    server = reachd_dual(*dns_args("db.test", "--dns-timeout", "1", "--dns-interval", "1"))
    wait_dns(server, lambda d: d["state"] == "degraded", timeout=10)
    text = metrics(server)
    assert "# TYPE reachd_dns_state gauge" in text and "# TYPE reachd_dns_server_up gauge" in text
    assert "# TYPE reachd_dns_query_duration_seconds histogram" in text
    for state in DNS_STATES:
        assert value(text, "reachd_dns_state", state=state) == (1 if state == "degraded" else 0), state
    assert value(text, "reachd_dns_server_up", server=w.gateway_ip) == 1
    assert value(text, "reachd_dns_server_up", server=w.dns_silent_ip) == 0
    count = value(text, "reachd_dns_query_duration_seconds_count", server=w.gateway_ip)
    assert count is not None and count >= 1, text
    assert value(text, "reachd_dns_query_duration_seconds_bucket", server=w.gateway_ip, le="+Inf") == count
    assert value(text, "reachd_dns_query_duration_seconds_sum", server=w.gateway_ip) >= 0
    assert value(text, "reachd_dns_query_duration_seconds_count", server=w.dns_silent_ip) is not None, \
        "a histogram per server"
    buckets = sorted((float(k.split('le="')[1].split('"')[0]) if '+Inf' not in k else float("inf"), v)
                     for k, v in samples(text).items()
                     if k.startswith("reachd_dns_query_duration_seconds_bucket{") and f'"{w.gateway_ip}"' in k)
    assert [v for _, v in buckets] == sorted(v for _, v in buckets), f"buckets not cumulative: {buckets}"
    if PROMTOOL is not None:
        result = promtool_check(text)
        assert result.returncode == 0 and result.stdout == "" and result.stderr == "", result.stdout + result.stderr
    # A server added to resolv.conf gets its series.
    w.set_nameservers(w.gateway_ip, w.dns_silent_ip, w.dns2_ip)
    deadline = time.monotonic() + 8
    while value(metrics(server), "reachd_dns_server_up", server=w.dns2_ip) != 1:
        assert time.monotonic() < deadline, "no reachd_dns_server_up series for the added server"
        time.sleep(0.1)


# --------------------------------------------------------------------------- nothing sent without --dns-check


@contract
def test_nothing_sent_without_dns_check(dual_world, reachd_dual):
    """No option at all: not one UDP or TCP packet leaves the client namespace, though resolv.conf
    is rewritten and netlink batches arrive (each would re-run a check). Then the control: with
    --dns-check the same capture sees the queries at once."""
    w = dual_world
    capture = w.capture()
    server = reachd_dual()
    w.set_nameservers(w.gateway_ip, w.dns2_ip)
    w.client.ip("route", "add", f"{w.svc(120)}/32", "via", w.gateway_ip)
    time.sleep(3)  # the absence of packets is what is measured here
    sent = [p for p in capture.snapshot() if p.proto in (6, 17) and p.src in (w.client_ip, w.client_ip6)]
    assert not sent, f"reachd without --dns-check sent {sent[:5]}"
    assert status(server)["dns"]["state"] == "disabled"
    control = reachd_dual(*dns_args("db.test"))
    deadline = time.monotonic() + 5
    while not [p for p in capture.udp() if p.dport == 53 and p.src == w.client_ip]:
        assert time.monotonic() < deadline, "the capture never saw reachd's DNS query: the test proves nothing"
        time.sleep(0.05)
    assert control.process.poll() is None
