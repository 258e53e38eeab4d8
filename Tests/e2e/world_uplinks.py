"""A client with two ways out, for `--per-uplink` and targets pinned to an interface (DESIGN
"Every uplink on its own"): two ISPs in front of one shared internet, both families.

    client ns (reachd)            isp0 ns                      inet ns (the "internet")
    wan0 198.18.O.2/28     ────── cust 198.18.O.1/28
         2001:db8:O:a0::2/64           2001:db8:O:a0::1/64
                                  core 198.18.O.33/28  ────── isp0 198.18.O.34/28
                                       2001:db8:O:b0::1/64         2001:db8:O:b0::2/64
                                  default via inet
                                                               lo: 198.19.O.1   2001:db8:O:5::1   (the outside
                                  isp1 ns                              destinations of the route lookups)
    wan1 198.18.O.18/28    ────── cust 198.18.O.17/28              198.19.O.10  2001:db8:O:5::10  check.test
         2001:db8:O:a1::2/64           2001:db8:O:a1::1/64         198.19.O.20  2001:db8:O:5::20  target.test
                                  core 198.18.O.49/28  ────── isp1 198.18.O.50/28
                                       2001:db8:O:b1::1/64         2001:db8:O:b1::2/64
                                  default via inet             dnsmasq on 198.19.O.153 (outside the
                                                                 service range: a broken ISP does not
    default via 198.18.O.1 dev wan0 metric 100                   break DNS, so a check reads `timeout`)
    default via 198.18.O.17 dev wan1 metric 200                routes back: 198.18.O.0/28 via isp0,
    (IPv6 the same, metrics 100 / 200)                                      198.18.O.16/28 via isp1 (and IPv6)

`policy=True`: wan1's default routes (both families) live only in table 100, and no rule selects
that table until `add_policy_rules()` (`from <wan1's address> table 100`, both families): the main
table then has only wan0's default routes.

`break_isp(n, families)` puts a `blackhole` route toward the service ranges (198.19.O.0/25,
2001:db8:O:5::/64) inside ispN: the client's routes stay, the ISP forwards nothing past its first
hop and answers nothing (a forwarded packet that meets a blackhole gets no ICMP) — the check
times out. DNS (198.19.O.153) is outside those ranges and keeps working. `restore_isp(n)` undoes it.

IPv6 is set up as in world_dualstack.py: `addrgenmode none` on every link (no link-local whose DAD
would end mid-test), `nodad` addresses, a static `fe80::1` on each ISP link (a router solicits a
neighbour for a packet it forwards from its link-local address only). rp_filter is off in the
client: a reply through wan1 comes in on the interface that is not the main table's best way back.

Every name of the world (namespaces, links) lives only in its own namespaces: `netns.Namespace`
names them uniquely; `wan0`, `wan1`, `cust`, `core`, `isp0`, `isp1` are per-namespace names.

API:
    uplinks                fixture: an UplinkWorld (policy=False), torn down in every outcome
    uplinks_policy         fixture: an UplinkWorld(policy=True)
    reachd_up(world, *args, env=)  fixture: reachd in the world's client namespace with the outside
                           destinations given; `reachd_up.many(world, [args], [args])`
    UplinkWorld: client, isp0, isp1, inet (netns.Namespace); wan (("wan0", "wan1")), address(i, family),
           gateway(i, family), check4/check6, target4/target6, dns_ip, destinations(),
           check_server(), target_server() → PeerServer, break_isp(i, families), restore_isp(i),
           link_down(i), link_up(i), add_policy_rules(), capture(i) → PacketCapture of what wan<i>
           sent (at its ISP's end)
    PeerServer: a world.Server on the internet's `::` that also records each connection's peer
           address (`peers`, IPv4 without the ::ffff: prefix)
    reading: interface_of(doc, name), uplink_connectivity(doc, name), wait_uplink(server, name, pred, t)
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

import netns
from conftest import _dump_on_failure, stop_reachd
from world import NO_CONTENT, NOT_FOUND, OK, Dnsmasq, Server, start_many_in, start_reachd_in, wait_status
from world_dualstack import PacketCapture

FAMILIES = ("ipv4", "ipv6")
WANS = ("wan0", "wan1")
METRICS = (100, 200)
TABLE = "100"


class PeerServer(Server):
    """A `world.Server` that also records the peer address of every connection it accepts."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.peers: list[str] = []

    def _serve(self, raw, stopping) -> None:
        try:
            peer = raw.getpeername()[0]
        except OSError:
            peer = "?"
        if peer.startswith("::ffff:"):
            peer = peer[len("::ffff:"):]
        with self._cond:
            self.peers.append(peer)
        super()._serve(raw, stopping)

    def peers_from(self, *addresses: str) -> list[str]:
        with self._cond:
            return [p for p in self.peers if p in addresses]


