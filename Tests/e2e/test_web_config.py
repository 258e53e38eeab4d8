"""`--web-config-file` (issue 27): TLS and basic auth by the Prometheus exporter-toolkit's file.

Everything is real: certificates made by `openssl` in a temporary directory, reachd on
127.0.0.1, and curl, Python's `ssl`, `reachd status` and Prometheus as clients.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest

from reachd_process import Reachd, free_port, reachd_binary

# "rasmuslerdorf" (cost 10, as `htpasswd -B` makes) and "hunter2" (cost 4).
PROMETHEUS_HASH = "$2b$10$uksSK9gqmkdf2NFzjFhdtesWzKt22l0XGzU3XGuqVO6VpLGOyPmaC"
PROMETHEUS_PASSWORD = "rasmuslerdorf"
ALICE_HASH = "$2b$04$4FuUOXMbTFg7/2bjeC/XD.ewcu..cC317K2SybRQfjz9/NToCC386"
ALICE_PASSWORD = "hunter2"


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_ca(directory: Path, name: str) -> None:
    openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(directory / f"{name}.key"))
    openssl("req", "-x509", "-new", "-key", str(directory / f"{name}.key"), "-out", str(directory / f"{name}.crt"),
            "-days", "2", "-subj", f"/CN={name}")


def make_leaf(directory: Path, name: str, ca: str, cn: str | None = None) -> None:
    key, csr, ext = directory / f"{name}.key", directory / f"{name}.csr", directory / f"{name}.ext"
    openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(key))
    openssl("req", "-new", "-key", str(key), "-out", str(csr), "-subj", f"/CN={cn or name}")
    ext.write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", str(csr), "-CA", str(directory / f"{ca}.crt"), "-CAkey", str(directory / f"{ca}.key"),
            "-CAcreateserial", "-out", str(directory / f"{name}.crt"), "-days", "2", "-extfile", str(ext))


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    """ca (server and client certificates), other-ca (a client certificate nobody trusts)."""
    directory = tmp_path_factory.mktemp("pki")
    make_ca(directory, "ca")
    make_ca(directory, "other-ca")
    make_leaf(directory, "server", "ca")
    make_leaf(directory, "server2", "ca", cn="server-rotated")
    make_leaf(directory, "client", "ca")
    make_leaf(directory, "stranger", "other-ca")
    return directory


def write_config(path: Path, pki: Path, *, users: dict | None = None, tls: bool = True, extra: str = "") -> Path:
    text = ""
    if tls:
        text += f"tls_server_config:\n  cert_file: {pki / 'server.crt'}\n  key_file: {pki / 'server.key'}\n{extra}"
    if users:
        text += "basic_auth_users:\n" + "".join(f"  {name}: {hash}\n" for name, hash in users.items())
    path.write_text(text)
    return path


def context(pki: Path, *, ca: str = "ca", version: ssl.TLSVersion | None = None,
            client: str | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki / f"{ca}.crt"))
    if version:
        ctx.minimum_version = ctx.maximum_version = version
    if client:
        ctx.load_cert_chain(str(pki / f"{client}.crt"), str(pki / f"{client}.key"))
    return ctx


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


class TLSReachd(Reachd):
    """reachd with a web config, whose readiness is asked over HTTPS (health needs no credentials)."""

    def __init__(self, config: Path, pki: Path, *args: str, ctx: ssl.SSLContext | None = None):
        self.ctx = ctx or context(pki)
        super().__init__("--web-config-file", str(config), *args)

    def wait_ready(self, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"reachd exited with {self.process.returncode}: {self.output()}")
            try:
                if request(self.port, self.ctx, "/livez")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise TimeoutError(f"reachd did not answer /livez over TLS: {self.output()}")


def tls_socket(port: int, ctx: ssl.SSLContext, timeout: float = 5.0) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        return ctx.wrap_socket(raw, server_hostname="localhost")
    except Exception:
        raw.close()
        raise


def request(port: int, ctx: ssl.SSLContext | None, path: str, headers: dict | None = None,
            method: str = "GET") -> tuple[int, dict, bytes]:
    """One request on a connection of its own; (status, headers by lowercased name, body)."""
    sock = tls_socket(port, ctx) if ctx else socket.create_connection(("127.0.0.1", port), timeout=5)
    with sock:
        lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except (ssl.SSLError, ConnectionResetError):
                break
            if not chunk:
                break
            data += chunk
    if not data:
        # A TLS 1.3 refusal (a missing or unknown client certificate) arrives as an alert on
        # the first read: the server closed without an answer.
        raise ConnectionResetError("closed without an answer")
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    if fields.get("transfer-encoding") == "chunked":
        body = dechunk(body)
    return int(status_line.split()[1]), fields, body


def dechunk(body: bytes) -> bytes:
    out = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2:]
    return out


def metric(port: int, ctx, name: str, auth: str | None = None) -> float | None:
    status, _, body = request(port, ctx, "/metrics", {"Authorization": auth} if auth else None)
    if status != 200:
        return None
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def wait_for(predicate, timeout: float = 10.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def server(pki, tmp_path, request):
    """Starts reachd with a web config; ended by the test's end."""
    started: list[Reachd] = []

    def start(config: Path, *args: str, ctx: ssl.SSLContext | None = None) -> TLSReachd:
        process = TLSReachd(config, pki, *args, ctx=ctx)
        started.append(process)
        try:
            process.wait_ready()
        except Exception:
            process.terminate(signal.SIGKILL)
            raise
        return process

    yield start
    for process in started:
        if request.node.rep_call.failed if hasattr(request.node, "rep_call") else False:
            print(process.output())
        process.terminate()


