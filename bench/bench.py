#!/usr/bin/env python3
"""reachd's benchmark suite: reachd side by side with its peers, in the same run.

Called by bench/run.sh (which installs the peers, builds reachd and the C client); see
bench/README.md for the method. Root only: every server runs in a network namespace this
script creates and deletes. Traffic goes only to 127.0.0.1 inside those namespaces.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import random
import re
import resource
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
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))

import nsutil  # noqa: E402
import provenance  # noqa: E402
import report  # noqa: E402
from nsutil import Namespace, VethNet  # noqa: E402
from servers import PORT, Floor, Nginx, Reachd, http_request, read_lines_until, versions  # noqa: E402

FULL = dict(flaps=200, flap_blocks=4, fanout_ns=[1000, 5000, 10000], fanout_reps=5, changes=20,
            client_procs=2, wrk_seconds=10, wrk_reps=4, wrk_threads1=True, idle_clients=1000, idle_seconds=60,
            heartbeat_check_seconds=20, heartbeat_check_interval=5, startup_runs=20,
            route_counts=[1000, 10000, 100000], route_flaps=20,
            targets=100, targets_cpu_seconds=60, target_flaps=20, family_cpu_seconds=60, dns_seconds=60,
            memory_streams=4000, memory_pools=[4096, 6144, 8192, 16384])
QUICK = dict(flaps=50, flap_blocks=1, fanout_ns=[1000], fanout_reps=1, changes=20, client_procs=2,
             wrk_seconds=5, wrk_reps=1, wrk_threads1=False, idle_clients=1000, idle_seconds=10, heartbeat_check_seconds=0,
             heartbeat_check_interval=5, startup_runs=5,
             route_counts=[1000, 100000], route_flaps=5,
             targets=100, targets_cpu_seconds=15, target_flaps=5, family_cpu_seconds=20, dns_seconds=20,
             memory_streams=2000, memory_pools=[4096, 8192])
PHASES = ["startup", "latency", "routes", "targets", "dns", "throughput", "fanout", "memory", "idle"]
NCHAN_BASE_SEQUENCE = 1000


def stop_clients(clients: list) -> None:
    """Kill SSE client processes and remove their output files (every outcome, failure included)."""
    for c in clients:
        nsutil.stop(c["proc"], signal.SIGKILL, timeout=5)
        if not c["err"].closed:
            c["err"].close()
        if os.path.exists(c["out"]):
            os.remove(c["out"])


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def pct(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of `values`."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(round(q / 100 * len(ordered) + 0.5))))
    return ordered[rank - 1]


def summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50": pct(values, 50), "p90": pct(values, 90), "p99": pct(values, 99),
            "max": max(values), "min": min(values), "mean": statistics.fmean(values)}


def median_of(runs: list[dict], *path: str) -> float | None:
    values = []
    for run in runs:
        value = run
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, (int, float)):
            values.append(value)
    return statistics.median(values) if values else None


class Budget:
    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def left(self) -> float:
        return self.deadline - time.monotonic()


# --------------------------------------------------------------------------- perf (optional)


class Perf:
    """`perf record` (or, with `syscalls`, `strace -c -f`: system calls by count) of reachd during
    one fan-out and one wrk run."""

    def __init__(self, enabled: bool, outdir: str, syscalls: bool = False) -> None:
        self.syscalls = syscalls and shutil.which("strace") is not None
        self.enabled = (enabled and shutil.which("perf") is not None) or self.syscalls
        self.outdir = outdir

    def start(self, pid: int, name: str) -> subprocess.Popen | None:
        if not self.enabled:
            return None
        if self.syscalls:
            out = os.path.join(self.outdir, f"strace-{name}.txt")
            proc = subprocess.Popen(["strace", "-c", "-f", "-q", "-S", "calls", "-p", str(pid), "-o", out],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            nsutil.PROCESSES.append(proc)
            time.sleep(0.5)
            proc.name = name  # type: ignore[attr-defined]
            return proc
        data = os.path.join(self.outdir, f"perf-{name}.data")
        proc = subprocess.Popen(["perf", "record", "-F", "999", "-g", "-p", str(pid), "-o", data],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        nsutil.PROCESSES.append(proc)
        time.sleep(0.5)
        proc.name = name  # type: ignore[attr-defined]
        return proc

    def stop(self, proc: subprocess.Popen | None) -> None:
        if proc is None:
            return
        nsutil.stop(proc, signal.SIGINT, timeout=20)
        if self.syscalls:
            log(f"system call counts written to {self.outdir}/strace-{proc.name}.txt")  # type: ignore[attr-defined]
            return
        data = os.path.join(self.outdir, f"perf-{proc.name}.data")  # type: ignore[attr-defined]
        with open(os.path.join(self.outdir, f"perf-{proc.name}.txt"), "w") as out:  # type: ignore[attr-defined]
            for sort, limit in (("comm,dso", "0.5"), ("comm,dso,sym", "0.7")):
                out.flush()
                subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--percent-limit", limit,
                                "--sort", sort, "-g", "none"], stdout=out, stderr=subprocess.DEVNULL, timeout=120)
            # Inclusive ("children") shares: which system calls and callers the time is spent under.
            out.write("\n# Inclusive (children) by symbol\n")
            out.flush()
            subprocess.run(["perf", "report", "-i", data, "--stdio", "--children", "--percent-limit", "3",
                            "--sort", "sym", "-g", "none"], stdout=out, stderr=subprocess.DEVNULL, timeout=120)
        os.remove(data)
        log(f"perf profile written to {out.name}")


# --------------------------------------------------------------------------- start-up, footprint


def phase_startup(ctx: dict, cfg: dict) -> dict:
    net = VethNet()
    try:
        overhead = []
        for _ in range(10):
            t0 = time.monotonic_ns()
            net.ns.exec_check("/bin/true")
            overhead.append((time.monotonic_ns() - t0) / 1e6)
        samples = []
        for run in range(cfg["startup_runs"]):
            port = 9000 + run
            log_path = os.path.join(ctx["workdir"], f"startup-{run}.log")
            with open(log_path, "wb") as logfile:
                t0 = time.monotonic_ns()
                proc = net.ns.popen(ctx["reachd"], "--host", "127.0.0.1", "--port", str(port), "--heartbeat", "3600",
                                    stdout=logfile, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            elapsed = None
            attempts = 0
            with nsutil.inside(net.ns):
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and proc.poll() is None:
                    attempts += 1
                    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    sock.settimeout(1)
                    try:
                        sock.connect(("127.0.0.1", port))
                        sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                        head = sock.recv(64)
                        if head.startswith(b"HTTP/1.1 200"):
                            elapsed = (time.monotonic_ns() - t0) / 1e6
                            break
                    except OSError:
                        pass
                    finally:
                        sock.close()
                    time.sleep(0.0005)
            samples.append(elapsed)
            footprint = None
            if run == cfg["startup_runs"] - 1 and elapsed is not None:
                time.sleep(2)
                pid = proc.pid
                footprint = {k: nsutil.status_kib(pid, k) for k in ("VmRSS", "RssAnon", "RssFile", "VmHWM")}
                footprint["threads"] = len(os.listdir(f"/proc/{pid}/task"))
                ctx["footprint_rss"] = footprint
            nsutil.stop(proc, timeout=15)
        ok = [s for s in samples if s is not None]
        binary = ctx["reachd"]
        result = {
            "runs": len(samples), "failed": len(samples) - len(ok), "ms": summary(ok), "samples_ms": samples,
            "ip_netns_exec_overhead_ms": summary(overhead),
            "footprint": {"idle_rss_kib": ctx.get("footprint_rss", {}).get("VmRSS"),
                          "rss_detail_kib": ctx.get("footprint_rss"),
                          "binary": binary, "binary_bytes": os.path.getsize(binary),
                          "binary_stripped_bytes": stripped_size(binary, ctx["workdir"]),
                          "swift_runtime_libraries": swift_libraries(binary),
                          "binary_stripped": b".symtab" not in subprocess.run(
                              ["readelf", "-S", binary], capture_output=True, timeout=30).stdout
                          if shutil.which("readelf") else None},
        }
        log(f"start-up p50 {result['ms'].get('p50')} ms over {len(ok)} runs; idle RSS "
            f"{result['footprint']['idle_rss_kib']} KiB; binary {result['footprint']['binary_bytes']} bytes")
        return result
    finally:
        net.destroy()


def swift_libraries(binary: str) -> dict:
    """The Swift runtime libraries a dynamically linked build loads (ldd), and their total size."""
    libs = {}
    try:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if m and "swift" in m.group(2) and os.path.exists(m.group(2)):
            libs[m.group(1)] = os.path.getsize(os.path.realpath(m.group(2)))
    return {"count": len(libs), "bytes": sum(libs.values()), "libraries": libs}


def stripped_size(binary: str, workdir: str) -> int | None:
    """Size of a stripped copy (what a package would ship), if binutils' strip is here."""
    if not shutil.which("strip"):
        return None
    copy = os.path.join(workdir, "reachd-stripped")
    try:
        subprocess.run(["strip", "-o", copy, binary], check=True, capture_output=True, timeout=120)
        return os.path.getsize(copy)
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        if os.path.exists(copy):
            os.remove(copy)


# --------------------------------------------------------------------------- change latency


