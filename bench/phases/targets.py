"""Phase `targets`: what probing 100 HTTP targets costs (CPU, RSS, `/status` under load), the
link-down event with targets, and dual-stack targets next to IPv4-only ones in the same window.
"""

from __future__ import annotations

import os
import subprocess
import time

import nsutil
from common import Budget, log
from cpu_readings import cpu_percent
from helper_servers import TARGET_SERVER, ask_counts, wait_listening
from link_down import link_down_flaps, link_down_line
from nsutil import VethNet
from phases.throughput import run_wrk
from servers import Reachd
from status_stream import FAMILIES, wait_settled


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
