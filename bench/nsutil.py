"""Network namespaces, processes and rtnetlink for reachd's benchmark (root only, stdlib only).

Everything the bench creates is registered here and torn down by `cleanup()` in every outcome:
namespaces are named `<tag>-<n>` (tag from $REACHD_BENCH_TAG, so bench/run.sh can sweep what a
killed run left behind), every process started goes into `PROCESSES`, and namespaces are only
deleted after every process still inside them is killed. A namespace's files under
`/etc/netns/<name>/` (what `ip netns exec` bind-mounts over `/etc`: `hosts`, `resolv.conf`) go
with it. Addresses come from 198.18.0.0/15 and, for IPv6, 2001:db8::/32.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import struct
import subprocess
import time

CLONE_NEWNET = 0x40000000
ETC_NETNS = "/etc/netns"
_libc = ctypes.CDLL(None, use_errno=True)
TAG = os.environ.get("REACHD_BENCH_TAG") or f"rb{os.getpid()}"
_counter = 0
NAMESPACES: list["Namespace"] = []
PROCESSES: list[subprocess.Popen] = []


def run(*cmd: str, check: bool = True, timeout: float = 30, **kw) -> subprocess.CompletedProcess:
    result = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, **kw)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


def _setns(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns({path}): {os.strerror(err)}")
    finally:
        os.close(fd)


@contextlib.contextmanager
def inside(ns: "Namespace"):
    """Runs the block with this thread in `ns` (sockets created there belong to it), then back."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        _setns(f"/run/netns/{ns.name}")
        try:
            yield
        finally:
            if _libc.setns(home, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back home failed")
    finally:
        os.close(home)


class Namespace:
    def __init__(self, somaxconn: int = 65535) -> None:
        global _counter
        _counter += 1
        self.number = _counter
        self.name = f"{TAG}-{_counter}"
        NAMESPACES.append(self)
        run("ip", "netns", "add", self.name)
        self.ip("link", "set", "lo", "up")
        # Per-namespace sysctls: a deep accept queue and a wide ephemeral range for 10,000 clients.
        self.exec_check("sysctl", "-q", "-w", f"net.core.somaxconn={somaxconn}",
                        "net.ipv4.ip_local_port_range=1024 65000", "net.ipv4.tcp_tw_reuse=1")

    def ip(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return run("ip", "-n", self.name, *args, check=check)

    @property
    def etc(self) -> str:
        return os.path.join(ETC_NETNS, self.name)

    def write_etc(self, name: str, text: str) -> None:
        """`/etc/netns/<ns>/<name>`: what processes started later with `ip netns exec` see as
        `/etc/<name>` (removed with the namespace)."""
        os.makedirs(self.etc, exist_ok=True)
        with open(os.path.join(self.etc, name), "w") as f:
            f.write(text)

    def exec_check(self, *cmd: str) -> subprocess.CompletedProcess:
        return run("ip", "netns", "exec", self.name, *cmd)

    def popen(self, *cmd: str, **kw) -> subprocess.Popen:
        """A process in this namespace, started as `ip netns exec NS cmd...` (exec, no fork:
        the Popen's pid is the command's own)."""
        proc = subprocess.Popen(["ip", "netns", "exec", self.name, *cmd], **kw)
        PROCESSES.append(proc)
        return proc

    def pids(self) -> list[int]:
        out = run("ip", "netns", "pids", self.name, check=False).stdout.split()
        return [int(p) for p in out if p.isdigit()]

    def destroy(self) -> None:
        for _ in range(3):
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
        run("ip", "netns", "del", self.name, check=False)
        shutil.rmtree(self.etc, ignore_errors=True)
        if self in NAMESPACES:
            NAMESPACES.remove(self)


def ifindex(ns: Namespace, dev: str) -> int:
    with inside(ns):
        return socket.if_nametoindex(dev)


class VethNet:
    """`ns` (where the server runs) with veth `<dev>` 198.18.<o>.2/24 and a default route via the
    peer end 198.18.<o>.1 in its own namespace, so the carrier is real. No IPv6 link-local
    addresses (addrgenmode none): a link flap then changes the status exactly once.

    With `ipv6`, the pair is dual-stack: 2001:db8:<o>::2/64 and ::1/64 (`nodad`: usable at once,
    no DAD notification later) and an IPv6 default route via ::1. `ip link set down` flushes the
    IPv6 addresses of the downed end (keep_addr_on_down is 0, the default) and every route through
    it; `restore()` puts back what a link-up does not.

    The two ends get different interface indexes (11 and 21), as veth pairs have in real life.
    In two fresh namespaces both would be index 2, and the kernel's linkwatch would then take
    the veth for a device without a lower link (`ifindex == iflink`): its carrier events become
    non-urgent and are batched to one run per second, so about 1 in 70 link-up transitions
    would reach every listener (`ip monitor` too) up to a second late."""

    def __init__(self, ipv6: bool = False) -> None:
        self.ns = Namespace()
        self.peer = Namespace()
        octet = self.ns.number % 250 + 1
        self.dev = f"rbv{self.ns.number}a"
        self.peer_dev = f"rbv{self.ns.number}b"
        self.subnet = f"198.18.{octet}"
        self.ipv6 = ipv6
        self.subnet6 = f"2001:db8:{octet}:"
        self.ns.ip("link", "add", self.dev, "index", "11", "type", "veth", "peer", "name", self.peer_dev,
                   "index", "21", "netns", self.peer.name)
        self.ns.ip("link", "set", self.dev, "addrgenmode", "none")
        self.peer.ip("link", "set", self.peer_dev, "addrgenmode", "none")
        self.ns.ip("addr", "add", f"{self.subnet}.2/24", "dev", self.dev)
        self.peer.ip("addr", "add", f"{self.subnet}.1/24", "dev", self.peer_dev)
        if ipv6:
            self.peer.ip("addr", "add", f"{self.subnet6}:1/64", "dev", self.peer_dev, "nodad")
        self.peer.ip("link", "set", self.peer_dev, "up")
        self.ns.ip("link", "set", self.dev, "up")
        self.restore()
        self.index = ifindex(self.ns, self.dev)

    def restore(self) -> None:
        """The default routes (and with `ipv6` the address) that a link down flushed and a link up
        does not bring back."""
        self.ns.ip("route", "replace", "default", "via", f"{self.subnet}.1", "dev", self.dev)
        if self.ipv6:
            self.ns.ip("addr", "replace", f"{self.subnet6}:2/64", "dev", self.dev, "nodad")
            self.ns.ip("-6", "route", "replace", "default", "via", f"{self.subnet6}:1", "dev", self.dev)

    def destroy(self) -> None:
        self.ns.destroy()
        self.peer.destroy()


class UplinksNet:
    """`ns` (where the server runs) with two uplinks, the way out of a host with a wired link and
    a backup: veth `wan0` 198.18.<o>.2/24 with a default route via the peer end 198.18.<o>.1
    metric 100 (the kernel's choice), and veth `wan1` 198.19.<o>.2/24 with a default route via
    198.19.<o>.1 metric 200 (the backup), both ends of both in one peer namespace (`isp0`,
    `isp1`). The peer holds the outside addresses on its `lo`, reachable through either link:
    `outside` (198.19.255.1, the route questions' destination: no packet is sent to it),
    `targets_ip` (.10) and `check_ip` (.20) for the HTTP servers. IPv4 only.

    As in VethNet: no IPv6 link-local addresses, and each pair's ends get different interface
    indexes (wan0 11 / isp0 21, wan1 12 / isp1 22). rp_filter is off in `ns`: a reply through
    wan1 comes in on the interface that is not the main table's way back to the server."""

    METRICS = (100, 200)
    OUTSIDE = "198.19.255.1"

    def __init__(self) -> None:
        self.ns = Namespace()
        self.peer = Namespace()
        octet = self.ns.number % 250 + 1
        self.devs = ("wan0", "wan1")
        self.peer_devs = ("isp0", "isp1")
        self.subnets = (f"198.18.{octet}", f"198.19.{octet}")
        self.outside, self.targets_ip, self.check_ip = self.OUTSIDE, "198.19.255.10", "198.19.255.20"
        self.ns.exec_check("sysctl", "-q", "-w", "net.ipv4.conf.all.rp_filter=0",
                           "net.ipv4.conf.default.rp_filter=0")
        for i, (dev, peer_dev, subnet) in enumerate(zip(self.devs, self.peer_devs, self.subnets)):
            self.ns.ip("link", "add", dev, "index", str(11 + i), "type", "veth", "peer", "name", peer_dev,
                       "index", str(21 + i), "netns", self.peer.name)
            self.ns.ip("link", "set", dev, "addrgenmode", "none")
            self.peer.ip("link", "set", peer_dev, "addrgenmode", "none")
            self.ns.ip("addr", "add", f"{subnet}.2/24", "dev", dev)
            self.peer.ip("addr", "add", f"{subnet}.1/24", "dev", peer_dev)
            self.peer.ip("link", "set", peer_dev, "up")
            self.ns.ip("link", "set", dev, "up")
        for address in (self.outside, self.targets_ip, self.check_ip):
            self.peer.ip("addr", "add", f"{address}/32", "dev", "lo")
        self.restore()
        self.index = {dev: ifindex(self.ns, dev) for dev in self.devs}

    def address(self, i: int) -> str:
        """wan<i>'s address."""
        return f"{self.subnets[i]}.2"

    def restore(self) -> None:
        """Both default routes (a link down flushes its own, and a link up does not bring it back;
        `restore_route` puts one back from a netlink socket, timed at its ACK)."""
        for i, dev in enumerate(self.devs):
            self.ns.ip("route", "replace", "default", "via", self.gateway(i), "dev", dev, "metric", str(self.METRICS[i]))

    def gateway(self, i: int) -> str:
        """The peer end of wan<i>."""
        return f"{self.subnets[i]}.1"

    def restore_route(self, rt: "Rtnl", i: int) -> None:
        """wan<i>'s default route back, as `ip route replace` asks for it; returns at the kernel's ACK."""
        rt.default_route(self.index[self.devs[i]], self.gateway(i), self.METRICS[i])

    def destroy(self) -> None:
        self.ns.destroy()
        self.peer.destroy()


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 10) -> int | None:
    """Signals a process we started, waits (bounded), kills it if it lingers."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
    if proc in PROCESSES:
        PROCESSES.remove(proc)
    return proc.returncode


def cleanup() -> None:
    for proc in list(PROCESSES):
        stop(proc, signal.SIGKILL, timeout=5)
    for ns in list(NAMESPACES):
        ns.destroy()
    # Anything left under our tag (e.g. from an interrupted namespace creation).
    listed = run("ip", "netns", "list", check=False).stdout.split()
    for name in listed:
        if name.startswith(f"{TAG}-"):
            for pid in run("ip", "netns", "pids", name, check=False).stdout.split():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            run("ip", "netns", "del", name, check=False)
    # /etc/netns/<tag>-* of namespaces that are gone (or never got made).
    with contextlib.suppress(FileNotFoundError):
        for name in os.listdir(ETC_NETNS):
            if name.startswith(f"{TAG}-"):
                shutil.rmtree(os.path.join(ETC_NETNS, name), ignore_errors=True)


# --------------------------------------------------------------------------- rtnetlink

NLM_F_REQUEST, NLM_F_ACK, NLM_F_REPLACE, NLM_F_EXCL, NLM_F_CREATE = 0x1, 0x4, 0x100, 0x200, 0x400
NLMSG_ERROR = 2
RTM_NEWLINK, RTM_NEWADDR, RTM_DELADDR, RTM_NEWROUTE = 16, 20, 21, 24
IFF_UP = 0x1
IFA_ADDRESS, IFA_LOCAL = 1, 2
RTA_OIF, RTA_GATEWAY, RTA_PRIORITY = 4, 5, 6
RT_TABLE_MAIN, RTPROT_BOOT, RT_SCOPE_UNIVERSE, RTN_UNICAST = 254, 3, 0, 1


class Rtnl:
    """The request `ip link set` / `ip addr add|del` sends, on a socket made inside `ns`; each
    call returns when the kernel's ACK arrives — the moment `ip` itself would return."""

    def __init__(self, ns: Namespace) -> None:
        with inside(ns):
            self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
        self.sock.bind((0, 0))
        self.seq = int(time.time()) & 0xFFFF

    def close(self) -> None:
        self.sock.close()

    def _request(self, kind: int, flags: int, payload: bytes) -> None:
        self.seq += 1
        header = struct.pack("=LHHLL", 16 + len(payload), kind, flags | NLM_F_REQUEST | NLM_F_ACK, self.seq, 0)
        self.sock.send(header + payload)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            data = self.sock.recv(65536)
            offset = 0
            while offset + 16 <= len(data):
                length, mtype, _, seq, _ = struct.unpack_from("=LHHLL", data, offset)
                if mtype == NLMSG_ERROR and seq == self.seq:
                    (error,) = struct.unpack_from("=i", data, offset + 16)
                    if error:
                        raise OSError(-error, os.strerror(-error))
                    return
                offset += (length + 3) & ~3 if length else len(data)
        raise TimeoutError("no netlink ACK")

    def link_set(self, index: int, up: bool) -> None:
        self._request(RTM_NEWLINK, 0, struct.pack("=BxHiII", socket.AF_UNSPEC, 0, index, IFF_UP if up else 0, IFF_UP))

    def default_route(self, index: int, gateway: str, metric: int) -> None:
        """`ip route replace default via GATEWAY dev <index> metric METRIC` (IPv4, main table)."""
        payload = struct.pack("=BBBBBBBBI", socket.AF_INET, 0, 0, 0, RT_TABLE_MAIN, RTPROT_BOOT, RT_SCOPE_UNIVERSE,
                              RTN_UNICAST, 0)
        payload += (self._rta(RTA_GATEWAY, socket.inet_aton(gateway)) + self._rta(RTA_OIF, struct.pack("=i", index))
                    + self._rta(RTA_PRIORITY, struct.pack("=I", metric)))
        self._request(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, payload)

    @staticmethod
    def _rta(kind: int, data: bytes) -> bytes:
        raw = struct.pack("=HH", 4 + len(data), kind) + data
        return raw + b"\0" * (-len(raw) % 4)

    def addr(self, add: bool, index: int, address: str, prefix: int) -> None:
        packed = socket.inet_aton(address)
        payload = struct.pack("=BBBBI", socket.AF_INET, prefix, 0, 0, index)
        payload += self._rta(IFA_LOCAL, packed) + self._rta(IFA_ADDRESS, packed)
        if add:
            self._request(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, payload)
        else:
            self._request(RTM_DELADDR, 0, payload)


# --------------------------------------------------------------------------- /proc


def cpu_ns(pid: int) -> int:
    """CPU time of every thread of `pid`, in ns (schedstat: exact, not 10 ms ticks)."""
    total = 0
    with contextlib.suppress(FileNotFoundError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
    return total


def threads(pid: int) -> dict[int, dict]:
    """Per thread: name, CPU ns, voluntary and involuntary context switches."""
    out = {}
    with contextlib.suppress(FileNotFoundError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            base = f"/proc/{pid}/task/{tid}"
            try:
                with open(f"{base}/comm") as f:
                    comm = f.read().strip()
                with open(f"{base}/schedstat") as f:
                    cpu = int(f.read().split()[0])
                vol = invol = 0
                with open(f"{base}/status") as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches"):
                            vol = int(line.split()[1])
                        elif line.startswith("nonvoluntary_ctxt_switches"):
                            invol = int(line.split()[1])
                out[int(tid)] = {"comm": comm, "cpu_ns": cpu, "voluntary": vol, "involuntary": invol}
            except (FileNotFoundError, ProcessLookupError):
                continue
    return out


def sample_threads(pids: list[int], seconds: float, period: float = 0.2,
                   memory: dict[int, list] | None = None) -> dict[int, dict]:
    """Per process of `pids`, per thread: CPU ms and wake-ups (voluntary + involuntary context
    switches) over the next `seconds`, read every `period` s so that a thread that ends within the
    window still counts up to its last reading, and one that starts counts from zero. Summing only
    the threads alive at both ends drops the threads libdispatch retires mid-window (its workers
    leave after a few idle seconds), and can come out negative. With `memory`, each process's
    (`VmRSS`, `RssAnon`) in KiB at every reading is appended to `memory[pid]`."""
    first = {pid: threads(pid) for pid in pids}
    last = {pid: dict(first[pid]) for pid in pids}
    deadline = time.monotonic() + seconds
    while True:
        for pid in pids:
            last[pid].update(threads(pid))
            if memory is not None:
                with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                    fields = status_fields(pid, ("VmRSS", "RssAnon"))
                    memory.setdefault(pid, []).append((fields["VmRSS"], fields["RssAnon"]))
        left = deadline - time.monotonic()
        if left <= 0:
            break
        time.sleep(min(period, left))
    out = {}
    for pid in pids:
        per_thread = {}
        for tid, a in last[pid].items():
            b = first[pid].get(tid, {"cpu_ns": 0, "voluntary": 0, "involuntary": 0})
            d = {"comm": a["comm"], "cpu_ms": (a["cpu_ns"] - b["cpu_ns"]) / 1e6,
                 "wakeups": (a["voluntary"] - b["voluntary"]) + (a["involuntary"] - b["involuntary"])}
            if d["cpu_ms"] or d["wakeups"]:
                per_thread[str(tid)] = d
        out[pid] = per_thread
    return out


def status_kib(pid: int, field: str = "VmRSS") -> int:
    return status_fields(pid, (field,))[field]


def status_fields(pid: int, fields: tuple[str, ...]) -> dict[str, int]:
    """`fields` of /proc/PID/status, in KiB, from one read (0 for one not there)."""
    out = dict.fromkeys(fields, 0)
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name = line.split(":", 1)[0]
            if name in out:
                out[name] = int(line.split()[1])
    return out


def udp_sent(pid: int) -> dict:
    """UDP datagrams sent in the network namespace of `pid` since it was made (the kernel's
    counters: `Udp: OutDatagrams` of /proc/PID/net/snmp, `Udp6OutDatagrams` of .../snmp6)."""
    out = {"udp4": None, "udp6": None}
    with contextlib.suppress(FileNotFoundError, ProcessLookupError):
        with open(f"/proc/{pid}/net/snmp") as f:
            rows = [line.split() for line in f if line.startswith("Udp:")]
        if len(rows) >= 2:
            out["udp4"] = int(rows[1][rows[0].index("OutDatagrams")])
        with open(f"/proc/{pid}/net/snmp6") as f:
            for line in f:
                name, _, value = line.partition(" ")
                if name == "Udp6OutDatagrams":
                    out["udp6"] = int(value)
    return out


def children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []
