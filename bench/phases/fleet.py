"""Phase `fleet`: reachd next to Prometheus' blackbox_exporter probing a monitoring fleet's worth
of targets (issue 28): 100 to 10,000 `tcp://` and `http://` targets and 1,000 `icmp://` ones, every
10 s, one tool at a time in the same namespaces: CPU and wake-ups per probe, RSS per target, and
at the largest HTTP size the link-down to the one document.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import time
import urllib.parse

import nsutil
from common import Budget, log
from helper_servers import ask_counts
from link_down import link_down_flaps, link_down_line
from machine import cpu_jiffies
from nsutil import VethNet
from servers import PORT, Nginx, Reachd, http_request, wait_http
from status_stream import target_states, targets_settled

INTERVAL = 10  # seconds between probes of a target, both tools
TIMEOUT = 3  # seconds a probe may take: reachd's default, and the blackbox modules' timeout
TARGET_PORT = 80  # the targets' nginx, on every address of FLEET_NET in the far namespace
STUB_PORT = 8080  # nginx's stub_status, on the far namespace's 127.0.0.1
BLACKBOX_PORT = 9115
PROMETHEUS_PORT = 9090
# The targets' addresses: all of it is local to the far namespace (an AnyIP `local` route on its
# lo), so every target gets its own address with one wildcard listener, and 1,000 connections a
# second never reuse a 4-tuple still in TIME_WAIT. Inside the bench's 198.18.0.0/15.
FLEET_NET = "198.19.0.0/16"
MODULES = {"tcp": "tcp_connect", "http": "http_2xx", "icmp": "icmp"}
SCRAPE_LOOP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scrape_loop.py")
BLACKBOX_CONFIG = f"""modules:
  http_2xx:
    prober: http
    timeout: {TIMEOUT}s
    http:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
  tcp_connect:
    prober: tcp
    timeout: {TIMEOUT}s
    tcp:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
  icmp:
    prober: icmp
    timeout: {TIMEOUT}s
    icmp:
      preferred_ip_protocol: ip4
      ip_protocol_fallback: false
"""


def address(i: int) -> str:
    """Target i's address: 198.19.1.1, …, 198.19.1.250, 198.19.2.1, … (no .0 or .255)."""
    return f"198.19.{1 + i // 250}.{1 + i % 250}"


def reachd_url(kind: str, i: int) -> str:
    return {"tcp": f"tcp://{address(i)}:{TARGET_PORT}", "http": f"http://{address(i)}/t{i}",
            "icmp": f"icmp://{address(i)}"}[kind]


def blackbox_target(kind: str, i: int) -> str:
    """What Prometheus passes as `target=` (the blackbox modules' own syntax for the same URL)."""
    return {"tcp": f"{address(i)}:{TARGET_PORT}", "http": f"http://{address(i)}/t{i}", "icmp": address(i)}[kind]


class TargetNginx(Nginx):
    """nginx for every target: `200 ok` to any GET on port 80 of any address (HTTP targets) and a
    bare accept for TCP targets; `stub_status` on 127.0.0.1:8080 counts both (accepts, requests).
    One worker, as in the other phases; 1,000 connections a second are little for it (its CPU is
    measured beside each window)."""

    def __init__(self, ns, workdir: str) -> None:
        super().__init__(ns, workdir, port=STUB_PORT)
        self.name = "targets-nginx"

    def http_block(self) -> str:
        return f"""    default_type text/plain;
    server {{
        listen {TARGET_PORT} backlog=65535;
        location / {{
            return 200 "ok\\n";
        }}
    }}
    server {{
        listen 127.0.0.1:{STUB_PORT};
        location = /status {{
            stub_status;
        }}
    }}"""