class UplinkWorld:
    """The four namespaces, their links and routes, DNS and the servers a test starts (module doc)."""

    def __init__(self, policy: bool = False) -> None:
        self.policy = policy
        self._servers: list[Server] = []
        self._dns: list[Dnsmasq] = []
        self._captures: list[PacketCapture] = []
        self.wan = WANS
        self.client = netns.Namespace()
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    # -- addresses

    def address(self, index: int, family: str) -> str:
        """The client's address on wan<index>."""
        return f"{self.v4}.{16 * index + 2}" if family == "ipv4" else f"{self.v6}:a{index}::2"

    def gateway(self, index: int, family: str) -> str:
        """ISP <index>'s address on the client's link."""
        return f"{self.v4}.{16 * index + 1}" if family == "ipv4" else f"{self.v6}:a{index}::1"

    def addresses(self, index: int) -> tuple[str, str]:
        return self.address(index, "ipv4"), self.address(index, "ipv6")

    def destinations(self) -> list[str]:
        """reachd's outside destinations: addresses of the internet, routed through the ISPs."""
        return ["--ipv4-destination", self.dest4, "--ipv6-destination", self.dest6]

    # -- building

    def _build(self) -> None:
        o = self.octet = self.client.number % 250 + 1
        self.v4, self.v6 = f"198.18.{o}", f"2001:db8:{o}"
        self.service4, self.service6 = f"198.19.{o}.0/25", f"{self.v6}:5::/64"
        self.dest4, self.dest6 = f"198.19.{o}.1", f"{self.v6}:5::1"
        self.check4, self.check6 = f"198.19.{o}.10", f"{self.v6}:5::10"
        self.target4, self.target6 = f"198.19.{o}.20", f"{self.v6}:5::20"
        self.dns_ip = f"198.19.{o}.153"
        self.log_dir = Path(tempfile.mkdtemp(prefix=f"e2e-{os.getpid()}-uplinks-"))

        self.isp0 = netns.Namespace()
        self.isp1 = netns.Namespace()
        self.inet = netns.Namespace()
        self.isps = (self.isp0, self.isp1)
        c, n = self.client, self.inet
        sysctl(c, "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0")

        # Internet: service addresses on lo, forwarding off (it is the far end).
        batch = "".join(f"addr add {a}/32 dev lo\n" for a in (self.dest4, self.check4, self.target4, self.dns_ip))
        batch += "".join(f"addr add {a}/128 dev lo nodad\n" for a in (self.dest6, self.check6, self.target6))
        n.exec("ip", "-batch", "-", input=batch.encode(), check=True, capture_output=True)

        for i, isp in enumerate(self.isps):
            wan = WANS[i]
            sysctl(isp, "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.conf.all.rp_filter=0",
                   "net.ipv4.conf.default.rp_filter=0")
            # client wan<i> ↔ isp<i> cust
            c.ip("link", "add", wan, "type", "veth", "peer", "name", "cust", "netns", isp.name)
            c.ip("link", "set", wan, "addrgenmode", "none")
            isp.ip("link", "set", "cust", "addrgenmode", "none")
            sysctl(c, f"net.ipv4.conf.{wan}.rp_filter=0")
            c.ip("addr", "add", f"{self.address(i, 'ipv4')}/28", "dev", wan)
            c.ip("addr", "add", f"{self.address(i, 'ipv6')}/64", "dev", wan, "nodad")
            isp.ip("addr", "add", f"{self.gateway(i, 'ipv4')}/28", "dev", "cust")
            isp.ip("addr", "add", f"{self.gateway(i, 'ipv6')}/64", "dev", "cust", "nodad")
            isp.ip("addr", "add", "fe80::1/64", "dev", "cust", "nodad")
            # isp<i> up ↔ inet isp<i>
            up4, far4 = f"{self.v4}.{32 + 16 * i + 1}", f"{self.v4}.{32 + 16 * i + 2}"
            up6, far6 = f"{self.v6}:b{i}::1", f"{self.v6}:b{i}::2"
            isp.ip("link", "add", "core", "type", "veth", "peer", "name", f"isp{i}", "netns", n.name)
            isp.ip("link", "set", "core", "addrgenmode", "none")
            n.ip("link", "set", f"isp{i}", "addrgenmode", "none")
            isp.ip("addr", "add", f"{up4}/28", "dev", "core")
            isp.ip("addr", "add", f"{up6}/64", "dev", "core", "nodad")
            isp.ip("addr", "add", "fe80::1/64", "dev", "core", "nodad")
            n.ip("addr", "add", f"{far4}/28", "dev", f"isp{i}")
            n.ip("addr", "add", f"{far6}/64", "dev", f"isp{i}", "nodad")
            n.ip("addr", "add", "fe80::2/64", "dev", f"isp{i}", "nodad")
            for ns, link in ((isp, "cust"), (isp, "core"), (n, f"isp{i}"), (c, wan)):
                ns.ip("link", "set", link, "up")
            isp.ip("route", "add", "default", "via", far4, "dev", "core")
            isp.ip("-6", "route", "add", "default", "via", far6, "dev", "core")
            n.ip("route", "add", f"{self.v4}.{16 * i}/28", "via", up4, "dev", f"isp{i}")
            n.ip("-6", "route", "add", f"{self.v6}:a{i}::/64", "via", up6, "dev", f"isp{i}")

        for i in range(2):
            self.wait_carrier(i)
            self.add_default_routes(i)

        self.resolv_dir = Path("/etc/netns") / c.name
        self.resolv_dir.mkdir(parents=True, exist_ok=True)
        self.resolv_path = self.resolv_dir / "resolv.conf"
        self.resolv_path.write_text(f"nameserver {self.dns_ip}\n")
        self.dns = Dnsmasq(n.name, self.dns_ip, [
            f"--host-record=check.test,{self.check4},{self.check6}",
            f"--host-record=target.test,{self.target4},{self.target6}",
        ], self.log_dir)
        self._dns.append(self.dns)
        self.dns.wait_ready(c.name, "check.test")

    def add_default_routes(self, index: int) -> None:
        """wan<index>'s default routes, both families: the main table with its metric, or (wan1 of
        a policy world) table 100."""
        wan = WANS[index]
        where = ["table", TABLE] if (self.policy and index == 1) else ["metric", str(METRICS[index])]
        self.client.ip("route", "replace", "default", "via", self.gateway(index, "ipv4"), "dev", wan, *where)
        self.client.ip("-6", "route", "replace", "default", "via", self.gateway(index, "ipv6"), "dev", wan, *where)

    def add_policy_rules(self) -> None:
        """`from <wan1's address> table 100`, both families (a policy world)."""
        assert self.policy
        self.client.ip("rule", "add", "from", self.address(1, "ipv4"), "table", TABLE)
        self.client.ip("-6", "rule", "add", "from", self.address(1, "ipv6"), "table", TABLE)

    def wait_carrier(self, index: int, timeout: float = 10.0) -> None:
        wan = WANS[index]
        deadline = time.monotonic() + timeout
        while "LOWER_UP" not in self.client.ip("-br", "link", "show", "dev", wan).stdout:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{wan} has no carrier after {timeout}s")
            time.sleep(0.02)

    # -- faults

    def break_isp(self, index: int, families: tuple[str, ...] = FAMILIES) -> None:
        """ISP <index> silently drops what it would forward toward the service ranges."""
        isp = self.isps[index]
        if "ipv4" in families:
            isp.ip("route", "replace", "blackhole", self.service4)
        if "ipv6" in families:
            isp.ip("-6", "route", "replace", "blackhole", self.service6)

    def restore_isp(self, index: int) -> None:
        isp = self.isps[index]
        isp.ip("route", "del", "blackhole", self.service4, check=False)
        isp.ip("-6", "route", "del", "blackhole", self.service6, check=False)

    def link_down(self, index: int) -> None:
        self.client.ip("link", "set", WANS[index], "down")

    def link_up(self, index: int) -> None:
        """Up again, its carrier back; the kernel flushed its IPv6 address (keep_addr_on_down is
        off) and its routes while down: restore them."""
        wan = WANS[index]
        self.client.ip("link", "set", wan, "up")
        self.wait_carrier(index)
        self.client.ip("addr", "replace", f"{self.address(index, 'ipv6')}/64", "dev", wan, "nodad")
        self.add_default_routes(index)

    # -- servers and captures

    def _server(self, default, routes: dict) -> PeerServer:
        server = PeerServer(self.inet.name, 0, default=default, bind="::")
        for path, behaviour in routes.items():
            server.route(path, behaviour)
        self._servers.append(server)
        return server.start()

    def check_server(self) -> PeerServer:
        """204 on /generate_204 (404 elsewhere), both families: `check_url(server)`."""
        return self._server(NOT_FOUND, {"/generate_204": NO_CONTENT})

    def target_server(self) -> PeerServer:
        """200 on every path, both families."""
        return self._server(OK, {})

    def capture(self, index: int) -> PacketCapture:
        """Every frame wan<index> sends, seen at its ISP's end (`cust`)."""
        capture = PacketCapture(self.isps[index].name, "cust")
        self._captures.append(capture)
        return capture

    def dns_log(self) -> str:
        return self.dns.output()

    # -- cleanup

    def close(self) -> None:
        for capture in self._captures:
            capture.close()
        for server in self._servers:
            server.stop()
        for dns in self._dns:
            dns.stop()
        resolv_dir = getattr(self, "resolv_dir", None)
        if resolv_dir is not None:
            shutil.rmtree(resolv_dir, ignore_errors=True)
            try:
                resolv_dir.parent.rmdir()  # /etc/netns, when nothing else uses it
            except OSError:
                pass
        for name in ("inet", "isp1", "isp0", "client"):
            ns = getattr(self, name, None)
            if ns is not None:
                ns.delete()
        log_dir = getattr(self, "log_dir", None)
        if log_dir is not None:
            shutil.rmtree(log_dir, ignore_errors=True)


