#!/usr/bin/env python3
"""bench-ab: the working tree's reachd against an older commit's, interleaved in one run.

`make bench-ab BASE=<commit>` (bench/ab.sh builds both release binaries, then runs this). Each
repetition runs every short phase on both binaries back to back, and who goes first alternates
per repetition: `/status` keep-alive and `Connection: close` with wrk, one change fanned out to
1,000 and 5,000 SSE streams, link flaps → SSE event. Then two reachds with 100 HTTP targets each
(one per binary) are measured over the same windows for CPU. The phases themselves are
bench/bench.py's (bench/phases/); this file only pairs them, and decides. Last, unless
`--no-instructions` (`AB_INSTRUCTIONS=0`), bench/instructions.py counts the instructions per
operation of its four fixed workloads on both binaries under callgrind: above 1.02× fails.

`--auth` (`make bench-ab AUTH=1`): one binary on both sides, base without a web config and new with
basic auth (one bcrypt user of cost 10, as `htpasswd -B` makes; wrk sends its header on every
request) — the throughput rows only: what basic auth with its cache of verified headers costs.

The decision, per figure: worse-by is new ÷ base − 1 where lower is better (latency, CPU) and
base ÷ new − 1 where higher is better (req/s), on the medians of the repetitions; the noise is the
larger relative spread, (max − min) ÷ median, of either side's repetitions, and at least
NOISE_FLOOR. A figure whose worse-by exceeds its noise fails, and so does a phase that failed, or
errors (wrk socket errors, missed SSE deliveries, missed change events) that new has and base
has not, and an instruction count per operation above 1.02× base's. Exit 0: pass; 1: a figure is
worse, new has errors base has not, or an instruction count is above the limit; 2: the run could
not measure (a phase failed, a figure has fewer than MIN_REPS values, a workload could not be
counted). Root only; it
cleans up its namespaces in every outcome.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import instructions  # noqa: E402
import machine  # noqa: E402
import nsutil  # noqa: E402
from common import Budget, log  # noqa: E402
from helper_servers import TARGET_SERVER, ask_counts, wait_listening  # noqa: E402
from nsutil import VethNet  # noqa: E402
from phases.fanout import fanout_run  # noqa: E402
from phases.latency import phase_latency  # noqa: E402
from phases.throughput import run_wrk  # noqa: E402
from profiler import Perf  # noqa: E402
from servers import PORT, Reachd, http_request, wait_http  # noqa: E402
from status_stream import wait_settled  # noqa: E402

NOISE_FLOOR = 0.05
MIN_REPS = 3
SIDES = ("base", "new")
CFG = dict(wrk_seconds=5, fanout_ns=[1000, 5000], changes=20, client_procs=2, flaps=40, flap_blocks=1,
           targets=100, target_interval=1, target_window=10)

# key, what the row says, which way is better
FIGURES = [
    ("status_keepalive_rps", "/status keep-alive, req/s", "higher"),
    ("status_close_rps", "/status `Connection: close`, req/s", "higher"),
]
for _n in CFG["fanout_ns"]:
    FIGURES += [(f"fanout{_n}_spread_p50", f"fan-out {_n:,} streams: spread p50, ms", "lower"),
                (f"fanout{_n}_spread_p99", f"fan-out {_n:,} streams: spread p99, ms", "lower"),
                (f"fanout{_n}_delivery_p99", f"fan-out {_n:,} streams: delivery p99, ms", "lower")]
FIGURES += [
    ("targets_cpu_pct", f"{CFG['targets']} targets every {CFG['target_interval']} s: CPU, % of a core", "lower"),
    ("targets_cpu_us_per_probe", f"{CFG['targets']} targets: CPU per probe, µs", "lower"),
    ("change_p50", "change latency (link flap → SSE event) p50, ms", "lower"),
    ("change_p99", "change latency p99, ms", "lower"),
]

AUTH_FIGURES = FIGURES[:2]
# "rasmuslerdorf", cost 10: a keep-alive client pays bcrypt once, then the cache answers (Security/BasicAuth).
AUTH_USER, AUTH_PASSWORD = "prometheus", "rasmuslerdorf"
AUTH_HASH = "$2b$10$uksSK9gqmkdf2NFzjFhdtesWzKt22l0XGzU3XGuqVO6VpLGOyPmaC"

RULE = (f"A figure is WORSE when new is worse than base by more than the noise measured in this run: "
        f"worse-by = new ÷ base − 1 where lower is better (ms, CPU), base ÷ new − 1 where higher is better "
        f"(req/s), on the medians of the repetitions; noise = the larger of either side's relative spread, "
        f"(max − min) ÷ median, and at least {NOISE_FLOOR:.0%}. Errors new has and base has not (wrk socket "
        f"errors or non-2xx, missed SSE deliveries or change events) fail too, as does a phase that failed.")


class Run:
    """Per figure and side, the value of each repetition; errors (counted) and failures (text)."""

    def __init__(self, figures: list) -> None:
        self.values: dict = {key: {side: [] for side in SIDES} for key, _, _ in figures}
        self.errors: dict = {side: {} for side in SIDES}
        self.failures: list[str] = []

    def add(self, side: str, key: str, value) -> None:
        if isinstance(value, (int, float)):
            self.values[key][side].append(value)

    def error(self, side: str, what: str, count: int) -> None:
        self.errors[side][what] = self.errors[side].get(what, 0) + count

    def attempt(self, what: str, fn, *args) -> None:
        try:
            fn(*args)
        except (SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - recorded, the other phases still run
            traceback.print_exc()
            self.failures.append(f"{what}: {type(exc).__name__}: {exc}")


# --------------------------------------------------------------------------- the phases, paired


def web_config(workdir: str) -> str:
    """The new side's web config in `--auth` runs: basic auth, no TLS (what is measured is the check)."""
    path = os.path.join(workdir, "web-config.yml")
    with open(path, "w") as f:
        f.write(f"basic_auth_users:\n  {AUTH_USER}: {AUTH_HASH}\n")
    return path


