"""Phase `startup`: exec → first `200` on `/readyz`, the idle RSS and the binary's size — what
reachd costs before it does anything.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time

import nsutil
from common import log, summary
from nsutil import VethNet


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
