"""Graceful shutdown: readyz 503, new connections refused, every stream ends cleanly, exit 0 in time."""

from __future__ import annotations

import selectors
import signal
import socket
import time

import pytest

from conftest import Conn, SSEClient, outcome_of, raise_nofile
from netns import socket_in

SHUTDOWN_TIMEOUT = 5.0


def end_all_streams(clients: list[SSEClient], process, deadline: float) -> tuple[dict, float | None]:
    """Read every client until EOF/reset; note when the process exited. Returns (endings, exit time)."""
    selector = selectors.DefaultSelector()
    endings: dict[int, str] = {}
    for index, client in enumerate(clients):
        client.sock.setblocking(False)
        selector.register(client.sock, selectors.EVENT_READ, index)
    exited_at = None
    while len(endings) < len(clients) and time.monotonic() < deadline:
        for key, _ in selector.select(0.05):
            client = clients[key.data]
            try:
                data = client.sock.recv(65536)
            except BlockingIOError:
                continue
            except ConnectionResetError:
                endings[key.data] = "reset"
                selector.unregister(key.fileobj)
                continue
            if not data:
                endings[key.data] = "eof"
                selector.unregister(key.fileobj)
                continue
            client.reader.feed(data)
        if exited_at is None and process.poll() is not None:
            exited_at = time.monotonic()
    selector.close()
    return endings, exited_at


def wait_exit(process, deadline: float, exited_at: float | None) -> float | None:
    while exited_at is None and time.monotonic() < deadline:
        if process.poll() is not None:
            return time.monotonic()
        time.sleep(0.01)
    return exited_at


def check_clean_end(client: SSEClient, ending: str | None) -> None:
    reader = client.reader
    assert ending == "eof", f"stream ended with {ending!r} instead of a clean EOF"
    assert reader.done, f"no final zero-length chunk; raw tail {reader.chunks.raw_tail!r}"
    assert reader.chunks.raw_tail.endswith(b"0\r\n\r\n"), reader.chunks.raw_tail
    kinds = [item[0] for item in reader.items]
    assert "event" in kinds, reader.items
    last_event = max(i for i, kind in enumerate(kinds) if kind == "event")
    assert "retry" in kinds[last_event + 1:], f"no retry: line after the last event: {reader.items[-4:]}"
    assert reader.pending == b"", f"stream ended mid-line: {reader.pending!r}"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_shutdown_with_200_streams(reachd_factory, sig):
    raise_nofile()
    server = reachd_factory("--shutdown-timeout", str(SHUTDOWN_TIMEOUT))
    clients = [SSEClient(server.port) for _ in range(200)]
    try:
        for client in clients:
            client.next_event(timeout=2)
        started = time.monotonic()
        server.process.send_signal(sig)
        endings, exited_at = end_all_streams(clients, server.process, started + SHUTDOWN_TIMEOUT + 3)
        exited_at = wait_exit(server.process, started + SHUTDOWN_TIMEOUT + 3, exited_at)
        streams_done = time.monotonic() - started
        problems = []
        for index, client in enumerate(clients):
            try:
                check_clean_end(client, endings.get(index))
            except AssertionError as error:
                problems.append(str(error).splitlines()[0])
        assert not problems, f"{len(problems)}/200 streams did not end cleanly, e.g. {sorted(set(problems))[:3]}"
        final_retries = [client.reader.retries[-1] for client in clients]
        print(f"\n{sig.name}: 200 streams ended in {streams_done:.2f}s; final retry "
              f"{min(final_retries)}..{max(final_retries)} ms ({len(set(final_retries))} distinct)")
        assert exited_at is not None, f"reachd still running {SHUTDOWN_TIMEOUT + 3}s after {sig.name}"
        assert server.process.returncode == 0, server.output()[-3000:]
        assert exited_at - started <= SHUTDOWN_TIMEOUT, f"exit took {exited_at - started:.2f}s"
        assert all(r > 0 for r in final_retries)
        assert len(set(final_retries)) > 1, f"final retry has no jitter: all {final_retries[0]} ms"
    finally:
        for client in clients:
            client.close()


def test_quick_exit_without_clients(reachd_factory):
    server = reachd_factory()
    started = time.monotonic()
    code = server.terminate(signal.SIGTERM, timeout=SHUTDOWN_TIMEOUT + 5)
    assert code == 0, server.output()[-3000:]
    assert time.monotonic() - started < 3.0


def readyz_turns_503(conn: Conn, started: float, within: float = 0.5) -> str:
    """Ask /readyz on an already open connection until it is 503 (or the connection closes).

    Answers of 200 are tolerated only in the first `within` seconds after the signal (its
    delivery is asynchronous); after that a 200 is a failure. Returns "503" or "closed".
    """
    while True:
        try:
            conn.request("GET", "/readyz")
        except (BrokenPipeError, ConnectionResetError):
            return "closed"
        try:
            kind, response = outcome_of(conn, timeout=3)
        except socket.timeout:
            pytest.fail("/readyz on an open connection hung during shutdown")
        if kind == "closed":
            return "closed"
        if response.status == 503:
            assert response.content_type == "application/health+json"
            assert response.json()["status"] == "fail"
            return "503"
        assert response.status == 200, response
        assert time.monotonic() - started < within, "/readyz still 200 0.5 s after the signal"
        time.sleep(0.01)


