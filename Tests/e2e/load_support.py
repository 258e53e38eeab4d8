"""Sizes and process readings shared by the load tests (fuzzing, scale, slowloris, soak).

`REACHD_SCALE=full` selects the sizes the issue asks for (behind `make fuzz-http`, `make scale`,
`make soak`); anything else selects the reduced sizes that `make e2e` (CI) runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

CLIENTS_DIR = Path(__file__).resolve().parent / "clients"


def full_scale() -> bool:
    return os.environ.get("REACHD_SCALE", "") == "full"


def sized(name: str, ci: int, full: int) -> int:
    """`$name` if set, else the full or the CI size."""
    value = os.environ.get(name)
    if value:
        return int(value)
    return full if full_scale() else ci


def rss_kib(pid: int) -> int:
    """Resident set size (VmRSS) of `pid`, KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def build_client(name: str, output_dir: Path) -> Path:
    """Compile `clients/<name>.c` into `output_dir`; returns the executable."""
    executable = output_dir / name
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(executable), str(CLIENTS_DIR / f"{name}.c")],
                   check=True)
    return executable
