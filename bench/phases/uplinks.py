"""Phase `uplinks`: what `--per-uplink` costs with two uplinks (CPU, RSS, the checks it makes),
next to the same reachd without it in the same window, and the link-down of the backup uplink:
the one document with its `connectivity` `null`, and documents per link-down.
"""

from __future__ import annotations

import os
import subprocess
import time

import nsutil
from common import Budget, log
from helper_servers import CHECK_SERVER, TARGET_SERVER, ask_counts, wait_listening
from nsutil import UplinksNet
from servers import Reachd
from uplink_down import uplink_down_flaps, uplink_down_line, wait_all_full

CHECK_PORT = 80
INTERVAL = 10  # the targets' and the connectivity check's, seconds


def phase_uplinks(ctx: dict, cfg: dict, budget: Budget) -> dict:
    """Two reachds at once, each in its own namespace with two uplinks (`wan0`, default route metric
    100; `wan1`, metric 200: the backup) to one peer namespace holding the targets' server and the
    check's server: 100 HTTP targets and `--connectivity-url` both every 10 s, one reachd with
    `--per-uplink` and one without, measured over the same window (CPU, wake-ups, RSS, the checks
    each uplink carried); then link-down flaps of the backup with `--per-uplink` (uplink_down.py)."""
    count, seconds, flaps = cfg["targets"], cfg["uplinks_cpu_seconds"], cfg["uplink_flaps"]
    if budget.left() < seconds + 20 + ctx["reserve"]:
        log(f"uplinks: time budget reached, skipped ({budget.left():.0f}s left)")
        return {"skipped": "time budget"}
    setups: dict = {}
    try:
        for label in ("plain", "per_uplink"):
            net = UplinksNet()
            setups[label] = {"net": net, "server": None}
            setups[label]["targets"] = net.peer.popen(
                "python3", "-c", TARGET_SERVER, net.targets_ip, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                stdin=subprocess.DEVNULL)
            setups[label]["check"] = net.peer.popen(
                "python3", "-c", CHECK_SERVER, net.check_ip, str(CHECK_PORT), stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        for s in setups.values():
            wait_listening(s["net"].ns, s["net"].targets_ip, 8080)
            wait_listening(s["net"].ns, s["net"].check_ip, CHECK_PORT)
        for label, s in setups.items():
            net = s["net"]
            extra = ["--target-interval", str(INTERVAL), "--connectivity-url",
                     f"http://{net.check_ip}/generate_204", "--connectivity-interval", str(INTERVAL),
                     "--ipv4-destination", net.outside, "--log-format", "json"]
            for i in range(count):
                extra += ["--target", f"t{i}=http://{net.targets_ip}:8080/t{i}"]
            if label == "per_uplink":
                extra.append("--per-uplink")
            s["server"] = Reachd(ctx["reachd"], net.ns, ctx["workdir"], heartbeat=3600, extra=extra,
                                 log_name=f"reachd-{label}")
        for s in setups.values():
            s["server"].wait_ready(timeout=30)
        wait_all_full(setups["per_uplink"]["server"], count, setups["per_uplink"]["net"].devs, timeout=30)
        plain_doc = wait_all_full(setups["plain"]["server"], count, (), timeout=30)
        # Without the switch every interface's `connectivity` is null.
        plain_uplinks = {i.get("name"): i.get("connectivity") for i in plain_doc.get("interfaces") or []}
        time.sleep(2)
        before = {}
        for label, s in setups.items():
            pid = s["server"].pid
            before[label] = {"targets": ask_counts(s["targets"]) or {}, "checks": ask_counts(s["check"]) or {},
                             "rss_kib": nsutil.status_kib(pid)}
        t0 = time.monotonic()
        sampled = nsutil.sample_threads([s["server"].pid for s in setups.values()], seconds)
        wall = time.monotonic() - t0
        out: dict = {"window_s": wall, "interval_s": INTERVAL, "targets": count, "uplinks": ["wan0", "wan1"],
                     "backup": "wan1", "plain_interface_connectivity": plain_uplinks}
        for label, s in setups.items():
            pid, b, net = s["server"].pid, before[label], s["net"]
            per_thread = sampled[pid]
            cpu_s = sum(t["cpu_ms"] for t in per_thread.values()) / 1e3
            targets = ask_counts(s["targets"]) or {}
            checks = ask_counts(s["check"]) or {}
            by_address = {a: checks.get(a, 0) - b["checks"].get(a, 0) for a in set(checks) | set(b["checks"])}
            out[label] = {
                "cpu_s": cpu_s, "cpu_pct": 100 * cpu_s / wall,
                "wakeups": sum(t["wakeups"] for t in per_thread.values()),
                "rss_kib": b["rss_kib"], "rss_end_kib": nsutil.status_kib(pid), "hwm_kib": nsutil.status_kib(pid, "VmHWM"),
                "rss_anon_kib": nsutil.status_kib(pid, "RssAnon"), "rss_file_kib": nsutil.status_kib(pid, "RssFile"),
                "threads": len(os.listdir(f"/proc/{pid}/task")),
                "target_requests": sum(targets.values()) - sum(b["targets"].values()),
                # The check's requests by the uplink they came through (the client's address).
                "checks": {dev: by_address.pop(net.address(i), 0) for i, dev in enumerate(net.devs)},
                "checks_elsewhere": by_address,
            }
        on, off = out["per_uplink"], out["plain"]
        out["cpu_ratio"] = on["cpu_pct"] / off["cpu_pct"] if off["cpu_pct"] > 0 else None
        out["rss_ratio"] = on["rss_kib"] / off["rss_kib"] if off["rss_kib"] else None
        extra_checks = sum(on["checks"].values()) - sum(off["checks"].values())
        out["extra_checks"] = extra_checks
        out["extra_cpu_us_per_check"] = 1e6 * (on["cpu_s"] - off["cpu_s"]) / extra_checks if extra_checks > 0 else None
        log(f"uplinks, same {wall:.0f}s window: CPU {on['cpu_pct']:.3f} % with --per-uplink vs {off['cpu_pct']:.3f} % "
            f"without ({out['cpu_ratio'] or 0:.2f}×), RSS {on['rss_kib']} vs {off['rss_kib']} KiB, checks by uplink "
            f"{on['checks']} vs {off['checks']}, target requests {on['target_requests']} vs {off['target_requests']}")
        # The reachd without the switch is done; the one with it goes on to the flaps alone.
        s = setups["plain"]
        s["server"].stop()
        s["server"] = None
        if budget.left() < 1.5 * flaps + ctx["reserve"]:
            log("uplinks: time budget reached, link-down flaps of the backup skipped")
            on["uplink_down"] = {"skipped": "time budget"}
        else:
            s = setups["per_uplink"]
            on.update(uplink_down_flaps(s["net"], s["server"], count, flaps, down=1))
            log("uplinks --per-uplink" + uplink_down_line(on))
        return out
    finally:
        for s in setups.values():
            if s.get("server"):
                s["server"].stop()
            for key in ("targets", "check"):
                if s.get(key):
                    nsutil.stop(s[key])
            s["net"].destroy()