def phase_latency(ctx: dict, cfg: dict) -> dict:
    net = VethNet()
    server = mon = sse = rt = None
    try:
        server = Reachd(ctx["reachd"], net.ns, ctx["workdir"], heartbeat=3600)
        server.wait_ready()
        mon = net.ns.popen("ip", "-o", "monitor", "link", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL)
        with nsutil.inside(net.ns):
            sse = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sse.settimeout(5)
        sse.connect(("127.0.0.1", PORT))
        sse.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        buf = b""
        deadline = time.monotonic() + 5
        while b"\n\n" not in buf.partition(b"data:")[2] and time.monotonic() < deadline:
            buf += sse.recv(65536)
        sse.setblocking(False)
        mon_fd = mon.stdout.fileno()
        os.set_blocking(mon_fd, False)
        rt = nsutil.Rtnl(net.ns)
        time.sleep(0.5)

        def drain() -> tuple[int, int]:
            extra_sse = extra_mon = 0
            for _ in range(100):
                ready, _, _ = select.select([sse, mon_fd], [], [], 0)
                if not ready:
                    break
                for r in ready:
                    if r is sse:
                        extra_sse += sse.recv(65536).count(b"event: status")
                    else:
                        extra_mon += os.read(mon_fd, 65536).count(b"\n")
            return extra_sse, extra_mon

        # Warm-up: a few unmeasured flaps, then more than a second of quiet, so the kernel's
        # linkwatch (which defers non-urgent carrier events to at most one run per second) starts
        # from rest. Deferrals that still happen hit reachd and ip monitor alike; see "deferred".
        for k in range(10):
            rt.link_set(net.index, k % 2 == 1)
            time.sleep(0.03)
        time.sleep(1.2)
        drain()
        rows = []
        transitions = 2 * cfg["flaps"]
        for k in range(transitions):
            up = k % 2 == 1
            want = b"state UP" if up else b"state DOWN"
            t_start = time.monotonic_ns()
            rt.link_set(net.index, up)
            t_ret = time.monotonic_ns()
            got_sse = got_mon_first = got_mon_match = None
            sse_buf = mon_buf = b""
            op_state = None
            deadline = t_ret + 3_000_000_000
            while (got_sse is None or got_mon_match is None) and time.monotonic_ns() < deadline:
                ready, _, _ = select.select([sse, mon_fd], [], [], 0.5)
                now = time.monotonic_ns()
                for r in ready:
                    if r is sse:
                        sse_buf += sse.recv(65536)
                        if got_sse is None and b"\n\n" in sse_buf.partition(b"data:")[2]:
                            got_sse = now
                            m = re.search(rb'"operState":"(\w+)"', sse_buf)
                            op_state = m.group(1).decode() if m else None
                    else:
                        mon_buf += os.read(mon_fd, 65536)
                        lines = mon_buf.split(b"\n")[:-1]
                        if lines and got_mon_first is None:
                            got_mon_first = now
                        if got_mon_match is None and any(want in line for line in lines):
                            got_mon_match = now
            time.sleep(random.uniform(0.02, 0.04))
            extra_sse, extra_mon = drain()
            rows.append({
                "up": up, "call_ms": (t_ret - t_start) / 1e6,
                "reachd_ms": None if got_sse is None else (got_sse - t_ret) / 1e6,
                "monitor_ms": None if got_mon_match is None else (got_mon_match - t_ret) / 1e6,
                "monitor_first_line_ms": None if got_mon_first is None else (got_mon_first - t_ret) / 1e6,
                "reachd_operstate": op_state, "extra_reachd_events": extra_sse, "k": k,
            })
        blocks = []
        per_block = max(1, len(rows) // cfg["flap_blocks"])
        for b in range(cfg["flap_blocks"]):
            chunk = rows[b * per_block:(b + 1) * per_block]
            blocks.append({"reachd": summary([r["reachd_ms"] for r in chunk if r["reachd_ms"] is not None]),
                           "monitor": summary([r["monitor_ms"] for r in chunk if r["monitor_ms"] is not None])})

        def pooled(key: str, sel=lambda r: True) -> dict:
            return summary([r[key] for r in rows if sel(r) and r[key] is not None])

        result = {
            "flaps": cfg["flaps"], "transitions": len(rows),
            "reachd_missing": sum(1 for r in rows if r["reachd_ms"] is None),
            "monitor_missing": sum(1 for r in rows if r["monitor_ms"] is None),
            "reachd_extra_events": sum(r["extra_reachd_events"] for r in rows),
            "wrong_operstate": sum(1 for r in rows if r["reachd_operstate"] != ("up" if r["up"] else "down")),
            "reachd": pooled("reachd_ms"), "monitor": pooled("monitor_ms"),
            "monitor_first_line": pooled("monitor_first_line_ms"), "call": pooled("call_ms"),
            "reachd_down": pooled("reachd_ms", lambda r: not r["up"]), "reachd_up": pooled("reachd_ms", lambda r: r["up"]),
            "monitor_down": pooled("monitor_ms", lambda r: not r["up"]), "monitor_up": pooled("monitor_ms", lambda r: r["up"]),
            "reachd_minus_monitor": summary([r["reachd_ms"] - r["monitor_ms"] for r in rows
                                             if r["reachd_ms"] is not None and r["monitor_ms"] is not None]),
            "deferred_by_kernel": sum(1 for r in rows if (r["monitor_ms"] or 0) > 100),
            "reachd_not_deferred": pooled("reachd_ms", lambda r: (r["monitor_ms"] or 0) <= 100),
            "monitor_not_deferred": pooled("monitor_ms", lambda r: (r["monitor_ms"] or 0) <= 100),
            "blocks": blocks, "samples": rows,
            "block_median": {
                "reachd_p50": median_of(blocks, "reachd", "p50"), "reachd_p99": median_of(blocks, "reachd", "p99"),
                "monitor_p50": median_of(blocks, "monitor", "p50"), "monitor_p99": median_of(blocks, "monitor", "p99"),
            },
        }
        log(f"change latency: reachd p50 {result['reachd'].get('p50'):.3f} p99 {result['reachd'].get('p99'):.3f} ms; "
            f"ip monitor p50 {result['monitor'].get('p50'):.3f} p99 {result['monitor'].get('p99'):.3f} ms")
        return result
    finally:
        if rt:
            rt.close()
        if sse:
            sse.close()
        if mon:
            nsutil.stop(mon)
        if server:
            server.stop()
        net.destroy()


# --------------------------------------------------------------------------- large routing tables


def add_routes(net: VethNet, count: int, workdir: str) -> None:
    """`count` /32 routes via the gateway in the main table (10.0.0.0/8: no packet is ever sent),
    as a BGP-fed host has: added in one `ip -batch` so set-up takes seconds, not minutes."""
    path = os.path.join(workdir, f"routes-{count}.txt")
    with open(path, "w") as batch:
        for i in range(count):
            batch.write(f"route add 10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}/32 via {net.subnet}.1\n")
    net.ns.ip("-batch", path)
    os.unlink(path)


def phase_routes(ctx: dict, cfg: dict) -> dict:
    """Event latency and RSS with 1k/10k/100k routes: every link change makes reachd re-read the
    routes (the kernel flushes IPv4 routes of a downed link silently), so this is the cost of one
    change on a host with a big routing table."""
    results = {}
    for count in cfg["route_counts"]:
        net = VethNet()
        server = sse = rt = None
        try:
            add_routes(net, count, ctx["workdir"])
            server = Reachd(ctx["reachd"], net.ns, ctx["workdir"], heartbeat=3600)
            server.wait_ready(timeout=60)
            with nsutil.inside(net.ns):
                sse = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sse.settimeout(10)
            sse.connect(("127.0.0.1", PORT))
            sse.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            buf = b""
            while b"\n\n" not in buf.partition(b"data:")[2]:
                buf += sse.recv(65536)
            rt = nsutil.Rtnl(net.ns)
            time.sleep(1.0)
            rss_before = nsutil.status_kib(server.pid)
            samples = []
            extra = f"{net.subnet}.3"
            for k in range(cfg["route_flaps"]):
                # A second address added, then removed: each is one document change, and each makes
                # reachd re-read the routes (the kernel drops routes with an address silently).
                for add in (True, False):
                    t_start = time.monotonic_ns()
                    rt.addr(add, net.index, extra, 24)
                    got = None
                    deadline = time.monotonic() + 10
                    pending = b""
                    while got is None and time.monotonic() < deadline:
                        pending += sse.recv(1 << 20)
                        frames = pending.split(b"\n\n")
                        pending = frames.pop()
                        for frame in frames:
                            if b"data:" in frame and ((extra + "/24").encode() in frame) == add:
                                got = time.monotonic_ns()
                    if got is not None:
                        samples.append((got - t_start) / 1e6)
                    time.sleep(0.05)
            rss_after = nsutil.status_kib(server.pid)
            hwm = nsutil.status_kib(server.pid, "VmHWM")
            results[str(count)] = {"routes": count, "event_ms": summary(samples), "missing": 2 * cfg["route_flaps"] - len(samples),
                                   "rss_kib": rss_after, "rss_before_kib": rss_before, "hwm_kib": hwm}
            log(f"routes {count}: event p50 {results[str(count)]['event_ms'].get('p50')} ms, "
                f"p99 {results[str(count)]['event_ms'].get('p99')} ms, RSS {rss_after} KiB (peak {hwm})")
        finally:
            if rt:
                rt.close()
            if sse:
                sse.close()
            if server:
                server.stop()
            net.destroy()
    return results


# --------------------------------------------------------------------------- targets


TARGET_SERVER = r"""
import http.server, json, signal, socket, socketserver, sys, threading
# SIGUSR1 prints the requests answered so far by the client's family (one JSON line).
counts = {"ipv4": 0, "ipv6": 0}
lock = threading.Lock()
def report(*_):
    with lock:
        line = json.dumps(counts)
    print(line, flush=True)
signal.signal(signal.SIGUSR1, report)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with lock:
            counts["ipv4" if "." in self.client_address[0] else "ipv6"] += 1
        self.send_response(204); self.end_headers()
    def log_message(self, *a): pass
bind = sys.argv[1]
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True; allow_reuse_address = True; request_queue_size = 1024
    address_family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    def server_bind(self):
        if self.address_family == socket.AF_INET6:
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # "::" takes both families
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "target", self.server_address[1]  # no getfqdn: no lookup
S((bind, 8080), H).serve_forever()
"""

FAMILIES = ("ipv4", "ipv6")


def cpu_percent(pid: int, seconds: float) -> float:
    """CPU of every thread of `pid` over `seconds`, threads that end or start within it included."""
    t0 = time.monotonic()
    per_thread = nsutil.sample_threads([pid], seconds)[pid]
    return sum(t["cpu_ms"] for t in per_thread.values()) / 1e3 / (time.monotonic() - t0) * 100


def ask_counts(proc: subprocess.Popen, timeout: float = 3) -> dict | None:
    """A helper server's counters: SIGUSR1, then the JSON line it prints."""
    if proc.poll() is not None:
        return None
    proc.send_signal(signal.SIGUSR1)
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        return None
    line = proc.stdout.readline()
    return json.loads(line) if line.strip() else None


def wait_listening(ns: Namespace, host: str, port: int, timeout: float = 10) -> None:
    """Until a TCP connection from `ns` to host:port succeeds (a helper server is up)."""
    deadline = time.monotonic() + timeout
    while True:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with nsutil.inside(ns):
            sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(1)
        try:
            sock.connect((host, port))
            return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listens on {host}:{port} after {timeout}s")
            time.sleep(0.02)
        finally:
            sock.close()


class SSEDocs:
    """The status documents of an `/events` response, fed the bytes as they come: the response head
    is skipped and a chunked body (`Transfer-Encoding: chunked`) unwrapped, so every byte read from
    the socket must go through `feed`."""

    def __init__(self) -> None:
        self.raw = b""
        self.body = b""
        self.head_done = False
        self.chunked = False

    def feed(self, data: bytes) -> list[dict]:
        self.raw += data
        if not self.head_done:
            head, sep, rest = self.raw.partition(b"\r\n\r\n")
            if not sep:
                return []
            self.head_done = True
            self.chunked = b"transfer-encoding: chunked" in head.lower()
            self.raw = rest
        if not self.chunked:
            self.body, self.raw = self.body + self.raw, b""
        while self.chunked:
            line, sep, rest = self.raw.partition(b"\r\n")
            if not sep:
                break
            size = int(line.split(b";")[0], 16)
            if len(rest) < size + 2:
                break
            self.body += rest[:size]
            self.raw = rest[size + 2:]
        frames = self.body.split(b"\n\n")
        self.body = frames.pop()
        docs = []
        for frame in frames:
            for line in frame.split(b"\n"):
                if line.startswith(b"data:"):
                    docs.append(json.loads(line[5:]))
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
        for k in range(flaps):
            wait_settled(server, count, families, timeout=30)
            time.sleep(0.2)
            with contextlib.suppress(BlockingIOError):
                while True:
                    data = sse.recv(1 << 20)
                    if not data:
                        raise RuntimeError("reachd closed /events during the link-down flaps")
                    stream.feed(data)  # read up to now: what came before the link-down
            previous = json.loads(server.status_doc())
            base = previous["sequence"]
            docs: list[dict] = []
            complete = None
            wall_down = time.time()
            t_send = time.monotonic_ns()
            rt.link_set(net.index, False)
            t0 = time.monotonic_ns()  # the kernel's ACK: where `ip link set` would return
            end = t0 + 10_000_000_000
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
                for doc in stream.feed(data):
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
    route state and each target's state and reason): `published` (sequence, state, targets
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
        mine = [e for e in lines if e["sequence"] > sample["base_sequence"] and e["_at"] < sample["wall_up"]]
        sample["published"] = [
            {"sequence": e["sequence"], "state": e["state"], "ipv4": e.get("ipv4"), "ipv6": e.get("ipv6"),
             "targets_no_route": sum(1 for t in e.get("targets") or []
                                     if (t.get("state"), t.get("reason")) == ("unreachable", "no-route"))}
            for e in sorted(mine, key=lambda e: e["sequence"])]
        first = next((p for p in sample["published"] if p["state"] == "unreachable"), None)
        sample["published_first_complete"] = first is not None and first["targets_no_route"] == count
        sample["published_before"] = next((i for i, p in enumerate(sample["published"])
                                           if p["state"] == "unreachable" and p["targets_no_route"] == count), None)


def phase_targets(ctx: dict, cfg: dict, budget: Budget) -> dict:
    """100 HTTP targets on a server behind the gateway, probed every 10 s, against the same
    reachd without targets: CPU, RSS, /status throughput; how a link down reaches the status
    (`unreachable`) and the targets (`no-route`), and whether it is one document; then 100
    dual-stack targets next to 100 and to 200 IPv4-only ones in the same window (`target_families`)."""
    results: dict = {}
    count = cfg["targets"]
    # "quiet": the same 100 targets, probed once and then not for a day: the document is as large
    # (about 20 KB instead of 1), so /status throughput is compared at equal size, with and
    # without probing going on.
    for label in ("none", "quiet", "targets"):
        net = VethNet()
        server = peer = None
        try:
            peer = net.peer.popen("python3", "-c", TARGET_SERVER, f"{net.subnet}.1", stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            wait_listening(net.ns, f"{net.subnet}.1", 8080)
            extra = []
            if label != "none":
                for i in range(count):
                    extra += ["--target", f"t{i}=http://{net.subnet}.1:8080/t{i}"]
                extra += ["--target-interval", "10" if label == "targets" else "86400"]
            extra += ["--log-format", "json"]  # the link-down flaps read what was published from the log
            server = Reachd(ctx["reachd"], net.ns, ctx["workdir"], heartbeat=3600, extra=extra)
            server.wait_ready(timeout=30)
            if label != "none":
                wait_settled(server, count, ("ipv4",), timeout=20)
            time.sleep(2)
            row = {"rss_kib": nsutil.status_kib(server.pid), "threads": len(os.listdir(f"/proc/{server.pid}/task"))}
            row["cpu_pct"] = cpu_percent(server.pid, cfg["targets_cpu_seconds"])
            row["status_wrk"] = run_wrk(net.ns, cfg["wrk_seconds"], False, server.pid)
            if label == "targets":
                row.update(link_down_flaps(net, server, count, cfg["target_flaps"], ("ipv4",)))
            results[label] = row
            log(f"targets {label}: RSS {row['rss_kib']} KiB, CPU {row['cpu_pct']:.3f} %, /status "
                f"{row['status_wrk'].get('rps')} req/s" + (link_down_line(row) if label == "targets" else ""))
        finally:
            if server:
                server.stop()
            if peer:
                nsutil.stop(peer)
            net.destroy()
    need = cfg["family_cpu_seconds"] + 25 + 2.5 * cfg["target_flaps"]
    if budget.left() < need + ctx["reserve"]:
        log(f"targets: time budget reached, dual-stack comparison skipped ({budget.left():.0f}s left)")
        results["families"] = {"skipped": "time budget"}
    else:
        results["families"] = target_families(ctx, cfg, budget)
    return results


def link_down_line(row: dict) -> str:
    one, ld = row["link_down_one_event_ms"], row["link_down"]
    return (f", link down → status p50 {row['link_down_status_ms'].get('p50')} ms, targets no-route p50 "
            f"{row['link_down_targets_ms'].get('p50')} ms, the one event p50 {one.get('p50')} p99 {one.get('p99')} ms; "
            f"first unreachable document complete in {ld['published_first_complete']}/{ld['flaps']} flaps (log), "
            f"{ld['same_document']}/{ld['flaps']} (received); one document published in "
            f"{ld['published_one']}/{ld['flaps']} flaps (max {ld['published_max']})")


def target_families(ctx: dict, cfg: dict, budget: Budget) -> dict:
    """100 dual-stack HTTP targets (a name with an A and an AAAA record) next to 100 IPv4-only
    ones (a name with an A record only) and to 200 IPv4-only ones (as many probes a round as the
    dual-stack targets make), all every 10 s, three reachds measured over the same window: CPU,
    RSS, the requests each family's server answered; then link-down flaps with the dual-stack
    targets. Names come from `/etc/netns/<ns>/hosts` (c-ares reads /etc/hosts first), so
    no DNS traffic is involved; the namespaces' UDP counters show it."""
    count, seconds = cfg["targets"], cfg["family_cpu_seconds"]
    setups: dict = {}
    try:
        for label, ipv6, targets in (("ipv4", False, count), ("ipv4x2", False, 2 * count), ("dual", True, count)):
            net = VethNet(ipv6=ipv6)
            name = "dual.test" if ipv6 else "v4.test"
            net.ns.write_etc("hosts", f"127.0.0.1 localhost\n::1 localhost\n{net.subnet}.1 {name}\n"
                             + (f"{net.subnet6}:1 {name}\n" if ipv6 else ""))
            net.ns.write_etc("resolv.conf", "nameserver 127.0.0.1\n")  # never asked: the hosts file answers
            setups[label] = {"net": net, "name": name, "families": FAMILIES if ipv6 else ("ipv4",), "server": None,
                             "count": targets}
            setups[label]["peer"] = net.peer.popen("python3", "-c", TARGET_SERVER, "::", stdout=subprocess.PIPE,
                                                   stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        for s in setups.values():
            wait_listening(s["net"].ns, f"{s['net'].subnet}.1", 8080)
            if s["net"].ipv6:
                wait_listening(s["net"].ns, f"{s['net'].subnet6}:1", 8080)
        for label, s in setups.items():
            extra = ["--target-interval", "10", "--log-format", "json"]
            for i in range(s["count"]):
                extra += ["--target", f"t{i}=http://{s['name']}:8080/t{i}"]
            s["server"] = Reachd(ctx["reachd"], s["net"].ns, ctx["workdir"], heartbeat=3600, extra=extra,
                                 log_name=f"reachd-{label}")
        for s in setups.values():
            s["server"].wait_ready(timeout=30)
        for s in setups.values():
            doc = wait_settled(s["server"], s["count"], s["families"], timeout=30)
            s["addresses"] = doc["targets"][0]["addresses"]
        time.sleep(2)
        before = {}
        for label, s in setups.items():
            pid = s["server"].pid
            before[label] = {"requests": ask_counts(s["peer"]), "udp": nsutil.udp_sent(pid),
                             "rss_kib": nsutil.status_kib(pid)}
        t0 = time.monotonic()
        sampled = nsutil.sample_threads([s["server"].pid for s in setups.values()], seconds)
        wall = time.monotonic() - t0
        out: dict = {"window_s": wall, "interval_s": 10, "targets": count}
        for label, s in setups.items():
            pid, b = s["server"].pid, before[label]
            cpu_s = sum(t["cpu_ms"] for t in sampled[pid].values()) / 1e3
            requests = ask_counts(s["peer"]) or {}
            udp = nsutil.udp_sent(pid)
            served = {f: requests.get(f, 0) - (b["requests"] or {}).get(f, 0) for f in FAMILIES}
            out[label] = {
                "name": s["name"], "targets": s["count"], "addresses": s["addresses"], "families": list(s["families"]),
                "rss_kib": b["rss_kib"], "rss_end_kib": nsutil.status_kib(pid), "hwm_kib": nsutil.status_kib(pid, "VmHWM"),
                "rss_anon_kib": nsutil.status_kib(pid, "RssAnon"), "rss_file_kib": nsutil.status_kib(pid, "RssFile"),
                "threads": len(os.listdir(f"/proc/{pid}/task")), "cpu_s": cpu_s, "cpu_pct": 100 * cpu_s / wall,
                "requests": served, "requests_per_round": sum(served.values()) / (wall / 10),
                "cpu_us_per_request": 1e6 * cpu_s / sum(served.values()) if sum(served.values()) else None,
                "udp_sent": sum((udp[k] or 0) - (b["udp"][k] or 0) for k in udp),
            }
        v4, v4x2, dual = out["ipv4"], out["ipv4x2"], out["dual"]
        out["cpu_ratio"] = dual["cpu_pct"] / v4["cpu_pct"] if v4["cpu_pct"] > 0 else None
        # As many probes a round: what dual-stack costs beyond the probes it makes.
        out["cpu_ratio_equal_probes"] = dual["cpu_pct"] / v4x2["cpu_pct"] if v4x2["cpu_pct"] > 0 else None
        out["rss_growth_kib"] = dual["rss_kib"] - v4["rss_kib"]
        log(f"targets dual-stack vs IPv4-only, same {wall:.0f}s window: CPU {dual['cpu_pct']:.3f} % vs "
            f"{v4['cpu_pct']:.3f} % ({out['cpu_ratio'] or 0:.2f}×; {v4x2['targets']} IPv4-only {v4x2['cpu_pct']:.3f} %, "
            f"{out['cpu_ratio_equal_probes'] or 0:.2f}×), RSS {dual['rss_kib']} vs {v4['rss_kib']} KiB, "
            f"requests per round {dual['requests_per_round']:.0f} vs {v4['requests_per_round']:.0f}, "
            f"UDP sent {dual['udp_sent']} / {v4['udp_sent']}")
        # The IPv4-only ones are done; the dual-stack one goes on to the link-down flaps alone.
        for label in ("ipv4", "ipv4x2"):
            s4 = setups[label]
            s4["server"].stop()
            s4["server"] = None
            nsutil.stop(s4["peer"])
        if budget.left() < 2.5 * cfg["target_flaps"] + ctx["reserve"]:
            log("targets: time budget reached, dual-stack link-down flaps skipped")
        else:
            s = setups["dual"]
            dual.update(link_down_flaps(s["net"], s["server"], count, cfg["target_flaps"], FAMILIES))
            log("targets dual-stack" + link_down_line(dual))
        return out
    finally:
        for s in setups.values():
            if s.get("server"):
                s["server"].stop()
            if s.get("peer"):
                nsutil.stop(s["peer"])
            s["net"].destroy()


# --------------------------------------------------------------------------- DNS check


DNS_RESPONDER = r"""
import json, select, signal, socket, struct, sys
# A nameserver on each address given after the first: every A query gets NOERROR with the first
# address as its answer. SIGUSR1 prints the queries received so far, per address (one JSON line).
answer = socket.inet_aton(sys.argv[1])
counts = {a: 0 for a in sys.argv[2:]}
signal.signal(signal.SIGUSR1, lambda *_: print(json.dumps(counts), flush=True))
socks = {}
for a in counts:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((a, 53))
    socks[s] = a
print("ready", flush=True)
while True:
    for s in select.select(list(socks), [], [])[0]:
        data, client = s.recvfrom(4096)
        if len(data) < 17:
            continue
        counts[socks[s]] += 1
        qid, flags = struct.unpack("!HH", data[:4])
        end = 12
        while end < len(data) and data[end]:
            end += data[end] + 1
        question = data[12:end + 5]
        qtype = struct.unpack("!H", data[end + 1:end + 3])[0] if end + 3 <= len(data) else 0
        records = struct.pack("!HHHIH", 0xC00C, 1, 1, 60, 4) + answer if qtype == 1 else b""
        header = struct.pack("!HHHHHH", qid, 0x8080 | (flags & 0x0100), 1, 1 if records else 0, 0, 0)
        s.sendto(header + question + records, client)
"""


def thread_deltas(before: dict, after: dict) -> dict:
    """Per thread of `after` that ran or woke between the two `nsutil.threads` readings: CPU ms and
    wake-ups (voluntary + involuntary context switches)."""
    per_thread = {}
    for tid, a in after.items():
        b = before.get(tid, {"cpu_ns": 0, "voluntary": 0, "involuntary": 0})
        d = {"comm": a["comm"], "cpu_ms": (a["cpu_ns"] - b["cpu_ns"]) / 1e6,
             "wakeups": (a["voluntary"] - b["voluntary"]) + (a["involuntary"] - b["involuntary"])}
        if d["cpu_ms"] or d["wakeups"]:
            per_thread[str(tid)] = d
    return per_thread


def own_wakeups(per_thread: dict) -> int:
    """Wake-ups of reachd's own threads: all but libdispatch's manager (`…qos.overcommit`), which
    re-arms a 1 s timer of its own (see the idle section of the report)."""
    return sum(t["wakeups"] for t in per_thread.values() if not t["comm"].endswith("qos.overcommit"))


def phase_dns(ctx: dict, cfg: dict, budget: Budget) -> dict:
    """The nameserver check (`--dns-check NAME --dns-interval 10`) against three nameservers, next
    to the same reachd without it, both over the same window: CPU, wake-ups (context switches of
    every thread), the queries each nameserver got; and that without the check nothing is sent
    (the namespace's UDP counters since it was made, and the nameservers' counts)."""
    seconds = cfg["dns_seconds"]
    if budget.left() < seconds + 12 + ctx["reserve"]:
        log(f"dns: time budget reached, skipped ({budget.left():.0f}s left)")
        return {"skipped": "time budget"}
    name = "probe.test."
    setups: dict = {}
    try:
        for label in ("dns", "nodns"):
            net = VethNet()
            addresses = [f"{net.subnet}.{host}" for host in (53, 54, 55)]
            for address in addresses:
                net.peer.ip("addr", "add", f"{address}/24", "dev", net.peer_dev)
            net.ns.write_etc("resolv.conf", "".join(f"nameserver {a}\n" for a in addresses))
            responder = net.peer.popen("python3", "-c", DNS_RESPONDER, f"{net.subnet}.1", *addresses,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            setups[label] = {"net": net, "addresses": addresses, "responder": responder, "server": None}
        for label, s in setups.items():
            ready, _, _ = select.select([s["responder"].stdout], [], [], 10)
            if not ready or s["responder"].stdout.readline().strip() != b"ready":
                raise RuntimeError(f"the nameservers for {label} did not start")
        for label, s in setups.items():
            extra = ["--dns-check", name, "--dns-interval", "10"] if label == "dns" else []
            s["server"] = Reachd(ctx["reachd"], s["net"].ns, ctx["workdir"], heartbeat=3600, extra=extra,
                                 log_name=f"reachd-{label}")
        for s in setups.values():
            s["server"].wait_ready(timeout=30)
        deadline = time.monotonic() + 15
        while True:
            dns = json.loads(setups["dns"]["server"].status_doc()).get("dns") or {}
            if dns.get("state") == "ok" and len(dns.get("servers") or []) == 3:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"--dns-check did not reach ok with 3 servers: {dns}")
            time.sleep(0.05)
        off = (json.loads(setups["nodns"]["server"].status_doc()).get("dns") or {}).get("state")
        time.sleep(2)
        before = {}
        for label, s in setups.items():
            pid = s["server"].pid
            before[label] = {"udp": nsutil.udp_sent(pid), "queries": ask_counts(s["responder"]) or {}}
        t0 = time.monotonic()
        sampled = nsutil.sample_threads([s["server"].pid for s in setups.values()], seconds)
        wall = time.monotonic() - t0
        out: dict = {"window_s": wall, "interval_s": 10, "name": name, "nameservers": 3, "nodns_dns_state": off}
        for label, s in setups.items():
            pid, b = s["server"].pid, before[label]
            per_thread = sampled[pid]
            udp = nsutil.udp_sent(pid)
            queries = ask_counts(s["responder"]) or {}
            cpu_s = sum(t["cpu_ms"] for t in per_thread.values()) / 1e3
            wakeups = sum(t["wakeups"] for t in per_thread.values())
            out[label] = {
                "cpu_s": cpu_s, "cpu_pct": 100 * cpu_s / wall, "wakeups": wakeups, "wakeups_per_s": wakeups / wall,
                "wakeups_own": own_wakeups(per_thread), "threads_active": per_thread,
                "rss_kib": nsutil.status_kib(pid), "rss_anon_kib": nsutil.status_kib(pid, "RssAnon"),
                "rss_file_kib": nsutil.status_kib(pid, "RssFile"),
                "queries": {a: queries.get(a, 0) - b["queries"].get(a, 0) for a in s["addresses"]},
                "udp_sent": sum((udp[k] or 0) - (b["udp"][k] or 0) for k in udp),
                # Since the namespace was made, i.e. over reachd's whole life (nothing else sends UDP there).
                "udp_sent_total": sum(v or 0 for v in udp.values()),
                "queries_total": sum(queries.values()),
            }
        on, no = out["dns"], out["nodns"]
        n = sum(on["queries"].values())
        out["queries"] = n
        out["cpu_ratio"] = on["cpu_pct"] / no["cpu_pct"] if no["cpu_pct"] > 0 else None
        out["wakeups_ratio"] = on["wakeups"] / no["wakeups"] if no["wakeups"] else None
        out["extra_cpu_us_per_query"] = 1e6 * (on["cpu_s"] - no["cpu_s"]) / n if n else None
        out["extra_wakeups_per_query"] = (on["wakeups"] - no["wakeups"]) / n if n else None
        log(f"dns check, same {wall:.0f}s window: CPU {on['cpu_pct']:.4f} % vs {no['cpu_pct']:.4f} % without, "
            f"wake-ups {on['wakeups']} vs {no['wakeups']} (own threads {on['wakeups_own']} vs {no['wakeups_own']}), "
            f"{n} queries {on['queries']}; without the check: {no['udp_sent_total']} UDP datagrams sent, "
            f"{no['queries_total']} queries seen")
        return out
    finally:
        for s in setups.values():
            if s.get("server"):
                s["server"].stop()
            nsutil.stop(s["responder"])
            s["net"].destroy()


# --------------------------------------------------------------------------- /status throughput


def parse_duration_ms(text: str) -> float:
    m = re.match(r"([\d.]+)(us|ms|s|m)", text)
    value, unit = float(m.group(1)), m.group(2)
    return value * {"us": 1e-3, "ms": 1, "s": 1e3, "m": 60e3}[unit]


def run_wrk(ns: Namespace, seconds: int, close: bool, server_pid: int) -> dict:
    cmd = ["ip", "netns", "exec", ns.name, "wrk", "-t2", "-c64", f"-d{seconds}s", "--latency", "--timeout", "5s"]
    if close:
        cmd += ["-H", "Connection: close"]
    cmd.append(f"http://127.0.0.1:{PORT}/status")
    cpu0 = nsutil.cpu_ns(server_pid)
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    nsutil.PROCESSES.append(proc)
    try:
        out, _ = proc.communicate(timeout=seconds + 30)
    except subprocess.TimeoutExpired:
        nsutil.stop(proc, signal.SIGKILL)
        raise
    nsutil.PROCESSES.remove(proc)
    server_cpu = (nsutil.cpu_ns(server_pid) - cpu0) / 1e9
    kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wrk_cpu = (kids1.ru_utime + kids1.ru_stime) - (kids0.ru_utime + kids0.ru_stime)
    text = out.decode(errors="replace")
    rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
    lat = {q: parse_duration_ms(v) for q, v in re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", text, re.M)}
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    return {
        "rps": float(rps.group(1)) if rps else None,
        "p50_ms": lat.get("50"), "p90_ms": lat.get("90"), "p99_ms": lat.get("99"),
        "socket_errors": sum(int(x) for x in errors.groups()) if errors else 0,
        "non_2xx": int(non2xx.group(1)) if non2xx else 0,
        "server_cpu_s": server_cpu, "wrk_cpu_s": wrk_cpu, "seconds": seconds,
        "raw": text if not rps else None,
    }


def phase_throughput(ctx: dict, cfg: dict, budget: Budget, perf: Perf) -> dict:
    net = VethNet()
    net1 = VethNet() if cfg["wrk_threads1"] else None
    nginx_ns = Namespace()
    reachd = reachd1 = nginx = None
    try:
        reachd = Reachd(ctx["reachd"], net.ns, ctx["workdir"], heartbeat=3600)
        reachd.wait_ready()
        body = reachd.status_doc()
        nginx = Nginx(nginx_ns, ctx["workdir"], static_body=body)
        nginx.wait_ready()
        servers = {"reachd": (reachd, net.ns), "nginx": (nginx, nginx_ns)}
        if net1:
            # A diagnostic variant, not the target: reachd with one HTTP thread, like nginx's one
            # worker, so that wrk's two threads and the server do not oversubscribe two cores.
            reachd1 = Reachd(ctx["reachd"], net1.ns, ctx["workdir"], heartbeat=3600, extra=["--threads", "1"])
            reachd1.wait_ready()
            servers["reachd-threads-1"] = (reachd1, net1.ns)
        runs: dict = {mode: {name: [] for name in servers} for mode in ("keepalive", "close")}
        for rep in range(cfg["wrk_reps"]):
            if rep > 0 and budget.left() < 2 * len(servers) * (cfg["wrk_seconds"] + 2) + ctx["reserve"]:
                log(f"throughput: time budget reached, stopping after {rep} repetitions")
                break
            order = list(servers) if rep % 2 == 0 else list(reversed(servers))
            for mode in ("keepalive", "close"):
                for name in order:
                    server, ns = servers[name]
                    prof = perf.start(server.measured_pid, f"wrk-{mode}") if (rep == 0 and name == "reachd") else None
                    result = run_wrk(ns, cfg["wrk_seconds"], mode == "close", server.measured_pid)
                    perf.stop(prof)
                    result["rep"] = rep
                    runs[mode][name].append(result)
                    log(f"wrk {mode:9} {name:16} rep {rep}: {result['rps']} req/s, p99 {result['p99_ms']} ms, "
                        f"server CPU {result['server_cpu_s']:.2f} s, wrk CPU {result['wrk_cpu_s']:.2f} s")
                    time.sleep(1)
        out = {"body_bytes": len(body), "wrk": "2 threads, 64 connections", "seconds": cfg["wrk_seconds"], "runs": runs}
        for mode in runs:
            r, n = runs[mode]["reachd"], runs[mode]["nginx"]
            r1 = runs[mode].get("reachd-threads-1", [])
            out[mode + "_threads_1"] = {
                "reachd_rps": median_of(r1, "rps"), "reachd_p99_ms": median_of(r1, "p99_ms"),
                "rps_ratio": statistics.median([a["rps"] / b["rps"] for a, b in zip(r1, n) if a["rps"] and b["rps"]])
                if r1 and n else None,
                "p99_ratio": statistics.median([a["p99_ms"] / b["p99_ms"] for a, b in zip(r1, n)
                                                if a["p99_ms"] and b["p99_ms"]]) if r1 and n else None,
            }
            out[mode] = {
                "reachd_rps": median_of(r, "rps"), "nginx_rps": median_of(n, "rps"),
                "reachd_p99_ms": median_of(r, "p99_ms"), "nginx_p99_ms": median_of(n, "p99_ms"),
                "reachd_p50_ms": median_of(r, "p50_ms"), "nginx_p50_ms": median_of(n, "p50_ms"),
                "reps": len(r), "errors_reachd": sum(x["socket_errors"] + x["non_2xx"] for x in r),
                "errors_nginx": sum(x["socket_errors"] + x["non_2xx"] for x in n),
                # Per repetition, reachd over the nginx run next to it: the median of same-run ratios.
                "rps_ratio": statistics.median([a["rps"] / b["rps"] for a, b in zip(r, n) if a["rps"] and b["rps"]])
                if r and n else None,
                "p99_ratio": statistics.median([a["p99_ms"] / b["p99_ms"] for a, b in zip(r, n)
                                                if a["p99_ms"] and b["p99_ms"]]) if r and n else None,
            }
        return out
    finally:
        for server in (reachd, reachd1, nginx):
            if server:
                server.stop()
        net.destroy()
        if net1:
            net1.destroy()
        nginx_ns.destroy()


# --------------------------------------------------------------------------- fan-out and memory


def spawn_clients(ctx: dict, ns: Namespace, total: int, procs: int, tag: str, max_seconds: float) -> list[dict]:
    clients = []
    per = [total // procs + (1 if i < total % procs else 0) for i in range(procs)]
    for i, n in enumerate(per):
        if n == 0:
            continue
        out = os.path.join(ctx["workdir"], f"clients-{tag}-{i}.txt")
        err = open(os.path.join(ctx["workdir"], f"clients-{tag}-{i}.err"), "ab")
        proc = ns.popen(ctx["client"], "-p", str(PORT), "-n", str(n), "-i", "256", "-t", str(int(max_seconds)),
                        "-o", out, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        clients.append({"proc": proc, "out": out, "err": err, "n": n})
    return clients


def wait_clients_ready(clients: list[dict], buffers: dict, timeout: float) -> tuple[int, int]:
    procs = [c["proc"] for c in clients]

    def ready(b: dict) -> bool:
        return all(any(line.startswith("ready ") for line in b.get(p.pid, [])) for p in procs)

    read_lines_until(procs, buffers, ready, timeout)
    ok = failed = 0
    for p, c in zip(procs, clients):
        line = next((line for line in buffers.get(p.pid, []) if line.startswith("ready ")), None)
        if line:
            ok += int(line.split()[1])
            failed += int(line.split()[2])
        else:
            failed += c["n"]
    return ok, failed


def finish_clients(clients: list[dict], buffers: dict) -> list[dict]:
    summaries = []
    for c in clients:
        with_suppress_pipe(lambda: (c["proc"].stdin.write(b"quit\n"), c["proc"].stdin.flush()))
    procs = [c["proc"] for c in clients]

    def done(b: dict) -> bool:
        return all(any(line.startswith("summary ") for line in b.get(p.pid, [])) for p in procs)

    read_lines_until(procs, buffers, done, 60)
    for c in clients:
        line = next((line for line in buffers.get(c["proc"].pid, []) if line.startswith("summary ")), "")
        fields = dict(kv.split("=", 1) for kv in line.split()[1:]) if line else {}
        summaries.append(fields)
        nsutil.stop(c["proc"], timeout=10)
        c["err"].close()
    return summaries


def with_suppress_pipe(fn) -> None:
    try:
        fn()
    except (BrokenPipeError, OSError):
        pass


def load_records(paths: list[str], offsets: list[int]) -> list[tuple[int, int, int, int]]:
    rows = []
    for path, offset in zip(paths, offsets):
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for line in f:
                conn, seq, user, kern = line.split()
                rows.append((int(conn) + offset, int(seq), int(user), int(kern)))
    return rows


def fanout_run(ctx: dict, cfg: dict, kind: str, n: int, rep: int, perf: Perf) -> dict:
    net = ns = server = None
    clients: list[dict] = []
    buffers: dict = {}
    try:
        if kind == "reachd":
            net = VethNet()
            ns = net.ns
            server = Reachd(ctx["reachd"], ns, ctx["workdir"], heartbeat=3600, max_connections=n + 2000)
        elif kind == "nchan":
            ns = Namespace()
            server = Nginx(ns, ctx["workdir"], nchan=True)
        else:  # floor1, floor2: the write-only floor with that many threads
            ns = Namespace()
            server = Floor(ctx["floor"], ns, ctx["workdir"], threads=int(kind[len("floor"):]))
        server.wait_ready()
        if kind != "reachd":
            server.publish(nchan_doc(ctx, 0))
        pid = server.measured_pid
        time.sleep(0.5)
        rss0 = nsutil.status_kib(pid)
        t_connect = time.monotonic()
        clients = spawn_clients(ctx, ns, n, cfg["client_procs"], f"{kind}-{n}-{rep}", max_seconds=240)
        ok, failed = wait_clients_ready(clients, buffers, timeout=120)
        connect_s = time.monotonic() - t_connect
        time.sleep(1.0)
        rss1 = nsutil.status_kib(pid)
        server_cpu0 = nsutil.cpu_ns(pid)
        client_cpu0 = sum(nsutil.cpu_ns(c["proc"].pid) for c in clients)
        t_phase0 = time.monotonic_ns()
        triggers = {}
        rt = nsutil.Rtnl(ns) if kind == "reachd" else None
        seq0 = server.sequence() if kind == "reachd" else NCHAN_BASE_SEQUENCE
        if kind == "reachd" and "doc_without" not in ctx:
            ctx["doc_without"] = server.status_doc()
        timeouts = 0
        prof = perf.start(pid, f"fanout-{kind}-{n}") if rep == 0 and n == max(cfg["fanout_ns"]) and kind == "reachd" else None
        for i in range(1, cfg["changes"] + 1):
            expected = seq0 + i
            if kind == "reachd":
                t_start, t_start_real = time.monotonic_ns(), time.time_ns()
                rt.addr(i % 2 == 1, net.index, f"{net.subnet}.100", 32)
                t_ret, t_ret_real = time.monotonic_ns(), time.time_ns()
            else:
                t_start, t_start_real, t_ret, t_ret_real = server.publish(nchan_doc(ctx, i))
            trig = triggers[expected] = {"start": t_start, "start_real": t_start_real, "ret": t_ret,
                                         "ret_real": t_ret_real}
            procs = [c["proc"] for c in clients]
            complete = read_lines_until(
                procs, buffers,
                lambda b: all(f"done {expected}" in b.get(p.pid, []) for p in procs), timeout=5)
            trig["done"] = time.monotonic_ns()
            if not complete:
                timeouts += 1
            if kind == "reachd" and i == 1 and "doc_with" not in ctx:
                ctx["doc_with"] = server.status_doc()
            time.sleep(random.uniform(0.08, 0.12))
        perf.stop(prof)
        phase_s = (time.monotonic_ns() - t_phase0) / 1e9
        server_cpu = (nsutil.cpu_ns(pid) - server_cpu0) / 1e9
        client_cpu = (sum(nsutil.cpu_ns(c["proc"].pid) for c in clients) - client_cpu0) / 1e9
        rss2 = nsutil.status_kib(pid)
        final_seq = server.sequence() if kind == "reachd" else None
        if rt:
            rt.close()
        summaries = finish_clients(clients, buffers)
        offsets, acc = [], 0
        for c in clients:
            offsets.append(acc)
            acc += c["n"]
        rows = load_records([c["out"] for c in clients], offsets)
        lat_user, lat_kern, lat_ret = [], [], []
        kern_by_seq: dict[int, list[int]] = {}
        got: dict[int, set] = {}
        first_seen = set()
        for conn, seq, user, kern in rows:
            first_seen.add(conn)
            trig = triggers.get(seq)
            if trig is None:
                continue
            got.setdefault(conn, set()).add(seq)
            lat_user.append((user - trig["start"]) / 1e6)
            lat_ret.append((user - trig["ret"]) / 1e6)
            if kern:
                lat_kern.append((kern - trig["start_real"]) / 1e6)
                kern_by_seq.setdefault(seq, []).append(kern)
        expected_set = set(triggers)
        missed_clients = sum(1 for conn in first_seen if not expected_set <= got.get(conn, set()))
        missed_deliveries = sum(len(expected_set - got.get(conn, set())) for conn in first_seen)
        per_change_last = [(t["done"] - t["start"]) / 1e6 for t in triggers.values()]
        # Spread: the fan-out cost itself, independent of how the event was triggered — per event,
        # the last client's kernel receive time minus the first client's.
        spreads = [(max(k) - min(k)) / 1e6 for k in kern_by_seq.values() if len(k) > 1]
        result = {
            "server": kind, "n": n, "rep": rep, "clients_ok": ok, "clients_failed": failed, "connect_s": connect_s,
            "changes": len(triggers), "change_timeouts": timeouts,
            "missed_clients": missed_clients + failed, "missed_deliveries": missed_deliveries,
            "spread_ms": summary(spreads),
            "latency_ms": summary(lat_user), "latency_kernel_rx_ms": summary(lat_kern),
            "latency_from_trigger_return_ms": summary(lat_ret),
            "all_clients_done_ms": summary(per_change_last),
            "trigger_call_ms": summary([(t["ret"] - t["start"]) / 1e6 for t in triggers.values()]),
            "rss_kib": {"before": rss0, "idle_clients": rss1, "after_changes": rss2},
            "kib_per_stream": (rss1 - rss0) / ok if ok else None,
            "server_cpu_s": server_cpu, "client_cpu_s": client_cpu, "change_phase_s": phase_s,
            "client_cpu_pct_of_core": 100 * client_cpu / phase_s if phase_s else None,
            "server_cpu_pct_of_core": 100 * server_cpu / phase_s if phase_s else None,
            "client_summaries": summaries,
        }
        if final_seq is not None:
            result["sequence_drift"] = final_seq - (seq0 + cfg["changes"])
        lat = result["latency_ms"]
        log(f"fan-out {kind:6} N={n:5} rep {rep}: ok {ok} failed {failed} missed {result['missed_clients']}, "
            f"p50 {lat.get('p50', float('nan')):.2f} p99 {lat.get('p99', float('nan')):.2f} ms, "
            f"spread p50 {result['spread_ms'].get('p50', float('nan')):.2f} max {result['spread_ms'].get('max', float('nan')):.2f} ms, "
            f"{result['kib_per_stream'] or 0:.2f} KiB/stream, server CPU {server_cpu:.2f}s, client CPU {client_cpu:.2f}s")
        return result
    finally:
        stop_clients(clients)
        if server:
            server.stop()
        if net:
            net.destroy()
        elif ns:
            ns.destroy()


def pair_ratio(pairs: list, key: str, stat: str):
    """The median over repetitions of reachd's figure divided by nchan's in the same repetition."""
    ratios = [a[key][stat] / b[key][stat] for a, b in pairs if a[key].get(stat) and b[key].get(stat)]
    return statistics.median(ratios) if ratios else None


def nchan_doc(ctx: dict, i: int) -> bytes:
    """What nchan publishes for change i: reachd's own document bytes (with or without the
    toggled address, as reachd sent them) with the sequence the clients identify events by."""
    doc = ctx["doc_with"] if i % 2 == 1 else ctx["doc_without"]
    return re.sub(rb'"sequence":\d+', b'"sequence":%d' % (NCHAN_BASE_SEQUENCE + i), doc)


def phase_fanout(ctx: dict, cfg: dict, budget: Budget, perf: Perf) -> dict:
    runs = []
    seconds_per_run = {1000: 5, 5000: 7, 10000: 10}
    for n in cfg["fanout_ns"]:
        for rep in range(cfg["fanout_reps"]):
            # This repetition, and one of every larger N still to come.
            need = 2 * seconds_per_run.get(n, 12) + sum(2 * seconds_per_run.get(m, 12) for m in cfg["fanout_ns"] if m > n)
            if rep > 0 and budget.left() < need + ctx["reserve"]:
                log(f"fan-out N={n}: time budget reached, stopping after {rep} repetitions")
                break
            order = ["reachd", "nchan"] if rep % 2 == 0 else ["nchan", "reachd"]
            if "doc_with" not in ctx:
                order = ["reachd", "nchan"]
            if rep == 0 and ctx.get("floor"):
                # The floor needs one repetition: it shows what the machine allows, not a rival.
                order += ["floor1", "floor2"]
            for kind in order:
                runs.append(fanout_run(ctx, cfg, kind, n, rep, perf))
    out: dict = {"runs": runs, "by_n": {}}
    for n in cfg["fanout_ns"]:
        r = [x for x in runs if x["n"] == n and x["server"] == "reachd"]
        c = [x for x in runs if x["n"] == n and x["server"] == "nchan"]
        pairs = [(a, b) for a in r for b in c if a["rep"] == b["rep"]]
        out["by_n"][str(n)] = {
            "reps": len(r),
            "reachd_spread_p50_ms": median_of(r, "spread_ms", "p50"),
            "nchan_spread_p50_ms": median_of(c, "spread_ms", "p50"),
            "reachd_spread_max_ms": median_of(r, "spread_ms", "max"),
            "nchan_spread_max_ms": median_of(c, "spread_ms", "max"),
            "floor1_spread_p50_ms": median_of([x for x in runs if x["n"] == n and x["server"] == "floor1"],
                                              "spread_ms", "p50"),
            "floor2_spread_p50_ms": median_of([x for x in runs if x["n"] == n and x["server"] == "floor2"],
                                              "spread_ms", "p50"),
            "floor1_spread_max_ms": median_of([x for x in runs if x["n"] == n and x["server"] == "floor1"],
                                              "spread_ms", "max"),
            "floor2_spread_max_ms": median_of([x for x in runs if x["n"] == n and x["server"] == "floor2"],
                                              "spread_ms", "max"),
            "spread_p50_ratio": pair_ratio(pairs, "spread_ms", "p50"),
            "spread_max_ratio": pair_ratio(pairs, "spread_ms", "max"),
            "reachd_p50_ms": median_of(r, "latency_ms", "p50"), "nchan_p50_ms": median_of(c, "latency_ms", "p50"),
            "reachd_p99_ms": median_of(r, "latency_ms", "p99"), "nchan_p99_ms": median_of(c, "latency_ms", "p99"),
            "reachd_max_ms": median_of(r, "latency_ms", "max"), "nchan_max_ms": median_of(c, "latency_ms", "max"),
            "reachd_p99_kernel_rx_ms": median_of(r, "latency_kernel_rx_ms", "p99"),
            "nchan_p99_kernel_rx_ms": median_of(c, "latency_kernel_rx_ms", "p99"),
            "reachd_p99_from_return_ms": median_of(r, "latency_from_trigger_return_ms", "p99"),
            "nchan_p99_from_return_ms": median_of(c, "latency_from_trigger_return_ms", "p99"),
            "reachd_trigger_call_ms": median_of(r, "trigger_call_ms", "p50"),
            "nchan_trigger_call_ms": median_of(c, "trigger_call_ms", "p50"),
            "p99_ratio": statistics.median([a["latency_ms"]["p99"] / b["latency_ms"]["p99"] for a, b in pairs
                                            if a["latency_ms"].get("p99") and b["latency_ms"].get("p99")])
            if pairs else None,
            "reachd_missed_clients": sum(x["missed_clients"] for x in r),
            "nchan_missed_clients": sum(x["missed_clients"] for x in c),
            "reachd_kib_per_stream": median_of(r, "kib_per_stream"), "nchan_kib_per_stream": median_of(c, "kib_per_stream"),
            "reachd_server_cpu_s": median_of(r, "server_cpu_s"), "nchan_server_cpu_s": median_of(c, "server_cpu_s"),
            "reachd_client_cpu_s": median_of(r, "client_cpu_s"), "nchan_client_cpu_s": median_of(c, "client_cpu_s"),
            "reachd_client_cpu_pct": median_of(r, "client_cpu_pct_of_core"),
            "nchan_client_cpu_pct": median_of(c, "client_cpu_pct_of_core"),
        }
    return out


# --------------------------------------------------------------------------- idle cost


def idle_window(ctx: dict, heartbeat: float, clients_n: int, seconds: float, label: str) -> dict:
    net = VethNet()
    server = None
    clients: list[dict] = []
    buffers: dict = {}
    try:
        server = Reachd(ctx["reachd"], net.ns, ctx["workdir"], heartbeat=heartbeat)
        server.wait_ready()
        clients = spawn_clients(ctx, net.ns, clients_n, 1, f"idle-{label}", max_seconds=seconds + 120)
        ok, failed = wait_clients_ready(clients, buffers, timeout=60)
        time.sleep(2)
        before = nsutil.threads(server.pid)
        client_cpu0 = nsutil.cpu_ns(clients[0]["proc"].pid)
        t0 = time.monotonic()
        time.sleep(seconds)
        wall = time.monotonic() - t0
        after = nsutil.threads(server.pid)
        client_cpu = (nsutil.cpu_ns(clients[0]["proc"].pid) - client_cpu0) / 1e9
        per_thread = thread_deltas(before, after)
        cpu_s = sum(t["cpu_ms"] for t in per_thread.values()) / 1e3
        wakeups = sum(t["wakeups"] for t in per_thread.values())
        summaries = finish_clients(clients, buffers)
        heartbeats = sum(int(s.get("heartbeats", 0)) for s in summaries)
        events = sum(int(s.get("events", 0)) for s in summaries)
        result = {
            "heartbeat_s": heartbeat, "clients_ok": ok, "clients_failed": failed, "seconds": wall,
            "cpu_s": cpu_s, "cpu_pct_of_core": 100 * cpu_s / wall, "wakeups": wakeups,
            "wakeups_per_s": wakeups / wall, "threads_total": len(after), "threads_active": per_thread,
            "heartbeats_received": heartbeats, "events_received": events, "client_cpu_s": client_cpu,
        }
        log(f"idle {label}: {ok} streams, {wall:.0f}s: CPU {cpu_s * 1e3:.1f} ms ({result['cpu_pct_of_core']:.4f} % "
            f"of a core), {wakeups} wake-ups, {heartbeats} heartbeats received")
        return result
    finally:
        stop_clients(clients)
        if server:
            server.stop()
        net.destroy()


# --------------------------------------------------------------------------- memory per stream vs head limit


def largest_accepted_head(ns: Namespace, port: int, many: bool) -> int:
    """The longest request head (bytes) a `GET /status` may have and still get 200, by bisection:
    one long header, or (`many`) many 40-byte headers, which also spend the pool on header records."""
    def headers(size: int) -> dict[str, str]:
        if not many:
            return {"X-Pad": "a" * size}
        return {f"X-H{i:04}": "b" * 31 for i in range(size)}

    def accepted(size: int) -> bool:
        try:
            status, _, _ = http_request(ns, port, "GET", "/status", headers=headers(size), timeout=3)
            return status == 200
        except (OSError, ValueError, IndexError):
            return False  # closed without an answer, or an answer that is not HTTP: refused

    low, high = 0, (1 << 12 if many else 1 << 17)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if accepted(middle) else (low, middle)
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers(low).items())
    return len(f"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{extra}\r\n")


def phase_memory(ctx: dict, cfg: dict) -> dict:
    """Memory per idle stream for each connection pool size (`--connection-memory`), next to the
    request-head limit that pool size gives: libmicrohttpd keeps a connection's whole pool for the
    life of the connection, and the pool bounds the request head."""
    rows = []
    n = cfg["memory_streams"]
    for pool in cfg["memory_pools"]:
        net = VethNet()
        server = None
        clients: list[dict] = []
        try:
            server = Reachd(ctx["reachd"], net.ns, ctx["workdir"], heartbeat=3600, max_connections=n + 100,
                            extra=["--connection-memory", str(pool)])
            server.wait_ready()
            head = largest_accepted_head(net.ns, PORT, many=False)
            head_many = largest_accepted_head(net.ns, PORT, many=True)
            time.sleep(0.5)
            rss0 = nsutil.status_kib(server.pid)
            clients = spawn_clients(ctx, net.ns, n, 1, f"memory-{pool}", max_seconds=120)
            ok, failed = wait_clients_ready(clients, {}, timeout=60)
            time.sleep(1.0)
            rss1 = nsutil.status_kib(server.pid)
            row = {"pool": pool, "streams": ok, "failed": failed, "kib_per_stream": (rss1 - rss0) / ok if ok else None,
                   "largest_head_bytes": head, "largest_head_many_headers_bytes": head_many}
            log(f"memory: pool {pool} B → {row['kib_per_stream']:.2f} KiB per idle stream ({ok} streams), "
                f"largest request head {head} B (one long header), {head_many} B (40-byte headers)")
            rows.append(row)
        finally:
            stop_clients(clients)
            if server:
                server.stop()
            net.destroy()
    return {"rows": rows}


def phase_idle(ctx: dict, cfg: dict, budget: Budget) -> dict:
    out = {"quiet": idle_window(ctx, 3600, cfg["idle_clients"], cfg["idle_seconds"], "quiet")}
    if cfg["heartbeat_check_seconds"] and budget.left() > cfg["heartbeat_check_seconds"] + 20 + ctx["reserve"]:
        out["heartbeats"] = idle_window(ctx, cfg["heartbeat_check_interval"], cfg["idle_clients"],
                                        cfg["heartbeat_check_seconds"], "heartbeat")
    return out


# --------------------------------------------------------------------------- machine


def cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def machine() -> dict:
    info = {"kernel": platform.release(), "cores": os.cpu_count(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
        with open("/proc/meminfo") as f:
            info["memory_gib"] = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
        with open("/etc/os-release") as f:
            info["os"] = next((line.split("=", 1)[1].strip().strip('"') for line in f
                               if line.startswith("PRETTY_NAME=")), "?")
        with open("/proc/loadavg") as f:
            info["loadavg_at_start"] = f.read().split()[:3]
    except OSError:
        pass
    info["hypervisor"] = "yes" if "hypervisor" in open("/proc/cpuinfo").read() else "not reported"
    return info


# --------------------------------------------------------------------------- main


def estimate(phase: str, cfg: dict) -> float:
    """Seconds a phase takes on this machine at its smallest (one repetition), for the budget."""
    if phase == "startup":
        return 5 + 0.3 * cfg["startup_runs"]
    if phase == "latency":
        return 8 + 0.06 * cfg["flaps"]
    if phase == "routes":
        return sum(5 + n / 10000 * 4 for n in cfg["route_counts"]) + 0.2 * cfg["route_flaps"] * len(cfg["route_counts"])
    if phase == "targets":
        # none, quiet, targets (each: set-up, CPU window, wrk), the flaps; the dual-stack window, its flaps
        return (3 * (cfg["targets_cpu_seconds"] + cfg["wrk_seconds"] + 6) + 2.5 * cfg["target_flaps"]
                + cfg["family_cpu_seconds"] + 15 + 2.5 * cfg["target_flaps"])
    if phase == "dns":
        return cfg["dns_seconds"] + 12
    if phase == "throughput":
        return 2 * (3 if cfg["wrk_threads1"] else 2) * (cfg["wrk_seconds"] + 2) + 5
    if phase == "fanout":
        return sum(4 * {1000: 5, 5000: 7, 10000: 10}.get(n, 12) for n in cfg["fanout_ns"])
    if phase == "idle":
        return cfg["idle_seconds"] + cfg["heartbeat_check_seconds"] + 20
    if phase == "memory":
        return 8 * len(cfg["memory_pools"])
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reachd", required=True, help="release reachd binary")
    parser.add_argument("--client", required=True, help="compiled bench/sseclient.c")
    parser.add_argument("--floor", default="", help="compiled bench/floor.c (the write-only fan-out floor)")
    parser.add_argument("--quick", action="store_true", help="reduced smoke run (N=1000, 50 flaps, 10 s idle)")
    parser.add_argument("--only", default="", help=f"comma-separated phases of {','.join(PHASES)}")
    parser.add_argument("--results", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    parser.add_argument("--markdown", default=None, help="where to write the Markdown report")
    parser.add_argument("--budget", type=float, default=float(os.environ.get("REACHD_BENCH_BUDGET", 900)),
                        help="seconds this script may take; repetitions are dropped to fit")
    parser.add_argument("--build-seconds", type=float, default=None, help="seconds run.sh spent before the bench")
    parser.add_argument("--prebuilt", action="store_true", help="the binary came from $REACHD_BIN, not built now")
    parser.add_argument("--perf", action="store_true", help="perf-profile reachd in one fan-out and one wrk run")
    parser.add_argument("--syscalls", action="store_true",
                        help="count reachd's system calls (strace -c -f) in one fan-out and one wrk run instead")
    parser.add_argument("--fanout-ns", default="", help="override the fan-out client counts, e.g. 10000")
    parser.add_argument("--reps", type=int, default=0, help="override fan-out and wrk repetitions")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench: needs root (network namespaces)", file=sys.stderr)
        return 1

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)

    cfg = dict(QUICK if args.quick else FULL)
    if args.fanout_ns:
        cfg["fanout_ns"] = [int(x) for x in args.fanout_ns.split(",")]
    if args.reps:
        cfg["fanout_reps"] = cfg["wrk_reps"] = args.reps
    phases = [p for p in args.only.split(",") if p] or PHASES
    os.makedirs(args.results, exist_ok=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 200000), max(hard, 200000)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if nofile < max(cfg["fanout_ns"]) + 2100:
        log(f"warning: open-file limit {nofile} is below what {max(cfg['fanout_ns'])} clients need")
    workdir = tempfile.mkdtemp(prefix="reachd-bench-")
    os.chmod(workdir, 0o755)  # nginx's worker (user nobody) reads the static file from here
    ctx = {"reachd": os.path.abspath(args.reachd), "client": os.path.abspath(args.client), "workdir": workdir,
           "floor": os.path.abspath(args.floor) if args.floor else None,
           "reserve": 10}
    budget = Budget(args.budget)
    perf = Perf(args.perf, args.results, syscalls=args.syscalls)
    started = time.time()
    t0 = time.monotonic()
    results: dict = {
        "mode": "quick" if args.quick else "full", "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "commit": provenance.commit(), "config": cfg, "machine": machine(), "versions": versions(), "phases": {},
        "note": "noisy shared 2-core VM: server, peers and clients share both cores; figures are medians of "
                "repetitions, peers run in the same invocation, alternating order",
        "profiled": perf.enabled,
    }
    log(f"mode {results['mode']}, phases {','.join(phases)}, budget {args.budget:.0f}s, workdir {workdir}")
    busy0, total0 = cpu_jiffies()
    status = 0
    try:
        for index, phase in enumerate(phases):
            # Time the later phases need, kept back when this one decides how many repetitions fit.
            ctx["reserve"] = 10 + sum(estimate(p, cfg) for p in phases[index + 1:])
            pt = time.monotonic()
            log(f"phase {phase}")
            try:
                if phase == "startup":
                    results["phases"]["startup"] = phase_startup(ctx, cfg)
                elif phase == "latency":
                    results["phases"]["latency"] = phase_latency(ctx, cfg)
                elif phase == "routes":
                    results["phases"]["routes"] = phase_routes(ctx, cfg)
                elif phase == "targets":
                    results["phases"]["targets"] = phase_targets(ctx, cfg, budget)
                elif phase == "dns":
                    results["phases"]["dns"] = phase_dns(ctx, cfg, budget)
                elif phase == "throughput":
                    results["phases"]["throughput"] = phase_throughput(ctx, cfg, budget, perf)
                elif phase == "fanout":
                    results["phases"]["fanout"] = phase_fanout(ctx, cfg, budget, perf)
                elif phase == "memory":
                    results["phases"]["memory"] = phase_memory(ctx, cfg)
                elif phase == "idle":
                    results["phases"]["idle"] = phase_idle(ctx, cfg, budget)
            except SystemExit:
                raise
            except Exception as error:  # noqa: BLE001 - recorded, the other phases still run
                import traceback
                traceback.print_exc()
                results["phases"][phase] = {"error": f"{type(error).__name__}: {error}"}
                status = 1
            results.setdefault("phase_seconds", {})[phase] = round(time.monotonic() - pt, 1)
    finally:
        nsutil.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)
    results["bench_seconds"] = round(time.monotonic() - t0, 1)
    busy1, total1 = cpu_jiffies()
    with open("/proc/loadavg") as f:
        results["machine"]["loadavg_at_end"] = f.read().split()[:3]
    results["machine"]["cpu_busy_pct_during_run"] = round(100 * (busy1 - busy0) / max(1, total1 - total0), 1)
    results["build_seconds"] = args.build_seconds
    results["prebuilt"] = args.prebuilt
    results["verdicts"] = report.verdicts(results)
    name = "quick" if args.quick else "partial" if (args.only or args.fanout_ns or args.reps) else "latest"
    results["results_name"] = name
    json_path = os.path.join(args.results, f"{name}.json")
    with open(json_path, "w") as f:
        json.dump(results, f, indent=1)
    md_path = args.markdown or os.path.join(args.results, f"{name}.md")
    with open(md_path, "w") as f:
        f.write(report.markdown(results))
    log(f"wrote {json_path} and {md_path} in {results['bench_seconds']:.0f}s")
    print(report.table(results))
    return status


if __name__ == "__main__":
    sys.exit(main())
