#!/usr/bin/env python3
"""Instructions per operation of two reachd builds, counted by callgrind: a guard that sees 2 %.

Wall-clock on this kind of machine moves by tens of percent from run to run; the instructions an
operation costs do not. Each binary is copied and stripped (valgrind 3.19 cannot read the Swift
binary's DWARF 5) and started under callgrind with collection off (and Swift's hashing seeded the
same in every process), in a network namespace made for the workload and removed in every
outcome; after a warm-up, `callgrind_control -i on` / `-i off` bracket exactly the counted part,
which begins and ends with reachd quiet, and `-d` dumps it. Each count is repeated (--repeats, 3)
in the same process, and the spread between one binary's repeats is shown next to the ratio. The
workloads, of fixed sizes (CFG):

  status    500 keep-alive `/status` requests (and 500 `/healthz`) on one connection → per request
  events    100 `/events` streams; 40 interface changes (an interface added, then deleted:
            `ip link add … type dummy`, or `ifb` where the kernel has no dummy), each awaited on
            every stream before the next → per event delivered to 100 streams
  targets   100 `tcp://` targets on 127.0.0.1 (one listener on 100 ports) every 3 s: one round at a
            time, from the quiet before it to the quiet after it; a repeat is the median of 3 → per probe
            (the probes from /metrics, `reachd_target_probe_duration_seconds_count`, read before and
            after); no probe may fail and no target change
  linkdown  1,000 `tcp://` targets behind a veth pair (the far namespace answers on every address
            of 198.19.0.0/16), probed once an hour so that no timed probe falls in the window:
            link down → the one `/events` document with the route `unreachable` and every target
            `no-route`, and reachd quiet again (what the link-down set off after the frame, the
            `/changes` entry, included); link up and the targets reachable again, not counted;
            2 a repeat → per link-down

The ratio new ÷ base of the medians is the figure; above --limit (1.02) it fails. valgrind counts
each iteration of `rep stosb` as an instruction, so libmicrohttpd's zeroing of its connection pool
weighs far more here than in time: compare, don't read it as a profile.

    sudo python3 bench/instructions.py BASE_BIN NEW_BIN [--workloads status,events,targets,linkdown]
        [--repeats 3] [--limit 1.02] [--json PATH] [--keep DIR]

`make bench-ab` runs it after the wall-clock phases (bench/ab.py). Root only (namespaces).
Exit 0: no workload above the limit; 1: one is; 2: it could not measure.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import nsutil  # noqa: E402
from nsutil import Namespace, VethNet  # noqa: E402
from servers import PORT, http_request, wait_http  # noqa: E402
from status_stream import SSEDocs, target_no_route, target_states  # noqa: E402

LIMIT = 1.02
VALGRIND_ARGS: list[str] = []
WORKLOADS = ("status", "events", "targets", "linkdown")
# The fixed sizes. A repeat is `requests` requests, `changes` changes, the median of `target_rounds`
# rounds (each counted on its own), or `linkdown_flaps` link-downs; timeouts and intervals are generous: reachd
# runs some 50× slower under valgrind, and a probe that timed out would change the work counted.
CFG = dict(requests=500, warmup_requests=50,
           streams=100, changes=40, warmup_changes=4,
           targets=100, target_interval=3, target_rounds=3, target_timeout=10,
           linkdown_targets=1000, linkdown_flaps=2, linkdown_interval=3600, linkdown_timeout=10,
           start_timeout=180)

# One process answers TCP connections on many ports: accepts and closes each, counts them, and
# tells the count for every line read on stdin (reading it costs reachd nothing).
LISTENER = r"""
import selectors, socket, sys, threading
host, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sel = selectors.DefaultSelector()
for port in range(first, first + count):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(4096)
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
accepted = 0
def answer():
    for _ in sys.stdin:
        sys.stdout.write(f"{accepted}\n")
        sys.stdout.flush()
threading.Thread(target=answer, daemon=True).start()
print("ready", flush=True)
while True:
    for key, _ in sel.select():
        while True:
            try:
                c, _ = key.fileobj.accept()
            except BlockingIOError:
                break
            c.close()
            accepted += 1