class FleetWorld:
    """One namespace pair for the whole phase: the tools' side (reachd, or blackbox_exporter with
    its Prometheus, one at a time) with a default route through the veth, and the far side with
    nginx listening on every address of FLEET_NET. What the tools sent is counted there: nginx's
    accepts and requests (`stub_status`), the namespace's ICMP echoes answered (`IcmpInEchos`)."""

    def __init__(self, workdir: str) -> None:
        self.net = VethNet()
        self.ns, self.peer = self.net.ns, self.net.peer
        self.peer.ip("route", "add", "local", FLEET_NET, "dev", "lo")
        # Names never resolve here (every target is an IP literal); a resolver would ask nobody.
        self.ns.write_etc("resolv.conf", "nameserver 127.0.0.1\n")
        self.ns.write_etc("hosts", "127.0.0.1 localhost\n::1 localhost\n")
        # ICMP datagram sockets for both tools (what probes.md asks of a pod), not raw sockets.
        self.ns.exec_check("sysctl", "-q", "-w", "net.ipv4.ping_group_range=0 2147483647")
        # The servers' ports out of the ephemeral range: after 1,000 scrapes a second, a socket the
        # scrape loop left on 127.0.0.1:8080 in FIN-WAIT-2 made the next reachd's bind fail
        # (EADDRINUSE despite SO_REUSEADDR, which only passes TIME_WAIT).
        self.ns.exec_check("sysctl", "-q", "-w",
                           f"net.ipv4.ip_local_reserved_ports={PORT},{BLACKBOX_PORT},{PROMETHEUS_PORT}")
        self.nginx = TargetNginx(self.peer, workdir)
        self.nginx.wait_ready()
        self.nginx_worker = self.nginx.measured_pid

    def counts(self) -> dict:
        """nginx's accepts and requests so far (this request itself included), and the far
        namespace's ICMP echo requests received."""
        status, _, body = http_request(self.peer, STUB_PORT, "GET", "/status")
        if status != 200:
            raise RuntimeError(f"nginx stub_status answered {status}")
        accepts, _handled, requests = (int(x) for x in body.decode().splitlines()[2].split())
        echoes = None
        with open(f"/proc/{self.nginx.proc.pid}/net/snmp") as f:
            rows = [line.split() for line in f if line.startswith("Icmp:")]
        if len(rows) >= 2:
            echoes = int(rows[1][rows[0].index("InEchos")])
        return {"accepts": accepts, "requests": requests, "echoes": echoes}

    def destroy(self) -> None:
        self.nginx.stop()
        self.net.destroy()


def probes_between(kind: str, a: dict, b: dict, echoes_per_probe: int) -> int:
    """Probes the far side saw between two `counts()`: connections for TCP, requests for HTTP (less
    the later stub_status request itself), echo requests ÷ echoes per probe for ICMP."""
    if kind == "icmp":
        return round((b["echoes"] - a["echoes"]) / echoes_per_probe)
    key = "accepts" if kind == "tcp" else "requests"
    return b[key] - a[key] - 1


