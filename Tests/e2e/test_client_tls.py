"""The client commands (`status`, `check`, `watch`) against a reachd with a web config, and
`reachd hash-password`.

What an image's HEALTHCHECK and an operator meet: TLS and credentials from the environment alone
(`REACHD_TLS`, `REACHD_CACERT`, `REACHD_USER`), and for each mistake one message that says what to
do — never the usage text — and an exit status a script can tell apart: 64 a bad flag, 77 refused
credentials, 1 no answer. Over IPv4 and IPv6 loopback, with certificates made by `openssl`.
"""

from __future__ import annotations

import ctypes
import os
import pty
import select
import signal
import socket
import ssl
import subprocess
import termios
import time
from pathlib import Path

import pytest

from reachd_process import free_port, reachd_binary
from test_web_config import ALICE_HASH, ALICE_PASSWORD, make_ca, openssl, write_config

FAMILIES = [pytest.param("127.0.0.1", id="ipv4"), pytest.param("::1", id="ipv6")]

ADD_TLS = "may speak TLS: add --tls"
DROP_TLS = "does not speak TLS: drop --tls"
TRUST = "add --cacert FILE or --insecure"
CREDENTIALS = "wrong or missing credentials (--user NAME:PASSWORD or REACHD_USER)"


def make_leaf(directory: Path, name: str, ca: str, san: str) -> None:
    key, csr, ext = directory / f"{name}.key", directory / f"{name}.csr", directory / f"{name}.ext"
    openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(key))
    openssl("req", "-new", "-key", str(key), "-out", str(csr), "-subj", f"/CN={name}")
    ext.write_text(f"subjectAltName={san}\n")
    openssl("x509", "-req", "-in", str(csr), "-CA", str(directory / f"{ca}.crt"), "-CAkey", str(directory / f"{ca}.key"),
            "-CAcreateserial", "-out", str(directory / f"{name}.crt"), "-days", "2", "-extfile", str(ext))


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    """server: both loopback addresses as IP names; names-only: the same texts as DNS names
    only, which an address asked must not match; other-ca: trusts nothing here."""
    directory = tmp_path_factory.mktemp("pki")
    make_ca(directory, "ca")
    make_ca(directory, "other-ca")
    make_leaf(directory, "server", "ca", "DNS:localhost,IP:127.0.0.1,IP:::1")
    make_leaf(directory, "names-only", "ca", "DNS:localhost,DNS:127.0.0.1,DNS:::1")
    return directory


