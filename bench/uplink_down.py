"""Link down on the backup uplink under `--per-uplink`, with every target reachable through the
primary: how long until the one document the contract promises (that interface's `connectivity`
`null`, in the same document as the link change), how many documents the link-down made, and
that nothing else changed. The model is link_down.py (phase `targets`).
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
from nsutil import UplinksNet
from servers import PORT, Reachd
from status_stream import SSEDocs, doc_changes, target_states, targets_settled


def interface_of(doc: dict, name: str) -> dict | None:
    return next((i for i in doc.get("interfaces") or [] if i.get("name") == name), None)


def uplink_state(doc: dict, name: str) -> str | None:
    """The state of `name`'s own connectivity check; None when it is `null` or the interface is gone."""
    connectivity = (interface_of(doc, name) or {}).get("connectivity")
    return connectivity.get("state") if connectivity else None


def disagrees(doc: dict, name: str) -> bool:
    """`name`'s `connectivity` against its own link and route in the same document: checked (not
    `null`) while it cannot be an uplink (not `up`, no default route, no address), or `null` while it
    is one. In UplinksNet an interface is an uplink exactly when it is up with an address and a
    default route (`isDefaultRoute`); a document that disagrees has the uplink's change and the
    route's change in two documents."""
    interface = interface_of(doc, name)
    uplink = bool(interface and interface.get("operState") == "up" and interface.get("isDefaultRoute")
                  and interface.get("addresses"))
    return uplink != (interface is not None and interface.get("connectivity") is not None)


def all_full(doc: dict, count: int, uplinks: tuple[str, ...]) -> bool:
    """The route state `reachable`, all `count` targets reachable on IPv4, the top-level check
    `full`, and each of `uplinks` checked `full` on its own."""
    return (targets_settled(doc, count, ("ipv4",)) and (doc.get("connectivity") or {}).get("state") == "full"
            and all(uplink_state(doc, name) == "full" for name in uplinks))


def wait_all_full(server: Reachd, count: int, uplinks: tuple[str, ...], timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        doc = json.loads(server.status_doc())
        if all_full(doc, count, uplinks):
            return doc
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"not all full after {timeout:.0f}s: state {doc.get('state')}, connectivity "
                f"{(doc.get('connectivity') or {}).get('state')}, uplinks "
                f"{ {i.get('name'): (i.get('connectivity') or {}).get('state') for i in doc.get('interfaces') or []} }, "
                f"targets {target_states(doc)}")
        time.sleep(0.05)