"""


class Unmeasurable(RuntimeError):
    """The workload could not be counted as designed (a probe failed, a document went missing)."""


# --------------------------------------------------------------------------- callgrind


class Callgrind:
    """reachd under callgrind in `ns`, collection off until `counted`."""

    def __init__(self, binary: str, ns: Namespace, workdir: str, name: str, args: list[str]) -> None:
        self.ns = ns
        self.out = os.path.join(workdir, f"callgrind.{name}")
        self.log_path = os.path.join(workdir, f"{name}.log")
        self.log = open(self.log_path, "ab")
        self.proc = ns.popen("valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={self.out}",
                             *VALGRIND_ARGS, binary, "--host", "127.0.0.1", "--port", str(PORT), "--heartbeat", "3600", *args,
                             stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env={**os.environ, "SWIFT_DETERMINISTIC_HASHING": "1"})
        self.pid = self.proc.pid  # `ip netns exec` and valgrind exec: the pid is reachd's

    def wait_ready(self) -> None:
        try:
            wait_http(self.ns, PORT, "/status", timeout=CFG["start_timeout"], proc=self.proc)
        except (TimeoutError, RuntimeError) as error:
            raise Unmeasurable(f"reachd under valgrind did not serve: {error} (log {self.log_path})") from error

    def control(self, *args: str) -> None:
        result = subprocess.run(["callgrind_control", *args, str(self.pid)], capture_output=True, text=True, timeout=120)
        if result.returncode != 0 or "Error" in result.stdout:
            raise Unmeasurable(f"callgrind_control {' '.join(args)}: {result.stdout.strip()} {result.stderr.strip()}")

    def counted(self, work) -> tuple[int, object]:
        """Instructions reachd ran while `work()` ran (collection on just before, off just after),
        and what `work()` returned."""
        before = set(glob.glob(self.out + "*"))
        self.control("-z")
        self.control("-i", "on")
        try:
            value = work()
        finally:
            self.control("-i", "off")
        self.control("-d")
        deadline = time.monotonic() + 30
        while True:
            dumps = sorted(set(glob.glob(self.out + "*")) - before)
            total = sum(totals(path) for path in dumps)
            if total > 0 or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if total <= 0:
            raise Unmeasurable("callgrind wrote no totals")
        return total, value

    def stop(self) -> None:
        nsutil.stop(self.proc, timeout=60)
        self.log.close()


def totals(path: str) -> int:
    total = 0
    try:
        with open(path) as dump:
            for line in dump:
                if line.startswith(("summary:", "totals:")):
                    total = max(total, int(line.split()[1]))
    except (OSError, ValueError, IndexError):
        return 0
    return total


# --------------------------------------------------------------------------- helpers


def wait_quiet(pid: int, quiet: float = 0.3, timeout: float = 60) -> None:
    """Until reachd (every thread) has used no CPU for `quiet` s and kept its threads: what the last
    operation set off has finished (a `/changes` entry compressed after the frame is out, results
    recorded), so that a count ends, or begins, at rest."""
    deadline = time.monotonic() + timeout
    last, tasks, since = nsutil.cpu_ns(pid), len(os.listdir(f"/proc/{pid}/task")), time.monotonic()
    while time.monotonic() - since < quiet:
        if time.monotonic() > deadline:
            raise Unmeasurable(f"reachd did not go quiet within {timeout:.0f} s")
        time.sleep(0.05)
        now, n = nsutil.cpu_ns(pid), len(os.listdir(f"/proc/{pid}/task"))
        if abs(now - last) > 1_000_000 or n != tasks:
            since = time.monotonic()
        last, tasks = now, n


def get(ns: Namespace, path: str) -> bytes:
    status, _, body = http_request(ns, PORT, "GET", path, timeout=60)
    if status != 200:
        raise Unmeasurable(f"{path} answered {status}")
    return body


def metric_sums(ns: Namespace) -> dict:
    """The sums over every target of the probe count, the failures and the transitions."""
    out = {"probes": 0.0, "failures": 0.0, "transitions": 0.0}
    names = {"reachd_target_probe_duration_seconds_count": "probes", "reachd_target_probe_failures_total": "failures",
             "reachd_target_transitions_total": "transitions"}
    for line in get(ns, "/metrics").decode().splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in names:
            out[names[name]] += float(line.rsplit(" ", 1)[1])
    return out


def status(ns: Namespace) -> dict:
    return json.loads(get(ns, "/status"))


def wait_targets(ns: Namespace, count: int, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        doc = status(ns)
        targets = doc.get("targets") or []
        if len(targets) == count and all(t.get("state") == "reachable" for t in targets):
            return doc
        if time.monotonic() > deadline:
            raise Unmeasurable(f"{count} targets not all reachable after {timeout:.0f} s: {target_states(doc)}")
        time.sleep(0.5)


class Listener:
    """LISTENER in `ns`: ports first … first + count − 1 on `host`."""

    def __init__(self, ns: Namespace, host: str, first: int, count: int) -> None:
        self.proc = ns.popen("python3", "-c", LISTENER, host, str(first), str(count), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise Unmeasurable("the targets' listener did not start")

    def accepted(self) -> int:
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def stop(self) -> None:
        nsutil.stop(self.proc)


def target_flags(urls: list[str]) -> list[str]:
    """The targets as `--target` flags, not a `--targets-file`: reachd watches every directory on a
    targets file's path (inotify), and the files callgrind_control, callgrind and anyone else made
    in /tmp woke that watch a varying number of times per window (10 to 122 `FileWatch.drain`
    calls, each zeroing a 4 KiB buffer: 3 % spread per probe)."""
    flags = []
    for i, url in enumerate(urls):
        flags += ["--target", f"t{i}={url}"]
    return flags


def read_response(sock: socket.socket) -> None:
    """One whole response with a Content-Length (every keep-alive workload's is)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise OSError("closed")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise OSError("closed")
        body += chunk


def connect(ns: Namespace) -> socket.socket:
    with nsutil.inside(ns):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(60)
    sock.connect(("127.0.0.1", PORT))
    return sock


# --------------------------------------------------------------------------- the workloads
#
# Each returns {row name: {"per_op": [one value per repeat], "unit": …, "notes": […]}}.


def w_status(binary: str, workdir: str, repeats: int) -> dict:
    ns = Namespace()
    cg = None
    try:
        cg = Callgrind(binary, ns, workdir, "status", [])
        cg.wait_ready()
        rows = {}
        for path in ("/status", "/healthz"):
            request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
            with connect(ns) as sock:
                for _ in range(CFG["warmup_requests"]):  # first-use paths, the pool, the caches
                    sock.sendall(request)
                    read_response(sock)

                def work() -> None:
                    for _ in range(CFG["requests"]):
                        sock.sendall(request)
                        read_response(sock)

                values = []
                for _ in range(repeats):
                    wait_quiet(cg.pid)
                    values.append(cg.counted(work)[0] / CFG["requests"])
            rows[f"{path} keep-alive"] = {"per_op": values, "unit": "request",
                                         "notes": [f"{CFG['requests']} requests a repeat"]}
        return rows
    finally:
        if cg:
            cg.stop()
        ns.destroy()


def link_kind(ns: Namespace) -> str:
    """`dummy` where the kernel has it, else `ifb` (another device with no lower link)."""
    for kind in ("dummy", "ifb"):
        if ns.ip("link", "add", "icprobe", "type", kind, check=False).returncode == 0:
            ns.ip("link", "del", "icprobe")
            return kind
    raise Unmeasurable("neither a dummy nor an ifb interface can be made here")


def w_events(binary: str, workdir: str, repeats: int) -> dict:
    ns = Namespace()
    cg = None
    socks: list[socket.socket] = []
    try:
        kind = link_kind(ns)
        cg = Callgrind(binary, ns, workdir, "events", [])
        cg.wait_ready()
        for _ in range(CFG["streams"]):
            sock = connect(ns)
            sock.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            sock.setblocking(False)
            socks.append(sock)
        streams = {sock: SSEDocs() for sock in socks}
        seen = {sock: -1 for sock in socks}

        def wait_all(after: int) -> int:
            """Reads every stream until each has a document newer than `after`; the newest sequence."""
            deadline = time.monotonic() + 120
            waiting = {sock for sock in socks if seen[sock] <= after}
            while waiting:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Unmeasurable(f"{len(waiting)} of {len(socks)} streams missed the document after {after}")
                ready, _, _ = select.select(list(waiting), [], [], left)
                for sock in ready:
                    data = sock.recv(1 << 20)
                    if not data:
                        raise Unmeasurable("reachd closed a stream")
                    for doc in streams[sock].feed(data):
                        seen[sock] = max(seen[sock], doc["sequence"])
                    if seen[sock] > after:
                        waiting.discard(sock)
            return max(seen.values())

        newest = wait_all(-1)  # every stream has its initial document
        present = False

        def change() -> None:
            nonlocal present
            if present:
                ns.ip("link", "del", "icx0")
            else:
                ns.ip("link", "add", "icx0", "type", kind)
            present = not present

        for _ in range(CFG["warmup_changes"]):
            change()
            newest = wait_all(newest)

        def work() -> int:
            nonlocal newest
            first = newest
            for _ in range(CFG["changes"]):
                change()
                newest = wait_all(newest)
            wait_quiet(cg.pid)
            return newest - first

        values, notes = [], []
        for _ in range(repeats):
            wait_quiet(cg.pid)
            total, documents = cg.counted(work)
            values.append(total / CFG["changes"])
            if documents != CFG["changes"]:
                notes.append(f"{documents} documents for {CFG['changes']} changes")
        return {f"one event to {CFG['streams']} streams": {
            "per_op": values, "unit": "event", "notes": [f"{CFG['changes']} changes a repeat ({kind})", *notes]}}
    finally:
        for sock in socks:
            sock.close()
        if cg:
            cg.stop()
        ns.destroy()


def w_targets(binary: str, workdir: str, repeats: int) -> dict:
    ns = Namespace()
    cg = listener = None
    count, interval, first_port = CFG["targets"], CFG["target_interval"], 20000
    try:
        listener = Listener(ns, "127.0.0.1", first_port, count)
        urls = [f"tcp://127.0.0.1:{first_port + i}" for i in range(count)]
        cg = Callgrind(binary, ns, workdir, "targets", [*target_flags(urls), "--target-interval", str(interval),
                                                        "--target-timeout", str(CFG["target_timeout"])])
        cg.wait_ready()
        wait_targets(ns, count, CFG["start_timeout"])

        def round_ends(after: int) -> int:
            """Waits until the next round's `count` connections have been accepted, then for reachd to
            go quiet (its results recorded). Returns the accepted count."""
            target = (after // count + 1) * count
            deadline = time.monotonic() + interval + 60
            while (n := listener.accepted()) < target:
                if time.monotonic() > deadline:
                    raise Unmeasurable(f"the probes stopped: {n} of {target} connections")
                time.sleep(0.02)
            wait_quiet(cg.pid)
            return n

        accepted = round_ends(round_ends(listener.accepted()))  # warm-up: two whole rounds
        values, notes = [], []
        for _ in range(repeats):
            rounds = []
            for _ in range(CFG["target_rounds"]):
                before = metric_sums(ns)
                sequence = status(ns)["sequence"]

                def work() -> int:
                    if listener.accepted() != accepted:
                        raise Unmeasurable(f"a round began before counting: raise target_interval ({interval} s)")
                    return round_ends(accepted)

                instructions, accepted = cg.counted(work)
                after = metric_sums(ns)
                doc = status(ns)
                if after["failures"] != before["failures"] or after["transitions"] != before["transitions"] \
                        or doc["sequence"] != sequence:
                    raise Unmeasurable(f"targets changed in the window: failures "
                                       f"{after['failures'] - before['failures']:g}, transitions "
                                       f"{after['transitions'] - before['transitions']:g}, documents "
                                       f"{doc['sequence'] - sequence}")
                probes = after["probes"] - before["probes"]
                if probes <= 0:
                    raise Unmeasurable("no probes counted in a round")
                if probes != count:
                    notes.append(f"{probes:g} probes in a round of {count}")
                rounds.append(instructions / probes)
            # The median round: on a busy machine one round in several came out up to 1 % off the
            # others (how its results were batched), and a sum carried that into its repeat.
            values.append(statistics.median(rounds))
        return {f"a round of {count} targets": {
            "per_op": values, "unit": "probe",
            "notes": [f"the median of {CFG['target_rounds']} rounds of {count} a repeat, each counted on its own, "
                      f"every {interval} s; no probe failed", *notes]}}
    finally:
        if cg:
            cg.stop()
        if listener:
            listener.stop()
        ns.destroy()


def w_linkdown(binary: str, workdir: str, repeats: int) -> dict:
    net = VethNet()
    cg = listener = None
    rt = sse = None
    count = CFG["linkdown_targets"]
    try:
        # Every address of 198.19.0.0/16 is the far namespace's own (AnyIP): target i has its own.
        net.peer.ip("route", "add", "local", "198.19.0.0/16", "dev", "lo")
        listener = Listener(net.peer, "0.0.0.0", 80, 1)
        urls = [f"tcp://198.19.{i // 250}.{i % 250 + 1}:80" for i in range(count)]
        cg = Callgrind(binary, net.ns, workdir, "linkdown",
                       [*target_flags(urls), "--target-interval", str(CFG["linkdown_interval"]),
                        "--target-timeout", str(CFG["linkdown_timeout"])])
        cg.wait_ready()
        wait_targets(net.ns, count, CFG["start_timeout"])
        rt = nsutil.Rtnl(net.ns)
        sse = connect(net.ns)
        sse.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        stream = SSEDocs()
        state = {"seen": -1}

        def read_until(done, timeout: float = 120) -> dict:
            deadline = time.monotonic() + timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Unmeasurable(f"/events: no such document within {timeout:.0f} s (newest {state['seen']})")
                ready, _, _ = select.select([sse], [], [], left)
                if not ready:
                    continue
                data = sse.recv(1 << 20)
                if not data:
                    raise Unmeasurable("reachd closed /events")
                for doc in stream.feed(data):
                    state["seen"] = max(state["seen"], doc["sequence"])
                    if done(doc):
                        return doc

        def flap(counted: bool) -> tuple[int, int]:
            doc = wait_targets(net.ns, count, 120)
            base = doc["sequence"]
            if state["seen"] < base:
                read_until(lambda d: d["sequence"] >= base)
            wait_quiet(cg.pid)

            def down() -> dict:
                rt.link_set(net.index, False)
                doc = read_until(lambda d: d["sequence"] > base and d["state"] == "unreachable"
                                 and sum(1 for t in d.get("targets") or [] if target_no_route(t)) == count)
                wait_quiet(cg.pid)  # and what it set off after the frame: the `/changes` entry
                return doc

            if counted:
                total, doc = cg.counted(down)
            else:
                total, doc = 0, down()
            documents = doc["sequence"] - base
            rt.link_set(net.index, True)
            time.sleep(1)
            net.restore()
            return total, documents

        flap(False)  # warm-up
        values, notes = [], []
        for _ in range(repeats):
            total = 0
            for _ in range(CFG["linkdown_flaps"]):
                instructions, documents = flap(True)
                total += instructions
                if documents != 1:
                    notes.append(f"a link-down came {documents} documents after the last")
            values.append(total / CFG["linkdown_flaps"])
        wait_targets(net.ns, count, 120)
        return {f"a link-down with {count:,} targets": {
            "per_op": values, "unit": "link-down",
            "notes": [f"{CFG['linkdown_flaps']} link-downs a repeat, each counted on its own until reachd was quiet"
                      f"{'' if notes else '; one document each'}; targets every {CFG['linkdown_interval']} s: none "
                      f"timed in the window", *notes]}}
    finally:
        if sse:
            sse.close()
        if rt:
            rt.close()
        if cg:
            cg.stop()
        if listener:
            listener.stop()
        net.destroy()


RUNNERS = {"status": w_status, "events": w_events, "targets": w_targets, "linkdown": w_linkdown}


# --------------------------------------------------------------------------- both binaries, the table


def spread(values: list[float]) -> float:
    return (max(values) - min(values)) / statistics.median(values)


def measure(base: str, new: str, workloads: list[str], repeats: int = 3, limit: float = LIMIT, log=print,
            keep: str | None = None) -> dict:
    """Counts each workload on base, then on new. Returns {"rows": […], "failures": […], "status": 0/1/2,
    "seconds": …}; a row holds both sides' values per repeat, medians, spread, ratio and verdict."""
    t0 = time.monotonic()
    rows: list[dict] = []
    failures: list[str] = []
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        return {"rows": [], "failures": ["valgrind is needed (apt-get install valgrind)"], "status": 2, "seconds": 0.0,
                "limit": limit, "repeats": repeats, "config": CFG}
    with tempfile.TemporaryDirectory(prefix="reachd-instructions-") as workdir:
        if keep:
            workdir = keep
            os.makedirs(workdir, exist_ok=True)
        stripped = {}
        for side, binary in (("base", base), ("new", new)):
            stripped[side] = os.path.join(workdir, f"reachd-{side}")
            done = subprocess.run(["strip", "-o", stripped[side], binary], capture_output=True, text=True)
            if done.returncode != 0:
                return {"rows": [], "failures": [f"strip -o of {binary}: {done.stderr.strip()}"], "status": 2,
                        "seconds": time.monotonic() - t0, "limit": limit, "repeats": repeats, "config": CFG}
        for workload in workloads:
            results = {}
            try:
                for side in ("base", "new"):
                    started = time.monotonic()
                    side_dir = os.path.join(workdir, f"{workload}-{side}")
                    os.makedirs(side_dir, exist_ok=True)
                    results[side] = RUNNERS[workload](stripped[side], side_dir, repeats)
                    log(f"instructions: {workload} {side}: {time.monotonic() - started:.0f} s: " + "; ".join(
                        f"{name} " + ", ".join(f"{v:,.0f}" for v in r["per_op"]) for name, r in results[side].items()))
            except Exception as error:  # noqa: BLE001 - recorded; the other workloads still run
                failures.append(f"{workload}: {type(error).__name__}: {error}")
                log(f"instructions: {workload} failed: {error}")
                continue
            for name, b in results["base"].items():
                n = results["new"][name]
                mb, mn = statistics.median(b["per_op"]), statistics.median(n["per_op"])
                ratio = mn / mb
                rows.append({"workload": workload, "name": name, "unit": b["unit"], "base": b["per_op"],
                             "new": n["per_op"], "base_median": mb, "new_median": mn,
                             "spread": {"base": spread(b["per_op"]), "new": spread(n["per_op"])}, "ratio": ratio,
                             "verdict": "ABOVE" if ratio > limit else "ok",
                             "notes": {"base": b["notes"], "new": n["notes"]}})
    above = any(r["verdict"] == "ABOVE" for r in rows)
    status = 1 if above else 2 if failures else 0
    return {"rows": rows, "failures": failures, "status": status, "seconds": time.monotonic() - t0, "limit": limit,
            "repeats": repeats, "config": CFG}


def table(result: dict) -> str:
    limit = result["limit"]
    lines = ["| workload | base per op | new per op | new ÷ base | spread of repeats (base / new) | verdict |",
             "|---|---|---|---|---|---|"]
    for r in result["rows"]:
        verdict = f"**above {limit}**" if r["verdict"] == "ABOVE" else f"≤ {limit}"
        lines.append(f"| {r['name']}, per {r['unit']} | {r['base_median']:,.0f} | {r['new_median']:,.0f} | "
                     f"{r['ratio']:.4f} | {r['spread']['base']:.3%} / {r['spread']['new']:.3%} | {verdict} |")
    notes = []
    for r in result["rows"]:
        said = r["notes"]["base"] if r["notes"]["base"] == r["notes"]["new"] else \
            [f"base: {n}" for n in r["notes"]["base"]] + [f"new: {n}" for n in r["notes"]["new"]]
        if said:
            notes.append(f"{r['name']}: {'; '.join(said)}")
    text = "\n".join(lines) + "\n\n"
    text += (f"Instructions counted by callgrind (`callgrind_control -i on/off` around the counted part, a stripped "
             f"copy of each binary), median of {result['repeats']} repeats in one process per binary; spread = "
             f"(max − min) ÷ median of one binary's repeats. Above {limit}× fails; {result['seconds']:.0f} s.\n")
    if notes:
        text += "\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    if result["failures"]:
        text += "\nCould not measure:\n" + "\n".join(f"- {f}" for f in result["failures"]) + "\n"
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help=f"some of {','.join(WORKLOADS)}")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=float, default=LIMIT)
    parser.add_argument("--json", help="also write every value there")
    parser.add_argument("--keep", metavar="DIR", help="keep callgrind's dumps and reachd's logs there")
    args = parser.parse_args()
    workloads = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in workloads if w not in RUNNERS]
    if unknown or not workloads:
        parser.error(f"unknown workloads {unknown}; choose from {','.join(WORKLOADS)}")
    if os.geteuid() != 0:
        print("instructions: needs root (network namespaces)", file=sys.stderr)
        return 2
    for binary in (args.base, args.new):
        if not os.access(binary, os.X_OK):
            print(f"instructions: no binary at {binary}", file=sys.stderr)
            return 2
    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        result = measure(args.base, args.new, workloads, args.repeats, args.limit,
                         log=lambda m: print(f"[instructions {time.strftime('%H:%M:%S')}] {m}", file=sys.stderr,
                                             flush=True), keep=args.keep)
    finally:
        nsutil.cleanup()
    print(table(result))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return result["status"]


if __name__ == "__main__":
    sys.exit(main())
