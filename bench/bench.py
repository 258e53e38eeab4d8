#!/usr/bin/env python3
"""reachd's benchmark suite: reachd side by side with its peers, in the same run.

Called by bench/run.sh (which installs the peers, builds reachd and the C client); see
bench/README.md for the method. Root only: every server runs in a network namespace this
script creates and deletes. Traffic goes only to 127.0.0.1 inside those namespaces.

This file is the run itself: the options, which phases run and what each may take of the
budget, and the results and report it writes. Each phase is a module of `phases/`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))

import nsutil  # noqa: E402
import provenance  # noqa: E402
import report  # noqa: E402
from common import Budget, log  # noqa: E402
from machine import cpu_jiffies, machine  # noqa: E402
from phases.dns import phase_dns  # noqa: E402
from phases.fanout import phase_fanout  # noqa: E402
from phases.fleet import phase_fleet  # noqa: E402
from phases.idle import phase_idle  # noqa: E402
from phases.latency import phase_latency  # noqa: E402
from phases.memory import phase_memory  # noqa: E402
from phases.routes import phase_routes  # noqa: E402
from phases.startup import phase_startup  # noqa: E402
from phases.targets import phase_targets  # noqa: E402
from phases.throughput import phase_throughput  # noqa: E402
from phases.uplinks import phase_uplinks  # noqa: E402
from profiler import Perf  # noqa: E402
from servers import versions  # noqa: E402

FULL = dict(flaps=200, flap_blocks=4, fanout_ns=[1000, 5000, 10000], fanout_reps=5, changes=20,
            client_procs=2, wrk_seconds=10, wrk_reps=4, wrk_threads1=True, idle_clients=1000, idle_seconds=60,
            heartbeat_check_seconds=20, heartbeat_check_interval=5, startup_runs=20,
            route_counts=[1000, 10000, 100000], route_flaps=20,
            targets=100, targets_cpu_seconds=60, target_flaps=20, family_cpu_seconds=60, dns_seconds=60,
            uplinks_cpu_seconds=60, uplink_flaps=40, memory_streams=4000, memory_pools=[4096, 6144, 8192, 16384],
            fleet_sizes=[100, 1000, 10000], fleet_icmp_sizes=[1000], fleet_window_seconds=30, fleet_flaps=30,
            fleet_icmp_count=3, fleet_start_seconds=60, fleet_scraper="loop")
QUICK = dict(flaps=50, flap_blocks=1, fanout_ns=[1000], fanout_reps=1, changes=20, client_procs=2,
             wrk_seconds=5, wrk_reps=1, wrk_threads1=False, idle_clients=1000, idle_seconds=10, heartbeat_check_seconds=0,
             heartbeat_check_interval=5, startup_runs=5,
             route_counts=[1000, 100000], route_flaps=5,
             targets=100, targets_cpu_seconds=15, target_flaps=5, family_cpu_seconds=20, dns_seconds=20,
             uplinks_cpu_seconds=20, uplink_flaps=5, memory_streams=2000, memory_pools=[4096, 8192],
             fleet_sizes=[100], fleet_icmp_sizes=[100], fleet_window_seconds=10, fleet_flaps=3, fleet_icmp_count=3,
             fleet_start_seconds=60, fleet_scraper="loop")
# The measuring windows, in seconds, that --seconds caps for a smoke run. Not the dual-stack
# targets' window (family_cpu_seconds): its figures are per probe, and a round is every 10 s.
WINDOWS = ["wrk_seconds", "idle_seconds", "targets_cpu_seconds", "dns_seconds", "uplinks_cpu_seconds",
           "fleet_window_seconds"]
# `fleet` is last: the longest phase (about 11 minutes), and the only one that leaves thousands of
# sockets' worth of kernel state behind it until its namespaces go.
PHASES = ["startup", "latency", "routes", "targets", "dns", "uplinks", "throughput", "fanout", "memory", "idle",
          "fleet"]


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
    if phase == "uplinks":
        # set-up and settling, the CPU window, the flaps of the backup
        return 15 + cfg["uplinks_cpu_seconds"] + 1.2 * cfg["uplink_flaps"]
    if phase == "throughput":
        return 2 * (3 if cfg["wrk_threads1"] else 2) * (cfg["wrk_seconds"] + 2) + 5
    if phase == "fanout":
        return sum(4 * {1000: 5, 5000: 7, 10000: 10}.get(n, 12) for n in cfg["fanout_ns"])
    if phase == "idle":
        return cfg["idle_seconds"] + cfg["heartbeat_check_seconds"] + 20
    if phase == "memory":
        return 8 * len(cfg["memory_pools"])
    if phase == "fleet":
        # idle RSS of both tools; per kind and size both tools (start, settle, 1.5 intervals or one
        # round, the window, stop); the flaps at the largest HTTP size
        sizes = [n for n in cfg["fleet_sizes"] for _ in ("tcp", "http")] + list(cfg["fleet_icmp_sizes"])
        return (10 + sum(2 * (cfg["fleet_window_seconds"] + 15 + n / 500) for n in sizes)
                + (6 * cfg["fleet_flaps"] if cfg["fleet_sizes"] else 0))
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
    parser.add_argument("--fleet-sizes", default="",
                        help="phase fleet: the tcp:// and http:// target counts, e.g. 100,1000 "
                             "(default 100,1000,10000)")
    parser.add_argument("--fleet-icmp-sizes", default="",
                        help="phase fleet: the icmp:// target counts, e.g. 1000 (default 1000); 0 for none")
    parser.add_argument("--fleet-window", type=float, default=0,
                        help="phase fleet: seconds of each tool's measuring window (default 30)")
    parser.add_argument("--fleet-scraper", choices=("loop", "prometheus"), default="",
                        help="phase fleet: what scrapes blackbox_exporter: bench/scrape_loop.py (default) or a real "
                             "Prometheus (about half a core more on the machine at 10,000 targets)")
    parser.add_argument("--fleet-flaps", type=int, default=-1,
                        help="phase fleet: link-down flaps at the largest HTTP size (default 30; 0 for none)")
    parser.add_argument("--seconds", type=float, default=0,
                        help="cap every measuring window (wrk, CPU, idle) at this many seconds: with --quick and "
                             "--only, a smoke run that shows a phase runs; its figures mean nothing")
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
    if args.fleet_sizes:
        cfg["fleet_sizes"] = [int(x) for x in args.fleet_sizes.split(",") if int(x) > 0]
    if args.fleet_icmp_sizes:
        cfg["fleet_icmp_sizes"] = [int(x) for x in args.fleet_icmp_sizes.split(",") if int(x) > 0]
    if args.fleet_window:
        cfg["fleet_window_seconds"] = args.fleet_window
    if args.fleet_flaps >= 0:
        cfg["fleet_flaps"] = args.fleet_flaps
    if args.fleet_scraper:
        cfg["fleet_scraper"] = args.fleet_scraper
    if args.seconds:
        for key in WINDOWS:
            cfg[key] = min(cfg[key], max(1, round(args.seconds)))
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
                elif phase == "uplinks":
                    results["phases"]["uplinks"] = phase_uplinks(ctx, cfg, budget)
                elif phase == "throughput":
                    results["phases"]["throughput"] = phase_throughput(ctx, cfg, budget, perf)
                elif phase == "fanout":
                    results["phases"]["fanout"] = phase_fanout(ctx, cfg, budget, perf)
                elif phase == "memory":
                    results["phases"]["memory"] = phase_memory(ctx, cfg)
                elif phase == "idle":
                    results["phases"]["idle"] = phase_idle(ctx, cfg, budget)
                elif phase == "fleet":
                    results["phases"]["fleet"] = phase_fleet(ctx, cfg, budget)
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
    partial = (args.only or args.fanout_ns or args.reps or args.seconds or args.fleet_sizes or args.fleet_icmp_sizes
               or args.fleet_window or args.fleet_flaps >= 0 or args.fleet_scraper)
    name = "quick" if args.quick else "partial" if partial else "latest"
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
