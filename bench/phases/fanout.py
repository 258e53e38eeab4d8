"""Phase `fanout`: one change delivered to 1k / 5k / 10k SSE streams, next to nginx + nchan and
the write-only floor (`fanout_run` is also bench-ab's).
"""

from __future__ import annotations

import random
import re
import statistics
import time

import nsutil
from common import Budget, log, median_of, summary
from nsutil import Namespace, VethNet
from profiler import Perf
from servers import Floor, Nginx, Reachd, read_lines_until
from sse_clients import finish_clients, load_records, spawn_clients, stop_clients, wait_clients_ready


NCHAN_BASE_SEQUENCE = 1000


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
