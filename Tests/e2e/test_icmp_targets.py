"""`icmp://` targets and the quality window, black-box, in namespaces (DESIGN.md, "Quality: loss,
latency, path MTU"; issue 28).

The world (icmp_world.py): reachd in a client namespace, a router, and a far namespace whose
kernel does not answer echoes — a user-space responder does, and the tests tell it to delay or
drop replies and read what it received and answered. The router's onward link can shrink and its
own ICMP errors can vanish (a path-MTU blackhole), or it can answer "administratively prohibited".

Reading of the contract these tests rely on (each is said where it is used):
- a probe of a family sends `--icmp-count` small echoes (56 bytes of payload) 100 ms apart, then
  one full-size echo (interface MTU − 28 / − 48: a 1500-byte packet on these 1500-byte links);
- a probe can only *show* `loss`/`latency` once the window holds `--quality-window` probes, so
  such an impairment appears after at least window + failures − 1 probes; `mtu` needs a
  blackhole in 2 of the last 3 probes, so it appears after at least 2 + failures − 1;
- `reachd_target_packets_sent_total`/`_received_total` count echo requests sent and echo replies
  received. Whether the full-size echo is counted the contract does not say: a test accepts
  either "every echo" or "small echoes only", but the two counters must agree with the
  responder's records under one and the same reading.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

import netns
from conftest import _dump_on_failure
from icmp_world import (FAMILIES, IcmpWorld, icmp_world, metrics_text, reachd_icmp,  # noqa: F401
                        start_reachd_in)
from reachd_process import Reachd, free_port, reachd_binary
from world import status, target_of
from world_dualstack import PacketCapture

pytestmark = [pytest.mark.netns, pytest.mark.timeout(120)]

COUNT = 3  # --icmp-count's default
SMALL_PAYLOAD = 56


# --------------------------------------------------------------------------- reading reachd


_SERIES = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text: str) -> dict[tuple[str, frozenset], float]:
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _SERIES.match(line)
        assert match, f"unparsable metrics line: {line!r}"
        labels = frozenset(_LABEL.findall(match.group(2) or ""))
        out[(match.group(1), labels)] = float(match.group(3))
    return out


def metric(m: dict, name: str, **labels: str) -> float | None:
    return m.get((name, frozenset(labels.items())))


def metrics(server) -> dict:
    return parse_metrics(metrics_text(server))


def family_of(doc: dict, name: str, family: str) -> dict | None:
    return target_of(doc, name)[family]


def impairments(doc: dict, name: str, family: str) -> list[str] | None:
    fam = family_of(doc, name, family)
    assert fam is not None, f"{name} has no {family}: {target_of(doc, name)}"
    assert "impairments" in fam, f"{name}.{family} has no impairments array: {fam}"
    assert isinstance(fam["impairments"], list), fam
    return fam["impairments"]


def wait_doc(server, predicate, timeout: float, what: str, history: list | None = None) -> dict:
    """Poll /status (every 50 ms) until `predicate(doc)`; every document seen goes to `history`
    as (time, doc)."""
    deadline = time.monotonic() + timeout
    while True:
        doc = status(server)
        now = time.monotonic()
        if history is not None:
            history.append((now, doc))
        if predicate(doc):
            return doc
        if now > deadline:
            raise AssertionError(f"{what} not reached within {timeout}s; targets: {doc.get('targets')}")
        time.sleep(0.05)


def reachable(name: str, *families: str):
    def predicate(doc: dict) -> bool:
        target = target_of(doc, name)
        return all((target[f] or {}).get("state") == "reachable" for f in families)
    return predicate


def impaired(name: str, family: str, impairment: str, present: bool = True):
    """The family is reachable and `impairment` is (not) among its impairments (False while the
    family is not there yet)."""
    def predicate(doc: dict) -> bool:
        fam = family_of(doc, name, family)
        if fam is None or fam.get("state") != "reachable":
            return False
        return (impairment in impairments(doc, name, family)) == present
    return predicate


def both(*predicates):
    return lambda doc: all(p(doc) for p in predicates)


# --------------------------------------------------------------------------- reading the responder


def probes(requests) -> list[list]:
    """The requests to one address grouped into probes (a gap of 0.5 s or more separates two)."""
    groups: list[list] = []
    for r in sorted(requests, key=lambda r: r.at):
        if groups and r.at - groups[-1][-1].at < 0.5:
            groups[-1].append(r)
        else:
            groups.append([r])
    return groups


def completed_probes(w: IcmpWorld, dst: str, until: float, since: float = 0.0) -> int:
    """Probes to `dst` (started after `since`) whose every request was answered before `until`."""
    return sum(1 for group in probes(w.responder.of(dst=dst, since=since))
               if all(r.action == "answered" and r.at + r.delay < until for r in group))


def started_probes(w: IcmpWorld, dst: str, until: float, since: float = 0.0) -> int:
    return len(probes([r for r in w.responder.of(dst=dst, since=since) if r.at < until]))


def first(history: list, predicate) -> float | None:
    for at, doc in history:
        if predicate(doc):
            return at
    return None


def counters_match(server, w: IcmpWorld, target: str, family: str, dst: str,
                   exclude_idents: set[int] = frozenset(), timeout: float = 10.0) -> str:
    """reachd's packet counters of (target, family) against what the responder received from it
    and answered, read while nothing is in flight. Returns the reading that matched ("every echo"
    or "small echoes only"); fails with the last observation."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            w.responder.wait_quiet(0.25, timeout=max(0.5, deadline - time.monotonic()))
        except TimeoutError:
            break
        before = w.responder.of(dst=dst, exclude_idents=exclude_idents)
        m = metrics(server)
        after = w.responder.of(dst=dst, exclude_idents=exclude_idents)
        if len(before) != len(after) or w.responder.pending():
            continue
        sent = metric(m, "reachd_target_packets_sent_total", target=target, family=family)
        received = metric(m, "reachd_target_packets_received_total", target=target, family=family)
        small = [r for r in before if r.small]
        readings = {
            "every echo": (len(before), sum(r.action == "answered" for r in before)),
            "small echoes only": (len(small), sum(r.action == "answered" for r in small)),
        }
        for reading, expected in readings.items():
            if (sent, received) == expected:
                assert sent > 0, (target, family, sent)
                return reading
        last = (f"{target}/{family}: reachd sent={sent} received={received}; the responder got from it "
                f"{readings} (every echo / small only: received, answered)")
        time.sleep(0.3)
    raise AssertionError(f"packet counters never matched the responder: {last}; {w.responder.summary()}")


