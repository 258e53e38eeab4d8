"""The figures of the load tests, printed and, in a full-size run, written as a report.

`figure(text)` prints a line of a test's figures (pytest `-s` shows it) and keeps it under the
running test. When `$REACHD_REPORT` names a file (`make fuzz-http`, `make scale` and `make soak`
name docs/reports/reliability-*.md), the session ends by writing every test's outcome and
figures there, headed by the date, commit, machine, binary and sizes: docs/RELIABILITY.md links to
those files instead of copying their numbers. `make e2e` (CI) names none and writes nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import provenance  # noqa: E402
from reachd_process import reachd_binary  # noqa: E402

REPORT_VARIABLE = "REACHD_REPORT"
# The knobs that set the sizes (load_support.sized) and the run; the report lists the ones set.
SIZE_VARIABLES = ("REACHD_SCALE", "REACHD_FUZZ_REQUESTS", "REACHD_FUZZ_SEED", "REACHD_SCALE_STREAMS",
                  "REACHD_SLOWLORIS_SECONDS", "REACHD_SOAK_SECONDS", "REACHD_BIN")

_context = provenance.capture() if os.environ.get(REPORT_VARIABLE) else None
_figures: dict[str, list[str]] = {}
_outcomes: dict[str, tuple[str, float]] = {}


def _current_test() -> str:
    # "Tests/e2e/test_scale.py::test_name (call)"
    return os.environ.get("PYTEST_CURRENT_TEST", "outside a test").rsplit(" ", 1)[0]


def figure(text: str) -> None:
    """Prints `text` and keeps its lines as figures of the running test."""
    print(text, flush=True)
    lines = [line for line in text.splitlines() if line.strip()]
    _figures.setdefault(_current_test(), []).extend(lines)


def outcome(nodeid: str, when: str, result: str, seconds: float) -> None:
    """Called for each phase (setup, call, teardown) of each test: the first that did not pass
    decides, and the time of every phase counts."""
    previous, duration = _outcomes.get(nodeid, ("passed", 0.0))
    if result != "passed" and previous == "passed":
        previous = result if when == "call" else f"{result} in {when}"
    _outcomes[nodeid] = (previous, duration + seconds)


def write(started_with: list[str]) -> str | None:
    """Writes the report if `$REACHD_REPORT` asks for one; returns its path."""
    path = os.environ.get(REPORT_VARIABLE)
    if not path or _context is None:
        return None
    binary = reachd_binary()
    try:
        version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except OSError as error:
        version = f"not runnable: {error}"
    sizes = [f"`{name}={os.environ[name]}`" for name in SIZE_VARIABLES if os.environ.get(name)]
    lines = provenance.header(
        "reachd reliability: " + ", ".join(Path(arg).stem for arg in started_with),
        # The Makefile names each report after its target: reliability-scale.md ← make scale.
        "sudo make " + Path(path).stem.removeprefix("reliability-"),
        _context,
        [f"reachd: `{version}`, `{os.path.relpath(binary, provenance.ROOT)}`",
         "sizes: " + (", ".join(sizes) if sizes else "the reduced sizes of `make e2e`"),
         f"finished: {time.strftime('%H:%M UTC', time.gmtime())}"],
    )
    lines += ["What each test asserts, and why these sizes, is in [RELIABILITY.md](../RELIABILITY.md).", ""]
    for nodeid in sorted(set(_outcomes) | set(_figures)):
        result, seconds = _outcomes.get(nodeid, ("not run", 0.0))
        lines += [f"## `{nodeid.split('::')[-1]}`", "", f"`{nodeid}`: **{result}** after {seconds:.0f} s", ""]
        lines += [f"- {line.strip()}" for line in _figures.get(nodeid, [])] or ["- (no figures)"]
        lines.append("")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(lines))
    return path
