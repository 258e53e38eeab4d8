"""libcurl, c-ares and mimalloc (what both allocate from) are loaded on demand: without them a
reachd with no probes serves as always, and one with a target refuses to start saying which
library is missing. The library is hidden for real: a private mount namespace binds an empty file
over its shared object."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from reachd_process import free_port, reachd_binary


def hidden_command(soname: str, *args: str) -> list[str]:
    library = Path(f"/usr/lib/x86_64-linux-gnu/{soname}").resolve()
    if not library.exists():
        pytest.skip(f"{soname} is not installed where Debian puts it")
    script = f'mount --bind /dev/null "{library}" && exec "$@"'
    return ["unshare", "--mount", "sh", "-c", script, "sh", reachd_binary(), *args]


def udp_sockets(pid: int) -> list[str]:
    """The bound UDP sockets (IPv4 and IPv6; one that has sent anything is bound) among `pid`'s descriptors."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    found = []
    for table in ("udp", "udp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) > 9 and fields[9] in inodes:
                found.append(f"{table} {fields[1]}")
    return found


def test_without_probes_nothing_is_loaded_and_reachd_serves():
    port = free_port()
    process = subprocess.Popen(hidden_command("libcares.so.2", "--host", "127.0.0.1", "--port", str(port)),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output = ""
        for line in process.stdout:
            output += line
            if "reachd listening" in line:
                break
        assert "reachd listening" in output, output
        # Serving (its signal handlers are in place once /livez answers).
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/livez", timeout=2) as response:
                    assert response.status == 200
                    break
            except OSError:
                time.sleep(0.05)
        maps = Path(f"/proc/{process.pid}/maps").read_text()
        assert "libcurl" not in maps and "libcares" not in maps and "libmimalloc" not in maps, \
            "loaded although nothing is probed"
        # Nor a UDP socket: without --dns-check (or a target) no DNS query can be sent.
        assert not udp_sockets(process.pid), "a UDP socket is open although nothing is configured"
    finally:
        process.terminate()
        process.wait(timeout=15)
    assert process.returncode == 0


@pytest.mark.parametrize("soname", ["libcares.so.2", "libmimalloc.so.2"])
def test_a_target_without_the_library_is_refused_at_start_naming_it(soname):
    result = subprocess.run(
        hidden_command(soname, "--host", "127.0.0.1", "--port", str(free_port()), "--target", "db=tcp://127.0.0.1:9"),
        capture_output=True, text=True, timeout=30)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "cannot start the probes" in result.stderr and soname in result.stderr, result.stderr


def test_a_probing_reachd_maps_all_three():
    """With a target the three are loaded (curl and c-ares were handed mimalloc's functions: it
    is loaded by the same call that initialises them, and a probe runs)."""
    port = free_port()
    process = subprocess.Popen([reachd_binary(), "--host", "127.0.0.1", "--port", str(port),
                                "--target", "db=tcp://127.0.0.1:9"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        state = None
        while time.monotonic() < deadline and state in (None, "unknown"):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=2) as response:
                    state = json.load(response)["targets"][0]["state"]
            except OSError:
                pass
            time.sleep(0.05)
        assert state == "unreachable", state  # port 9 on loopback refuses: a probe ran
        maps = Path(f"/proc/{process.pid}/maps").read_text()
        for library in ("libcurl.so.4", "libcares.so.2", "libmimalloc.so.2"):
            assert library in maps, f"{library} not mapped"
    finally:
        process.terminate()
        process.wait(timeout=15)