class Blackbox:
    """blackbox_exporter as its own process (never the system service) on 127.0.0.1:9115 inside
    `ns`, with the three modules of BLACKBOX_CONFIG; and, once `scrape()` is called, what drives it:
    `/probe?module=…&target=…` for every target every 10 s, spread over the interval, from
    bench/scrape_loop.py ("loop") or from a real Prometheus ("prometheus": the most faithful, but at
    10,000 targets its own CPU comes out of the exporter's on a 2-core machine)."""

    def __init__(self, ns, workdir: str, label: str) -> None:
        self.ns = ns
        self.dir = os.path.join(workdir, f"blackbox-{label}")
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        config = os.path.join(self.dir, "blackbox.yml")
        with open(config, "w") as f:
            f.write(BLACKBOX_CONFIG)
        self.log = open(os.path.join(self.dir, "blackbox.log"), "ab")
        self.proc = ns.popen("prometheus-blackbox-exporter", f"--config.file={config}",
                             f"--web.listen-address=127.0.0.1:{BLACKBOX_PORT}", "--log.level=warn",
                             stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.pid = self.proc.pid
        self.scraper: subprocess.Popen | None = None
        self.scraper_name = ""
        self.scraper_log = None

    def wait_ready(self, timeout: float = 20) -> None:
        wait_http(self.ns, BLACKBOX_PORT, "/metrics", timeout=timeout, proc=self.proc)

    def scrape(self, kind: str, count: int, scraper: str) -> None:
        """Starts `scraper` ("loop" or "prometheus") scraping `count` targets of `kind` through this
        exporter every 10 s."""
        self.scraper_name = scraper
        self.scraper_log = open(os.path.join(self.dir, f"{scraper}.log"), "ab")
        if scraper == "loop":
            path = os.path.join(self.dir, "targets")
            with open(path, "w") as f:
                f.writelines(blackbox_target(kind, i) + "\n" for i in range(count))
            self.scraper = self.ns.popen("python3", SCRAPE_LOOP, "127.0.0.1", str(BLACKBOX_PORT), MODULES[kind],
                                         str(INTERVAL), str(INTERVAL), path, stdout=subprocess.PIPE,
                                         stderr=self.scraper_log, stdin=subprocess.DEVNULL)
            return
        job = {
            "job_name": "fleet", "metrics_path": "/probe", "params": {"module": [MODULES[kind]]},
            "scrape_interval": f"{INTERVAL}s", "scrape_timeout": f"{INTERVAL}s",
            "static_configs": [{"targets": [blackbox_target(kind, i) for i in range(count)]}],
            # The usual blackbox relabelling: the target becomes a parameter, the exporter the address.
            "relabel_configs": [
                {"source_labels": ["__address__"], "target_label": "__param_target"},
                {"source_labels": ["__param_target"], "target_label": "instance"},
                {"target_label": "__address__", "replacement": f"127.0.0.1:{BLACKBOX_PORT}"}],
        }
        config = os.path.join(self.dir, "prometheus.yml")
        with open(config, "w") as f:  # JSON is YAML
            json.dump({"global": {"scrape_interval": f"{INTERVAL}s", "evaluation_interval": "1m"},
                       "scrape_configs": [job]}, f)
        self.scraper = self.ns.popen(
            "prometheus", f"--config.file={config}", f"--storage.tsdb.path={os.path.join(self.dir, 'data')}",
            f"--web.listen-address=127.0.0.1:{PROMETHEUS_PORT}", "--log.level=warn",
            stdout=self.scraper_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_http(self.ns, PROMETHEUS_PORT, "/-/ready", timeout=60, proc=self.scraper)

    def targets_ok(self) -> float | None:
        """Targets whose last probe succeeded."""
        if self.scraper_name == "loop":
            return (ask_counts(self.scraper) or {}).get("targets_ok")
        return self.query('sum(probe_success{job="fleet"})')

    def query(self, promql: str) -> float | None:
        """One instant query to the Prometheus; the single value of its result, or None."""
        status, _, body = http_request(self.ns, PROMETHEUS_PORT, "GET",
                                       "/api/v1/query?query=" + urllib.parse.quote(promql), timeout=20)
        if status != 200:
            return None
        result = json.loads(body)["data"]["result"]
        return float(result[0]["value"][1]) if result else 0.0

    def stop(self) -> None:
        if self.scraper is not None:
            nsutil.stop(self.scraper, timeout=15)
            self.scraper_log.close()
        nsutil.stop(self.proc, timeout=10)
        self.log.close()
        shutil.rmtree(os.path.join(self.dir, "data"), ignore_errors=True)


def log_tail(path: str, size: int = 300) -> str:
    """The end of a log, for the error a tool that exited leaves in its row (the workdir goes)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - size))
            return f.read().decode(errors="replace").strip() or "(empty log)"
    except OSError:
        return "(no log)"


def wait_reachd_settled(server: Reachd, count: int, timeout: float) -> float:
    """Until every target is reachable (status_stream's check, every 0.5 s: at 10,000 targets a
    `/status` is megabytes); seconds it took."""
    t0 = time.monotonic()
    while True:
        doc = json.loads(server.status_doc())
        if targets_settled(doc, count, ("ipv4",)):
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"{count} targets not all reachable after {timeout:.0f}s: state {doc.get('state')}, "
                               f"{target_states(doc)}")
        if server.proc.poll() is not None:
            raise RuntimeError(f"reachd exited with {server.proc.returncode}")
        time.sleep(0.5)


def wait_round_end(world: FleetWorld, kind: str, timeout: float) -> float | None:
    """Until a round of reachd's probes has gone by and the far side then saw none for 2 s (reachd
    probes its targets in rounds, bursts of a few seconds every interval): a window of whole
    intervals that starts now ends in the quiet too, and holds whole rounds. Seconds it took, or
    None when no quiet came within `timeout` (the window then starts anyway)."""
    t0 = time.monotonic()
    prev, seen, quiet_since = world.counts(), False, 0.0
    while time.monotonic() - t0 < timeout:
        time.sleep(0.2)
        cur = world.counts()
        active = cur["echoes"] > prev["echoes"] if kind == "icmp" else probes_between(kind, prev, cur, 1) > 0
        now = time.monotonic()
        if active:
            seen, quiet_since = True, now
        elif seen and now - quiet_since >= 2:
            return now - t0
        prev = cur
    return None


def idle_rss(ctx: dict, world: FleetWorld) -> dict:
    """Each tool's RSS with nothing to probe, 2 s after it answers: what RSS per target is over;
    under `anon`, the anonymous part of it alone (`RssAnon`: no file-backed pages of code)."""
    out = {"anon": {}}
    server = Reachd(ctx["reachd"], world.ns, ctx["workdir"], heartbeat=3600, log_name="reachd-fleet-idle")
    try:
        server.wait_ready(timeout=30)
        time.sleep(2)
        out["reachd"] = nsutil.status_kib(server.pid)
        out["anon"]["reachd"] = nsutil.status_kib(server.pid, "RssAnon")
    finally:
        server.stop()
    box = Blackbox(world.ns, ctx["workdir"], "idle")
    try:
        box.wait_ready()
        time.sleep(2)
        out["blackbox"] = nsutil.status_kib(box.pid)
        out["anon"]["blackbox"] = nsutil.status_kib(box.pid, "RssAnon")
    finally:
        box.stop()
    return out


def measure(world: FleetWorld, kind: str, count: int, window: float, pid: int, extra_pids: list[int],
            echoes_per_probe: int) -> dict:
    """CPU and wake-ups of every thread of `pid` over `window` s, the probes the far side saw in it,
    RSS before and after; `extra_pids` (nginx's worker, Prometheus) are sampled alongside for CPU."""
    rss = nsutil.status_kib(pid)
    before = world.counts()
    busy0, total0 = cpu_jiffies()
    t0 = time.monotonic()
    memory: dict[int, list] = {}
    sampled = nsutil.sample_threads([pid, *extra_pids], window, memory=memory)
    wall = time.monotonic() - t0
    busy1, total1 = cpu_jiffies()
    after = world.counts()
    per_thread = sampled[pid]
    cpu_s = sum(t["cpu_ms"] for t in per_thread.values()) / 1e3
    wakeups = sum(t["wakeups"] for t in per_thread.values())
    probes = probes_between(kind, before, after, echoes_per_probe)
    # The machine is shared: the cores' busy time in the window, less what the tool, nginx and the
    # scraper used, is everything else (this script's sampling included), in % of one core.
    busy_cores = (busy1 - busy0) / max(1, total1 - total0) * (os.cpu_count() or 1)
    measured = sum(t["cpu_ms"] for p in [pid, *extra_pids] for t in sampled[p].values()) / 1e3 / wall
    return {
        "machine_busy_pct": 100 * busy_cores / (os.cpu_count() or 1), "else_cpu_pct": 100 * (busy_cores - measured),
        "window_s": wall, "cpu_s": cpu_s, "cpu_pct": 100 * cpu_s / wall, "wakeups": wakeups,
        "probes": probes, "probes_expected": count * wall / INTERVAL,
        "cpu_us_per_probe": 1e6 * cpu_s / probes if probes > 0 else None,
        "wakeups_per_probe": wakeups / probes if probes > 0 else None,
        "rss_kib": rss, "rss_end_kib": nsutil.status_kib(pid), "hwm_kib": nsutil.status_kib(pid, "VmHWM"),
        "rss_anon_end_kib": nsutil.status_kib(pid, "RssAnon"),
        # The median of the readings every 0.2 s over the window: one reading at its end falls
        # before or after a trim, a round's transfers, a garbage collection (at 10,000 `tcp://`
        # targets 0.4 MiB off the median for reachd, 1.7 MiB for blackbox_exporter, in one run).
        "rss_median_kib": statistics.median(m[0] for m in memory[pid]) if memory.get(pid) else None,
        "rss_anon_median_kib": statistics.median(m[1] for m in memory[pid]) if memory.get(pid) else None,
        "threads": len(os.listdir(f"/proc/{pid}/task")), "threads_active": len(per_thread),
        "others_cpu_pct": [100 * sum(t["cpu_ms"] for t in sampled[p].values()) / 1e3 / wall for p in extra_pids],
        "far_side": {k: after[k] - before[k] for k in after if after[k] is not None and before[k] is not None},
    }


def run_reachd(ctx: dict, cfg: dict, world: FleetWorld, kind: str, count: int, flaps: int) -> dict:
    """reachd with `count` targets of `kind` from a targets file, every 10 s: settled (every target
    reachable), then the window from the quiet after a round (wait_round_end: no round straddles
    its edges); with `flaps`, the link-down flaps after it."""
    path = os.path.join(ctx["workdir"], f"fleet-targets-{kind}-{count}")
    with open(path, "w") as f:
        f.writelines(f"t{i}={reachd_url(kind, i)}\n" for i in range(count))
    extra = ["--targets-file", path, "--target-interval", str(INTERVAL), "--target-timeout", str(TIMEOUT),
             "--log-format", "json"]  # the link-down flaps read what was published from the log
    if kind == "icmp":
        extra += ["--icmp-count", str(cfg["fleet_icmp_count"])]
    server = Reachd(ctx["reachd"], world.ns, ctx["workdir"], heartbeat=3600, extra=extra,
                    log_name=f"reachd-fleet-{kind}-{count}")
    try:
        started = time.monotonic()
        try:
            server.wait_ready(timeout=cfg["fleet_start_seconds"])
        except TimeoutError:
            # Bounded: a reachd that takes minutes to start at this size is a finding, not a hang.
            raise TimeoutError(f"reachd did not answer /status within {cfg['fleet_start_seconds']:g} s of its start "
                               f"with {count:,} targets ({nsutil.cpu_ns(server.pid) / 1e9:.0f} s of CPU meanwhile)")
        except RuntimeError as error:
            raise RuntimeError(f"{error}: {log_tail(server.log_path)}")
        row_start_s = time.monotonic() - started
        settle_s = wait_reachd_settled(server, count, timeout=max(60, count / 100))
        round_end_s = wait_round_end(world, kind, timeout=2 * INTERVAL)
        row = measure(world, kind, count, cfg["fleet_window_seconds"], server.pid, [world.nginx_worker],
                      cfg["fleet_icmp_count"] + 1)
        row["nginx_cpu_pct"] = row.pop("others_cpu_pct")[0]
        row["start_s"], row["settle_s"], row["round_end_s"] = row_start_s, settle_s, round_end_s
        doc = json.loads(server.status_doc())
        row["targets_ok"] = sum(1 for t in doc.get("targets") or [] if t.get("state") == "reachable")
        row["log_bytes"] = os.path.getsize(server.log_path)
        if flaps:
            row.update(link_down_flaps(world.net, server, count, flaps, ("ipv4",)))
            row.pop("link_down_samples", None)  # per-flap documents of 10,000 targets: the summary is enough
        return row
    finally:
        server.stop()


def run_blackbox(ctx: dict, cfg: dict, world: FleetWorld, kind: str, count: int) -> dict:
    """blackbox_exporter driven by the scrape loop (or Prometheus) for `count` targets of `kind`
    every 10 s: one round (every target scraped once, at spread offsets) and 2 s more, then the
    window; only the exporter's CPU and RSS count, the scraper's is reported beside it."""
    box = Blackbox(world.ns, ctx["workdir"], f"{kind}-{count}")
    try:
        try:
            box.wait_ready()
        except RuntimeError as error:
            raise RuntimeError(f"{error}: {log_tail(box.log.name)}")
        box.scrape(kind, count, cfg["fleet_scraper"])
        time.sleep(INTERVAL + 2)
        loop = box.scraper_name == "loop"
        before = ask_counts(box.scraper) if loop else None
        row = measure(world, kind, count, cfg["fleet_window_seconds"], box.pid, [world.nginx_worker, box.scraper.pid],
                      1)
        row["nginx_cpu_pct"], row["scraper_cpu_pct"] = row.pop("others_cpu_pct")
        row["scraper"] = box.scraper_name
        row["scraper_rss_kib"] = nsutil.status_kib(box.scraper.pid)
        if loop:
            after = ask_counts(box.scraper) or {}
            row["scrapes"] = {k: v - (before or {}).get(k, 0) for k, v in after.items() if k != "targets_ok"}
            row["targets_ok"] = after.get("targets_ok")
        else:
            row["targets_ok"] = box.targets_ok()
            row["scrapes_up"] = box.query('sum(up{job="fleet"})')
        return row
    finally:
        box.stop()


def fleet_line(tool: str, t: dict) -> str:
    if "error" in t:
        return f"{tool} failed ({t['error']})"
    if not t["probes"]:  # a window shorter than the quiet between reachd's rounds (--seconds)
        return f"{tool} saw no probe in its {t['window_s']:.0f} s window, {t['cpu_pct']:.2f} % CPU"
    return (f"{tool} {t['cpu_us_per_probe'] or 0:.0f} µs CPU and {t['wakeups_per_probe'] or 0:.1f} wake-ups per "
            f"probe, "
            f"{t['probes']} probes of {t['probes_expected']:.0f}, {t['kib_per_target']:.2f} KiB per target "
            f"(else on the machine {t['else_cpu_pct']:.0f} % of a core)")


def phase_fleet(ctx: dict, cfg: dict, budget: Budget) -> dict:
    """For each kind and size: reachd, then blackbox_exporter (or the other way round: who goes
    first alternates), each alone with the same targets in the same namespaces over windows of
    equal length; per tool CPU and wake-ups per probe, RSS per target over its idle RSS, the probes
    the far side saw against those due. At the largest HTTP size reachd also does the link-down
    flaps (link_down.py): documents per link-down and the time to the one document."""
    window = cfg["fleet_window_seconds"]
    plan = [(kind, n) for n in sorted(set(cfg["fleet_sizes"]) | set(cfg["fleet_icmp_sizes"]))
            for kind in ("tcp", "http", "icmp")
            if n in (cfg["fleet_icmp_sizes"] if kind == "icmp" else cfg["fleet_sizes"])]
    flaps_at = max(cfg["fleet_sizes"]) if cfg["fleet_sizes"] else None
    out: dict = {"interval_s": INTERVAL, "timeout_s": TIMEOUT, "window_s": window,
                 "icmp_count": cfg["fleet_icmp_count"], "scraper": cfg["fleet_scraper"], "flaps": cfg["fleet_flaps"],
                 "flaps_at": flaps_at, "rows": [], "skipped": []}
    world = FleetWorld(ctx["workdir"])
    try:
        out["idle_rss_kib"] = idle_rss(ctx, world)
        log(f"fleet: idle RSS reachd {out['idle_rss_kib']['reachd']} KiB, blackbox_exporter "
            f"{out['idle_rss_kib']['blackbox']} KiB")
        for index, (kind, count) in enumerate(plan):
            flaps = cfg["fleet_flaps"] if kind == "http" and count == flaps_at else 0
            need = 2 * (window + 15 + count / 500) + 6 * flaps + cfg["fleet_start_seconds"] / 2
            if budget.left() < need + ctx["reserve"]:
                log(f"fleet: time budget reached, {kind} × {count} skipped ({budget.left():.0f}s left)")
                out["skipped"].append({"kind": kind, "targets": count})
                continue
            order = ("reachd", "blackbox") if index % 2 == 0 else ("blackbox", "reachd")
            row: dict = {"kind": kind, "targets": count, "order": list(order)}
            for tool in order:
                try:
                    if tool == "reachd":
                        row["reachd"] = run_reachd(ctx, cfg, world, kind, count, flaps)
                    else:
                        row["blackbox"] = run_blackbox(ctx, cfg, world, kind, count)
                except (TimeoutError, RuntimeError, OSError) as error:
                    # Recorded in its row; the other tool and the other sizes are still measured.
                    row[tool] = {"error": f"{type(error).__name__}: {error}"}
                    log(f"fleet {kind} × {count:,}: {tool} failed: {error}")
            idle = out["idle_rss_kib"]
            for tool in ("reachd", "blackbox"):
                t = row[tool]
                if t.get("rss_median_kib") is not None:
                    t["kib_per_target"] = (t["rss_median_kib"] - idle[tool]) / count
                    # Without the pages of code and libraries a tool maps on its first probe
                    # (reachd loads libcurl and c-ares then: several MiB, once).
                    t["kib_per_target_anon"] = (t["rss_anon_median_kib"] - idle["anon"][tool]) / count
            r, b = row["reachd"].get("cpu_us_per_probe"), row["blackbox"].get("cpu_us_per_probe")
            row["cpu_ratio"] = r / b if r is not None and b else None
            out["rows"].append(row)
            log(f"fleet {kind} × {count:,}: "
                + "; ".join(fleet_line(tool, row[tool]) for tool in ("reachd", "blackbox"))
                + (f"; reachd ÷ blackbox {row['cpu_ratio']:.2f}×" if row["cpu_ratio"] is not None else "")
                + (link_down_line(row["reachd"]) if "link_down" in row["reachd"] else ""))
        # Flatness: reachd's CPU per probe at N against the smallest size of the same kind; and RSS
        # per target at the margin (N against that size), without the fixed cost of the libraries.
        for kind in ("tcp", "http", "icmp"):
            rows = sorted((x for x in out["rows"] if x["kind"] == kind), key=lambda x: x["targets"])
            if not rows:
                continue
            base = rows[0]
            for x in rows:
                for tool in ("reachd", "blackbox"):
                    t, t0 = x[tool], base[tool]
                    if "error" in t or "error" in t0:
                        continue
                    a, b0 = t["cpu_us_per_probe"], t0["cpu_us_per_probe"]
                    t["flatness"] = a / b0 if a is not None and b0 else None
                    t["flatness_base"] = base["targets"]
                    if x is not base and t.get("rss_median_kib") is not None and t0.get("rss_median_kib") is not None:
                        added = x["targets"] - base["targets"]
                        # The judged figure: anonymous memory, what the targets hold. The pages of
                        # code beside it are not a target's: the paths first run at the larger
                        # size, each mapped with its neighbours 64 KiB at a time (the kernel's
                        # fault-around), as many as the page cache holds of the binary then.
                        t["kib_per_target_marginal_anon"] = (t["rss_anon_median_kib"] - t0["rss_anon_median_kib"]) / added
                        t["kib_per_target_marginal"] = (t["rss_median_kib"] - t0["rss_median_kib"]) / added
        return out
    finally:
        world.destroy()
