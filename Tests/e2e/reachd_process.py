"""Start and stop the real reachd binary for black-box tests.

Every test talks to a running process over real sockets; nothing here mocks reachd.
"""

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def reachd_binary() -> str:
    """The binary under test: $REACHD_BIN, else the debug build."""
    return os.environ.get("REACHD_BIN", str(ROOT / ".build" / "debug" / "reachd"))


_ports_given: set[int] = set()


def free_port() -> int:
    """A port free now and never handed out before in this run: the kernel may pick the same one
    again once the probing socket is closed, and two reachds started together then shared it —
    the second failed to listen while the first answered its readiness check (CI, once)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _ports_given:
            _ports_given.add(port)
            return port


class Reachd:
    """One reachd process; optionally inside a network namespace (`netns`)."""

    def __init__(self, *args: str, netns: str | None = None, port: int | None = None, env: dict | None = None):
        self.port = port or free_port()
        self.netns = netns
        command = [reachd_binary(), "--host", "127.0.0.1", "--port", str(self.port), *args]
        if netns:
            command = ["ip", "netns", "exec", netns, *command]
        self.log_path = Path(f"/tmp/reachd-test-{os.getpid()}-{self.port}.log")
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            command, stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float = 15.0) -> None:
        """Wait until /livez answers (reachd's monitor is seeded before it listens)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"reachd exited with {self.process.returncode}: {self.output()}")
            try:
                if self.netns:
                    # The port lives in the namespace: ask from inside it.
                    ok = subprocess.run(
                        ["ip", "netns", "exec", self.netns, "curl", "-sf", "-o", "/dev/null", f"{self.base}/livez"],
                        timeout=5,
                    ).returncode == 0
                else:
                    with urllib.request.urlopen(f"{self.base}/livez", timeout=2) as response:
                        ok = response.status == 200
                if ok:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise TimeoutError(f"reachd did not answer /livez: {self.output()}")

    def output(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def terminate(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        """Send `sig` and wait; returns the exit code. Kills after `timeout`."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        return self.process.returncode

    def __enter__(self) -> "Reachd":
        try:
            self.wait_ready()
        except Exception:
            self.terminate(signal.SIGKILL)
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.terminate()
        try:
            self.log_path.unlink()
        except OSError:
            pass