def uplink_down_flaps(net: UplinksNet, server: Reachd, count: int, flaps: int, down: int = 1,
                      settle: float = 0.5) -> dict:
    """Link down on wan<down> (the backup) `flaps` times, with `count` targets reachable through the
    other uplink: from the kernel's ACK of the link-down to the first document in which the
    interface's `connectivity` is `null`; whether that is the first document after the link-down
    (its `operState` left `up` in it too); how many documents the link-down made (by `sequence`,
    and from reachd's log: every document published, received or not); what each of them changed
    besides that interface. `settle` s after the `null` document count any that trails it. Then link
    up and the default route back, and until the interface is checked `full` again."""
    dev = net.devs[down]
    index = net.index[dev]
    others = tuple(d for d in net.devs if d != dev)
    with nsutil.inside(net.ns):
        sse = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    rt = nsutil.Rtnl(net.ns)
    stream = SSEDocs()
    samples = []

    def read(deadline_ns: int) -> tuple[list[dict], int] | None:
        """The documents of what arrives before the deadline (None when nothing did), and when."""
        now = time.monotonic_ns()
        if now >= deadline_ns:
            return None
        ready, _, _ = select.select([sse], [], [], (deadline_ns - now) / 1e9)
        if not ready:
            return [], time.monotonic_ns()
        data = sse.recv(1 << 20)
        got = time.monotonic_ns()
        if not data:
            raise RuntimeError("reachd closed /events during the uplink flaps")
        return stream.feed(data), got

    try:
        sse.settimeout(10)
        sse.connect(("127.0.0.1", PORT))
        sse.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        sse.setblocking(False)
        for k in range(flaps):
            wait_all_full(server, count, net.devs, timeout=30)
            time.sleep(0.2)
            with contextlib.suppress(BlockingIOError):
                while True:
                    data = sse.recv(1 << 20)
                    if not data:
                        raise RuntimeError("reachd closed /events during the uplink flaps")
                    stream.feed(data)  # read up to now: what came before the link-down
            previous = json.loads(server.status_doc())
            base = previous["sequence"]
            docs: list[dict] = []
            gone = None
            wall_down = time.time()
            t_send = time.monotonic_ns()
            rt.link_set(index, False)
            t0 = time.monotonic_ns()  # the kernel's ACK: where `ip link set` would return
            end = t0 + 10_000_000_000
            while (got_docs := read(end)) is not None:
                new, got = got_docs
                for doc in new:
                    if doc["sequence"] <= base:
                        continue
                    interface = interface_of(doc, dev)
                    changed = doc_changes(previous, doc)
                    previous = doc
                    entry = {"ms": (got - t0) / 1e6, "sequence": doc["sequence"],
                             "operState": interface.get("operState") if interface else None,
                             "null": interface is None or interface.get("connectivity") is None,
                             "changed": changed,
                             # Anything besides the downed interface: route state, targets, the
                             # top-level check, the other uplink.
                             "other": [c for c in changed if not c.startswith(f"interfaces[{dev}].")],
                             "others_full": all_full(doc, count, others), "disagrees": disagrees(doc, dev)}
                    docs.append(entry)
                    if gone is None and entry["null"]:
                        gone = entry
                        end = got + int(settle * 1e9)
            first_down = next((d for d in docs if d["operState"] != "up"), None)
            wall_up = time.time()
            sample = {
                "k": k, "base_sequence": base, "wall_down": wall_down, "wall_up": wall_up,
                "call_ms": (t0 - t_send) / 1e6,
                "null_ms": gone["ms"] if gone else None,
                "first_document_ms": docs[0]["ms"] if docs else None,
                "null_sequence": gone["sequence"] if gone else None,
                # The link change (operState) and the `null` in one document, the first after the link-down.
                "same_document": gone is not None and gone is first_down and gone is docs[0],
                "documents": (max(d["sequence"] for d in docs) - base) if docs else 0,
                "documents_received": len(docs),
                "docs": docs,
            }
            # Back: link up, the default route back (the link-down flushed it), until checked `full`.
            rt.link_set(index, True)
            t_up = time.monotonic_ns()
            net.restore_route(rt, down)
            t_route = time.monotonic_ns()  # its ACK: `dev` is an uplink again from here
            back = None
            up_docs = []
            end = t_up + 15_000_000_000
            while back is None and (got_docs := read(end)) is not None:
                new, got = got_docs
                for doc in new:
                    interface = interface_of(doc, dev) or {}
                    up_docs.append({"ms": (got - t_up) / 1e6, "sequence": doc["sequence"],
                                    "operState": interface.get("operState"),
                                    "isDefaultRoute": interface.get("isDefaultRoute"),
                                    "connectivity": uplink_state(doc, dev), "disagrees": disagrees(doc, dev),
                                    "changed": doc_changes(previous, doc)})
                    previous = doc
                    if back is None and uplink_state(doc, dev) == "full":
                        back = got
            sample["up_docs"] = up_docs  # from the link-up: the interface's way back to `full`
            sample["route_ms"] = (t_route - t_up) / 1e6
            sample["up_to_full_ms"] = (back - t_up) / 1e6 if back else None
            sample["route_to_full_ms"] = (back - t_route) / 1e6 if back else None
            samples.append(sample)
            if back is None:
                raise TimeoutError(f"{dev} not checked full again within 15 s of its link-up (flap {k})")
    finally:
        rt.close()
        sse.close()
    published_by_flap(server.log_path, samples)

    def series(key: str) -> dict:
        return summary([s[key] for s in samples if s[key] is not None])

    documents = [s["documents"] for s in samples]
    published = [len(s["published"]) for s in samples]
    # What the `null` document changed (field names: its values hold times), and what any other
    # document of a link-down changed, by how often.
    changes: dict = {}
    extra: dict = {}
    for sample in samples:
        for d in sample["docs"]:
            if d["sequence"] == sample["null_sequence"]:
                for field in sorted({c.split(":")[0] for c in d["changed"]}):
                    changes[field] = changes.get(field, 0) + 1
            else:
                key = "; ".join(d["changed"]) or "(nothing)"
                extra[key] = extra.get(key, 0) + 1
    return {
        "uplink_down_ms": series("null_ms"), "uplink_down_first_document_ms": series("first_document_ms"),
        "uplink_up_to_full_ms": series("up_to_full_ms"), "uplink_route_to_full_ms": series("route_to_full_ms"),
        "uplink_down": {
            "flaps": len(samples), "targets": count, "interface": dev, "settle_s": settle,
            # From the log: every document reachd published for the link-down, received or not.
            "published_one": sum(1 for n in published if n == 1),
            "published_max": max(published) if published else None,
            "published_mean": statistics.fmean(published) if published else None,
            # From the stream.
            "same_document": sum(1 for s in samples if s["same_document"]),
            "received_max": max(s["documents_received"] for s in samples) if samples else None,
            "documents_max": max(documents) if documents else None,
            "documents_mean": statistics.fmean(documents) if documents else None,
            "missing": sum(1 for s in samples if s["null_ms"] is None),
            # Documents that changed anything besides the downed interface, and those in which the
            # other uplink, the top-level check, the route state or a target was not as before.
            "other_changes": sum(1 for s in samples for d in s["docs"] if d["other"]),
            "others_not_full": sum(1 for s in samples for d in s["docs"] if not d["others_full"]),
            # Documents in which the interface's `connectivity` disagreed with its link and route
            # (`disagrees`), after the link-down and after the link-up, and in how many flaps.
            "disagree_down": sum(1 for s in samples for d in s["docs"] if d["disagrees"]),
            "disagree_up": sum(1 for s in samples for d in s.get("up_docs") or [] if d["disagrees"]),
            "disagree_flaps": sum(1 for s in samples if any(d["disagrees"] for d in s["docs"] + (s.get("up_docs") or []))),
            "null_document_changed": changes, "other_documents": extra,
            # From the link-up to `full` again: the interface's (operState, connectivity) per document.
            "up_paths": up_paths(samples),
        },
        "uplink_down_samples": samples,
    }


