"""The machine a run measured on, for the report: a shared VM's load moves every figure, so
the report says what the machine was and how busy it was.
"""

from __future__ import annotations

import os
import platform


def cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def machine() -> dict:
    info = {"kernel": platform.release(), "cores": os.cpu_count(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
        with open("/proc/meminfo") as f:
            info["memory_gib"] = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
        with open("/etc/os-release") as f:
            info["os"] = next((line.split("=", 1)[1].strip().strip('"') for line in f
                               if line.startswith("PRETTY_NAME=")), "?")
        with open("/proc/loadavg") as f:
            info["loadavg_at_start"] = f.read().split()[:3]
    except OSError:
        pass
    info["hypervisor"] = "yes" if "hypervisor" in open("/proc/cpuinfo").read() else "not reported"
    return info
