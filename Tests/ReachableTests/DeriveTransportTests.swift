import CMnl
import Foundation
import Glibc
import Reachable
import Testing

/// Transport and cost: NetworkManager's classification order, and `isDataMetered`.
@Suite struct DeriveTransportTests {
    @Test func twoDefaultRoutesOnDifferentTransportsShowBoth() {
        let fixture = TableFixture([
            Messages.loopback(),
            MessageBuilder.link(index: 2, name: "wlan0", flags: LinkFlags.running),
            Messages.veth(index: 3, name: "eth1"),
            MessageBuilder.address(index: 2, "198.18.0.2", prefix: 24),
            MessageBuilder.address(index: 3, "2001:db8::3", prefix: 64),
            MessageBuilder.route(priority: 600, outputInterface: 2, gateway: "198.18.0.1"),
            MessageBuilder.route(family: AF_INET6, priority: 100, outputInterface: 3, gateway: "2001:db8::1"),
        ])
        let path = fixture.derive(
            ipv4: ipv4Lookup(via: 2, source: "198.18.0.2"), ipv6: ipv6Lookup(via: 3, source: "2001:db8::3"),
            facts: FakeInterfaceFacts(deviceTypes: ["wlan0": "wlan"])
        )
        #expect(path.state == .reachable)
        #expect(path.transport == TransportSet(wifi: true, ethernet: true))
        #expect(path.interface(named: "wlan0")?.transport == .wifi)
        #expect(path.interface(named: "wlan0")?.kind == nil)
        #expect(path.interface(named: "eth1")?.transport == .ethernet)
        #expect(path.interfaces.allSatisfy { $0.isDefaultRoute })
    }

    @Test func familyThatDoesNotCountAddsNoTransport() {
        let fixture = TableFixture([
            MessageBuilder.link(index: 2, name: "wlan0", flags: LinkFlags.running),
            Messages.veth(index: 3, name: "eth1"),
            MessageBuilder.address(index: 2, "198.18.0.2", prefix: 24),
            MessageBuilder.address(index: 3, "2001:db8::3", prefix: 64, flags: UInt32(IFA_F_TENTATIVE)),
        ])
        let path = fixture.derive(
            ipv4: ipv4Lookup(via: 2, source: "198.18.0.2"), ipv6: ipv6Lookup(via: 3, source: "2001:db8::3"),
            facts: FakeInterfaceFacts(deviceTypes: ["wlan0": "wlan"])
        )
        #expect(path.transport == TransportSet(wifi: true))
        #expect(!path.ipv6)
    }

    /// A VPN over Wi-Fi: IPv4 leaves through WireGuard (gateway-less default route), IPv6 through Wi-Fi.
    @Test func tunnelDefaultRouteIsOtherTransport() {
        let fixture = TableFixture([
            MessageBuilder.link(index: 2, name: "wlan0", flags: LinkFlags.running),
            MessageBuilder.link(
                index: 7, name: "wg0", flags: LinkFlags.tunnel, hardwareType: ARPHRD_NONE,
                operState: UInt8(IF_OPER_UNKNOWN), kind: "wireguard"
            ),
            MessageBuilder.address(index: 2, "2001:db8::2", prefix: 64),
            MessageBuilder.address(index: 7, "198.18.7.2", prefix: 32),
            MessageBuilder.route(outputInterface: 7),
        ])
        let path = fixture.derive(
            ipv4: ipv4Lookup(via: 7, source: "198.18.7.2"), ipv6: ipv6Lookup(via: 2, source: "2001:db8::2"),
            facts: FakeInterfaceFacts(wirelessPhys: ["wlan0"])
        )
        #expect(path.state == .reachable)
        #expect(path.transport == TransportSet(wifi: true, other: true))
        #expect(path.interface(named: "wg0")?.transport == .other)
        #expect(path.interface(named: "wg0")?.kind == "wireguard")
        #expect(path.interface(named: "wg0")?.isDefaultRoute == true, "no gateway needed")
        #expect(path.interface(named: "wlan0")?.isDefaultRoute == false)
    }

