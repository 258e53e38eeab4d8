#!/usr/bin/env python3
"""Measures what a hostile or greedy client can cost a release reachd, for docs/THREAT-MODEL.md.

Every figure comes from a real reachd on 127.0.0.1 in a network namespace of its own (lo, plus a
veth pair inside it with a default route so the document looks like a pod's; nothing leaves the
namespace). Run as root; prints one Markdown table row per figure, with how it was taken, and with
`--report PATH` writes them as a report headed by the date, commit and machine
(`make measure-limits` writes docs/reports/limits.md).

  memory per idle SSE stream   VmRSS before and after N streams that each read their first event
  idle CPU of N streams        utime+stime (/proc/PID/stat) over two heartbeats
  CPU per request              utime+stime over a wrk run, divided by wrk's request count
  connection limit             --max-connections 50: 50 held open, what the 51st sees, then room again
  request head limit           bisection of one header's size / the query's length: last 200, first refusal
  timeouts                     seconds until reachd closes: silent new connection, half a request,
                               a keep-alive connection after a request, a byte every 1.5 s
  stalled readers              RSS before/after 300 changes with 100 /events clients that never read

Usage: sudo python3 scripts/measure-limits.py [--streams N] [--binary PATH] [--report PATH]
       (make measure-limits builds the release binary as the Dockerfile does, then runs this)
"""

import argparse
import json
import os
import re
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import provenance  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------------ the namespace
def in_namespace(arguments):
    """Runs this script again inside a fresh namespace, and removes the namespace afterwards."""
    name = f"limits-{os.getpid()}-m"
    run = lambda *command: subprocess.run(command, check=True)
    run("ip", "netns", "add", name)
    try:
        run("ip", "-n", name, "link", "set", "lo", "up")
        run("ip", "-n", name, "link", "add", "veth0", "type", "veth", "peer", "name", "veth1")
        run("ip", "-n", name, "address", "add", "198.18.0.1/24", "dev", "veth0")
        run("ip", "-n", name, "link", "set", "veth0", "up")
        run("ip", "-n", name, "link", "set", "veth1", "up")
        run("ip", "-n", name, "route", "add", "default", "via", "198.18.0.2", "dev", "veth0")
        environment = dict(os.environ, MEASURE_NAMESPACE=name)
        # nsenter rather than `ip netns exec`, which mounts a sysfs of the namespace over /sys and
        # so hides /sys/fs/cgroup (the memory-limit figure makes a cgroup).
        return subprocess.run(
            ["nsenter", f"--net=/run/netns/{name}", sys.executable, __file__, *arguments], env=environment
        ).returncode
    finally:
        pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout.split()
        for pid in pids:  # only this run's processes live in this run's namespace
            try:
                os.kill(int(pid), 9)
            except ProcessLookupError:
                pass
        subprocess.run(["ip", "netns", "delete", name])


