"""Reading reachd's status documents: the `/events` stream as documents, and what a document
says about its targets (settled, `no-route`, what changed) — the link-down figures judge these.
"""

from __future__ import annotations

import json
import time

from servers import Reachd


FAMILIES = ("ipv4", "ipv6")


class SSEDocs:
    """The status documents of an `/events` response, fed the bytes as they come: the response head
    is skipped and a chunked body (`Transfer-Encoding: chunked`) unwrapped, so every byte read from
    the socket must go through `feed`. Linear in the bytes fed: a 3.4 MB document (10,000 targets)
    comes in hundreds of chunks, and copying what is left after each one made this client, not
    reachd, most of a link-down's measured time."""

    def __init__(self) -> None:
        self.raw = bytearray()
        self.body = bytearray()
        self.searched = 0  # bytes of `body` known to hold no frame end
        self.head_done = False
        self.chunked = False

    def feed(self, data: bytes) -> list[dict]:
        self.raw += data
        if not self.head_done:
            end = self.raw.find(b"\r\n\r\n")
            if end < 0:
                return []
            self.head_done = True
            self.chunked = b"transfer-encoding: chunked" in bytes(self.raw[:end]).lower()
            del self.raw[:end + 4]
        if not self.chunked:
            self.body += self.raw
            self.raw.clear()
        else:
            position = 0
            while True:
                line_end = self.raw.find(b"\r\n", position)
                if line_end < 0:
                    break
                size = int(bytes(self.raw[position:line_end]).split(b";")[0], 16)
                if len(self.raw) - (line_end + 2) < size + 2:
                    break
                self.body += self.raw[line_end + 2:line_end + 2 + size]
                position = line_end + 2 + size + 2
            del self.raw[:position]
        docs = []
        start = 0
        while True:
            end = self.body.find(b"\n\n", max(start, self.searched - 1))
            if end < 0:
                break
            for line in bytes(self.body[start:end]).split(b"\n"):
                if line.startswith(b"data:"):
                    docs.append(json.loads(line[5:]))
            start = end + 2
            self.searched = start
        del self.body[:start]
        self.searched = max(len(self.body) - 1, 0)
        return docs


def target_no_route(t: dict) -> bool:
    """The target, and each of its families with addresses, `unreachable` with reason `no-route`."""
    if (t.get("state"), t.get("reason")) != ("unreachable", "no-route"):
        return False
    return all(t.get(f) is None or (t[f].get("state"), t[f].get("reason")) == ("unreachable", "no-route")
               for f in FAMILIES)


def targets_settled(doc: dict, count: int, families: tuple[str, ...]) -> bool:
    """The route state `reachable`, and all `count` targets reachable on each of `families`."""
    targets = doc.get("targets") or []
    if doc.get("state") != "reachable" or len(targets) != count:
        return False
    return all(t.get("state") == "reachable" and all((t.get(f) or {}).get("state") == "reachable" for f in families)
               for t in targets)


def target_states(doc: dict) -> dict:
    """How many targets are in each (state, reason, per-family reasons): what a failed wait saw."""
    out: dict = {}
    for t in doc.get("targets") or []:
        key = f"{t.get('state')}/{t.get('reason')} " + " ".join(
            f"{f}:{(t.get(f) or {}).get('state')}/{(t.get(f) or {}).get('reason')}" for f in FAMILIES if t.get(f))
        out[key] = out.get(key, 0) + 1
    return out


def doc_changes(prev: dict, doc: dict) -> list[str]:
    """What changed from one status document to the next, in short: top-level fields with their
    values, interfaces by name, targets counted with the fields that changed."""
    out = []
    for key in sorted(set(prev) | set(doc)):
        a, b = prev.get(key), doc.get(key)
        if a == b or key in ("sequence", "changedAt", "stateSince"):
            continue
        if key == "targets" and isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            fields: set = set()
            changed = 0
            for ta, tb in zip(a, b):
                diff = {f for f in set(ta) | set(tb) if ta.get(f) != tb.get(f) and f != "since"}
                changed += bool(diff)
                fields |= diff
            if changed:
                out.append(f"targets: {changed} changed ({', '.join(sorted(fields))})")
        elif key == "interfaces" and isinstance(a, list) and isinstance(b, list):
            ia, ib = {i.get("name"): i for i in a}, {i.get("name"): i for i in b}
            for dev in sorted(set(ia) | set(ib)):
                x, y = ia.get(dev) or {}, ib.get(dev) or {}
                for f in sorted(set(x) | set(y)):
                    if x.get(f) != y.get(f):
                        out.append(f"interfaces[{dev}].{f}: {json.dumps(x.get(f))} → {json.dumps(y.get(f))}")
        else:
            out.append(f"{key}: {json.dumps(a)[:80]} → {json.dumps(b)[:80]}")
    return out


def wait_settled(server: Reachd, count: int, families: tuple[str, ...], timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        doc = json.loads(server.status_doc())
        if targets_settled(doc, count, families):
            return doc
        if time.monotonic() > deadline:
            raise TimeoutError(f"targets not all reachable on {'+'.join(families)} after {timeout:.0f}s: "
                               f"state {doc.get('state')}, {target_states(doc)}")
        time.sleep(0.05)
