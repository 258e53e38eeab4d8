"""Signals are never lost: SIGTERM (or SIGINT) always shuts reachd down, SIGHUP always reloads.

reachd blocks SIGTERM, SIGINT and SIGHUP in every thread from the first line of `main` and reads
them from a signalfd (`ProcessSignals`): no handler on some thread can take one and lose it, as
libdispatch's did under load. Here: SIGTERM at random moments during and just after a keep-alive
`/status` load with `/events` streams open, each try a process of its own, each needing the
`shutting down` line and exit 0 within 5 s; SIGTERM at random moments while reachd starts (never
lost); SIGHUP at random moments under the same load, each a reload and never an exit; every
thread's signal mask; and the client commands, which still end on Ctrl-C.
"""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import Conn, SSEClient
from reachd_process import Reachd, reachd_binary

TRIES = 100
EXIT_WITHIN = 5.0
SHUTTING_DOWN = "shutting down: readiness fails, new connections are refused"
THE_THREE = {"SIGHUP": signal.SIGHUP, "SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}


@pytest.fixture(scope="module")
def targets_file(tmp_path_factory) -> Path:
    """One targets file for every process: a SIGHUP reads it again and says so in the log."""
    path = tmp_path_factory.mktemp("signals") / "targets"
    path.write_text("self=host://127.0.0.1\n")
    return path


@pytest.fixture
def seeded() -> random.Random:
    """Random moments, reproducible: the seed is printed (REACHD_SIGNALS_SEED sets it)."""
    seed = int(os.environ.get("REACHD_SIGNALS_SEED", time.time_ns() % 1_000_000))
    print(f"\nseed {seed} (REACHD_SIGNALS_SEED={seed} repeats these moments)")
    return random.Random(seed)


def start(targets_file: Path) -> Reachd:
    server = Reachd("--targets-file", str(targets_file), "--log-format", "json")
    try:
        server.wait_ready()
    except BaseException:
        server.terminate(signal.SIGKILL)
        raise
    return server


def log_records(server: Reachd) -> list[dict]:
    """The JSON log lines so far (a line still being written is left for the next read)."""
    records = []
    for line in server.output().splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def messages(server: Reachd) -> list[str]:
    return [record.get("message", "") for record in log_records(server)]


def reloads_by_signal(server: Reachd) -> int:
    return sum(1 for r in log_records(server) if r.get("message") == "targets file applied" and r.get("cause") == "signal")


class Load:
    """Keep-alive connections asking `/status` back to back, each on a thread of its own, and SSE
    `/events` streams open beside them; until `stop()` or reachd closes them."""

    def __init__(self, port: int, connections: int = 4, streams: int = 3):
        self.port = port
        self.stopping = threading.Event()
        self.answered = 0
        self.lock = threading.Lock()
        self.streams = []
        for _ in range(streams):
            stream = SSEClient(port, timeout=2)
            stream.next_event(timeout=2)
            self.streams.append(stream)
        self.threads = [threading.Thread(target=self._ask, daemon=True) for _ in range(connections)]
        for thread in self.threads:
            thread.start()

    def _ask(self) -> None:
        try:
            with Conn.open(self.port, timeout=2) as conn:
                while not self.stopping.is_set():
                    response = conn.get("/status")
                    if response.status != 200:
                        return
                    with self.lock:
                        self.answered += 1
        except (OSError, Exception):
            # reachd shutting down closes the connection: the load ends there.
            return

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(5)

    def close(self) -> None:
        self.stop()
        for stream in self.streams:
            stream.close()


def wait_exit(server: Reachd, sent_at: float) -> float | None:
    """Seconds from the signal to the exit, or None when still running after EXIT_WITHIN."""
    try:
        server.process.wait(timeout=max(0.0, sent_at + EXIT_WITHIN - time.monotonic()))
    except subprocess.TimeoutExpired:
        return None
    return time.monotonic() - sent_at


def stop_for_good(server: Reachd) -> None:
    if server.process.poll() is None:
        server.process.kill()
        server.process.wait()
    server.log.close()
    try:
        server.log_path.unlink()
    except OSError:
        pass


def test_sigterm_at_random_moments_under_load_always_shuts_down(targets_file, seeded):
    """Each try: reachd under load with streams open; SIGTERM during the load or up to 0.2 s after it
    stopped; the `shutting down` line and exit 0 within 5 s, every time."""
    failures: list[str] = []
    exits: list[float] = []
    during = answered = 0
    started = time.monotonic()
    for attempt in range(TRIES):
        server = start(targets_file)
        load = None
        try:
            load = Load(server.port)
            load_for = seeded.uniform(0.02, 0.3)
            at = seeded.uniform(0.0, load_for + 0.2)
            if at < load_for:
                during += 1
                time.sleep(at)
                server.process.send_signal(signal.SIGTERM)
                sent_at = time.monotonic()
                time.sleep(load_for - at)
                load.stop()
            else:
                time.sleep(load_for)
                load.stop()
                time.sleep(at - load_for)
                server.process.send_signal(signal.SIGTERM)
                sent_at = time.monotonic()
            answered += load.answered
            took = wait_exit(server, sent_at)
            said = messages(server)
            if took is None:
                failures.append(f"try {attempt}: still running {EXIT_WITHIN} s after SIGTERM at {at:.3f} s "
                                f"(load {load_for:.3f} s); shutting down logged: {SHUTTING_DOWN in said}")
            elif server.process.returncode != 0:
                failures.append(f"try {attempt}: exit {server.process.returncode}")
            elif SHUTTING_DOWN not in said:
                failures.append(f"try {attempt}: no `shutting down` line")
            else:
                exits.append(took)
        finally:
            if load:
                load.close()
            if failures and failures[-1].startswith(f"try {attempt}:"):
                print(f"---- try {attempt}: reachd's log ----\n{server.output()[-3000:]}")
            stop_for_good(server)
    elapsed = time.monotonic() - started
    print(f"{TRIES} SIGTERM tries in {elapsed:.1f} s: {during} during the load, {TRIES - during} after it; "
          f"{answered} /status answers; exit after the signal: median {statistics.median(exits or [0]):.3f} s, "
          f"max {max(exits or [0]):.3f} s")
    assert not failures, f"{len(failures)}/{TRIES} tries lost the SIGTERM or failed: {failures[:5]}"


def test_sigterm_while_reachd_starts_is_never_lost(targets_file, seeded):
    """SIGTERM at a random moment from the exec to a little after it listens. Claimed (from the
    moment `serve` begins), it is kept and answered once the group runs: `shutting down`, exit 0.
    Before the command line is read it has its default action, as for any process not yet started:
    ended by SIGTERM with nothing logged. Never a reachd still running."""
    # How long a start takes here (after one to warm the caches): the moments are spread over it.
    stop_for_good(start(targets_file))
    spawn_to_ready = []
    for _ in range(3):
        began = time.monotonic()
        server = start(targets_file)
        spawn_to_ready.append(time.monotonic() - began)
        stop_for_good(server)
    window = max(spawn_to_ready) * 1.2
    outcomes = {"shut down": 0, "default action": 0}
    failures: list[str] = []
    for attempt in range(20):
        server = Reachd("--targets-file", str(targets_file), "--log-format", "json")
        try:
            time.sleep(seeded.uniform(0.0, window))
            server.process.send_signal(signal.SIGTERM)
            took = wait_exit(server, time.monotonic())
            said = messages(server)
            code = server.process.returncode
            if took is None:
                failures.append(f"try {attempt}: still running {EXIT_WITHIN} s after SIGTERM; logged {said}")
            elif code == 0 and SHUTTING_DOWN in said:
                outcomes["shut down"] += 1
            elif code == -signal.SIGTERM and not said:
                outcomes["default action"] += 1
            else:
                failures.append(f"try {attempt}: exit {code}, logged {said}")
        finally:
            stop_for_good(server)
    print(f"start to /livez: {', '.join(f'{s:.3f}' for s in spawn_to_ready)} s; SIGTERM within {window:.3f} s "
          f"of the exec, 20 tries: {outcomes}")
    assert not failures, failures


def test_sighup_at_random_moments_under_load_always_reloads_and_never_ends_reachd(targets_file, seeded):
    """100 SIGHUPs over 4 processes, each at a random moment under the load: each read and
    reported (`targets file applied`, cause `signal`) before the next is sent, reachd serving on;
    then SIGTERM ends each cleanly."""
    processes = 4
    per_process = TRIES // processes
    failures: list[str] = []
    waits: list[float] = []
    started = time.monotonic()
    for number in range(processes):
        server = start(targets_file)
        load = None
        try:
            load = Load(server.port)
            for attempt in range(per_process):
                time.sleep(seeded.uniform(0.0, 0.05))
                before = reloads_by_signal(server)
                server.process.send_signal(signal.SIGHUP)
                sent_at = time.monotonic()
                while reloads_by_signal(server) == before and time.monotonic() - sent_at < EXIT_WITHIN:
                    if server.process.poll() is not None:
                        break
                    time.sleep(0.002)
                if server.process.poll() is not None:
                    failures.append(f"process {number}, SIGHUP {attempt}: reachd exited {server.process.returncode}")
                    break
                if reloads_by_signal(server) == before:
                    failures.append(f"process {number}, SIGHUP {attempt}: no reload within {EXIT_WITHIN} s")
                    continue
                waits.append(time.monotonic() - sent_at)
            load.stop()
            assert load.answered > 0, "the load got no answer"
            server.process.send_signal(signal.SIGTERM)
            took = wait_exit(server, time.monotonic())
            if took is None or server.process.returncode != 0 or SHUTTING_DOWN not in messages(server):
                failures.append(f"process {number}: after its SIGHUPs, SIGTERM gave exit "
                                f"{server.process.returncode} after {took} s")
        finally:
            if load:
                load.close()
            stop_for_good(server)
    elapsed = time.monotonic() - started
    print(f"{len(waits)}/{TRIES} SIGHUPs reloaded in {elapsed:.1f} s ({processes} processes); signal to "
          f"reload line: median {statistics.median(waits or [0]) * 1000:.1f} ms, max {max(waits or [0]) * 1000:.1f} ms")
    assert not failures, failures[:5]


def signal_mask(text: str, field: str) -> int:
    for line in text.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1], 16)
    raise AssertionError(f"no {field} in {text}")


