"""Showing what is wrong (DESIGN.md, "Showing what is wrong, where people look"), the probe side:
each failed family's `detail` in words, a definite failure confirmed in seconds rather than
intervals, and the targets file's state in the document. Against a real world (see world.py).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from world import NOT_FOUND, OK, UNAVAILABLE, reachd_in, status, target_args, target_of, wait_status, world  # noqa: F401

pytestmark = [pytest.mark.netns, pytest.mark.timeout(90)]


def settled_all(names: list[str]):
    def predicate(doc: dict) -> bool:
        targets = {t["name"]: t for t in doc.get("targets") or []}
        return all(name in targets and targets[name]["state"] != "unknown" for name in names)
    return predicate


def test_detail_names_each_failure_in_words(world, reachd_in):
    web = world.server()
    web.route("/ok", OK)
    web.route("/missing", NOT_FOUND)
    web.route("/down", UNAVAILABLE)
    expired = world.server(tls="expired")
    closed = world.closed_port()
    p = web.port
    table = {
        "ok": (f"http://db.test:{p}/ok", None),
        "missing": (f"http://db.test:{p}/missing", "HTTP 404"),
        "down": (f"http://{world.db_ip}:{p}/down", "HTTP 503"),
        "refused": (f"tcp://db.test:{closed}", "ECONNREFUSED: connection refused"),
        "expired": (f"https://secure.test:{expired.port}/", "certificate has expired"),
        "nx": ("http://nx.test/", "NXDOMAIN from "),
        "noroute": (f"tcp://{world.noroute_ip}:80", "no route to the address"),
    }
    server = reachd_in(world, *target_args({name: row[0] for name, row in table.items()}),
                       "--target-timeout", "2", trust_test_ca=True)
    doc = wait_status(server, settled_all(list(table)), timeout=10, what="every target settled")
    for name, (_, words) in table.items():
        target = target_of(doc, name)
        assert "detail" in target, target
        if words is None:
            assert target["state"] == "reachable" and target["detail"] is None, target
            for family in ("ipv4", "ipv6"):
                assert target[family] is None or target[family]["detail"] is None, target
            continue
        assert target["state"] == "unreachable", target
        assert target["detail"].startswith(words), (name, target)
        if name == "nx":
            servers = [line.split()[1] for line in Path(world.resolv_path).read_text().splitlines()
                       if line.startswith("nameserver")]
            assert target["detail"] == f"NXDOMAIN from {', '.join(servers)}", target
            assert target["ipv4"] is None and target["ipv6"] is None
        elif name != "noroute":
            # The target's own detail is that of the family that decides its reason.
            family = target["ipv4"]
            assert family["state"] == "unreachable" and family["detail"] == target["detail"], target


def test_a_stopped_server_is_confirmed_in_seconds_and_a_restarted_one_too(world, reachd_in):
    """--target-interval 10 --target-failures 3 --target-successes 2: probed again after 1 s and
    2 s while in doubt, so `unreachable` about 3 s after the first failed probe, not 30 s; and
    back `reachable` 1 s after the first good probe."""
    web = world.server()
    web.route("/app", OK)
    server = reachd_in(world, "--target", f"app=http://db.test:{web.port}/app", "--target-interval", "10",
                       "--target-failures", "3", "--target-successes", "2", "--target-timeout", "2")
    wait_status(server, lambda d: target_of(d, "app")["state"] == "reachable", timeout=10, what="reachable")

    hits = web.hit_count("/app")
    web.route("/app", UNAVAILABLE)
    times = web.wait_hits("/app", hits + 1, timeout=15)  # the next scheduled probe, up to an interval away
    first_failure = times[hits]
    down = wait_status(server, lambda d: target_of(d, "app")["state"] == "unreachable", timeout=8, what="unreachable")
    confirmed = time.monotonic() - first_failure
    times = web.wait_hits("/app", hits + 3, timeout=0)
    gaps = [round(b - a, 1) for a, b in zip(times[hits:], times[hits + 1:hits + 3])]
    print(f"\nunreachable {confirmed:.2f}s after the first failed probe; probes {gaps} s apart")
    assert confirmed < 6, confirmed
    assert 0.8 <= gaps[0] <= 2.0 and 1.8 <= gaps[1] <= 3.0, gaps
    assert target_of(down, "app")["detail"] == "HTTP 503"

    hits = web.hit_count("/app")
    web.route("/app", OK)
    times = web.wait_hits("/app", hits + 1, timeout=15)
    first_success = times[hits]
    wait_status(server, lambda d: target_of(d, "app")["state"] == "reachable", timeout=8, what="reachable again")
    recovered = time.monotonic() - first_success
    print(f"reachable {recovered:.2f}s after the first good probe")
    assert recovered < 3, recovered
    assert target_of(status(server), "app")["detail"] is None


def test_the_targets_file_state_is_in_the_document(world, reachd_in, tmp_path: Path):
    web = world.server()
    path = tmp_path / "targets"
    path.write_text(f"a=tcp://db.test:{web.port}\n")
    started = time.time()
    server = reachd_in(world, "--targets-file", str(path), "--target-interval", "1")
    doc = wait_status(server, lambda d: target_of(d, "a")["state"] == "reachable", timeout=8, what="a reachable")
    applied = doc["targetsFile"]
    assert applied["path"] == str(path) and applied["error"] is None, applied
    assert applied["appliedAt"].endswith("Z")

    temporary = tmp_path / ".targets.new"
    temporary.write_text(f"a=tcp://db.test:{web.port}\noops\n")
    temporary.rename(path)
    doc = wait_status(server, lambda d: d["targetsFile"]["error"] is not None, timeout=5, what="the refusal shown")
    assert doc["targetsFile"]["error"].startswith("line 2: "), doc["targetsFile"]
    assert doc["targetsFile"]["appliedAt"] == applied["appliedAt"], "nothing new was applied"
    assert [t["name"] for t in doc["targets"]] == ["a"]

    time.sleep(0.01)
    temporary.write_text(f"a=tcp://db.test:{web.port}\nb=tcp://db.test:{web.port}\n")
    temporary.rename(path)
    doc = wait_status(server, lambda d: d["targetsFile"]["error"] is None, timeout=5, what="a good file applied")
    assert [t["name"] for t in doc["targets"]] == ["a", "b"]
    assert doc["targetsFile"]["appliedAt"] > applied["appliedAt"], (doc["targetsFile"], applied)
    assert started < time.time()


def test_without_a_targets_file_it_is_null(world, reachd_in):
    server = reachd_in(world, "--target", f"a=host://{world.db_ip}")
    doc = wait_status(server, lambda d: d["state"] != "unknown", timeout=5)
    assert "targetsFile" in doc and doc["targetsFile"] is None