# --------------------------------------------------------------------------- TLS


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
def test_python_ssl_over_tls12_and_tls13(pki, tmp_path, server, version):
    reachd = server(write_config(tmp_path / "web.yml", pki))
    with tls_socket(reachd.port, context(pki, version=version)) as sock:
        assert sock.version() == {ssl.TLSVersion.TLSv1_2: "TLSv1.2", ssl.TLSVersion.TLSv1_3: "TLSv1.3"}[version]
    status, fields, body = request(reachd.port, context(pki, version=version), "/status")
    assert status == 200
    assert json.loads(body)["state"] in ("reachable", "unreachable", "unknown")


@pytest.mark.parametrize("flag", ["--tlsv1.2 --tls-max 1.2", "--tlsv1.3"])
def test_curl_over_tls(pki, tmp_path, server, flag):
    reachd = server(write_config(tmp_path / "web.yml", pki))
    result = subprocess.run(
        ["curl", "-sS", *flag.split(), "--cacert", str(pki / "ca.crt"), "-o", "-", "-w", "\n%{http_code}",
         f"https://127.0.0.1:{reachd.port}/status"], capture_output=True, text=True, timeout=10)
    assert result.returncode == 0, result.stderr
    body, code = result.stdout.rsplit("\n", 1)
    assert code == "200"
    assert "state" in json.loads(body)


def test_min_version_tls13_refuses_tls12(pki, tmp_path, server):
    reachd = server(write_config(tmp_path / "web.yml", pki, extra="  min_version: TLS13\n"))
    with pytest.raises(ssl.SSLError):
        tls_socket(reachd.port, context(pki, version=ssl.TLSVersion.TLSv1_2)).close()
    with tls_socket(reachd.port, context(pki, version=ssl.TLSVersion.TLSv1_3)) as sock:
        assert sock.version() == "TLSv1.3"