    @Test func rawIPModemIsCellularAndMetered() {
        let fixture = TableFixture([
            MessageBuilder.link(
                index: 4, name: "rmnet_data0", flags: reachd_iff_up | reachd_iff_running | reachd_iff_lower_up,
                hardwareType: ARPHRD_RAWIP, operState: UInt8(IF_OPER_UNKNOWN)
            ),
            MessageBuilder.address(index: 4, "198.18.4.2", prefix: 30),
            MessageBuilder.route(outputInterface: 4),
        ])
        let path = fixture.derive(ipv4: ipv4Lookup(via: 4, source: "198.18.4.2"))
        #expect(path.state == .reachable)
        #expect(path.transport == TransportSet(cellular: true))
        #expect(path.isDataMetered)
        #expect(path.interface(named: "rmnet_data0")?.transport == .cellular)
    }

    @Test func sysfsWwanDeviceIsCellularAndMetered() {
        let fixture = TableFixture([
            MessageBuilder.link(index: 4, name: "wwan0", flags: LinkFlags.running),
            MessageBuilder.address(index: 4, "198.18.4.2", prefix: 30),
        ])
        let path = fixture.derive(
            ipv4: ipv4Lookup(via: 4, source: "198.18.4.2"), facts: FakeInterfaceFacts(deviceTypes: ["wwan0": "wwan"])
        )
        #expect(path.transport == TransportSet(cellular: true))
        #expect(path.isDataMetered)
    }

    /// `wwan*`/`usb*` style patterns (fnmatch) mark a chosen interface metered; a matching
    /// interface that no counting lookup chose does not.
    @Test(arguments: [
        ("wwan0", ["wwan*"], true), ("usb0", ["wwan*", "usb*"], true), ("eth0", ["wwan*", "usb*"], false),
        ("usb1", ["usb[0-9]"], true), ("eth0", [], false),
    ])
    func meteredPatternMatchesChosenInterface(name: String, patterns: [String], metered: Bool) {
        let fixture = TableFixture([
            MessageBuilder.link(index: 3, name: name, flags: LinkFlags.running),
            MessageBuilder.link(index: 9, name: "usb9", flags: LinkFlags.running),
            MessageBuilder.address(index: 3, "198.18.3.2", prefix: 24),
        ])
        let path = fixture.derive(ipv4: ipv4Lookup(via: 3, source: "198.18.3.2"), meteredPatterns: patterns)
        #expect(path.state == .reachable)
        #expect(path.transport == TransportSet(ethernet: true), "a pattern changes cost, not transport")
        #expect(path.isDataMetered == metered)
    }

    @Test func unreachableNetworkIsNeverMetered() {
        let fixture = TableFixture([
            MessageBuilder.link(
                index: 4, name: "wwan0", flags: LinkFlags.up, hardwareType: ARPHRD_RAWIP, operState: UInt8(IF_OPER_DOWN)
            ),
            MessageBuilder.address(index: 4, "198.18.4.2", prefix: 30),
        ])
        let path = fixture.derive(ipv4: ipv4Lookup(via: 4, source: "198.18.4.2"), meteredPatterns: ["wwan*"])
        #expect(path.state == .unreachable)
        #expect(!path.isDataMetered)
    }