def sysctl(ns: netns.Namespace, *settings: str) -> None:
    ns.exec("sysctl", "-qw", *settings, check=True, capture_output=True)


def check_url(world: UplinkWorld, server: Server) -> str:
    return f"http://check.test:{server.port}/generate_204"


# --------------------------------------------------------------------------- reading


def interface_of(doc: dict, name: str) -> dict | None:
    for interface in doc.get("interfaces") or []:
        if interface["name"] == name:
            return interface
    return None


def uplink_connectivity(doc: dict, name: str) -> dict | None:
    """`interfaces[name].connectivity` (None when the interface is absent or its value is null)."""
    interface = interface_of(doc, name)
    return None if interface is None else interface["connectivity"]


def wait_uplink(server, name: str, predicate, timeout: float) -> dict:
    """Poll /status until `predicate(interfaces[name].connectivity)` (a dict, or None); returns
    the whole document."""
    def check(doc: dict) -> bool:
        interface = interface_of(doc, name)
        return interface is not None and "connectivity" in interface and predicate(interface["connectivity"])
    try:
        return wait_status(server, check, timeout, what=f"{name}'s connectivity")
    except TimeoutError as error:
        from world import status
        doc = status(server)
        raise TimeoutError(f"{error}\n{name}: {interface_of(doc, name)}") from None


