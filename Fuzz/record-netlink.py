#!/usr/bin/env python3
"""Records real rtnetlink traffic as seed inputs for the FuzzNetlink target (root only).

A namespace of its own (`fuzz-<pid>-rec`, deleted in every outcome) gets links of several
kinds, addresses of both families, default and specific routes, rules, a multipath route, an
`unreachable` route; then addresses and links go away again. What the kernel sends for that is
written in FuzzNetlink's input format (NetlinkStream.swift):

    tag (1 byte), then for tags 0-3: length (2 bytes, little-endian) and the datagram

tag 0: a datagram of notifications, as the event socket received it; 1: a datagram of a dump
answer; 2 / 3: the kernel's answer to the IPv4 / IPv6 route lookup reachd makes (8.8.8.8,
2001:4860:4860::8888); 4: the end of a batch. One file per scenario.

    python3 Fuzz/record-netlink.py Fuzz/Corpus/FuzzNetlink
"""

from __future__ import annotations

import os
import select
import socket
import struct
import subprocess
import sys

NETLINK_ROUTE = 0
SOL_NETLINK = 270
NETLINK_ADD_MEMBERSHIP = 1
# The groups NetlinkSource subscribes to: links, addresses, routes, rules, netconf of both families.
GROUPS = [1, 5, 9, 7, 11, 8, 19, 24, 25]
RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE = 18, 22, 26
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
RTA_DST = 1
EVENT, DUMP, LOOKUP_V4, LOOKUP_V6, END_OF_BATCH = range(5)
DESTINATIONS = {LOOKUP_V4: (socket.AF_INET, "8.8.8.8"), LOOKUP_V6: (socket.AF_INET6, "2001:4860:4860::8888")}


def record(tag: int, datagram: bytes = b"") -> bytes:
    if tag == END_OF_BATCH:
        return bytes([tag])
    return bytes([tag]) + struct.pack("<H", len(datagram)) + datagram


class Kernel:
    """An event socket subscribed like reachd's, and a request socket for dumps and lookups."""

    def __init__(self) -> None:
        self.events = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
        self.events.bind((0, 0))
        for group in GROUPS:
            self.events.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, group)
        self.requests = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
        self.requests.bind((0, 0))
        self.sequence = 0

    def drain_events(self, wait: float = 0.2) -> list[bytes]:
        """Every datagram the event socket has, waiting `wait` seconds for stragglers."""
        datagrams = []
        while select.select([self.events], [], [], wait)[0]:
            datagrams.append(self.events.recv(65536))
        return datagrams

    def ask(self, message_type: int, flags: int, payload: bytes) -> list[bytes]:
        """Sends one request; returns the answer's datagrams up to NLMSG_DONE or an error."""
        self.sequence += 1
        header = struct.pack("=LHHLL", 16 + len(payload), message_type, NLM_F_REQUEST | flags, self.sequence, 0)
        self.requests.send(header + payload)
        datagrams = []
        while True:
            datagram = self.requests.recv(65536)
            datagrams.append(datagram)
            if not flags & NLM_F_DUMP:
                return datagrams
            # A dump ends with NLMSG_DONE (3) or NLMSG_ERROR (2) as the datagram's last message.
            offset, last_type = 0, None
            while offset + 16 <= len(datagram):
                length, last_type = struct.unpack_from("=LH", datagram, offset)
                if length < 16:
                    break
                offset += (length + 3) & ~3
            if last_type in (2, 3):
                return datagrams

    def dumps(self) -> bytes:
        """Links, addresses and routes, as NetlinkRequester.dumpEverything asks for them."""
        out = b""
        for message_type, header_size in ((RTM_GETLINK, 16), (RTM_GETADDR, 8), (RTM_GETROUTE, 12)):
            for datagram in self.ask(message_type, NLM_F_DUMP, bytes(header_size)):
                out += record(DUMP, datagram)
        return out

    def lookups(self) -> bytes:
        """`ip route get` for both outside addresses, as NetlinkRequests.routeLookup asks."""
        out = b""
        for tag, (family, address) in DESTINATIONS.items():
            destination = socket.inet_pton(family, address)
            rtmsg = struct.pack("=BBBBBBBBL", family, len(destination) * 8, 0, 0, 0, 0, 0, 0, 0)
            attribute = struct.pack("=HH", 4 + len(destination), RTA_DST) + destination
            for datagram in self.ask(RTM_GETROUTE, 0, rtmsg + attribute):
                out += record(tag, datagram)
        return out


def ip(*arguments: str) -> None:
    subprocess.run(["ip", *arguments], check=True, capture_output=True, timeout=10)


