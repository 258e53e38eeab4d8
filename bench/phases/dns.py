"""Phase `dns`: the nameserver check (`--dns-check`) against three nameservers next to the same
reachd without it, same window; and that without it no datagram leaves reachd's namespace.
"""

from __future__ import annotations

import json
import select
import subprocess
import time

import nsutil
from common import Budget, log
from cpu_readings import own_wakeups
from helper_servers import ask_counts
from nsutil import VethNet
from servers import Reachd


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
