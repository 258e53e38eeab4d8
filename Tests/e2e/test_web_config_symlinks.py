"""`--web-config-file` followed through a symlink swapped anywhere along a path.

The deploy-by-symlink pattern (`DIR/current -> v1`, swapped to `v2` with `ln -s v2 current.tmp &&
mv -T current.tmp current`, v1 left in place) and kubelet's `..data` layout, for the certificate
and key the file names and for the web config file itself: new handshakes and requests follow
within a few seconds, told apart by the certificate's DER bytes and by who may log in.
"""

from __future__ import annotations

import os
import shutil
import ssl
from pathlib import Path

import pytest

from test_web_config import (  # noqa: F401 (pki and server are fixtures)
    ALICE_HASH,
    ALICE_PASSWORD,
    PROMETHEUS_HASH,
    PROMETHEUS_PASSWORD,
    basic,
    context,
    metric,
    pki,
    request,
    server,
    tls_socket,
    wait_for,
)

# A rotation is seen at once; a few seconds leave room for a loaded machine.
FOLLOWS_WITHIN = 5.0


def der(pem: Path) -> bytes:
    """The first certificate of a PEM file, as the handshake carries it."""
    text = pem.read_text()
    end = "-----END CERTIFICATE-----"
    return ssl.PEM_cert_to_DER_cert(text[: text.index(end) + len(end)])


def presented(port: int, ctx: ssl.SSLContext) -> bytes:
    """The certificate a new handshake gets."""
    with tls_socket(port, ctx) as sock:
        return sock.getpeercert(binary_form=True)


def version(directory: Path, pki: Path, leaf: str) -> Path:
    """A directory holding one certificate and its key as `tls.crt` and `tls.key`."""
    directory.mkdir(parents=True)
    shutil.copy(pki / f"{leaf}.crt", directory / "tls.crt")
    shutil.copy(pki / f"{leaf}.key", directory / "tls.key")
    return directory


def point(link: Path, target: str) -> None:
    """`ln -s TARGET LINK.tmp && mv -T LINK.tmp LINK`: the swap is one rename."""
    temporary = link.with_name(link.name + ".tmp")
    os.symlink(target, temporary)
    os.rename(temporary, link)


def tls_config(cert: Path, key: Path, users: dict | None = None) -> str:
    text = f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
    if users:
        text += "basic_auth_users:\n" + "".join(f"  {name}: {hash}\n" for name, hash in users.items())
    return text


def test_a_swapped_current_directory_rotates_the_certificate(pki, tmp_path, server):
    deploy = tmp_path / "deploy"
    version(deploy / "v1", pki, "server")
    version(deploy / "v2", pki, "server2")
    point(deploy / "current", "v1")
    config = tmp_path / "web.yml"
    config.write_text(tls_config(deploy / "current" / "tls.crt", deploy / "current" / "tls.key"))
    reachd = server(config)
    ctx = context(pki)
    assert presented(reachd.port, ctx) == der(pki / "server.crt")

    point(deploy / "current", "v2")
    wait_for(lambda: presented(reachd.port, ctx) == der(pki / "server2.crt"), timeout=FOLLOWS_WITHIN,
             what="v2's certificate after current -> v2")
    assert (deploy / "v1" / "tls.crt").exists(), "v1 stays in place"
    # Followed from where it leads now: swapped back, v1's again.
    point(deploy / "current", "v1")
    wait_for(lambda: presented(reachd.port, ctx) == der(pki / "server.crt"), timeout=FOLLOWS_WITHIN,
             what="v1's certificate after current -> v1")
    assert metric(reachd.port, ctx, "reachd_web_config_last_reload_successful") == 1
    assert "web config applied" in reachd.output()


def test_a_swapped_directory_two_levels_up(pki, tmp_path, server):
    """`releases/current -> r1`, the files in `current/tls/`: the swap is two levels above them."""
    releases = tmp_path / "releases"
    version(releases / "r1" / "tls", pki, "server")
    version(releases / "r2" / "tls", pki, "server2")
    point(releases / "current", "r1")
    config = tmp_path / "web.yml"
    config.write_text(tls_config(releases / "current" / "tls" / "tls.crt", releases / "current" / "tls" / "tls.key"))
    reachd = server(config)
    ctx = context(pki)
    assert presented(reachd.port, ctx) == der(pki / "server.crt")
    point(releases / "current", "r2")
    wait_for(lambda: presented(reachd.port, ctx) == der(pki / "server2.crt"), timeout=FOLLOWS_WITHIN,
             what="r2's certificate")


@pytest.mark.parametrize("through", ["file", "data"], ids=["DIR/tls.crt", "DIR/..data/tls.crt"])
def test_a_kubernetes_data_swap_rotates_the_certificate(pki, tmp_path, server, through):
    """kubelet's layout: DIR/..data -> ..2026_12_07_v1, DIR/tls.crt -> ..data/tls.crt; the web
    config names either the top-level symlink or the path through `..data` itself."""
    secret = tmp_path / "secret"
    version(secret / "..2026_12_07_v1", pki, "server")
    point(secret / "..data", "..2026_12_07_v1")
    for name in ("tls.crt", "tls.key"):
        os.symlink(f"..data/{name}", secret / name)
    base = secret if through == "file" else secret / "..data"
    config = tmp_path / "web.yml"
    config.write_text(tls_config(base / "tls.crt", base / "tls.key"))
    reachd = server(config)
    ctx = context(pki)
    assert presented(reachd.port, ctx) == der(pki / "server.crt")

    version(secret / "..2026_12_07_v2", pki, "server2")
    point(secret / "..data", "..2026_12_07_v2")
    wait_for(lambda: presented(reachd.port, ctx) == der(pki / "server2.crt"), timeout=FOLLOWS_WITHIN,
             what="the new Secret version's certificate")
    assert (secret / "..2026_12_07_v1" / "tls.crt").exists()


def test_the_web_config_itself_through_a_swapped_directory(pki, tmp_path, server):
    """The web config file is `DIR/current/web.yml`; swapping `current` changes who may log in."""
    conf = tmp_path / "conf"
    for name, users in (("v1", {"alice": ALICE_HASH}), ("v2", {"prometheus": PROMETHEUS_HASH})):
        (conf / name).mkdir(parents=True)
        (conf / name / "web.yml").write_text(tls_config(pki / "server.crt", pki / "server.key", users))
    point(conf / "current", "v1")
    reachd = server(conf / "current" / "web.yml")
    ctx = context(pki)
    alice = {"Authorization": basic("alice", ALICE_PASSWORD)}
    prometheus = {"Authorization": basic("prometheus", PROMETHEUS_PASSWORD)}
    assert request(reachd.port, ctx, "/status", alice)[0] == 200
    assert request(reachd.port, ctx, "/status", prometheus)[0] == 401

    point(conf / "current", "v2")
    wait_for(lambda: request(reachd.port, ctx, "/status", prometheus)[0] == 200, timeout=FOLLOWS_WITHIN,
             what="v2's users")
    assert request(reachd.port, ctx, "/status", alice)[0] == 401