def up_paths(samples: list[dict]) -> dict:
    """How often each way back from the link-up to `full` was taken, one step per document:
    operState / default route or not / connectivity."""
    paths: dict = {}
    for sample in samples:
        key = " → ".join(f"{d['operState']}/{'route' if d['isDefaultRoute'] else 'no route'}/{d['connectivity'] or 'null'}"
                         for d in sample.get("up_docs") or [])
        paths[key] = paths.get(key, 0) + 1
    return paths


def published_by_flap(log_path: str, samples: list[dict]) -> None:
    """Adds to each flap the documents reachd published between its link-down and its link-up,
    from reachd's log (`--log-format json`: one "status changed" line per document published). The
    log has no interfaces; it counts documents, which neither the frames received (a stream keeps
    one pending frame, replaced by a newer one) nor the gaps in `sequence` can."""
    lines = []
    with contextlib.suppress(FileNotFoundError):
        with open(log_path, errors="replace") as f:
            for line in f:
                if '"status changed"' not in line:
                    continue
                with contextlib.suppress(ValueError, KeyError):
                    entry = json.loads(line)
                    changed = datetime.datetime.strptime(entry["changedAt"], "%Y-%m-%dT%H:%M:%S.%fZ")
                    entry["_at"] = changed.replace(tzinfo=datetime.timezone.utc).timestamp()
                    lines.append(entry)
    for sample in samples:
        mine = [e for e in lines if e["sequence"] > sample["base_sequence"] and published_before(e["_at"], sample["wall_up"])]
        sample["published"] = sorted(e["sequence"] for e in mine)


def uplink_down_line(row: dict) -> str:
    def f(v) -> str:
        return "—" if v is None else f"{v:.2f}"

    gone, ld, back = row["uplink_down_ms"], row["uplink_down"], row["uplink_route_to_full_ms"]
    return (f", link down on {ld['interface']} → its connectivity null p50 {f(gone.get('p50'))} p99 "
            f"{f(gone.get('p99'))} ms; in the first document after the link-down in {ld['same_document']}/{ld['flaps']} "
            f"flaps; one document published in {ld['published_one']}/{ld['flaps']} flaps (max {ld['published_max']}, "
            f"`sequence` +{ld['documents_max']} at most); {ld['other_changes']} documents changed anything else; "
            f"connectivity against link and route disagreed in {ld['disagree_flaps']} flaps ({ld['disagree_down']} "
            f"documents after the link-down, {ld['disagree_up']} after the link-up); "
            f"default route back → full again p50 {f(back.get('p50'))} ms")
