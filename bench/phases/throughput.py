"""Phase `throughput`: `/status` req/s and p99 with wrk, next to nginx serving the same bytes
(`run_wrk` is also the targets phase's and bench-ab's).
"""

from __future__ import annotations

import re
import resource
import signal
import statistics
import subprocess
import time

import nsutil
from common import Budget, log, median_of
from nsutil import Namespace, VethNet
from profiler import Perf
from servers import PORT, Nginx, Reachd


def parse_duration_ms(text: str) -> float:
    m = re.match(r"([\d.]+)(us|ms|s|m)", text)
    value, unit = float(m.group(1)), m.group(2)
    return value * {"us": 1e-3, "ms": 1, "s": 1e3, "m": 60e3}[unit]


def run_wrk(ns: Namespace, seconds: int, close: bool, server_pid: int, headers: list[str] = ()) -> dict:
    cmd = ["ip", "netns", "exec", ns.name, "wrk", "-t2", "-c64", f"-d{seconds}s", "--latency", "--timeout", "5s"]
    for header in [*headers, *(["Connection: close"] if close else [])]:
        cmd += ["-H", header]
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