def test_plain_http_to_the_tls_port_gets_no_document(pki, tmp_path, server):
    reachd = server(write_config(tmp_path / "web.yml", pki))
    with socket.create_connection(("127.0.0.1", reachd.port), timeout=5) as sock:
        sock.sendall(b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except (ConnectionResetError, socket.timeout):
            pass
    assert b"HTTP/1." not in data and b"state" not in data
    result = subprocess.run(["curl", "-s", "-m", "5", f"http://127.0.0.1:{reachd.port}/status"],
                            capture_output=True, timeout=10)
    assert result.returncode != 0 and b"state" not in result.stdout


def test_a_wrong_ca_fails_verification(pki, tmp_path, server):
    reachd = server(write_config(tmp_path / "web.yml", pki))
    with pytest.raises(ssl.SSLCertVerificationError):
        tls_socket(reachd.port, context(pki, ca="other-ca")).close()
    result = subprocess.run(["curl", "-s", "--cacert", str(pki / "other-ca.crt"),
                             f"https://127.0.0.1:{reachd.port}/livez"], capture_output=True, timeout=10)
    assert result.returncode == 60  # peer certificate cannot be authenticated


def test_client_certificates_required_and_verified(pki, tmp_path, server):
    config = write_config(tmp_path / "web.yml", pki, extra=(
        f"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: {pki / 'ca.crt'}\n"))
    reachd = server(config, ctx=context(pki, client="client"))
    assert request(reachd.port, context(pki, client="client"), "/status")[0] == 200
    for refused in (context(pki), context(pki, client="stranger")):
        with pytest.raises((ssl.SSLError, ConnectionResetError, BrokenPipeError, ValueError)):
            status, _, _ = request(reachd.port, refused, "/livez")
            # TLS 1.3 finishes the client's side before the server's verdict: the refusal then
            # arrives as an alert on the first read, and no answer is ever read.
            raise ValueError(f"answered {status}")
    for cert in ([], ["--cert", str(pki / "stranger.crt"), "--key", str(pki / "stranger.key")]):
        result = subprocess.run(["curl", "-s", "--cacert", str(pki / "ca.crt"), *cert,
                                 f"https://127.0.0.1:{reachd.port}/livez"], capture_output=True, timeout=10)
        assert result.returncode != 0 and b"pass" not in result.stdout


# --------------------------------------------------------------------------- basic auth


def test_basic_auth_right_wrong_missing_malformed(pki, tmp_path, server):
    reachd = server(write_config(tmp_path / "web.yml", pki, users={"prometheus": PROMETHEUS_HASH, "alice": ALICE_HASH}))
    ctx = context(pki)
    assert request(reachd.port, ctx, "/status", {"Authorization": basic("prometheus", PROMETHEUS_PASSWORD)})[0] == 200
    assert request(reachd.port, ctx, "/metrics", {"Authorization": basic("alice", ALICE_PASSWORD)})[0] == 200
    refused = [
        None, basic("prometheus", "wrong"), basic("nobody", ALICE_PASSWORD), basic("alice", PROMETHEUS_PASSWORD),
        "Basic", "Basic !!!", "Bearer abc", "Basic " + base64.b64encode(b"no-colon").decode(),
    ]
    for path in ["/", "/status", "/events", "/changes", "/metrics", "/nowhere"]:
        for header in refused:
            status, fields, body = request(reachd.port, ctx, path, {"Authorization": header} if header else None)
            assert status == 401, (path, header)
            assert fields["www-authenticate"] == 'Basic realm="reachd", charset="UTF-8"'
            assert fields["content-type"] == "application/problem+json"
            problem = json.loads(body)
            assert problem["status"] == 401 and problem["title"] == "Unauthorized"
    for path in ["/livez", "/readyz", "/healthz"]:
        assert request(reachd.port, ctx, path)[0] in (200, 503)


def test_basic_auth_without_tls(pki, tmp_path, server):
    """basic_auth_users alone: plain HTTP, credentials still asked."""
    config = write_config(tmp_path / "web.yml", pki, tls=False, users={"alice": ALICE_HASH})
    reachd = Reachd("--web-config-file", str(config))
    try:
        reachd.wait_ready()
        assert request(reachd.port, None, "/status")[0] == 401
        assert request(reachd.port, None, "/status", {"Authorization": basic("alice", ALICE_PASSWORD)})[0] == 200
    finally:
        reachd.terminate()


def test_wrong_password_costs_what_a_right_one_does(pki, tmp_path, server):
    """A first try pays bcrypt, right or wrong, known user or not: timing tells nothing. Both
    outcomes are then cached (as the exporter-toolkit does): a repeated header costs no bcrypt."""
    reachd = server(write_config(tmp_path / "web.yml", pki, users={"prometheus": PROMETHEUS_HASH}))
    ctx = context(pki)

    def timed(user: str, password: str) -> list[float]:
        """Seconds to the first byte of four requests on one kept-alive connection (curl reuses
        it: the handshake is in the first only)."""
        url = f"https://127.0.0.1:{reachd.port}/status"
        result = subprocess.run(
            ["curl", "-s", "--cacert", str(pki / "ca.crt"), "-u", f"{user}:{password}", "-w", "%{time_starttransfer}\n"]
            + sum((["-o", "/dev/null", url] for _ in range(4)), []), capture_output=True, text=True, timeout=30)
        return [float(line) for line in result.stdout.split()]

    wrong = timed("prometheus", "wrong")
    unknown = timed("mallory", "wrong")
    right = timed("prometheus", PROMETHEUS_PASSWORD)
    assert wrong[0] > 0.01 and unknown[0] > 0.01 and right[0] > 0.01
    # Generous ratios: a loaded CI machine delays single requests.
    assert 0.33 < unknown[0] / wrong[0] < 3
    assert 0.33 < right[0] / wrong[0] < 3
    # The median of the repeats: cached, right or wrong.
    assert sorted(right[1:])[1] < wrong[0] / 3
    assert sorted(wrong[1:])[1] < wrong[0] / 3


@pytest.mark.parametrize("text,named", [
    (f"basic_auth_users:\n  alice: {ALICE_HASH}\n  bob: plaintext\n", "line 3: basic_auth_users.bob: not a bcrypt hash"),
    ("basic_auth_users:\n  bob: $6$salt$abcdefghijklmnopqrstuvwxyz\n", "line 2: basic_auth_users.bob"),
    ("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: []\n", "line 4: unknown key tls_server_config.cipher_suites"),
    ("http_server_config:\n  http2: false\n", "line 2: http_server_config is not supported"),
    ("tls_server_config:\n  cert_file: /nonexistent/tls.crt\n  key_file: /nonexistent/tls.key\n",
     "tls_server_config.cert_file /nonexistent/tls.crt: cannot read it"),
])
def test_a_bad_file_is_refused_at_start(tmp_path, text, named):
    config = tmp_path / "web.yml"
    config.write_text(text)
    result = subprocess.run([reachd_binary(), "--host", "127.0.0.1", "--port", str(free_port()),
                             "--web-config-file", str(config)], capture_output=True, text=True, timeout=20)
    assert result.returncode == 64
    assert named in result.stderr
    assert "--web-config-file" in result.stderr


def test_a_mismatched_key_is_refused_at_start(pki, tmp_path):
    config = tmp_path / "web.yml"
    config.write_text(f"tls_server_config:\n  cert_file: {pki / 'server.crt'}\n  key_file: {pki / 'client.key'}\n")
    result = subprocess.run([reachd_binary(), "--port", str(free_port()), "--web-config-file", str(config)],
                            capture_output=True, text=True, timeout=20)
    assert result.returncode == 64
    assert f"key_file {pki / 'client.key'} is not the key of cert_file {pki / 'server.crt'}" in result.stderr


# --------------------------------------------------------------------------- streams and rotation


def open_stream(port: int, ctx, auth: str | None) -> ssl.SSLSocket:
    sock = tls_socket(port, ctx, timeout=20)
    headers = f"Authorization: {auth}\r\n" if auth else ""
    sock.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\n".encode())
    return sock


def read_until(sock: ssl.SSLSocket, marker: bytes, buffer: bytearray, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while marker not in buffer:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"stream ended before {marker!r}")
        buffer += chunk


def test_sse_over_tls_with_200_clients(pki, tmp_path, server):
    reachd = server(write_config(tmp_path / "web.yml", pki, users={"alice": ALICE_HASH}), "--heartbeat", "0.3",
                    "--max-connections", "1000")
    ctx = context(pki)
    streams = []
    try:
        for _ in range(200):
            streams.append((open_stream(reachd.port, ctx, basic("alice", ALICE_PASSWORD)), bytearray()))
        for sock, buffer in streams:
            read_until(sock, b"event: status", buffer)
            assert buffer.startswith(b"HTTP/1.1 200")
        for sock, buffer in streams:
            del buffer[:]
            read_until(sock, b":", buffer)  # a heartbeat comment on every stream
        assert metric(reachd.port, ctx, "reachd_sse_clients", basic("alice", ALICE_PASSWORD)) == 200
    finally:
        for sock, _ in streams:
            sock.close()


class Listener:
    """A TCP port a `--target` probes: open, the target is reachable; closed, unreachable."""

    def __init__(self):
        self.port = free_port()
        self.sock: socket.socket | None = None

    def open(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", self.port))
        self.sock.listen(64)

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None


def kubernetes_secret(directory: Path, pki: Path, leaf: str, version: str) -> None:
    """The layout kubelet writes for a Secret: files are symlinks through `..data`, which is
    swapped atomically to a new timestamped directory."""
    data = directory / f"..{version}"
    data.mkdir()
    shutil.copy(pki / f"{leaf}.crt", data / "tls.crt")
    shutil.copy(pki / f"{leaf}.key", data / "tls.key")
    link = directory / "..data_tmp"
    os.symlink(data.name, link)
    os.rename(link, directory / "..data")
    for name in ("tls.crt", "tls.key"):
        if not (directory / name).is_symlink():
            os.symlink(f"..data/{name}", directory / name)


def peer_subject(port: int, ctx) -> str:
    with tls_socket(port, ctx) as sock:
        return dict(x[0] for x in sock.getpeercert()["subject"])["commonName"]


def test_rotation_by_symlink_swap_keeps_50_streams(pki, tmp_path, server):
    secret = tmp_path / "secret"
    secret.mkdir()
    kubernetes_secret(secret, pki, "server", "2026_01")
    config = tmp_path / "web.yml"
    config.write_text(f"tls_server_config:\n  cert_file: {secret / 'tls.crt'}\n  key_file: {secret / 'tls.key'}\n"
                      f"basic_auth_users:\n  alice: {ALICE_HASH}\n")
    target = Listener()
    target.open()
    auth = basic("alice", ALICE_PASSWORD)
    reachd = server(config, "--target", f"t=tcp://127.0.0.1:{target.port}", "--target-interval", "0.2",
                    "--target-failures", "1", "--target-successes", "1")
    ctx = context(pki)
    assert peer_subject(reachd.port, ctx) == "server"
    streams = [(open_stream(reachd.port, ctx, auth), bytearray()) for _ in range(50)]
    try:
        for sock, buffer in streams:
            read_until(sock, b"event: status", buffer)
        kubernetes_secret(secret, pki, "server2", "2026_02")
        wait_for(lambda: peer_subject(reachd.port, ctx) == "server-rotated", what="the new certificate")
        assert metric(reachd.port, ctx, "reachd_web_config_last_reload_successful", auth) == 1
        # A real change after the rotation: every stream opened before it still gets the event.
        for sock, buffer in streams:
            del buffer[:]
        target.close()
        for sock, buffer in streams:
            read_until(sock, b'"unreachable"', buffer)
    finally:
        target.close()
        for sock, _ in streams:
            sock.close()
    assert "web config applied" in reachd.output()


def test_a_broken_new_file_keeps_the_old_configuration(pki, tmp_path, server):
    config = write_config(tmp_path / "web.yml", pki, users={"alice": ALICE_HASH})
    reachd = server(config)
    ctx = context(pki)
    auth = basic("alice", ALICE_PASSWORD)
    good = config.read_text()
    config.write_text(good + "  bob: not-a-hash\n")
    wait_for(lambda: metric(reachd.port, ctx, "reachd_web_config_last_reload_successful", auth) == 0,
             what="the refusal in the metric")
    assert request(reachd.port, ctx, "/status", {"Authorization": auth})[0] == 200
    assert "web config not applied; the previous one stays" in reachd.output()
    # A key of another certificate: refused too.
    config.write_text(f"tls_server_config:\n  cert_file: {pki / 'server.crt'}\n  key_file: {pki / 'client.key'}\n")
    wait_for(lambda: "is not the key of" in reachd.output(), what="the mismatch logged")
    assert request(reachd.port, ctx, "/status", {"Authorization": auth})[0] == 200
    # Good again: applied, users and all.
    config.write_text(good.replace(ALICE_HASH, PROMETHEUS_HASH).replace("alice", "prometheus"))
    wait_for(lambda: metric(reachd.port, ctx, "reachd_web_config_last_reload_successful",
                            basic("prometheus", PROMETHEUS_PASSWORD)) == 1, what="the good file applied")
    assert request(reachd.port, ctx, "/status", {"Authorization": auth})[0] == 401


def test_sighup_reads_the_file_again(pki, tmp_path, server):
    config = write_config(tmp_path / "web.yml", pki, users={"alice": ALICE_HASH})
    reachd = server(config)
    reachd.process.send_signal(signal.SIGHUP)
    wait_for(lambda: "cause=SIGHUP" in reachd.output(), what="the SIGHUP reload logged")
    assert reachd.process.poll() is None
    assert request(reachd.port, context(pki), "/status", {"Authorization": basic("alice", ALICE_PASSWORD)})[0] == 200


# --------------------------------------------------------------------------- clients


def test_reachd_status_with_tls_cacert_and_user(pki, tmp_path, server):
    reachd = server(write_config(tmp_path / "web.yml", pki, users={"alice": ALICE_HASH}))
    base = [reachd_binary(), "status", "--port", str(reachd.port)]
    ok = subprocess.run(base + ["--tls", "--cacert", str(pki / "ca.crt"), "--user", f"alice:{ALICE_PASSWORD}"],
                        capture_output=True, text=True, timeout=20)
    assert ok.returncode == 0, ok.stderr
    assert "#" in ok.stdout.splitlines()[0]
    env = {**os.environ, "REACHD_USER": f"alice:{ALICE_PASSWORD}"}
    insecure = subprocess.run(base + ["--insecure", "--json"], capture_output=True, text=True, timeout=20, env=env)
    assert insecure.returncode == 0 and "not verified" in insecure.stderr
    assert "state" in json.loads(insecure.stdout)
    no_user = subprocess.run(base + ["--tls", "--cacert", str(pki / "ca.crt")], capture_output=True, text=True, timeout=20)
    assert no_user.returncode != 0 and "401" in no_user.stderr
    wrong_ca = subprocess.run(base + ["--cacert", str(pki / "other-ca.crt"), "--user", f"alice:{ALICE_PASSWORD}"],
                              capture_output=True, text=True, timeout=20)
    assert wrong_ca.returncode == 1 and "add --cacert FILE or --insecure" in wrong_ca.stderr
    check = subprocess.run([reachd_binary(), "check", "--port", str(reachd.port), "--cacert", str(pki / "ca.crt")],
                           capture_output=True, text=True, timeout=20)
    assert check.returncode == 0, check.stdout


def test_prometheus_scrapes_with_tls_config_and_basic_auth(pki, tmp_path, server):
    prometheus = shutil.which("prometheus")
    if not prometheus:
        pytest.skip("the prometheus package is not installed (make test-deps)")
    reachd = server(write_config(tmp_path / "web.yml", pki, users={"prometheus": PROMETHEUS_HASH}))
    port = free_port()
    (tmp_path / "prometheus.yml").write_text(f"""
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: reachd
    scheme: https
    tls_config:
      ca_file: {pki / 'ca.crt'}
    basic_auth:
      username: prometheus
      password: {PROMETHEUS_PASSWORD}
    static_configs:
      - targets: ["127.0.0.1:{reachd.port}"]
""")
    process = subprocess.Popen([prometheus, f"--config.file={tmp_path / 'prometheus.yml'}",
                                f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def scraped():
            try:
                import urllib.request
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/targets", timeout=2) as response:
                    targets = json.load(response)["data"]["activeTargets"]
                return targets and targets[0]["health"] == "up" and targets[0]
            except OSError:
                return None
        target = wait_for(scraped, timeout=60, what="Prometheus to scrape reachd")
        assert target["lastError"] == ""
    finally:
        process.terminate()
        process.wait(timeout=20)