def families_are(state: str, reason: str | None = None, families: tuple[str, ...] = FAMILIES):
    """A predicate on a connectivity object: each of `families` has this state (and reason)."""
    def predicate(connectivity: dict | None) -> bool:
        return connectivity is not None and all(
            connectivity.get(f) is not None and connectivity[f]["state"] == state
            and (reason is None or connectivity[f]["reason"] == reason) for f in families)
    predicate.__name__ = f"{'+'.join(families)} {state}/{reason}"
    return predicate



# --------------------------------------------------------------------------- fixtures


def _world_fixture(request, policy: bool) -> UplinkWorld:
    w = UplinkWorld(policy=policy)

    def finish() -> None:
        failed = any(getattr(request.node, f"rep_{when}", None) is not None
                     and getattr(request.node, f"rep_{when}").failed for when in ("setup", "call"))
        if failed:
            try:
                print(f"\n---- dnsmasq ----\n{w.dns_log()[-3000:]}")
            except OSError:
                pass
        w.close()

    request.addfinalizer(finish)
    return w


@pytest.fixture
def uplinks(request):
    """A fresh UplinkWorld (module doc); torn down in every outcome."""
    return _world_fixture(request, policy=False)


@pytest.fixture
def uplinks_policy(request):
    """A fresh UplinkWorld whose wan1 default routes live in table 100 (no rule yet)."""
    return _world_fixture(request, policy=True)


@pytest.fixture
def reachd_up(request):
    """`reachd_up(world, *args, env=None)`: reachd in the world's client namespace with the world's
    outside destinations, ready; stopped (its log printed on failure) at teardown.
    `reachd_up.many(world, [args], [args])` starts several at once."""
    servers: list = []

    def make(world: UplinkWorld, *args: str, env: dict | None = None):
        server = start_reachd_in(world, *world.destinations(), *args, env=env)
        servers.append(server)
        return server

    def many(world: UplinkWorld, *arg_lists: list[str]):
        started = start_many_in(world, *[[*world.destinations(), *args] for args in arg_lists])
        servers.extend(started)
        return started

    make.many = many
    yield make
    for server in reversed(servers):
        _dump_on_failure(request, server)
        stop_reachd(server)
