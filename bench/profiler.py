"""`--perf` and `--syscalls`: profiling reachd during one fan-out and one wrk run, so a
figure that moved can be explained by where the time went.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import nsutil
from common import log


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