# ------------------------------------------------------------------------ reachd and /proc
class Reachd:
    def __init__(self, binary, port, *options):
        self.port = port
        self.log = open(f"/tmp/measure-limits-{os.getpid()}-{port}.log", "w+")
        self.process = subprocess.Popen(
            [binary, "--host", "127.0.0.1", "--port", str(port), *options], stdout=self.log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if get(port, "/livez")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise SystemExit(f"reachd on port {port} did not answer within 15 s")

    def status(self):
        text = open(f"/proc/{self.process.pid}/status").read()
        return {key: int(re.search(rf"^{key}:\s+(\d+)", text, re.M).group(1)) for key in ("VmRSS", "RssAnon", "Threads")}

    def cpu_seconds(self):
        fields = open(f"/proc/{self.process.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15)

    def descriptors(self):
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def metric(self, name):
        body = get(self.port, "/metrics")[1].decode()
        return float(re.search(rf"^{name} (\S+)$", body, re.M).group(1))

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)
        self.log.close()
        os.unlink(self.log.name)


def get(port, path, head=b""):
    """One request on a fresh connection: (status, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        answer = b""
        try:
            connection.sendall(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + head + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused before the whole head was sent: the answer (if any) is already here
        try:
            while chunk := connection.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0
    return status, answer.split(b"\r\n\r\n", 1)[-1]


def seconds_until_closed(connection, limit):
    """Seconds until the server closes `connection` (reads and discards what it sends)."""
    started = time.monotonic()
    connection.settimeout(limit)
    try:
        while connection.recv(65536):
            pass
    except (TimeoutError, socket.timeout):
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - started


# ------------------------------------------------------------------------ streams
def first_event_complete(received):
    start = received.find(b"\ndata: ")
    return start >= 0 and received.find(b"\n\n", start) >= 0


def open_streams(port, count, read=True, refused=None):
    """`count` /events connections; with `read`, each has received its first event. With a
    `refused` list, connections closed before their first event are put there (closed) instead of
    failing the measurement."""
    selector = selectors.DefaultSelector()
    streams, pending = [], {}
    for index in range(count):
        connection = socket.create_connection(("127.0.0.1", port), timeout=10)
        if not read:
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        connection.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        streams.append(connection)
        if read:
            connection.setblocking(False)
            selector.register(connection, selectors.EVENT_READ)
            pending[connection] = b""
        if read and (index % 200 == 199 or index == count - 1):
            deadline = time.monotonic() + 30
            while pending and time.monotonic() < deadline:
                for key, _ in selector.select(timeout=1):
                    try:
                        data = key.fileobj.recv(65536)
                    except ConnectionResetError:
                        data = b""
                    if not data and refused is not None:
                        selector.unregister(key.fileobj)
                        del pending[key.fileobj]
                        streams.remove(key.fileobj)
                        refused.append(key.fileobj)
                        key.fileobj.close()
                        continue
                    if not data:
                        raise SystemExit("a stream was closed before its first event")
                    pending[key.fileobj] += data
                    if first_event_complete(pending[key.fileobj]):
                        selector.unregister(key.fileobj)
                        del pending[key.fileobj]
            if pending:
                raise SystemExit(f"{len(pending)} streams got no first event within 30 s")
    return streams


# ------------------------------------------------------------------------ the figures
rows = []


def row(limit, figure, how):
    rows.append((limit, figure, how))
    print(f"| {limit} | {figure} | {how} |", flush=True)


def memory_per_stream(binary, count):
    server = Reachd(binary, 9478)
    get(9478, "/status")
    for stream in open_streams(9478, 20):  # the hub's first allocations, not counted
        stream.close()
    time.sleep(1)
    before, descriptors_before = server.status(), server.descriptors()
    streams = open_streams(9478, count)
    time.sleep(2)
    after, descriptors_after = server.status(), server.descriptors()
    clients = server.metric("reachd_sse_clients")
    per_stream = (after["VmRSS"] - before["VmRSS"]) / count
    document = len(get(9478, "/status")[1])
    row(
        "memory per SSE stream (`--connection-memory`, default 8192 B)",
        f"**{per_stream:.2f} KiB** per idle stream (VmRSS {before['VmRSS'] / 1024:.1f} → {after['VmRSS'] / 1024:.1f} MiB "
        f"with {count} streams; anonymous {(after['RssAnon'] - before['RssAnon']) / count:.2f} KiB/stream); "
        f"threads {before['Threads']} → {after['Threads']}; descriptors {descriptors_before} → {descriptors_after}",
        f"VmRSS delta / N for N = {count} streams that each received their first event "
        f"(reachd_sse_clients {clients:.0f}; document {document} B); kernel socket buffers are not in RSS",
    )
    cpu_before = server.cpu_seconds()
    time.sleep(31)
    cpu = server.cpu_seconds() - cpu_before
    row(
        "idle streams (`--heartbeat`, default 15 s)",
        f"{cpu * 1000:.0f} ms CPU over 31 s with {count} idle streams ({cpu / 31 * 100:.2f} % of a core; "
        f"{cpu / (2 * count) * 1e6:.0f} µs per stream per heartbeat)",
        "utime+stime from /proc/PID/stat over two heartbeats",
    )
    for stream in streams:
        stream.close()
    deadline = time.monotonic() + 20
    while server.metric("reachd_sse_clients") > 0 and time.monotonic() < deadline:
        time.sleep(0.5)
    row(
        "a client that leaves",
        f"{count} closed streams freed after ≤ one heartbeat (reachd_sse_clients {server.metric('reachd_sse_clients'):.0f}); "
        f"VmRSS then {server.status()['VmRSS'] / 1024:.1f} MiB",
        "a suspended stream cannot see its client leave; the next heartbeat's write finds it",
    )
    return server


def memory_cgroup(limit_bytes):
    """A child of this process's memory cgroup (v2 or v1) limited to `limit_bytes`: (directory,
    the file that reports its usage), or None when this machine does not allow one."""
    lines = open("/proc/self/cgroup").read().splitlines()
    unified = os.path.exists("/sys/fs/cgroup/cgroup.controllers")
    try:
        if unified:
            own = next(line.split(":", 2)[2] for line in lines if line.startswith("0::"))
            directory = f"/sys/fs/cgroup{own.rstrip('/')}/measure-limits-{os.getpid()}"
            os.mkdir(directory)
            open(f"{directory}/memory.max", "w").write(str(limit_bytes))
            return directory, "memory.current"
        own = next(line.split(":", 2)[2] for line in lines if ":memory:" in line)
        directory = f"/sys/fs/cgroup/memory{own.rstrip('/')}/measure-limits-{os.getpid()}"
        os.mkdir(directory)
        open(f"{directory}/memory.limit_in_bytes", "w").write(str(limit_bytes))
        return directory, "memory.usage_in_bytes"
    except (OSError, StopIteration):
        return None


def streams_under_memory_limit(binary, *options, limit_mib=64, step=500, attempts=10000):
    """reachd in a memory cgroup of the Kubernetes manifests' limit: how many streams it holds,
    and whether the limit kills it first."""
    cgroup = memory_cgroup(limit_mib << 20)
    if cgroup is None:
        row(f"streams under a {limit_mib} MiB memory limit", "not measured: no memory cgroup could be made here", "")
        return
    directory, usage_file = cgroup
    join = lambda: open(f"{directory}/cgroup.procs", "w").write(str(os.getpid()))
    port = 9482
    log = open(f"/tmp/measure-limits-{os.getpid()}-{port}.log", "w+")
    process = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(port), *options], stdout=log,
                               stderr=subprocess.STDOUT, preexec_fn=join)
    streams, refused, tried, usage = [], [], 0, []
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if get(port, "/livez")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        while tried < attempts and process.poll() is None:
            try:
                streams += open_streams(port, step, refused=refused)
            except (OSError, SystemExit):
                break
            tried += step
            time.sleep(0.5)
            usage.append((len(streams), int(open(f"{directory}/{usage_file}").read()) >> 20))
        time.sleep(1)
        ended = process.poll()
        if ended is not None:
            how = (f"**killed (exit {ended}, the limit's OOM kill) while {len(streams):,} streams were open "
                   f"and {step} more were opening**")
        else:
            how = f"alive, holding {len(streams):,} streams; {len(refused):,} more were closed at once"
        shown = sorted(set(usage[::4] + usage[-1:]))
        row(
            f"streams under a {limit_mib} MiB memory limit (the manifests'), {' '.join(options) or 'default --max-connections'}",
            f"{how}; the cgroup's usage: " + ", ".join(f"{n:,} streams → {mib} MiB" for n, mib in shown),
            f"reachd in a memory cgroup ({usage_file}) of {limit_mib} MiB; up to {attempts:,} streams, {step} at a time",
        )
    finally:
        for stream in streams:
            stream.close()
        if process.poll() is None:
            process.kill()
        process.wait()
        log.close()
        os.unlink(log.name)
        time.sleep(0.5)
        os.rmdir(directory)


def cpu_per_request(server, paths, seconds=6, repetitions=3):
    """Keep-alive requests on each path, then `/status` on a new connection each time (wrk
    reconnects after `Connection: close`): what a client that opens connections as fast as it can
    costs."""
    closing = " -H 'Connection: close'"
    for path, extra in [(path, []) for path in paths] + [("/status", ["-H", "Connection: close"])]:
        figures = []
        for _ in range(repetitions):
            before = server.cpu_seconds()
            output = subprocess.run(
                ["wrk", "-t1", "-c16", f"-d{seconds}s", *extra, f"http://127.0.0.1:{server.port}{path}"],
                capture_output=True, text=True, check=True,
            ).stdout
            cpu = server.cpu_seconds() - before
            requests = int(re.search(r"(\d+) requests in", output).group(1))
            rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
            figures.append((cpu / requests * 1e6, rate))
        micros = statistics.median(f[0] for f in figures)
        rate = statistics.median(f[1] for f in figures)
        row(
            f"CPU per `GET {path}`" + (", a new connection each" if extra else ""),
            f"**{micros:.1f} µs** CPU per request; {rate:,.0f} requests/s with wrk on the same 2 cores",
            f"utime+stime over `wrk -t1 -c16 -d{seconds}s{closing if extra else ''}` / requests, median of {repetitions}",
        )


def probe_during_flood(server, seconds=8):
    """How long the kubelet's /readyz waits while another client floods /status as fast as it can."""
    flood = subprocess.Popen(["wrk", "-t2", "-c64", f"-d{seconds}s", f"http://127.0.0.1:{server.port}/status"],
                             stdout=subprocess.PIPE, text=True)
    time.sleep(1)
    latencies = []
    while flood.poll() is None and len(latencies) < 5 * (seconds - 2):
        started = time.monotonic()
        status = get(server.port, "/readyz")[0]
        latencies.append((time.monotonic() - started) * 1000)
        assert status in (200, 503)
        time.sleep(0.2)
    output = flood.communicate()[0]
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    latencies.sort()
    row(
        "a request flood (`--threads`, default 2: no rate limit)",
        f"`GET /readyz` on a new connection during a flood of {rate:,.0f} `/status` requests/s: median "
        f"{statistics.median(latencies):.1f} ms, worst {latencies[-1]:.1f} ms of {len(latencies)}",
        f"`wrk -t2 -c64` on /status for {seconds} s, and a /readyz every 0.2 s beside it",
    )