def rtt_histogram(m: dict, target: str, family: str) -> tuple[float | None, float | None]:
    return (metric(m, "reachd_target_rtt_seconds_count", target=target, family=family),
            metric(m, "reachd_target_rtt_seconds_sum", target=target, family=family))


def impaired_series(m: dict, target: str, family: str, impairment: str) -> float | None:
    return metric(m, "reachd_target_impaired", target=target, family=family, impairment=impairment)


def assert_not_impaired_in_metrics(m: dict, target: str, family: str) -> None:
    for impairment in ("loss", "latency", "mtu"):
        value = impaired_series(m, target, family, impairment)
        assert value in (None, 0.0), (target, family, impairment, value)


# --------------------------------------------------------------------------- basic


def test_echoes_both_families_reachable_with_true_counters(icmp_world, reachd_icmp):
    """A literal of each family and a name with both: reachable, no impairment, each probe 3
    small echoes 100 ms apart then one 1500-byte echo, the RTT histogram and the packet counters
    present and equal to what the responder received and answered; a tcp:// target's RTT too."""
    w = icmp_world
    listener = netns.socket_in(w.far.name, socket.AF_INET6)
    listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # one port for both families
    listener.bind(("::", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    try:
        server = reachd_icmp("--target", f"v4=icmp://{w.far4}", "--target", f"v6=icmp://[{w.far6}]",
                             "--target", "both=icmp://other.test", "--target", f"web=tcp://far.test:{port}",
                             "--target-interval", "1")
        doc = wait_doc(server, both(reachable("v4", "ipv4"), reachable("v6", "ipv6"),
                                    reachable("both", "ipv4", "ipv6"), reachable("web", "ipv4", "ipv6")),
                       10, "every target reachable")
        assert target_of(doc, "v4")["ipv6"] is None and target_of(doc, "v6")["ipv4"] is None, doc["targets"]
        # Three probes of each.
        for dst in (w.far4, w.far6, w.far4b, w.far6b):
            w.responder.wait_requests(lambda snap, dst=dst: len(probes([r for r in snap if r.dst == dst])) >= 3,
                                      10, f"3 probes to {dst}")
        doc = status(server)
        for name, families in (("v4", ["ipv4"]), ("v6", ["ipv6"]), ("both", FAMILIES), ("web", FAMILIES)):
            target = target_of(doc, name)
            assert target["state"] == "reachable" and target["degraded"] is False, target
            for family in families:
                assert target[family]["state"] == "reachable", target
                assert impairments(doc, name, family) == [], target

        # What went over the wire: per probe, 3 small echoes of 56 bytes ~100 ms apart, then one
        # full-size echo filling the 1500-byte MTU, never fragmented.
        for dst in (w.far4, w.far6, w.far4b, w.far6b):
            groups = probes(w.responder.of(dst=dst))[:-1]  # the last may still be going on
            assert len(groups) >= 2, groups
            for group in groups:
                small = [r for r in group if r.small]
                large = [r for r in group if not r.small]
                assert [r.payload for r in small] == [SMALL_PAYLOAD] * COUNT, group
                assert [r.packet_size for r in large] == [1500], group
                assert group[-1] is large[0], f"the full-size echo is not last: {group}"
                gaps = [b.at - a.at for a, b in zip(small, small[1:])]
                assert all(0.07 <= g <= 0.3 for g in gaps), f"small echoes to {dst} not ~100 ms apart: {gaps}"
            assert {r.src for r in w.responder.of(dst=dst)} == {w.client_ip if ":" not in dst else w.client_ip6}

        m = metrics(server)
        for name, family in (("v4", "ipv4"), ("v6", "ipv6"), ("both", "ipv4"), ("both", "ipv6"),
                             ("web", "ipv4"), ("web", "ipv6")):
            count, total = rtt_histogram(m, name, family)
            assert count and count >= 2, f"reachd_target_rtt_seconds{{target={name},family={family}}}: {count}"
            assert 0 < total / count < 0.05, f"{name}/{family}: mean RTT {total / count}s on a local path"
            assert_not_impaired_in_metrics(m, name, family)
        for name, family in (("v4", "ipv6"), ("v6", "ipv4")):
            assert rtt_histogram(m, name, family)[0] in (None, 0.0), f"{name} has no {family}"
        # The path carries the interface's MTU: the largest echo answered is 1500 bytes.
        for name, family in (("v4", "ipv4"), ("v6", "ipv6"), ("both", "ipv4"), ("both", "ipv6")):
            assert metric(m, "reachd_target_path_mtu_bytes", target=name, family=family) == 1500, (name, family)
        for name in ("web",):
            for family in FAMILIES:
                assert metric(m, "reachd_target_packets_sent_total", target=name, family=family) in (None, 0.0), \
                    "packet counters are for icmp targets"
        readings = {counters_match(server, w, name, family, dst)
                    for name, family, dst in (("v4", "ipv4", w.far4), ("v6", "ipv6", w.far6),
                                              ("both", "ipv4", w.far4b), ("both", "ipv6", w.far6b))}
        assert len(readings) == 1, f"the counters count differently per target: {readings}"
        print(f"packet counters count: {readings}")
    finally:
        listener.close()


# --------------------------------------------------------------------------- latency


def test_latency_appears_after_the_window_and_the_failures_and_clears(icmp_world, reachd_icmp):
    """Every reply 0.3 s late, --max-rtt 0.1, window 2, failures 2, successes 2: `latency` after
    the window filled and 2 probes showed it (at least 3 probes), the target degraded but
    reachable; replies on time again: cleared after 2 probes that do not show it."""
    w = icmp_world
    w.responder.delay = 0.3
    server = reachd_icmp("--target", f"v4=icmp://{w.far4}", "--target", f"v6=icmp://[{w.far6}]",
                         "--max-rtt", "0.1", "--quality-window", "2", "--target-failures", "2",
                         "--target-successes", "2", "--target-interval", "1")
    history: list = []
    wait_doc(server, both(impaired("v4", "ipv4", "latency"), impaired("v6", "ipv6", "latency")), 25,
             "latency on both targets", history)
    for name, family, dst in (("v4", "ipv4", w.far4), ("v6", "ipv6", w.far6)):
        seen = first(history, impaired(name, family, "latency"))
        done = completed_probes(w, dst, seen)
        print(f"{name}: latency appeared after {done} slow probes")
        assert 3 <= done <= 5, (f"{name}: latency appeared after {done} slow probes; window 2 + 2 probes "
                                f"showing it make at least 3")
        for at, doc in history:
            if target_of(doc, name)["state"] != "unknown":
                assert target_of(doc, name)["state"] == "reachable", target_of(doc, name)
    doc = status(server)
    m = metrics(server)
    for name, family in (("v4", "ipv4"), ("v6", "ipv6")):
        target = target_of(doc, name)
        assert target["state"] == "reachable" and target[family]["state"] == "reachable", target
        assert target[family]["impairments"] == ["latency"], target
        assert target["degraded"] is True, target
        assert impaired_series(m, name, family, "latency") == 1, name
        assert impaired_series(m, name, family, "loss") in (None, 0.0)
        count, total = rtt_histogram(m, name, family)
        assert count and 0.28 <= total / count <= 0.6, f"{name}: mean RTT {total}/{count}, replies 0.3 s late"

    # On time again, set between two probes.
    w.responder.wait_quiet(0.25)
    fixed_at = time.monotonic()
    w.responder.delay = 0.0
    history = []
    wait_doc(server, both(impaired("v4", "ipv4", "latency", False), impaired("v6", "ipv6", "latency", False)),
             25, "latency cleared on both targets", history)
    for name, family, dst in (("v4", "ipv4", w.far4), ("v6", "ipv6", w.far6)):
        seen = first(history, impaired(name, family, "latency", False))
        done = completed_probes(w, dst, seen, since=fixed_at)
        print(f"{name}: latency cleared after {done} fast probes")
        assert 2 <= done <= 5, f"{name}: latency cleared after {done} fast probes (successes 2)"
    doc = status(server)
    m = metrics(server)
    for name, family in (("v4", "ipv4"), ("v6", "ipv6")):
        assert target_of(doc, name)["degraded"] is False, target_of(doc, name)
        assert impairments(doc, name, family) == []
        assert impaired_series(m, name, family, "latency") == 0


def test_a_single_slow_probe_is_no_event(icmp_world, reachd_icmp):
    """Window 1, failures 2: one slow probe shows `latency` once and never enters the document;
    two slow probes in a row do (the control), and two fast ones clear it."""
    w = icmp_world
    server = reachd_icmp("--target", f"v4=icmp://{w.far4}", "--target", f"v6=icmp://[{w.far6}]",
                         "--max-rtt", "0.1", "--quality-window", "1", "--target-failures", "2",
                         "--target-successes", "2", "--target-interval", "1")
    wait_doc(server, both(reachable("v4", "ipv4"), reachable("v6", "ipv6")), 10, "reachable")
    for dst in (w.far4, w.far6):
        w.responder.wait_requests(lambda snap, dst=dst: len(probes([r for r in snap if r.dst == dst])) >= 2, 10)
    rtt_before = {name: rtt_histogram(metrics(server), name, family) for name, family in (("v4", "ipv4"),
                                                                                       ("v6", "ipv6"))}
    w.responder.wait_quiet(0.25)
    slow_from = time.monotonic()
    w.responder.delay_next(COUNT + 1, 0.3)  # exactly the next probe of each family
    history: list = []
    deadline = time.monotonic() + 4.5
    while time.monotonic() < deadline:
        doc = status(server)
        history.append((time.monotonic(), doc))
        for name, family in (("v4", "ipv4"), ("v6", "ipv6")):
            assert impairments(doc, name, family) == [], f"one slow probe made an event: {target_of(doc, name)}"
            assert target_of(doc, name)["degraded"] is False
        m = metrics(server)
        for name, family in (("v4", "ipv4"), ("v6", "ipv6")):
            assert impaired_series(m, name, family, "latency") in (None, 0.0), "latency in /metrics"
        time.sleep(0.05)
    for name, family, dst in (("v4", "ipv4", w.far4), ("v6", "ipv6", w.far6)):
        late = [r for r in w.responder.of(dst=dst, since=slow_from) if r.delay > 0]
        assert len(late) == COUNT + 1 and len(probes(late)) == 1, f"not one slow probe: {late}"
        assert started_probes(w, dst, time.monotonic(), since=slow_from) >= 3, "too few probes watched"
        count, total = rtt_histogram(metrics(server), name, family)
        count0, total0 = rtt_before[name]
        assert total - total0 >= 0.28, f"{name}: the slow probe's RTT is not in the histogram ({total0} → {total})"

    # The control: two slow probes in a row are an event.
    w.responder.wait_quiet(0.25)
    w.responder.delay_next(2 * (COUNT + 1), 0.3)
    wait_doc(server, both(impaired("v4", "ipv4", "latency"), impaired("v6", "ipv6", "latency")), 10,
             "latency after two slow probes")
    wait_doc(server, both(impaired("v4", "ipv4", "latency", False), impaired("v6", "ipv6", "latency", False)), 10,
             "latency cleared after two fast probes")


# --------------------------------------------------------------------------- loss


def test_loss_once_the_window_is_full_and_true_counters(icmp_world, reachd_icmp):
    """One small echo in three unanswered, --max-loss 0.2, window 4, failures 1: `loss` appears
    only once 4 probes filled the window, the family stays reachable, and sent/received tell the
    truth; all answered again: cleared."""
    w = icmp_world
    w.responder.drop_every = 3
    server = reachd_icmp("--target", f"v4=icmp://{w.far4}", "--target", f"v6=icmp://[{w.far6}]",
                         "--max-loss", "0.2", "--quality-window", "4", "--target-failures", "1",
                         "--target-interval", "1", "--target-timeout", "1")
    history: list = []
    wait_doc(server, both(impaired("v4", "ipv4", "loss"), impaired("v6", "ipv6", "loss")), 25,
             "loss on both targets", history)
    for name, family, dst in (("v4", "ipv4", w.far4), ("v6", "ipv6", w.far6)):
        seen = first(history, impaired(name, family, "loss"))
        started = started_probes(w, dst, seen)
        print(f"{name}: loss appeared when probe {started} had started")
        assert started >= 4, f"{name}: loss judged after {started} probes, before the window (4) was full"
        states = [target_of(doc, name)[family]["state"] for _, doc in history
                  if target_of(doc, name)[family] is not None]
        assert set(states) <= {"unknown", "reachable"}, f"{name} was not always reachable: {set(states)}"
    doc = status(server)
    m = metrics(server)
    for name, family in (("v4", "ipv4"), ("v6", "ipv6")):
        target = target_of(doc, name)
        assert target["state"] == "reachable" and target[family]["impairments"] == ["loss"], target
        assert target["degraded"] is True, target
        assert impaired_series(m, name, family, "loss") == 1
    # Every lost echo was lost for real: the responder dropped one small echo in three.
    for name, family, dst in (("v4", "ipv4", w.far4), ("v6", "ipv6", w.far6)):
        reading = counters_match(server, w, name, family, dst)
        small = w.responder.of(dst=dst, small=True)
        assert sum(r.action == "dropped" for r in small) == len(small) // 3, w.responder.summary()
        print(f"{name}: counters count {reading}")

    w.responder.drop_every = None
    wait_doc(server, both(impaired("v4", "ipv4", "loss", False), impaired("v6", "ipv6", "loss", False)), 15,
             "loss cleared")
    doc = status(server)
    for name in ("v4", "v6"):
        assert target_of(doc, name)["degraded"] is False, target_of(doc, name)
    for name, family, dst in (("v4", "ipv4", w.far4), ("v6", "ipv6", w.far6)):
        counters_match(server, w, name, family, dst)


# --------------------------------------------------------------------------- path MTU


def test_mtu_blackhole_and_discovery(icmp_world, reachd_icmp):
    """The router's onward link carries 1280 (IPv4: 1000) and the router's ICMP errors vanish:
    `mtu` on both families of a name (small echoes answered, the full-size echo neither answered
    nor refused); the errors let through: no impairment, and the path MTU is what they name."""
    w = icmp_world
    w.shrink_mtu(1280, 1000)
    w.block_router_errors()
    server = reachd_icmp("--target", "far=icmp://far.test", "--target-failures", "2", "--target-successes", "2",
                         "--target-interval", "1", "--target-timeout", "1")
    history: list = []
    wait_doc(server, both(impaired("far", "ipv4", "mtu"), impaired("far", "ipv6", "mtu")), 30,
             "mtu on both families", history)
    for family, dst in (("ipv4", w.far4), ("ipv6", w.far6)):
        seen = first(history, impaired("far", family, "mtu"))
        started = started_probes(w, dst, seen)
        print(f"{family}: mtu appeared when probe {started} had started")
        assert started >= 3, f"{family}: mtu after {started} probes; 2 of 3 and failures 2 need at least 3"
        assert all(r.small for r in w.responder.of(dst=dst)), "a full-size echo crossed the shrunk link"
    doc = status(server)
    target = target_of(doc, "far")
    assert target["state"] == "reachable" and target["degraded"] is True, target
    m = metrics(server)
    for family in FAMILIES:
        assert target[family]["state"] == "reachable" and target[family]["impairments"] == ["mtu"], target
        assert impaired_series(m, "far", family, "mtu") == 1, family
    # The path MTU "is the IP packet size of the largest echo answered, or the MTU an ICMP error
    # named": here a small echo, 56 + 8 + 20 (IPv4) / 40 (IPv6). Checked at the end, so that the
    # discovery half runs whatever this says.
    blackhole_mtu = {family: metric(m, "reachd_target_path_mtu_bytes", target="far", family=family)
                     for family in FAMILIES}

    w.allow_router_errors()
    history = []
    wait_doc(server, both(impaired("far", "ipv4", "mtu", False), impaired("far", "ipv6", "mtu", False)), 30,
             "mtu cleared", history)
    doc = status(server)
    target = target_of(doc, "far")
    assert target["degraded"] is False and target["state"] == "reachable", target
    for family in FAMILIES:
        assert impairments(doc, "far", family) == [], target
    m = metrics(server)
    assert metric(m, "reachd_target_path_mtu_bytes", target="far", family="ipv4") == 1000
    assert metric(m, "reachd_target_path_mtu_bytes", target="far", family="ipv6") == 1280
    for family in FAMILIES:
        assert impaired_series(m, "far", family, "mtu") == 0
    # Probes go on without an impairment: discovery works, and nothing full-size got through.
    time.sleep(2.5)
    doc = status(server)
    for family in FAMILIES:
        assert impairments(doc, "far", family) == []
    assert all(r.small for r in w.responder.snapshot()), "a full-size echo crossed the shrunk link"
    assert blackhole_mtu == {"ipv4": 84, "ipv6": 104}, \
        f"reachd_target_path_mtu_bytes during the blackhole: {blackhole_mtu}, the largest echoes answered 84/104"


def test_mtu_discovery_from_the_start_is_no_impairment(icmp_world, reachd_icmp):
    """The shrunk link with the router's errors passing from the start: never `mtu`, the path MTU
    is the one the errors name."""
    w = icmp_world
    w.shrink_mtu(1280, 1000)
    server = reachd_icmp("--target", "far=icmp://far.test", "--target-failures", "1", "--target-interval", "1",
                         "--target-timeout", "1")
    wait_doc(server, reachable("far", "ipv4", "ipv6"), 10, "reachable")
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:
        doc = status(server)
        for family in FAMILIES:
            assert impairments(doc, "far", family) == [], target_of(doc, "far")
        time.sleep(0.1)
    m = metrics(server)
    assert metric(m, "reachd_target_path_mtu_bytes", target="far", family="ipv4") == 1000
    assert metric(m, "reachd_target_path_mtu_bytes", target="far", family="ipv6") == 1280


# --------------------------------------------------------------------------- unreachable


def test_administratively_prohibited_is_host_unreachable(icmp_world, reachd_icmp):
    """The router answers "administratively prohibited" for both addresses of a name: each family
    unreachable with reason host-unreachable (the contract: any destination-unreachable); the
    prohibition lifted: reachable."""
    w = icmp_world
    w.prohibit(w.far4b)
    w.prohibit(w.far6b)
    # Few echoes per probe: the router's IPv4 errors are rate-limited per source (see icmp_world).
    server = reachd_icmp("--target", "p=icmp://other.test", "--icmp-count", "1", "--target-interval", "2",
                         "--target-failures", "1")
    # The router's first error toward a new source is never sent (IPv4's `ip_error` starts a peer
    # with no tokens: route/error_cost, a global sysctl a test must not change), so a first probe
    # may read `timeout`; the next ones get the error.
    doc = wait_doc(server, lambda d: all((target_of(d, "p")[f] or {}).get("reason") == "host-unreachable"
                                         for f in FAMILIES), 15, "both families host-unreachable")
    target = target_of(doc, "p")
    for family in FAMILIES:
        assert target[family]["state"] == "unreachable", target
        assert target[family]["reason"] == "host-unreachable", target
        assert target[family]["impairments"] == [], target
    assert target["state"] == "unreachable" and target["reason"] == "host-unreachable", target
    assert w.responder.of(dst=w.far4b) == [] and w.responder.of(dst=w.far6b) == []
    m = metrics(server)
    assert metric(m, "reachd_target_probe_failures_total", target="p", reason="host-unreachable") >= 1, m

    w.unprohibit(w.far4b)
    w.unprohibit(w.far6b)
    doc = wait_doc(server, reachable("p", "ipv4", "ipv6"), 10, "reachable once allowed")
    assert target_of(doc, "p")["degraded"] is False


def test_no_route_sends_nothing(icmp_world, reachd_icmp):
    """The client has `unreachable` routes to both addresses of a name (and to the literals): every
    family no-route, and not one echo left — not on the link, not at the responder, not in the
    counters."""
    w = icmp_world
    capture = PacketCapture(w.client.name, w.link)
    try:
        server = reachd_icmp("--target", "n=icmp://noroute.test", "--target", f"n4=icmp://{w.noroute4}",
                             "--target", f"n6=icmp://[{w.noroute6}]", "--target-interval", "1")
        doc = wait_doc(server, lambda d: all(target_of(d, n)["state"] == "unreachable" for n in ("n", "n4", "n6")),
                       10, "all unreachable")
        for name, families in (("n", FAMILIES), ("n4", ["ipv4"]), ("n6", ["ipv6"])):
            target = target_of(doc, name)
            assert target["reason"] == "no-route", target
            for family in families:
                assert target[family]["state"] == "unreachable" and target[family]["reason"] == "no-route", target
                assert target[family]["impairments"] == [], target
        time.sleep(2.5)  # more probes
        sent = [p for p in capture.snapshot() if p.proto in (1, 58) and p.dst in (w.noroute4, w.noroute6)]
        assert sent == [], sent
        assert w.responder.snapshot() == [], w.responder.summary()
        m = metrics(server)
        for name, family in (("n", "ipv4"), ("n", "ipv6"), ("n4", "ipv4"), ("n6", "ipv6")):
            assert metric(m, "reachd_target_packets_sent_total", target=name, family=family) in (None, 0.0), \
                (name, family)
    finally:
        capture.close()


# --------------------------------------------------------------------------- another pinger


@pytest.mark.skipif(shutil.which("ping") is None, reason="iputils-ping is not installed")
def test_another_process_pinging_the_same_host_does_not_count(icmp_world, reachd_icmp):
    """`ping -c 20 -i 0.2` to the same addresses from the same namespace while reachd probes them:
    reachd's counters still equal what the responder got from reachd alone (its replies matched by
    identifier and sequence, not by address)."""
    w = icmp_world
    server = reachd_icmp("--target", f"v4=icmp://{w.far4}", "--target", f"v6=icmp://[{w.far6}]",
                         "--target-interval", "1")
    wait_doc(server, both(reachable("v4", "ipv4"), reachable("v6", "ipv6")), 10, "reachable")
    w.responder.wait_requests(lambda snap: len(snap) >= 8, 10)
    ours = w.responder.idents()
    ident = next(i for i in range(0x4242, 0x10000) if i not in ours)
    pingers = [w.ping_process(w.far4, "-c", "20", "-i", "0.2", "-W", "1", "-e", str(ident)),
               w.ping_process(w.far6, "-6", "-c", "20", "-i", "0.2", "-W", "1", "-e", str(ident))]
    try:
        outputs = [p.communicate(timeout=20)[0] for p in pingers]
    finally:
        for p in pingers:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, out in zip(pingers, outputs):
        assert p.returncode == 0 and "20 received" in out, out
    for family, dst in (("ipv4", w.far4), ("ipv6", w.far6)):
        theirs = w.responder.of(dst=dst, ident=ident)
        assert len(theirs) == 20 and all(r.small for r in theirs), w.responder.summary()
        assert len(w.responder.of(dst=dst, exclude_idents={ident})) >= 12, "reachd probed too little meanwhile"
    doc = status(server)
    for name, family in (("v4", "ipv4"), ("v6", "ipv6")):
        assert target_of(doc, name)[family]["state"] == "reachable" and impairments(doc, name, family) == []
    for name, family, dst in (("v4", "ipv4", w.far4), ("v6", "ipv6", w.far6)):
        counters_match(server, w, name, family, dst, exclude_idents={ident})


def test_replies_of_another_identifier_or_sequence_are_not_ours(icmp_world, reachd_icmp):
    """Every reply carries another identifier (what a raw socket sees of another pinger's replies),
    then another sequence: the target is unreachable (timeout) and nothing counts as received;
    true replies again: reachable."""
    w = icmp_world
    for mangle in ("ident", "seq"):
        w.responder.mangle = mangle
        name = f"t{mangle}"
        server = reachd_icmp("--target", f"{name}4=icmp://{w.far4}", "--target", f"{name}6=icmp://[{w.far6}]",
                             "--target-interval", "1", "--target-timeout", "1", "--target-failures", "1")
        doc = wait_doc(server, lambda d: all((target_of(d, f"{name}{n}")[f] or {}).get("state")
                                             not in (None, "unknown") for n, f in (("4", "ipv4"), ("6", "ipv6"))),
                       10, "settled")
        for n, family in (("4", "ipv4"), ("6", "ipv6")):
            fam = target_of(doc, f"{name}{n}")[family]
            assert fam["state"] == "unreachable" and fam["reason"] == "timeout", (mangle, fam)
        w.responder.wait_requests(lambda snap: len(probes(snap)) >= 2, 10)
        m = metrics(server)
        for n, family in (("4", "ipv4"), ("6", "ipv6")):
            assert metric(m, "reachd_target_packets_sent_total", target=f"{name}{n}", family=family) >= COUNT
            assert metric(m, "reachd_target_packets_received_total", target=f"{name}{n}", family=family) == 0, \
                f"{mangle}: a reply not to reachd's echo counted"
        w.responder.mangle = None
        wait_doc(server, both(reachable(f"{name}4", "ipv4"), reachable(f"{name}6", "ipv6")), 10, "reachable")
        stop(server)


def stop(server) -> None:
    server.terminate()
    server.log_path.unlink(missing_ok=True)


# --------------------------------------------------------------------------- start-up: sockets


UNPRIVILEGED = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--inh-caps=-all",
                "--bounding-set=-all", "--"]
ROOT_WITHOUT_NET_RAW = ["setpriv", "--inh-caps=-net_raw", "--bounding-set=-net_raw", "--"]


class PrefixedReachd(Reachd):
    """reachd in a namespace behind a command prefix (setpriv …)."""

    def __init__(self, namespace: str, prefix: list[str], *args: str):
        self.port = free_port()
        self.netns = namespace
        command = ["ip", "netns", "exec", namespace, *prefix, reachd_binary(), "--host", "127.0.0.1",
                   "--port", str(self.port), *args]
        self.log_path = Path(f"/tmp/reachd-test-{self.port}-unprivileged.log")
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)