def throughput(ctxs: dict, order: list[str], run: Run) -> None:
    """A reachd per side, idle while the other is measured; per mode, wrk on each in `order`. A
    side with a web config is asked with its credentials, and must refuse a request without them."""
    nets, servers = {}, {}
    try:
        for side in SIDES:
            nets[side] = VethNet()
            config = ctxs[side].get("web_config")
            extra = ["--web-config-file", config] if config else []
            servers[side] = Reachd(ctxs[side]["reachd"], nets[side].ns, ctxs[side]["workdir"], heartbeat=3600,
                                   extra=extra)
        for side in SIDES:
            if ctxs[side].get("web_config"):
                wait_http(nets[side].ns, PORT, "/status", want=401, proc=servers[side].proc)
                name, value = ctxs[side]["headers"][0].split(": ", 1)
                status, _, _ = http_request(nets[side].ns, PORT, "GET", "/status", headers={name: value})
                if status != 200:
                    raise RuntimeError(f"/status with the bench's credentials answered {status}")
            else:
                servers[side].wait_ready()
        for mode in ("keepalive", "close"):
            for side in order:
                result = run_wrk(nets[side].ns, CFG["wrk_seconds"], mode == "close", servers[side].pid,
                                 headers=ctxs[side].get("headers", []))
                run.add(side, f"status_{mode}_rps", result["rps"])
                run.error(side, f"wrk {mode}: socket errors + non-2xx", result["socket_errors"] + result["non_2xx"])
                log(f"{side:4} wrk {mode:9}: {result['rps']} req/s, p99 {result['p99_ms']} ms")
                time.sleep(1)
    finally:
        for side in servers:
            servers[side].stop()
        for net in nets.values():
            net.destroy()


def fanout(ctxs: dict, side: str, n: int, rep: int, run: Run) -> None:
    result = fanout_run(ctxs[side], CFG, "reachd", n, rep, Perf(False, ctxs[side]["workdir"]))
    run.add(side, f"fanout{n}_spread_p50", result["spread_ms"].get("p50"))
    run.add(side, f"fanout{n}_spread_p99", result["spread_ms"].get("p99"))
    run.add(side, f"fanout{n}_delivery_p99", result["latency_ms"].get("p99"))
    run.error(side, f"fan-out {n}: missed deliveries", result["missed_deliveries"] + result["clients_failed"])


def change_latency(ctxs: dict, side: str, run: Run) -> None:
    """bench.py's latency phase, shorter. Flaps the kernel itself deferred (its `ip monitor` line
    came more than 100 ms late) are left out: they time the kernel's linkwatch, not reachd."""
    result = phase_latency(ctxs[side], CFG)
    run.add(side, "change_p50", result["reachd_not_deferred"].get("p50"))
    run.add(side, "change_p99", result["reachd_not_deferred"].get("p99"))
    run.error(side, "change latency: missing or wrong events", result["reachd_missing"] + result["wrong_operstate"])