def connection_limit(binary):
    limit, port = 50, 9480
    server = Reachd(binary, port, "--max-connections", str(limit))
    held = []
    for _ in range(limit):
        connection = socket.create_connection(("127.0.0.1", port), timeout=10)
        connection.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n")
        connection.recv(65536)
        held.append(connection)
    extra = socket.create_connection(("127.0.0.1", port), timeout=10)
    started = time.monotonic()
    try:
        extra.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = extra.recv(65536)
        seen = "end of stream, no bytes" if not answer else f"{answer[:40]!r}"
    except ConnectionResetError:
        seen = "connection reset, no bytes"
    refused_after = (time.monotonic() - started) * 1000
    extra.close()
    held.pop().close()
    time.sleep(0.3)
    status = get(port, "/status")[0]
    row(
        "open connections (`--max-connections`, default 10000)",
        f"connection {limit + 1} of a limit of {limit}: the handshake completes, then {seen} after {refused_after:.2f} ms; "
        f"one closed → the next is served ({status})",
        f"{limit} keep-alive connections held after one request each, then one more",
    )
    for connection in held:
        connection.close()
    server.stop()


def head_limits(binary, default_server):
    def with_header(port, size):
        return get(port, "/status", b"X-Pad: " + b"a" * size + b"\r\n")[0]

    def with_query(port, size):
        return get(port, "/status?" + "a" * size)[0]

    def with_headers(port, count):
        return get(port, "/status", b"".join(b"X-H%d: v\r\n" % index for index in range(count)))[0]

    def first(probe, port, accepted):
        """The smallest size whose answer is not `accepted(answer)`, between 0 and 2^17."""
        low, high = 0, 1 << 17
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if accepted(probe(port, middle)) else (low, middle)
        return high

    def edges(probe, port):
        """Last size served, and the first size that gets an HTTP refusal (with its code)."""
        refused = first(probe, port, lambda answer: answer in (0, 200))
        return first(probe, port, lambda answer: answer == 200) - 1, refused, probe(port, refused)

    for memory, port in ((8192, default_server.port), (65536, 9481)):
        server = Reachd(binary, port, "--connection-memory", str(memory)) if memory != 8192 else None
        header, query, count = edges(with_header, port), edges(with_query, port), edges(with_headers, port)

        def described(edge, unit):
            served, refused, code = edge
            window = f"; in between, closed without an answer" if refused > served + 1 else ""
            return f"up to {served:,} {unit} served, from {refused:,} **{code}**{window}"

        row(
            f"request head (`--connection-memory {memory}`)",
            f"one header's value: {described(header, 'B')}; the query: {described(query, 'B')} "
            f"(a request line longer than the whole buffer, {2 * memory:,} B: **{with_query(port, 2 * memory)}**); "
            f"short headers (`X-Hn: v`): {described(count, 'headers')}",
            "bisection over one `X-Pad` header's length, `/status?aaa…`'s length, and a count of short headers",
        )
        if server:
            server.stop()