def run_prefixed(namespace: str, prefix: list[str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", namespace, *prefix, reachd_binary(), "--host", "127.0.0.1",
                           "--port", str(free_port()), *args], capture_output=True, text=True, timeout=20)


def ping_group_range(w: IcmpWorld) -> str:
    return " ".join(w.client.exec("cat", "/proc/sys/net/ipv4/ping_group_range", capture_output=True,
                                  text=True, check=True).stdout.split())


@pytest.mark.parametrize("prefix", [UNPRIVILEGED, ROOT_WITHOUT_NET_RAW], ids=["nobody", "root-without-net-raw"])
def test_no_icmp_socket_is_refused_at_start_naming_both_remedies(request, icmp_world, prefix):
    """ping_group_range "1 0" (a fresh namespace's) and no CAP_NET_RAW: an icmp:// target is
    refused at start, the message naming both remedies; the same process without it serves."""
    w = icmp_world
    assert ping_group_range(w) == "1 0"
    result = run_prefixed(w.client.name, prefix, "--target", f"far=icmp://{w.far4}")
    assert result.returncode != 0, (result.returncode, result.stdout, result.stderr)
    assert "ping_group_range" in result.stderr and "CAP_NET_RAW" in result.stderr, result.stderr
    assert w.responder.snapshot() == []
    # The control: that process may serve — it is the icmp:// target it cannot have.
    server = PrefixedReachd(w.client.name, prefix, "--target", f"web=tcp://{w.far4}:9")
    try:
        server.wait_ready()
    finally:
        _dump_on_failure(request, server)
        server.terminate()
        server.log_path.unlink(missing_ok=True)