    /// The classification order: kind, then hardware type, then sysfs, then plain Ethernet.
    @Test(arguments: [
        // kind wins over everything, including sysfs facts that would say Wi-Fi.
        ClassifierCase("tun", kind: "tun", type: ARPHRD_NONE, expected: .other),
        ClassifierCase("wireguard", kind: "wireguard", type: ARPHRD_NONE, expected: .other),
        ClassifierCase("gre", kind: "gre", type: ARPHRD_IPGRE, expected: .other),
        ClassifierCase("ipip", kind: "ipip", type: ARPHRD_TUNNEL, expected: .other),
        ClassifierCase("sit", kind: "sit", type: ARPHRD_SIT, expected: .other),
        ClassifierCase("vti", kind: "vti", type: ARPHRD_TUNNEL, expected: .other),
        ClassifierCase("ppp", kind: "ppp", type: ARPHRD_PPP, expected: .other),
        // a traffic-shaping device reports Ethernet hardware but carries no traffic of its own
        ClassifierCase("ifb", kind: "ifb", expected: .other),
        ClassifierCase("veth", kind: "veth", deviceType: "wlan", expected: .ethernet),
        ClassifierCase("bridge", kind: "bridge", expected: .ethernet),
        ClassifierCase("bond", kind: "bond", expected: .ethernet),
        ClassifierCase("vlan", kind: "vlan", expected: .ethernet),
        ClassifierCase("macvlan", kind: "macvlan", expected: .ethernet),
        ClassifierCase("ipvlan", kind: "ipvlan", expected: .ethernet),
        // then the hardware type
        ClassifierCase("ppp0", type: ARPHRD_PPP, expected: .other),
        ClassifierCase("none", type: ARPHRD_NONE, expected: .other),
        ClassifierCase("rawip", type: ARPHRD_RAWIP, deviceType: "wlan", expected: .cellular),
        ClassifierCase("tunnel6", type: ARPHRD_TUNNEL6, expected: .other),
        // then sysfs, for Ethernet-type hardware without a known kind
        ClassifierCase("wlan", deviceType: "wlan", expected: .wifi),
        ClassifierCase("phy80211", phy: true, expected: .wifi),
        ClassifierCase("wwan", deviceType: "wwan", expected: .cellular),
        ClassifierCase("unknown kind", kind: "somethingnew", deviceType: "wlan", expected: .wifi),
        ClassifierCase("plain ether", expected: .ethernet),
        ClassifierCase("infiniband", type: ARPHRD_INFINIBAND, expected: .other),
    ])
    func classifierFollowsNetworkManagerOrder(_ example: ClassifierCase) {
        let link = LinkRecord(
            index: 3, name: "if3", flags: LinkFlags.running, hardwareType: UInt16(example.type),
            operState: UInt8(IF_OPER_UP), kind: example.kind
        )
        let facts = FakeInterfaceFacts(
            deviceTypes: example.deviceType.map { ["if3": $0] } ?? [:], wirelessPhys: example.phy ? ["if3"] : []
        )
        #expect(TransportClassifier(facts: facts).transport(of: link) == example.expected, "\(example.label)")
    }

    @Test func sysfsFactsReadUeventAndPhy() throws {
        let root = "/tmp/reachd-sysfs-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: "\(root)/wlp2s0/phy80211", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: "\(root)/wwan0", withIntermediateDirectories: true)
        try "INTERFACE=wwan0\nDEVTYPE=wwan\nIFINDEX=4\n".write(
            toFile: "\(root)/wwan0/uevent", atomically: true, encoding: .utf8)
        let facts = SysfsInterfaceFacts(root: root)
        #expect(facts.deviceType(of: "wwan0") == "wwan")
        #expect(facts.deviceType(of: "wlp2s0") == nil)
        #expect(facts.hasWirelessPhy("wlp2s0"))
        #expect(!facts.hasWirelessPhy("wwan0"))
        #expect(facts.deviceType(of: "../wwan0") == nil, "no path tricks")
        #expect(!facts.hasWirelessPhy(".."))
    }
}

struct ClassifierCase: Sendable, CustomTestStringConvertible {
    var label: String
    var kind: String?
    var type: Int32
    var deviceType: String?
    var phy: Bool
    var expected: Transport

    init(
        _ label: String, kind: String? = nil, type: Int32 = ARPHRD_ETHER, deviceType: String? = nil, phy: Bool = false,
        expected: Transport
    ) {
        self.label = label
        self.kind = kind
        self.type = type
        self.deviceType = deviceType
        self.phy = phy
        self.expected = expected
    }

    var testDescription: String { label }
}