def batch(kernel: Kernel, *commands: tuple[str, ...]) -> bytes:
    """Runs `ip` commands; returns what the kernel announced, then the lookups, as one batch."""
    for command in commands:
        ip(*command)
    events = b"".join(record(EVENT, datagram) for datagram in kernel.drain_events())
    return events + kernel.lookups() + record(END_OF_BATCH)


# Each scenario is a list of batches; each batch one or more `ip` commands.
SETUP = [
    [("link", "set", "lo", "up")],
    [("link", "add", "eth0", "type", "veth", "peer", "name", "peer0"), ("link", "set", "peer0", "up")],
    [("link", "set", "eth0", "up")],
    [("addr", "add", "198.18.0.2/24", "dev", "eth0"), ("-6", "addr", "add", "2001:db8::2/64", "dev", "eth0", "nodad")],
    [("route", "add", "default", "via", "198.18.0.1", "dev", "eth0", "src", "198.18.0.2", "metric", "100")],
    [("-6", "route", "add", "default", "via", "2001:db8::1", "dev", "eth0", "metric", "1024")],
]
MORE_LINKS = [
    [("link", "add", "wlan0", "type", "veth", "peer", "name", "wlan0p"), ("link", "set", "wlan0p", "up"), ("link", "set", "wlan0", "up")],
    [("addr", "add", "198.18.1.2/24", "dev", "wlan0"), ("addr", "add", "198.18.1.3/24", "dev", "wlan0")],
    [("link", "add", "br0", "type", "bridge"), ("link", "add", "link", "eth0", "name", "mv0", "type", "macvlan")],
    [("tuntap", "add", "tun0", "mode", "tun"), ("link", "set", "tun0", "up")],
    [("link", "add", "wwan0", "type", "veth", "peer", "name", "wwan0p"), ("link", "set", "wwan0", "up"), ("addr", "add", "198.19.0.2/32", "dev", "wwan0")],
]
ROUTING = [
    [("route", "add", "198.19.8.0/24", "via", "198.18.0.1")],
    [("route", "add", "198.19.9.0/24", "nexthop", "via", "198.18.0.1", "dev", "eth0", "nexthop", "via", "198.18.1.1", "dev", "wlan0")],
    [("route", "add", "default", "via", "198.18.1.1", "table", "100"), ("rule", "add", "from", "198.18.1.0/24", "table", "100")],
    [("route", "add", "unreachable", "default", "metric", "50")],
    [("route", "del", "unreachable", "default", "metric", "50")],
    [("-6", "route", "add", "2001:db8:5::/48", "via", "2001:db8::1")],
]
TEARDOWN = [
    [("addr", "del", "198.18.1.3/24", "dev", "wlan0")],
    [("addr", "del", "198.18.0.2/24", "dev", "eth0")],
    [("link", "set", "eth0", "down")],
    [("-6", "addr", "flush", "dev", "eth0")],
    [("link", "del", "wlan0")],
    [("link", "del", "eth0")],
]


def scenarios(kernel: Kernel) -> dict[str, bytes]:
    recorded: dict[str, bytes] = {}
    for name, batches in (("setup", SETUP), ("more-links", MORE_LINKS), ("routing", ROUTING)):
        recorded[f"events-{name}"] = b"".join(batch(kernel, *commands) for commands in batches)
    recorded["dump-full"] = kernel.dumps() + kernel.lookups() + record(END_OF_BATCH)
    recorded["events-teardown"] = b"".join(batch(kernel, *commands) for commands in TEARDOWN)
    recorded["dump-after-teardown"] = kernel.dumps() + kernel.lookups() + record(END_OF_BATCH)
    return recorded


def inside(directory: str) -> None:
    kernel = Kernel()
    kernel.drain_events(wait=0.05)
    for name, data in scenarios(kernel).items():
        with open(os.path.join(directory, name), "wb") as file:
            file.write(data)
        print(f"{name}: {len(data)} bytes")


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--inside":
        inside(sys.argv[2])
        return 0
    if len(sys.argv) != 2 or os.geteuid() != 0:
        print(__doc__.strip().splitlines()[-1], "(as root)", file=sys.stderr)
        return 2
    directory = os.path.abspath(sys.argv[1])
    os.makedirs(directory, exist_ok=True)
    name = f"fuzz-{os.getpid()}-rec"
    ip("netns", "add", name)
    try:
        subprocess.run(["ip", "netns", "exec", name, sys.executable, __file__, "--inside", directory], check=True, timeout=120)
    finally:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