def timeouts(server):
    results = {}

    def silent():
        with socket.create_connection(("127.0.0.1", server.port)) as connection:
            results["silent"] = seconds_until_closed(connection, 60)

    def half_request():
        with socket.create_connection(("127.0.0.1", server.port)) as connection:
            connection.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n")
            results["half"] = seconds_until_closed(connection, 60)

    def keep_alive():
        with socket.create_connection(("127.0.0.1", server.port)) as connection:
            connection.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n")
            time.sleep(0.2)
            connection.recv(65536)
            results["idle"] = seconds_until_closed(connection, 90)

    def trickle():
        with socket.create_connection(("127.0.0.1", server.port)) as connection:
            connection.sendall(b"GET /status HTTP/1.1\r\nX: ")
            sent, started = 0, time.monotonic()
            connection.settimeout(0.01)
            while time.monotonic() - started < 30:
                time.sleep(1.5)
                try:
                    connection.sendall(b"a")
                    sent += 1
                    if connection.recv(1) == b"":
                        break
                except (TimeoutError, socket.timeout):
                    pass
                except OSError:
                    break
            results["trickle"] = (time.monotonic() - started, sent, seconds_until_closed(connection, 60))

    threads = [threading.Thread(target=job) for job in (silent, half_request, keep_alive, trickle)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    held, sent, after = results["trickle"]
    row(
        "a new connection's first request (2 s of silence, fixed)",
        f"nothing sent: closed after **{results['silent']:.2f} s**; half a request head then silence: **{results['half']:.2f} s**",
        "seconds from connect (or the last byte) until reachd closes",
    )
    row(
        "a slow sender (the head limit bounds it)",
        f"one byte every 1.5 s: still open after {held:.0f} s ({sent} bytes), closed {after:.2f} s after the last byte",
        "every byte restarts the 2 s clock, so a steady trickle holds a slot until its head reaches the head limit",
    )
    row(
        "an idle keep-alive connection (`--connection-timeout`, default 30 s)",
        f"closed **{results['idle']:.2f} s** after its answer",
        "seconds from the answer until reachd closes",
    )


def stalled_readers(server, count=100, changes=300):
    streams = open_streams(server.port, count, read=False)
    time.sleep(1)
    before, cpu_before = server.status(), server.cpu_seconds()
    sequence_before = json.loads(get(server.port, "/status")[1])["sequence"]
    for index in range(changes):
        verb = "add" if index % 2 == 0 else "del"
        subprocess.run(["ip", "address", verb, "198.18.1.1/32", "dev", "veth1"], check=True)
    time.sleep(2)
    sequence = json.loads(get(server.port, "/status")[1])["sequence"]
    after, cpu = server.status(), server.cpu_seconds() - cpu_before
    # What the kernel holds for them (not in RSS): bytes queued in each stream's send buffer.
    sockets = subprocess.run(
        ["ss", "-tnmH", "state", "established", f"sport = :{server.port}"], capture_output=True, text=True
    ).stdout
    queued = [int(value) for value in re.findall(r"skmem:\([^)]*?,w(\d+),", sockets)]
    started = time.monotonic()
    get(server.port, "/status")
    answer_ms = (time.monotonic() - started) * 1000
    row(
        "clients that never read `/events`",
        f"{count} stalled streams, {sequence - sequence_before} document changes: VmRSS {before['VmRSS'] / 1024:.1f} → "
        f"{after['VmRSS'] / 1024:.1f} MiB; kernel send queues {statistics.mean(queued) / 1024:.1f} KiB per stream "
        f"(max {max(queued) / 1024:.1f} KiB); /status still answered in {answer_ms:.1f} ms; {cpu * 1000:.0f} ms CPU in all",
        "each stream holds at most one pending frame (the newest) in reachd; the send queue from `ss -tnm` "
        "(client receive buffers set to 4 KiB)",
    )
    for stream in streams:
        stream.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--binary", default=".build-release/x86_64-unknown-linux-gnu/release/reachd")
    parser.add_argument("--report", help="also write the figures to this Markdown file (docs/reports/limits.md)")
    arguments = parser.parse_args()
    if "MEASURE_NAMESPACE" not in os.environ:
        if os.geteuid() != 0:
            raise SystemExit("run as root: the measurements run in a network namespace of their own")
        sys.exit(in_namespace(sys.argv[1:]))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, arguments.streams + 1024)), hard))
    binary = os.path.abspath(arguments.binary)
    if subprocess.run(["sh", "-c", "command -v wrk"], capture_output=True).returncode != 0:
        raise SystemExit("wrk is not installed (apt-get install wrk; make measure-limits installs it)")
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    context = provenance.capture()
    print(f"reachd {version} ({binary}); {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}\n")
    print("| limit | measured | how |\n|---|---|---|")
    server = memory_per_stream(binary, arguments.streams)
    cpu_per_request(server, ["/status", "/metrics", "/readyz", "/", "/nothing-here"])
    probe_during_flood(server)
    timeouts(server)
    stalled_readers(server)
    head_limits(binary, server)
    server.stop()
    connection_limit(binary)
    streams_under_memory_limit(binary)
    streams_under_memory_limit(binary, "--max-connections", "1000", attempts=3000)
    if arguments.report:
        write_report(arguments.report, context, version, binary)


def write_report(path, context, version, binary):
    lines = provenance.header(
        "What a hostile client can cost reachd: measured limits",
        "sudo make measure-limits",
        context,
        [f"reachd: `{version}`, `{os.path.relpath(binary, provenance.ROOT)}` (release build, as the Dockerfile builds it)",
         "where: 127.0.0.1 in a network namespace of its own; clients and reachd share the machine's cores, so CPU "
         "figures move with the load average"],
    )
    lines += ["Each bound, its option and default, and what it protects are in "
              "[THREAT-MODEL.md](../THREAT-MODEL.md); this file holds only what was measured.", "",
              "| limit | measured | how |", "|---|---|---|"]
    lines += [f"| {limit} | {figure} | {how} |" for limit, figure, how in rows]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"\nwrote {path}")


main()