def probe(port: int, timeout: float = 2.0) -> str:
    """One new connection asking /readyz: "refused", "closed", "503", "200", … never a hang."""
    sock = socket.socket()
    sock.settimeout(timeout)
    try:
        try:
            sock.connect(("127.0.0.1", port))
        except ConnectionRefusedError:
            return "refused"
        except socket.timeout:
            return "connect-hang"
        conn = Conn(sock)
        try:
            conn.request("GET", "/readyz", {"Connection": "close"})
        except (BrokenPipeError, ConnectionResetError):
            return "closed"
        try:
            kind, response = outcome_of(conn, timeout=timeout)
        except socket.timeout:
            return "hang"
        return "closed" if kind == "closed" else str(response.status)
    finally:
        sock.close()


def test_readyz_and_new_connections_during_shutdown(reachd_factory):
    server = reachd_factory("--shutdown-timeout", str(SHUTDOWN_TIMEOUT))
    clients = [SSEClient(server.port) for _ in range(200)]
    keep_alive = Conn.open(server.port)
    try:
        assert keep_alive.get("/livez").status == 200
        for client in clients:
            client.next_event(timeout=2)
        assert keep_alive.get("/livez").status == 200
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        # In-flight keep-alive connection: /readyz says 503, or the connection is closed.
        print(f"\n/readyz on an open connection after SIGTERM: {readyz_turns_503(keep_alive, started)}")
        outcomes = []
        while server.process.poll() is None and time.monotonic() - started < SHUTDOWN_TIMEOUT + 2:
            outcomes.append(probe(server.port))
            if outcomes[-1] == "refused":
                break
        assert "hang" not in outcomes and "connect-hang" not in outcomes, outcomes
        late = [o for o in outcomes[1:] if o not in ("refused", "closed", "503")]
        assert not late, f"new connections answered during shutdown: {outcomes}"
        for client in clients:
            client.sock.settimeout(SHUTDOWN_TIMEOUT + 2)
        endings, exited_at = end_all_streams(clients, server.process, started + SHUTDOWN_TIMEOUT + 3)
        wait_exit(server.process, started + SHUTDOWN_TIMEOUT + 3, exited_at)
        assert server.process.returncode == 0
        assert probe(server.port) == "refused"
    finally:
        keep_alive.close()
        for client in clients:
            client.close()


@pytest.mark.netns
@pytest.mark.slow
def test_refused_while_a_stuck_stream_holds_the_shutdown(veth, reachd_factory):
    """A client that stopped reading keeps the drain busy until the deadline. Meanwhile:
    /readyz is 503 on open connections, new connections are refused at once, and the
    process still exits 0 within --shutdown-timeout."""
    ns = veth.ns.name
    # 3000 addresses: a ~50 KB document, so 100 changes fill even a 4 MiB socket send buffer.
    commands = "".join(f"addr add 198.19.{j}.{i}/32 dev {veth.link}\n" for j in range(12) for i in range(1, 251))
    veth.ns.exec("ip", "-batch", "-", input=commands.encode(), check=True, capture_output=True)
    timeout = 4.0
    server = reachd_factory("--shutdown-timeout", str(timeout), "--heartbeat", "0.05", netns=ns)

    stuck = socket_in(ns)
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    stuck.settimeout(5)
    stuck.connect(("127.0.0.1", server.port))
    stuck.sendall(b"GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
    watcher = SSEClient(server.port, ns=ns)
    keep_alive = Conn.open(server.port, ns=ns)
    try:
        # A first request right away: a connection that never sends one may be closed early.
        assert keep_alive.get("/livez").status == 200
        watcher.next_event(timeout=2)
        # Fill the stuck client's pipe with large documents.
        for round_number in range(100):
            remove = round_number % 2 == 0
            (veth.del_default_route if remove else veth.add_default_route)()
            state = "unreachable" if remove else "reachable"
            watcher.wait_for(lambda d, s=state: d["state"] == s, timeout=5)
        veth.add_default_route()
        assert keep_alive.get("/livez").status == 200

        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        print(f"\n/readyz on an open connection after SIGTERM: {readyz_turns_503(keep_alive, started)}")

        def ns_probe() -> str:
            sock = socket_in(ns)
            sock.settimeout(2)
            try:
                sock.connect(("127.0.0.1", server.port))
            except ConnectionRefusedError:
                return "refused"
            except socket.timeout:
                return "connect-hang"
            finally:
                sock.close()
            return "accepted"

        outcomes = []
        refused_while_running = False
        while server.process.poll() is None and time.monotonic() - started < timeout + 2:
            outcomes.append(ns_probe())
            if outcomes[-1] == "refused" and server.process.poll() is None:
                refused_while_running = True
                break
            time.sleep(0.02)
        print(f"\nprobes after SIGTERM: {outcomes[:5]}… ({len(outcomes)}), refused while running: "
              f"{refused_while_running}, {time.monotonic() - started:.2f}s after SIGTERM")
        assert "connect-hang" not in outcomes
        end = watcher.read_to_end(timeout=timeout + 2)
        assert end == "eof", end
        assert watcher.reader.done
        deadline = started + timeout + 2
        while server.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        elapsed = time.monotonic() - started
        assert server.process.poll() is not None, f"still running {elapsed:.1f}s after SIGTERM"
        assert server.process.returncode == 0
        assert elapsed <= timeout + 0.5, f"exit took {elapsed:.2f}s with --shutdown-timeout {timeout}"
        print(f"exit {elapsed:.2f}s after SIGTERM")
        assert refused_while_running, f"no refusal observed while reachd was still running: {outcomes}"
    finally:
        stuck.close()
        watcher.close()
        keep_alive.close()