def test_ping_group_range_lets_an_unprivileged_reachd_ping(request, icmp_world):
    """With ping_group_range "0 2147483647" in its namespace, reachd as nobody without any
    capability starts and reaches both families through ICMP datagram sockets."""
    w = icmp_world
    w.sysctl(w.client, "net.ipv4.ping_group_range", "0 2147483647")
    server = PrefixedReachd(w.client.name, UNPRIVILEGED, "--target", f"v4=icmp://{w.far4}",
                            "--target", f"v6=icmp://[{w.far6}]", "--target-interval", "1")
    try:
        server.wait_ready()
        wait_doc(server, both(reachable("v4", "ipv4"), reachable("v6", "ipv6")), 10, "reachable")
        # The sockets are datagram ICMP sockets of nobody (/proc/net/icmp and icmp6 list only those).
        for table in ("icmp", "icmp6"):
            lines = w.client.exec("cat", f"/proc/net/{table}", capture_output=True, text=True,
                                  check=True).stdout.splitlines()[1:]
            uids = {line.split()[7] for line in lines if line.strip()}
            assert "65534" in uids, f"/proc/net/{table}: {lines}"
        w.responder.wait_requests(lambda snap: len(probes(snap)) >= 2, 10)
        doc = status(server)
        for name, family in (("v4", "ipv4"), ("v6", "ipv6")):
            assert impairments(doc, name, family) == [], target_of(doc, name)
        for name, family, dst in (("v4", "ipv4", w.far4), ("v6", "ipv6", w.far6)):
            counters_match(server, w, name, family, dst)
    finally:
        _dump_on_failure(request, server)
        server.terminate()
        server.log_path.unlink(missing_ok=True)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("spec", ["far=icmp://far.test:80", "far=icmp://far.test/path", "far=icmp://",
                                  "far=icmp://[2001:db8::1]:7", "far=icmp://2001:db8::1"])