def targets(ctxs: dict, windows: int, run: Run) -> None:
    """One reachd per side with the same 100 HTTP targets (bench.py's target server behind the
    gateway), both measured over the same windows: every thread's CPU (schedstat), and the
    requests its target server answered, for CPU per probe."""
    setups: dict = {}
    count = CFG["targets"]
    try:
        for side in SIDES:
            net = VethNet()
            peer = net.peer.popen("python3", "-c", TARGET_SERVER, f"{net.subnet}.1", stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            setups[side] = {"net": net, "peer": peer}
        for side, s in setups.items():
            wait_listening(s["net"].ns, f"{s['net'].subnet}.1", 8080)
            extra = ["--target-interval", str(CFG["target_interval"])]
            for i in range(count):
                extra += ["--target", f"t{i}=http://{s['net'].subnet}.1:8080/t{i}"]
            s["server"] = Reachd(ctxs[side]["reachd"], s["net"].ns, ctxs[side]["workdir"], heartbeat=3600,
                                 extra=extra, log_name=f"reachd-targets-{side}")
        for s in setups.values():
            s["server"].wait_ready(timeout=30)
            # A BASE from before the per-family fields (issue 18) has no `ipv4` in its targets.
            first = (json.loads(s["server"].status_doc()).get("targets") or [{}])[0]
            wait_settled(s["server"], count, ("ipv4",) if "ipv4" in first else (), timeout=30)
        time.sleep(2)
        pids = {side: s["server"].pid for side, s in setups.items()}
        for window in range(windows):
            before = {side: sum((ask_counts(s["peer"]) or {}).values()) for side, s in setups.items()}
            t0 = time.monotonic()
            sampled = nsutil.sample_threads(list(pids.values()), CFG["target_window"])
            wall = time.monotonic() - t0
            line = []
            for side, s in setups.items():
                cpu_s = sum(t["cpu_ms"] for t in sampled[pids[side]].values()) / 1e3
                probes = sum((ask_counts(s["peer"]) or {}).values()) - before[side]
                run.add(side, "targets_cpu_pct", 100 * cpu_s / wall)
                run.add(side, "targets_cpu_us_per_probe", 1e6 * cpu_s / probes if probes > 0 else None)
                line.append(f"{side} {100 * cpu_s / wall:.3f} % ({probes} probes)")
            log(f"targets window {window + 1}/{windows}, {wall:.1f} s: " + ", ".join(line))
    finally:
        for s in setups.values():
            if s.get("server"):
                s["server"].stop()
            nsutil.stop(s["peer"])
            s["net"].destroy()


def repetition(ctxs: dict, rep: int, run: Run, auth: bool) -> None:
    order = list(SIDES) if rep % 2 == 0 else list(reversed(SIDES))
    log(f"repetition {rep + 1}: {' then '.join(order)} in every phase")
    run.attempt(f"throughput (rep {rep + 1})", throughput, ctxs, order, run)
    if auth:
        return
    for n in CFG["fanout_ns"]:
        for side in order:
            run.attempt(f"fan-out {n} {side} (rep {rep + 1})", fanout, ctxs, side, n, rep, run)
    for side in order:
        run.attempt(f"change latency {side} (rep {rep + 1})", change_latency, ctxs, side, run)


# --------------------------------------------------------------------------- deciding, reporting


def judge(key: str, better: str, values: dict) -> dict:
    base, new = values["base"], values["new"]
    row: dict = {"key": key, "better": better, "base": base, "new": new}
    if len(base) < MIN_REPS or len(new) < MIN_REPS:
        row["verdict"] = "NO DATA"
        return row
    mb, mn = statistics.median(base), statistics.median(new)
    spread = {side: (max(v) - min(v)) / statistics.median(v) if statistics.median(v) else float("inf")
              for side, v in values.items()}
    if mb <= 0 or mn <= 0:
        row.update(verdict="NO DATA", base_median=mb, new_median=mn)
        return row
    ratio = mn / mb
    worse_by = ratio - 1 if better == "lower" else 1 / ratio - 1
    noise = max(spread["base"], spread["new"], NOISE_FLOOR)
    verdict = "WORSE" if worse_by > noise else "better" if -worse_by > noise else "≈ (within noise)"
    row.update(base_median=mb, new_median=mn, ratio=ratio, worse_by=worse_by, noise=noise, spread=spread,
               verdict=verdict)
    return row


def number(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def markdown(meta: dict, figures: list, rows: list[dict], run: Run, outcome: str, counted: dict | None) -> str:
    windows = f", {meta['windows']} shared {CFG['target_window']} s windows for the targets' CPU" \
        if meta["windows"] else ""
    lines = [f"### bench-ab: {meta['new_label']} ÷ {meta['base_label']} — {outcome}", "",
             f"base `{meta['base_label']}` = {meta['base_what']}; new `{meta['new_label']}` = {meta['new_what']}. "
             f"Release builds (`--static-swift-stdlib`), {meta['reps']} repetitions interleaved (who goes first "
             f"alternates){windows}; "
             f"{meta['started']}, {meta['seconds']:.0f} s, {meta['machine']}, machine busy "
             f"{meta['busy_pct']:.0f} % during the run (its own load included).", "",
             "| figure | base median (min–max) | new median (min–max) | new ÷ base | noise | verdict |",
             "|---|---|---|---|---|---|"]
    labels = {key: (label, better) for key, label, better in figures}
    for row in rows:
        label, better = labels[row["key"]]
        arrow = "↑" if better == "higher" else "↓"
        if "ratio" not in row:
            lines.append(f"| {label} {arrow} | {len(row['base'])} runs | {len(row['new'])} runs | – | – | {row['verdict']} |")
            continue
        cells = [f"{number(statistics.median(row[s]))} ({number(min(row[s]))}–{number(max(row[s]))})" for s in SIDES]
        verdict = f"**{row['verdict']}**" if row["verdict"] == "WORSE" else row["verdict"]
        lines.append(f"| {label} {arrow} | {cells[0]} | {cells[1]} | {row['ratio']:.2f}× | ±{row['noise']:.0%} | {verdict} |")
    lines += ["", f"↑ higher is better, ↓ lower is better. {RULE}"]
    errors = {what for side in SIDES for what in run.errors[side]}
    shown = [f"{what}: base {run.errors['base'].get(what, 0)}, new {run.errors['new'].get(what, 0)}"
             for what in sorted(errors) if run.errors["base"].get(what) or run.errors["new"].get(what)]
    lines += ["", "Errors: " + ("; ".join(shown) if shown else "none on either side.")]
    if run.failures:
        lines += ["", "Phases that failed:", *[f"- {f}" for f in run.failures]]
    lines += ["", "#### Instructions per operation (callgrind, `bench/instructions.py`)", ""]
    if counted is None:
        lines.append("Not counted (`AB_INSTRUCTIONS=0`, or `AUTH=1`).")
    else:
        lines.append(instructions.table(counted).rstrip("\n"))
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-bin", required=True)
    parser.add_argument("--new-bin", required=True)
    parser.add_argument("--client", required=True, help="compiled bench/sseclient.c")
    parser.add_argument("--base-label", default="base")
    parser.add_argument("--new-label", default="new")
    parser.add_argument("--base-what", default="BASE_BIN")
    parser.add_argument("--new-what", default="NEW_BIN")
    parser.add_argument("--reps", type=int, default=5, help=f"repetitions (at least {MIN_REPS} always run)")
    parser.add_argument("--budget", type=float, default=480, help="seconds; repetitions beyond the first "
                        f"{MIN_REPS} are dropped to fit")
    parser.add_argument("--auth", action="store_true", help="new = base's binary with basic auth on; "
                        "/status rows only")
    parser.add_argument("--no-instructions", action="store_true", help="skip the instruction counts "
                        "(bench/instructions.py) that follow the wall-clock phases")
    parser.add_argument("--instruction-workloads", default=",".join(instructions.WORKLOADS),
                        help=f"which of {','.join(instructions.WORKLOADS)}")
    parser.add_argument("--results", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("bench-ab: needs root (network namespaces)", file=sys.stderr)
        return 2

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 200000), max(hard, 200000)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    workdir = tempfile.mkdtemp(prefix="reachd-ab-")
    ctxs = {side: {"reachd": os.path.abspath(path), "client": os.path.abspath(args.client), "workdir": workdir,
                   "floor": None, "reserve": 0}
            for side, path in (("base", args.base_bin), ("new", args.new_bin))}
    figures = AUTH_FIGURES if args.auth else FIGURES
    if args.auth:
        token = base64.b64encode(f"{AUTH_USER}:{AUTH_PASSWORD}".encode()).decode()
        ctxs["new"].update(web_config=web_config(workdir), headers=[f"Authorization: Basic {token}"])
    budget, run = Budget(args.budget), Run(figures)
    started, t0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), time.monotonic()
    busy0, total0 = machine.cpu_jiffies()
    reps, per_rep = 0, 0.0
    counted = None
    try:
        # The targets' windows come last: as many as there were repetitions, each CFG["target_window"] s.
        def targets_need(windows: int) -> float:
            return 15 + windows * (CFG["target_window"] + 0.5)

        while reps < max(args.reps, MIN_REPS):
            rep_start = time.monotonic()
            if reps >= MIN_REPS and budget.left() < per_rep * 1.1 + targets_need(reps + 1) + 5:
                log(f"time budget: stopping after {reps} repetitions ({budget.left():.0f} s left)")
                break
            repetition(ctxs, reps, run, args.auth)
            reps += 1
            per_rep = time.monotonic() - rep_start
            log(f"repetition {reps} took {per_rep:.0f} s; {budget.left():.0f} s of the budget left")
        if not args.auth:
            log(f"targets: {reps} shared windows")
            run.attempt("targets", targets, ctxs, reps, run)
        if not args.auth and not args.no_instructions:
            # After the wall-clock phases, never beside them: valgrind takes a core for minutes.
            log("instructions: counting each workload under callgrind, base then new")
            try:
                counted = instructions.measure(ctxs["base"]["reachd"], ctxs["new"]["reachd"],
                                               [w for w in args.instruction_workloads.split(",") if w], log=log)
            except Exception as exc:  # noqa: BLE001 - a run that could not count, not a crash
                traceback.print_exc()
                counted = {"rows": [], "failures": [f"{type(exc).__name__}: {exc}"], "status": 2, "seconds": 0.0,
                           "limit": instructions.LIMIT, "repeats": 0, "config": instructions.CFG}
    finally:
        nsutil.cleanup()
        subprocess.run(["rm", "-rf", workdir], check=False)
    busy1, total1 = machine.cpu_jiffies()
    host = machine.machine()
    rows = [judge(key, better, run.values[key]) for key, _, better in figures]
    worse = [r["key"] for r in rows if r["verdict"] == "WORSE"]
    worse += [f"errors ({what})" for what, count in run.errors["new"].items()
              if count and not run.errors["base"].get(what)]
    if counted is not None:
        worse += [f"instructions ({r['name']} {r['ratio']:.3f}×)" for r in counted["rows"] if r["verdict"] == "ABOVE"]
    incomplete = bool(run.failures) or any(r["verdict"] == "NO DATA" for r in rows) \
        or (counted is not None and counted["status"] == 2)
    status = 1 if worse else 2 if incomplete else 0
    outcome = ("FAIL: " + ", ".join(worse)) if worse else "FAIL: incomplete run" if incomplete else "PASS"
    meta = {"base_label": args.base_label, "new_label": args.new_label, "base_what": args.base_what,
            "new_what": args.new_what, "reps": reps, "windows": 0 if args.auth else reps, "started": started,
            "seconds": time.monotonic() - t0, "machine": f"{host.get('cores')} cores ({host.get('cpu', '?')})",
            "busy_pct": 100 * (busy1 - busy0) / max(1, total1 - total0)}
    text = markdown(meta, figures, rows, run, outcome, counted)
    os.makedirs(args.results, exist_ok=True)
    stem = os.path.join(args.results, f"ab-{args.base_label}-{args.new_label}")
    with open(stem + ".md", "w") as f:
        f.write(text)
    with open(stem + ".json", "w") as f:
        json.dump({"meta": meta, "config": CFG, "rows": rows, "errors": run.errors, "failures": run.failures,
                   "noise_floor": NOISE_FLOOR, "outcome": outcome, "instructions": counted}, f, indent=1)
    print("\n" + text)
    log(f"wrote {stem}.md and .json; {outcome}")
    return status


if __name__ == "__main__":
    sys.exit(main())
