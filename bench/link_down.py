"""Link down with targets all reachable: how long until the one document the contract promises
(route `unreachable`, every target `no-route`), and how many documents the link-down made.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import select
import socket
import statistics
import time

import nsutil
from common import published_before, summary
from nsutil import VethNet
from servers import PORT, Reachd
from status_stream import SSEDocs, doc_changes, target_no_route, target_states, wait_settled


def catch_up(sse: socket.socket, stream: SSEDocs, sequence: int, seen: int, timeout: float = 10) -> int:
    """Reads the stream until it has delivered document `sequence` (or a newer one) whole; returns
    the newest sequence seen. Without it, the rest of a document still arriving when the link goes
    down (the first after connecting: 3.4 MB at 10,000 targets, more than the socket holds) was
    read and parsed after the kernel's ACK, and the client's parsing counted as reachd's time: the
    first flap of every run took 46–135 ms against 20–30 for the others (perf -a: the client
    busy on a core from the ACK on)."""
    end = time.monotonic() + timeout
    while seen < sequence:
        remaining = end - time.monotonic()
        if remaining <= 0:
            raise RuntimeError(f"/events did not deliver document {sequence} within {timeout:g} s (newest {seen})")
        ready, _, _ = select.select([sse], [], [], remaining)
        if not ready:
            continue
        data = sse.recv(1 << 20)
        if not data:
            raise RuntimeError("reachd closed /events during the link-down flaps")
        seen = max([seen] + [d["sequence"] for d in stream.feed(data)])
    return seen


def link_down_flaps(net: VethNet, server: Reachd, count: int, flaps: int, families: tuple[str, ...],
                    settle: float = 0.5) -> dict:
    """Link down with `count` targets all reachable, `flaps` times: from the kernel's ACK of the
    link-down to (a) the first document whose route `state` is `unreachable`, (b) the first whose
    targets are all `no-route`, (c) the first that is both — the one event the contract promises —
    and how many documents the link-down made (by `sequence`, so a document the stream replaced by
    a newer one before it was read still counts), with what the first `unreachable` one held when it
    was not already complete. `settle` s after (c) count any document that trails it."""
    with nsutil.inside(net.ns):
        sse = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    rt = nsutil.Rtnl(net.ns)
    samples = []
    try:
        sse.settimeout(10)
        sse.connect(("127.0.0.1", PORT))
        sse.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        sse.setblocking(False)
        stream = SSEDocs()
        seen = -1  # the newest sequence the stream has delivered whole
        for k in range(flaps):
            wait_settled(server, count, families, timeout=30)
            time.sleep(0.2)
            with contextlib.suppress(BlockingIOError):
                while True:
                    data = sse.recv(1 << 20)
                    if not data:
                        raise RuntimeError("reachd closed /events during the link-down flaps")
                    seen = max([seen] + [d["sequence"] for d in stream.feed(data)])  # what came before
            previous = json.loads(server.status_doc())
            base = previous["sequence"]
            seen = catch_up(sse, stream, base, seen)
            docs: list[dict] = []
            complete = None
            wall_down = time.time()
            t_send = time.monotonic_ns()
            rt.link_set(net.index, False)
            t0 = time.monotonic_ns()  # the kernel's ACK: where `ip link set` would return
            end = t0 + 10_000_000_000
            pending: list[bytes] = []
            tail = b""
            while True:
                now = time.monotonic_ns()
                if now >= end:
                    break
                ready, _, _ = select.select([sse], [], [], (end - now) / 1e9)
                if not ready:
                    continue
                data = sse.recv(1 << 20)
                got = time.monotonic_ns()
                if not data:
                    raise RuntimeError("reachd closed /events during the link-down flaps")
                # Parsed only once a read ends a frame (`\n\n`, then the chunk's `\r\n`): this
                # client's parsing is not reachd's time. Parsing each megabyte as it came held the
                # next read back — at 10,000 targets about 8 ms of a 22 ms link-down was this
                # client after reachd had written the whole frame (perf -a, every process).
                pending.append(data)
                tail = (tail + data)[-4:]
                if not (tail.endswith(b"\n\n") or tail == b"\n\n\r\n"):
                    continue
                data = b"".join(pending)
                pending.clear()
                for doc in stream.feed(data):
                    seen = max(seen, doc["sequence"])
                    if doc["sequence"] <= base:
                        continue
                    no_route = sum(1 for t in doc.get("targets") or [] if target_no_route(t))
                    entry = {"ms": (got - t0) / 1e6, "sequence": doc["sequence"], "state": doc["state"],
                             "targets_no_route": no_route, "changed": doc_changes(previous, doc)}
                    previous = doc
                    if doc["state"] == "unreachable" and no_route < count:
                        entry["targets"] = target_states(doc)
                    docs.append(entry)
                    if complete is None and doc["state"] == "unreachable" and no_route == count:
                        complete = entry
                        end = got + int(settle * 1e9)
            first_unreachable = next((d for d in docs if d["state"] == "unreachable"), None)
            first_all = next((d for d in docs if d["targets_no_route"] == count), None)
            wall_up = time.time()
            samples.append({
                "k": k, "base_sequence": base, "wall_down": wall_down, "wall_up": wall_up,
                "call_ms": (t0 - t_send) / 1e6,
                "status_ms": first_unreachable["ms"] if first_unreachable else None,
                "targets_ms": first_all["ms"] if first_all else None,
                "one_event_ms": complete["ms"] if complete else None,
                "one_event_sequence": complete["sequence"] if complete else None,
                "same_document": complete is not None and complete is first_unreachable,
                "documents": (max(d["sequence"] for d in docs) - base) if docs else 0,
                "documents_received": len(docs),
                "documents_before": (complete["sequence"] - base - 1) if complete else None,
                "first_unreachable": first_unreachable if first_unreachable is not complete else None,
                "docs": docs,
            })
            rt.link_set(net.index, True)
            time.sleep(1.2)
            net.restore()
    finally:
        rt.close()
        sse.close()
    published_by_flap(server.log_path, samples, count)

    def series(key: str) -> dict:
        return summary([s[key] for s in samples if s[key] is not None])

    documents = [s["documents"] for s in samples]
    published = [len(s["published"]) for s in samples]
    # What the documents other than the one event changed, by how often (before it / after it).
    before: dict = {}
    after: dict = {}
    for sample in samples:
        one = sample["one_event_sequence"]
        for d in sample["docs"]:
            if d["sequence"] == one:
                continue
            side = before if one is None or d["sequence"] < one else after
            key = "; ".join(d["changed"]) or "(nothing)"
            side[key] = side.get(key, 0) + 1
    return {
        "link_down_status_ms": series("status_ms"), "link_down_targets_ms": series("targets_ms"),
        "link_down_one_event_ms": series("one_event_ms"),
        "link_down": {
            "flaps": len(samples), "targets": count, "families": list(families),
            # From the log: every document reachd published for the link-down, received or not.
            "published_one": sum(1 for n in published if n == 1),
            "published_max": max(published) if published else None,
            "published_mean": statistics.fmean(published) if published else None,
            "published_first_complete": sum(1 for s in samples if s["published_first_complete"]),
            "published_before_max": max((s["published_before"] for s in samples if s["published_before"] is not None),
                                        default=None),
            "published_never_complete": sum(1 for s in samples if s["published_before"] is None),
            # Flaps with documents after the complete one whose route state and target verdicts (what the
            # log holds) are the same as its: what such a document changed lies elsewhere (interfaces).
            "published_extra_same_verdicts": sum(
                1 for s in samples if len(s["published"]) > 1 and s["published_before"] is not None and all(
                    (p["state"], p["targets_no_route"]) == ("unreachable", count)
                    for p in s["published"][s["published_before"]:])),
            # From the stream: what a subscriber received.
            "same_document": sum(1 for s in samples if s["same_document"]),
            "one_document": sum(1 for s in samples if s["documents"] == 1 and s["same_document"]),
            "received_max": max(s["documents_received"] for s in samples) if samples else None,
            # By `sequence`: the monitor's count of changes, some of which the server never published.
            "documents_max": max(documents) if documents else None,
            "documents_mean": statistics.fmean(documents) if documents else None,
            "documents_before_max": max((s["documents_before"] for s in samples if s["documents_before"] is not None),
                                        default=None),
            "missing": sum(1 for s in samples if s["one_event_ms"] is None),
            "settle_s": settle,
            "other_documents_before": before, "other_documents_after": after,
        },
        "link_down_samples": samples,
    }


def published_by_flap(log_path: str, samples: list[dict], count: int) -> None:
    """Adds to each flap the documents reachd published between its link-down and its link-up, from
    reachd's log (`--log-format json`: one "status changed" line per document published, with the
    route state and each target's state and reason, or their counts beyond 100 targets): `published` (sequence, state, targets
    `no-route`) and `published_first_complete` (the first `unreachable` one had every target
    `no-route`). The stream keeps at most one pending frame per subscriber and replaces it with a
    newer one, and the monitor may hand the server only the newest of two quick changes, so
    neither the frames received nor the gaps in `sequence` count what was published."""
    lines = []
    with contextlib.suppress(FileNotFoundError):
        with open(log_path, errors="replace") as f:
            for line in f:
                if '"status changed"' not in line:
                    continue
                with contextlib.suppress(ValueError):
                    entry = json.loads(line)
                    changed = datetime.datetime.strptime(entry["changedAt"], "%Y-%m-%dT%H:%M:%S.%fZ")
                    entry["_at"] = changed.replace(tzinfo=datetime.timezone.utc).timestamp()
                    lines.append(entry)
    for sample in samples:
        mine = [e for e in lines if e["sequence"] > sample["base_sequence"] and published_before(e["_at"], sample["wall_up"])]
        sample["published"] = [
            {"sequence": e["sequence"], "state": e["state"], "ipv4": e.get("ipv4"), "ipv6": e.get("ipv6"),
             "targets_no_route": no_route(e)}
            for e in sorted(mine, key=lambda e: e["sequence"])]
        first = next((p for p in sample["published"] if p["state"] == "unreachable"), None)
        sample["published_first_complete"] = first is not None and first["targets_no_route"] == count
        sample["published_before"] = next((i for i, p in enumerate(sample["published"])
                                           if p["state"] == "unreachable" and p["targets_no_route"] == count), None)


def no_route(entry: dict) -> int:
    """The targets a "status changed" line says are `no-route`: listed one by one up to 100 targets,
    counted in `unreachableReasons` beyond (where `targets` lists only those that changed)."""
    if "unreachableReasons" in entry:
        return entry["unreachableReasons"].get("no-route", 0)
    return sum(1 for t in entry.get("targets") or []
               if (t.get("state"), t.get("reason")) == ("unreachable", "no-route"))


def link_down_line(row: dict) -> str:
    one, ld = row["link_down_one_event_ms"], row["link_down"]
    return (f", link down → status p50 {row['link_down_status_ms'].get('p50')} ms, targets no-route p50 "
            f"{row['link_down_targets_ms'].get('p50')} ms, the one event p50 {one.get('p50')} p99 {one.get('p99')} ms; "
            f"first unreachable document complete in {ld['published_first_complete']}/{ld['flaps']} flaps (log), "
            f"{ld['same_document']}/{ld['flaps']} (received); one document published in "
            f"{ld['published_one']}/{ld['flaps']} flaps (max {ld['published_max']})")