def clean_environment(extra: dict | None = None) -> dict:
    """The environment without any REACHD_ variable of the test run, plus `extra`."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("REACHD_")}
    return {**environment, **(extra or {})}


def run(*args: str, env: dict | None = None, input: bytes | None = None, timeout: float = 20):
    return subprocess.run([reachd_binary(), *args], capture_output=True, env=clean_environment(env), input=input,
                          timeout=timeout)


def text(result: subprocess.CompletedProcess) -> tuple[str, str]:
    return result.stdout.decode(errors="replace"), result.stderr.decode(errors="replace")


class Server:
    """reachd on `host` with a web config (or none), ended by `close`."""

    def __init__(self, host: str, config: Path | None, pki: Path):
        self.host, self.port, self.pki = host, free_port(), pki
        self.tls = config is not None and "tls_server_config" in config.read_text()
        args = ["--host", host, "--port", str(self.port)]
        if config:
            args += ["--web-config-file", str(config)]
        self.log = Path(f"/tmp/reachd-client-tls-{os.getpid()}-{self.port}.log")
        self.process = subprocess.Popen([reachd_binary(), *args], stdout=self.log.open("wb"),
                                        stderr=subprocess.STDOUT, env=clean_environment())
        self.wait_ready()

    def wait_ready(self, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.output()
            try:
                if self.livez() == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise TimeoutError(self.output())

    def livez(self) -> int:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        with socket.socket(family) as raw:
            raw.settimeout(2)
            raw.connect((self.host, self.port))
            sock = raw
            if self.tls:
                sock = ssl.create_default_context(cafile=str(self.pki / "ca.crt")).wrap_socket(
                    raw, server_hostname="localhost")
            sock.sendall(b"GET /livez HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            return int(sock.recv(64).split()[1])

    @property
    def env(self) -> dict:
        return {"REACHD_HOST": self.host, "REACHD_PORT": str(self.port)}

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def close(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.unlink(missing_ok=True)


@pytest.fixture
def serve(pki, tmp_path):
    started: list[Server] = []

    def start(host: str, *, tls: bool = True, users: dict | None = None, leaf: str = "server") -> Server:
        config = None
        if tls or users:
            config = write_config(tmp_path / f"web-{len(started)}.yml", pki, users=users, tls=tls)
            config.write_text(config.read_text().replace("server.crt", f"{leaf}.crt").replace("server.key", f"{leaf}.key"))
        server = Server(host, config, pki)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def first_line_of_watch(env: dict, timeout: float = 15) -> str:
    """`reachd watch`'s first line on stdout (it runs until stopped)."""
    process = subprocess.Popen([reachd_binary(), "watch"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=clean_environment(env))
    try:
        ready, _, _ = select.select([process.stdout], [], [], timeout)
        assert ready, f"reachd watch printed nothing in {timeout} s"
        return process.stdout.readline().decode()
    finally:
        process.kill()
        process.wait()


# --------------------------------------------------------------------------- TLS from the environment


@pytest.mark.parametrize("host", FAMILIES)
def test_status_check_and_watch_over_tls_with_only_the_environment(pki, serve, host):
    server = serve(host, users={"alice": ALICE_HASH})
    env = {**server.env, "REACHD_TLS": "1", "REACHD_CACERT": str(pki / "ca.crt"),
           "REACHD_USER": f"alice:{ALICE_PASSWORD}"}
    status = run("status", env=env)
    out, err = text(status)
    assert status.returncode == 0, err
    assert "#" in out.splitlines()[0] and err == "", (out, err)
    assert run("status", "--json", env=env).returncode == 0
    # The image's HEALTHCHECK, unchanged: `check --live` with TLS from the environment.
    live = run("check", "--live", env=env)
    assert live.returncode == 0 and text(live)[0].startswith("/livez: 200"), text(live)
    # Readiness follows this host's network; answered either way.
    ready = run("check", env=env)
    assert text(ready)[0].startswith(("/readyz: 200", "/readyz: 503")), text(ready)
    assert "#" in first_line_of_watch(env)
    # The start-up log says what is on.
    assert "tls=on" in server.output() and "users=1" in server.output(), server.output()


@pytest.mark.parametrize("host", FAMILIES)
def test_a_flag_wins_over_its_variable(pki, serve, host):
    server = serve(host)
    # REACHD_INSECURE, but --cacert given: verified, so nothing is said about verification.
    verified = run("status", "--cacert", str(pki / "ca.crt"), env={**server.env, "REACHD_INSECURE": "1"})
    assert verified.returncode == 0 and "not verified" not in text(verified)[1], text(verified)
    # REACHD_CACERT names a CA that did not sign it, but --insecure: answered, and said on stderr.
    insecure = run("status", "--insecure", env={**server.env, "REACHD_CACERT": str(pki / "other-ca.crt")})
    assert insecure.returncode == 0 and "not verified" in text(insecure)[1], text(insecure)


# --------------------------------------------------------------------------- each mistake, each hint


@pytest.mark.parametrize("host", FAMILIES)
def test_a_plain_request_at_a_tls_port_says_add_tls(serve, host):
    server = serve(host)
    status = run("status", env=server.env)
    out, err = text(status)
    assert status.returncode == 1 and ADD_TLS in err, (out, err)
    assert err.count(ADD_TLS) == 1 and "Usage" not in out + err, (out, err)
    check = run("check", "--live", env=server.env)
    assert check.returncode == 1 and ADD_TLS in text(check)[0], text(check)
    # `watch` has nothing to wait for: no retry mends it.
    watch = run("watch", env=server.env, timeout=15)
    assert watch.returncode == 1 and ADD_TLS in text(watch)[1] and "reconnecting" not in text(watch)[1], text(watch)


@pytest.mark.parametrize("host", FAMILIES)
def test_tls_at_a_plain_port_says_drop_tls(serve, host):
    server = serve(host, tls=False)
    # libmicrohttpd answers most ClientHellos `400` and closes on a few without a byte: both
    # said the same way, so try it often enough to meet both.
    for _ in range(8):
        status = run("status", env={**server.env, "REACHD_TLS": "1"})
        out, err = text(status)
        assert status.returncode == 1 and DROP_TLS in err and "Usage" not in out + err, (out, err)
    check = run("check", "--tls", "--timeout", "1", env=server.env)
    assert check.returncode == 1 and DROP_TLS in text(check)[0], text(check)
    watch = run("watch", "--tls", env=server.env, timeout=15)
    assert watch.returncode == 1 and DROP_TLS in text(watch)[1], text(watch)


@pytest.mark.parametrize("host", FAMILIES)
def test_tls_at_a_port_that_never_answers_says_drop_tls_after_the_timeout(host):
    # A plain server that waits for the request line a ClientHello never ends.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as listener:
        listener.bind((host, 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        started = time.monotonic()
        check = run("check", "--tls", "--timeout", "1", env={"REACHD_HOST": host, "REACHD_PORT": str(port)})
        elapsed = time.monotonic() - started
    out, err = text(check)
    assert check.returncode == 1 and "began no TLS handshake within 1 s: it " + DROP_TLS in out, (out, err)
    assert elapsed < 5, elapsed


@pytest.mark.parametrize("host", FAMILIES)
def test_a_certificate_not_trusted_says_add_cacert(pki, serve, host):
    server = serve(host)
    for env in ({"REACHD_TLS": "1"}, {"REACHD_CACERT": str(pki / "other-ca.crt")}):
        result = run("status", env={**server.env, **env})
        out, err = text(result)
        assert result.returncode == 1 and TRUST in err and "Usage" not in out + err, (env, out, err)
        # The reason in reachd's words, not GnuTLS's.
        assert "is not trusted (its issuer is not a trusted CA)" in err, err
        assert "The name in the certificate" not in err and "TLS handshake" not in err, err


@pytest.mark.parametrize("host", FAMILIES)
def test_an_address_is_verified_against_the_certificates_addresses(pki, serve, host):
    # The address asked is an IP name of this certificate: verified (the name GnuTLS was given
    # once dangled, and every certificate "did not match").
    named = serve(host)
    assert run("status", "--cacert", str(pki / "ca.crt"), env=named.env).returncode == 0
    # This one holds the address only as a DNS name, which an address must not match.
    unnamed = serve(host, leaf="names-only")
    result = run("status", "--cacert", str(pki / "ca.crt"), env=unnamed.env)
    out, err = text(result)
    assert result.returncode == 1 and f"does not name {host}" in err and "--insecure" in err, (out, err)
    # Asked as localhost, its DNS name, verified (for ::1 after 127.0.0.1 refused the connection).
    localhost = run("status", "--host", "localhost", "--cacert", str(pki / "ca.crt"), env=unnamed.env)
    assert localhost.returncode == 0, text(localhost)


@pytest.mark.parametrize("host", FAMILIES)
def test_refused_credentials_exit_77_without_the_usage_text(pki, serve, host):
    server = serve(host, users={"alice": ALICE_HASH})
    tls = {**server.env, "REACHD_CACERT": str(pki / "ca.crt")}
    for user in ({"REACHD_USER": "alice:wrong"}, {}):
        for command in (["status"], ["watch"], ["watch", "--once"]):
            result = run(*command, env={**tls, **user}, timeout=15)
            out, err = text(result)
            assert result.returncode == 77, (command, user, result.returncode, out, err)
            assert CREDENTIALS in err and err.count(CREDENTIALS) == 1 and "Usage" not in out + err, (out, err)
    # Health needs no credentials.
    assert run("check", "--live", env=tls).returncode == 0


@pytest.mark.parametrize("host", FAMILIES)
def test_a_bad_flag_or_variable_exits_64(pki, serve, host):
    server = serve(host)
    for args, env, says in [
        (["--bogus"], {}, "--bogus"),
        (["--insecure", "--cacert", str(pki / "ca.crt")], {}, "exclude each other"),
        ([], {"REACHD_TLS": "maybe"}, "REACHD_TLS"),
        ([], {"REACHD_INSECURE": "1", "REACHD_CACERT": str(pki / "ca.crt")}, "exclude each other"),
        ([], {"REACHD_CACERT": "/nonexistent/ca.crt"}, "/nonexistent/ca.crt"),
        (["--user", "hunter2"], {}, "--user must be NAME:PASSWORD"),
        ([], {"REACHD_USER": "hunter2"}, "REACHD_USER must be NAME:PASSWORD"),
    ]:
        for command in ("status", "check", "watch"):
            result = run(command, *args, env={**server.env, **env})
            out, err = text(result)
            assert result.returncode == 64 and says in err, (command, args, env, result.returncode, out, err)
            # A refused NAME:PASSWORD is never repeated: it may be the password alone.
            assert "hunter2" not in err.replace("--user hunter2", ""), err


# --------------------------------------------------------------------------- hash-password


def libxcrypt_verifies(password: bytes, hash: str) -> bool:
    libcrypt = ctypes.CDLL("libcrypt.so.1")
    libcrypt.crypt.restype = ctypes.c_char_p
    libcrypt.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    return libcrypt.crypt(password, hash.encode()) == hash.encode()


def test_hash_password_from_stdin_is_accepted_by_reachd_and_libxcrypt(pki, serve):
    result = run("hash-password", input=b"correct horse\r\n")
    out, err = text(result)
    assert result.returncode == 0, err
    hash = out.strip()
    assert out == hash + "\n" and hash.startswith("$2y$10$") and len(hash) == 60, out
    # The line end is not part of the password.
    assert libxcrypt_verifies(b"correct horse", hash) and not libxcrypt_verifies(b"correct horse\r", hash)
    server = serve("127.0.0.1", users={"bob": hash})
    env = {**server.env, "REACHD_CACERT": str(pki / "ca.crt")}
    assert run("status", env={**env, "REACHD_USER": "bob:correct horse"}).returncode == 0
    assert run("status", env={**env, "REACHD_USER": "bob:correct horse\r"}).returncode == 77


def test_hash_password_takes_the_first_line_and_the_cost():
    result = run("hash-password", "--cost", "11", input=b"first\nsecond\n")
    assert result.returncode == 0 and result.stdout.startswith(b"$2y$11$"), text(result)
    assert libxcrypt_verifies(b"first", result.stdout.decode().strip())
    # Without a line end at all.
    bare = run("hash-password", input=b"bare")
    assert bare.returncode == 0 and libxcrypt_verifies(b"bare", bare.stdout.decode().strip())
    # 72 bytes, the most bcrypt reads, are taken.
    assert run("hash-password", input=b"x" * 72 + b"\n").returncode == 0


@pytest.mark.parametrize("stdin, says", [
    (b"", "the password is empty"),
    (b"\n", "the password is empty"),
    (b"\r\n", "the password is empty"),
    (b"x" * 73 + b"\n", "the password is 73 bytes: bcrypt reads only the first 72"),
    (b"x" * 5000, "bcrypt reads only the first 72"),
])
def test_hash_password_refuses_empty_and_too_long(stdin, says):
    result = run("hash-password", input=stdin)
    out, err = text(result)
    assert result.returncode == 64 and says in err and out == "" and "Usage" not in err, (out, err)


@pytest.mark.parametrize("cost", ["9", "15", "ten"])
def test_hash_password_refuses_a_cost_outside_10_to_14(cost):
    result = run("hash-password", "--cost", cost, input=b"pw\n")
    assert result.returncode == 64 and "--cost" in text(result)[1] and result.stdout == b"", text(result)


def typed_at_a_terminal(*lines: bytes) -> tuple[int, bytes, bytes, bool]:
    """`reachd hash-password` with stdin on a terminal (a pty), each line typed after its
    prompt: its exit status, what the terminal showed, stdout, and whether the terminal echoes
    again after it ended."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen([reachd_binary(), "hash-password"], stdin=terminal, stdout=subprocess.PIPE,
                               stderr=terminal, env=clean_environment())
    shown = b""

    def read_shown(wait: float) -> bytes:
        ready, _, _ = select.select([controller], [], [], wait)
        return os.read(controller, 1024) if ready else b""

    try:
        for line in lines:
            deadline = time.monotonic() + 10
            while not shown.endswith(b": "):
                assert time.monotonic() < deadline, f"no prompt; the terminal showed {shown!r}"
                shown += read_shown(0.5)
            os.write(controller, line)
            shown = shown[:-2] + b":_"  # this prompt was answered
        out, _ = process.communicate(timeout=20)
        while chunk := read_shown(0.2):
            shown += chunk
        echoes = bool(termios.tcgetattr(terminal)[3] & termios.ECHO)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(terminal)
        os.close(controller)
    return process.returncode, shown, out, echoes


def test_hash_password_at_a_terminal_asks_twice_without_echo():
    status, shown, out, echoes = typed_at_a_terminal(b"s3cret\r", b"s3cret\r")
    assert status == 0, (shown, out)
    assert b"Password:" in shown and b"Again:" in shown and b"s3cret" not in shown, shown
    assert libxcrypt_verifies(b"s3cret", out.decode().strip())
    assert echoes


def test_hash_password_at_a_terminal_refuses_two_that_differ():
    status, shown, out, echoes = typed_at_a_terminal(b"s3cret\r", b"s3cre7\r")
    assert status == 64 and b"the two passwords differ" in shown and out == b"", (shown, out)
    assert echoes


def test_hash_password_at_a_terminal_ends_at_ctrl_c_and_gives_the_echo_back():
    # Backspace and Ctrl-U are the terminal's keys as ever; Ctrl-C ends it at once, Enter unpressed.
    status, shown, out, echoes = typed_at_a_terminal(b"half\x7f\x15\x03")
    assert status == 130 and out == b"" and echoes, (status, shown, out)
