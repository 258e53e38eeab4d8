"""Linux network namespaces for the end-to-end tests (root only).

Every namespace is named `e2e-<pid>-<n>`, lives only as long as the test that made it,
and is deleted in every outcome (see `conftest.py` fixtures and `cleanup_all`).
Addresses come only from the benchmarking range 198.18.0.0/15.

`socket_in(ns, ...)` creates a socket *inside* a namespace from this process (a short-lived
thread calls setns(2) through ctypes), so tests can talk to a reachd that listens on the
namespace's 127.0.0.1 without spawning a client process per connection.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import socket
import subprocess
import threading
import time

CLONE_NEWNET = 0x40000000
_counter = itertools.count(1)
_created: set[str] = set()
_lock = threading.Lock()
_libc = ctypes.CDLL(None, use_errno=True)


def netns_supported() -> tuple[bool, str]:
    """Whether this process may create namespaces; the reason when it may not."""
    if os.geteuid() != 0:
        return False, "network namespaces need root"
    try:
        name = f"e2e-{os.getpid()}-probe"
        subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True, timeout=10)
        subprocess.run(["ip", "netns", "del", name], check=True, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as error:
        return False, f"cannot create network namespaces: {error}"
    return True, ""


def ip(*args: str, check: bool = True, timeout: float = 10) -> subprocess.CompletedProcess:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {result.stderr.strip()}")
    return result


class Namespace:
    """One network namespace with its loopback up."""

    def __init__(self) -> None:
        self.number = next(_counter)
        self.name = f"e2e-{os.getpid()}-{self.number}"
        with _lock:
            _created.add(self.name)
        ip("netns", "add", self.name)
        self.ip("link", "set", "lo", "up")

    def ip(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return ip("-n", self.name, *args, check=check)

    def exec(self, *command: str, timeout: float = 30, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", self.name, *command], timeout=timeout, **kwargs)

    def socket(self, family: int = socket.AF_INET, type: int = socket.SOCK_STREAM) -> socket.socket:
        return socket_in(self.name, family, type)

    def delete(self) -> None:
        delete_namespace(self.name)


def delete_namespace(name: str) -> None:
    ip("netns", "del", name, check=False)
    with _lock:
        _created.discard(name)


def cleanup_all() -> None:
    """Delete every namespace this process created (and any left by it under its prefix)."""
    with _lock:
        names = set(_created)
    prefix = f"e2e-{os.getpid()}-"
    try:
        listed = ip("netns", "list", check=False).stdout.split()
        names |= {word for word in listed if word.startswith(prefix)}
    except (OSError, subprocess.SubprocessError):
        pass
    for name in names:
        delete_namespace(name)


class VethNetwork:
    """Namespace `ns` (where reachd runs) joined by a veth pair to `peer`.

    ns:   e2e<n>a  198.18.<n>.2/24, default via 198.18.<n>.1
    peer: e2e<n>b  198.18.<n>.1/24
    The peer end lives in its own namespace so the carrier comes up for real.
    """

    def __init__(self, default_route: bool = True) -> None:
        self.ns = Namespace()
        try:
            self.peer = Namespace()
            octet = self.ns.number % 250 + 1
            self.subnet = f"198.18.{octet}"
            self.link = f"e2e{self.ns.number}a"
            self.peer_link = f"e2e{self.ns.number}b"
            self.address = f"{self.subnet}.2/24"
            self.gateway = f"{self.subnet}.1"
            self.ns.ip("link", "add", self.link, "type", "veth", "peer", "name", self.peer_link,
                       "netns", self.peer.name)
            self.ns.ip("addr", "add", self.address, "dev", self.link)
            self.peer.ip("addr", "add", f"{self.gateway}/24", "dev", self.peer_link)
            self.peer.ip("link", "set", self.peer_link, "up")
            self.ns.ip("link", "set", self.link, "up")
            if default_route:
                self.add_default_route()
        except BaseException:
            self.delete()
            raise

    def add_default_route(self) -> None:
        self.ns.ip("route", "replace", "default", "via", self.gateway, "dev", self.link)

    def del_default_route(self) -> None:
        self.ns.ip("route", "del", "default")

    def link_down(self) -> None:
        self.ns.ip("link", "set", self.link, "down")

    def link_up(self) -> None:
        self.ns.ip("link", "set", self.link, "up")

    def wait_carrier(self, timeout: float = 5.0) -> None:
        """Wait until the kernel reports the link as running (carrier may take ~1 s)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = self.ns.ip("-br", "link", "show", "dev", self.link).stdout
            if " UP " in f" {out} " and "LOWER_UP" in out:
                return
            time.sleep(0.02)
        raise TimeoutError(f"{self.link} has no carrier after {timeout}s")

    def delete(self) -> None:
        # Deleting either namespace destroys the veth pair.
        for ns in (getattr(self, "ns", None), getattr(self, "peer", None)):
            if ns is not None:
                ns.delete()


def socket_in(netns: str, family: int = socket.AF_INET, type: int = socket.SOCK_STREAM) -> socket.socket:
    """A new socket that belongs to network namespace `netns` (see `sockets_in`)."""
    return sockets_in(netns, 1, family, type)[0]


def sockets_in(
    netns: str, count: int, family: int = socket.AF_INET, type: int = socket.SOCK_STREAM
) -> list[socket.socket]:
    """`count` new sockets that belong to network namespace `netns`.

    A socket's namespace is fixed when it is created; only the creating thread switches
    namespace (setns affects the calling thread alone), so this process stays where it is.
    """
    result: dict = {"sockets": []}

    def worker() -> None:
        try:
            fd = os.open(f"/run/netns/{netns}", os.O_RDONLY)
            try:
                if _libc.setns(fd, CLONE_NEWNET) != 0:
                    errno = ctypes.get_errno()
                    raise OSError(errno, f"setns({netns}): {os.strerror(errno)}")
            finally:
                os.close(fd)
            for _ in range(count):
                result["sockets"].append(socket.socket(family, type))
        except BaseException as error:  # noqa: BLE001
            result["error"] = error

    thread = threading.Thread(target=worker, name=f"setns-{netns}")
    thread.start()
    thread.join()
    if "error" in result:
        for s in result["sockets"]:
            s.close()
        raise result["error"]
    return result["sockets"]