def test_a_bad_icmp_spec_is_refused_at_start_naming_it(spec):
    result = subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", str(free_port()), "--target", spec],
                            capture_output=True, text=True, timeout=20)
    assert result.returncode == 64, (result.returncode, result.stdout, result.stderr)
    assert spec.split("=", 1)[1] in result.stderr, result.stderr


@pytest.mark.parametrize("option,value", [("--icmp-count", "0"), ("--icmp-count", "-1"), ("--quality-window", "0"),
                                          ("--max-loss", "1.5"), ("--max-loss", "-0.1"), ("--max-rtt", "-1"),
                                          ("--icmp-count", "x"), ("--max-loss", "nan")])
def test_a_bad_quality_option_is_refused_at_start_naming_it(option, value):
    result = subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", str(free_port()), f"{option}={value}"],
                            capture_output=True, text=True, timeout=20)
    assert result.returncode == 64, (option, value, result.returncode, result.stdout, result.stderr)
    assert option in result.stderr, result.stderr
    assert "Unknown option" not in result.stderr, result.stderr  # refused for its value, not unknown


def test_boundary_quality_options_are_accepted(bare_namespace):
    """--icmp-count 1, --quality-window 1, --max-loss 0 and 1, a small --max-rtt: reachd starts."""
    for args in (["--icmp-count", "1", "--quality-window", "1", "--max-loss", "0", "--max-rtt", "0.001"],
                 ["--max-loss", "1", "--quality-window", "1000", "--icmp-count", "10"]):
        server = Reachd(*args, "--target", "lo=icmp://127.0.0.1", netns=bare_namespace.name)
        try:
            server.wait_ready()
        finally:
            output = server.output() if not server.log.closed else ""
            code = server.terminate()
            server.log_path.unlink(missing_ok=True)
        assert code == 0, (args, code, output)