def test_every_thread_blocks_the_three_and_no_handler_takes_them(targets_file):
    """Under load, with every thread made: each blocks SIGTERM, SIGINT and SIGHUP (a thread that did
    not could take one), and no handler is installed for them."""
    server = start(targets_file)
    load = Load(server.port)
    try:
        time.sleep(0.2)
        tasks = Path(f"/proc/{server.process.pid}/task")
        threads = {}
        for task in tasks.iterdir():
            try:
                status = (task / "status").read_text()
            except OSError:
                continue  # a thread that ended meanwhile
            name = (task / "comm").read_text().strip()
            threads[f"{name}/{task.name}"] = status
        assert len(threads) > 3, threads.keys()
        for thread, status in threads.items():
            blocked = signal_mask(status, "SigBlk")
            caught = signal_mask(status, "SigCgt")
            for name, number in THE_THREE.items():
                assert blocked & (1 << (number - 1)), f"{thread} does not block {name}"
                assert not caught & (1 << (number - 1)), f"a handler is installed for {name}"
        print(f"\n{len(threads)} threads, each blocking SIGHUP, SIGINT and SIGTERM: {sorted(threads)}")
    finally:
        load.close()
        assert server.terminate(signal.SIGTERM) == 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_watch_still_ends_on_ctrl_c_and_sigterm(sig):
    """The client commands claim no signal: each ends the process by its default action, as before."""
    server = Reachd("--heartbeat", "0.2")
    watch = None
    try:
        server.wait_ready()
        watch = subprocess.Popen([reachd_binary(), "watch", "--port", str(server.port)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = watch.stdout.readline()
        assert "#" in first, first
        watch.send_signal(sig)
        assert watch.wait(timeout=5) == -sig, watch.stderr.read()
        assert server.process.poll() is None, "only watch ended"
    finally:
        if watch and watch.poll() is None:
            watch.kill()
            watch.wait()
        assert server.terminate(signal.SIGTERM) == 0
