import CMnl
import Glibc
import Reachable
import Testing

/// ARCHITECTURE.md "How Linux state becomes a status": which lookups and addresses make a family count.
@Suite struct DeriveReachabilityTests {
    private static func ethernetWithIPv4() -> TableFixture {
        TableFixture([
            Messages.loopback(),
            Messages.veth(),
            MessageBuilder.address(index: 2, "198.18.0.2", prefix: 24),
            MessageBuilder.route(priority: 100, outputInterface: 2, gateway: "198.18.0.1"),
        ])
    }

    @Test func ipv4OnlyIsReachableOverIPv4Alone() {
        let fixture = Self.ethernetWithIPv4()
        let path = fixture.derive(ipv4: ipv4Lookup(via: 2, source: "198.18.0.2"))
        #expect(path.state == .reachable)
        #expect(path.isReachable)
        #expect(path.ipv4)
        #expect(!path.ipv6)
        #expect(path.transport == TransportSet(ethernet: true))
        #expect(!path.isDataMetered)
        #expect(path.interfaces.map(\.name) == ["eth0"], "loopback is not listed")
        let eth0 = path.interface(named: "eth0")
        #expect(eth0?.index == 2)
        #expect(eth0?.kind == "veth")
        #expect(eth0?.operState == "up")
        #expect(eth0?.isDefaultRoute == true)
        #expect(eth0?.addresses == ["198.18.0.2/24"])
    }

    @Test func ipv6OnlyIsReachableOverIPv6Alone() {
        let fixture = TableFixture([
            Messages.loopback(),
            Messages.veth(),
            MessageBuilder.address(index: 2, "fe80::1", prefix: 64, scope: UInt8(RT_SCOPE_LINK.rawValue)),
            MessageBuilder.address(index: 2, "2001:db8::2", prefix: 64),
            MessageBuilder.route(family: AF_INET6, priority: 1024, outputInterface: 2, gateway: "fe80::ff"),
        ])
        let path = fixture.derive(ipv6: ipv6Lookup(via: 2, source: "2001:db8::2"))
        #expect(path.state == .reachable)
        #expect(!path.ipv4)
        #expect(path.ipv6)
        #expect(path.transport == TransportSet(ethernet: true))
        #expect(path.interface(named: "eth0")?.isDefaultRoute == true)
        #expect(path.interface(named: "eth0")?.addresses == ["2001:db8::2/64", "fe80::1/64"])
    }

    @Test func dualStackReportsBothFamilies() {
        var fixture = Self.ethernetWithIPv4()
        fixture.apply(MessageBuilder.address(index: 2, "fd00::2", prefix: 64))
        let path = fixture.derive(
            ipv4: ipv4Lookup(via: 2, source: "198.18.0.2"), ipv6: ipv6Lookup(via: 2, source: "fd00::2")
        )
        #expect(path.state == .reachable)
        #expect(path.ipv4 && path.ipv6)
        #expect(path.interface(named: "eth0")?.addresses == ["198.18.0.2/24", "fd00::2/64"], "IPv4 first")
    }

    @Test func linkLocalAddressesAloneAreUnreachable() {
        let fixture = TableFixture([
            Messages.veth(),
            MessageBuilder.address(index: 2, "169.254.7.9", prefix: 16, scope: UInt8(RT_SCOPE_LINK.rawValue)),
            MessageBuilder.address(index: 2, "fe80::1", prefix: 64, scope: UInt8(RT_SCOPE_LINK.rawValue)),
            MessageBuilder.route(outputInterface: 2),
            MessageBuilder.route(family: AF_INET6, priority: 1024, outputInterface: 2, gateway: "fe80::ff"),
        ])
        let path = fixture.derive(
            ipv4: ipv4Lookup(via: 2, source: "169.254.7.9"), ipv6: ipv6Lookup(via: 2, source: "fe80::1")
        )
        #expect(path.state == .unreachable)
        #expect(!path.ipv4 && !path.ipv6)
        #expect(path.transport == TransportSet())
        #expect(path.interface(named: "eth0")?.addresses == ["169.254.7.9/16", "fe80::1/64"], "still listed")
    }

    /// Tentative, optimistic (still tentative) and DAD-failed addresses cannot be a source.
    @Test(arguments: [
        ("tentative", UInt32(IFA_F_TENTATIVE)),
        ("optimistic", UInt32(IFA_F_OPTIMISTIC)),
        ("optimistic+tentative", UInt32(IFA_F_OPTIMISTIC | IFA_F_TENTATIVE)),
        ("dadfailed", UInt32(IFA_F_DADFAILED | IFA_F_TENTATIVE)),
        ("dadfailed alone", UInt32(IFA_F_DADFAILED)),
    ])
    func addressStillInDuplicateDetectionIsNotUsable(name: String, flags: UInt32) {
        let fixture = TableFixture([
            Messages.veth(),
            MessageBuilder.address(index: 2, "2001:db8::2", prefix: 64, flags: flags),
            MessageBuilder.route(family: AF_INET6, priority: 1024, outputInterface: 2, gateway: "2001:db8::1"),
        ])
        let path = fixture.derive(ipv6: ipv6Lookup(via: 2, source: "2001:db8::2"))
        #expect(path.state == .unreachable, "\(name)")
        #expect(!path.ipv6)
    }

    @Test func nodadAndPermanentAddressesAreUsable() {
        let fixture = TableFixture([
            Messages.veth(),
            MessageBuilder.address(
                index: 2, "2001:db8::2", prefix: 64, flags: UInt32(IFA_F_NODAD | IFA_F_PERMANENT)
            ),
        ])
        #expect(fixture.derive(ipv6: ipv6Lookup(via: 2, source: "2001:db8::2")).ipv6)
    }

    /// `IFA_FLAGS` carries the full flags; when present it wins over the 8-bit `ifa_flags`.
    @Test func extendedFlagsAttributeOverridesHeaderFlags() {
        let tentativeOnlyInAttribute = MessageBuilder.address(index: 2, "2001:db8::2", prefix: 64, flags: 0) { header in
            mnl_attr_put_u32(header, UInt16(IFA_FLAGS), UInt32(IFA_F_TENTATIVE | IFA_F_MANAGETEMPADDR))
        }
        let fixture = TableFixture([Messages.veth(), tentativeOnlyInAttribute])
        #expect(fixture.table.addresses.first?.flags == UInt32(IFA_F_TENTATIVE | IFA_F_MANAGETEMPADDR))
        #expect(!fixture.derive(ipv6: ipv6Lookup(via: 2, source: "2001:db8::2")).ipv6)

        let headerOnly = TableFixture([
            Messages.veth(),
            MessageBuilder.address(
                index: 2, "2001:db8::3", prefix: 64, flags: UInt32(IFA_F_TENTATIVE), flagsAttribute: false),
        ])
        #expect(headerOnly.table.addresses.first?.flags == UInt32(IFA_F_TENTATIVE))
        #expect(!headerOnly.derive(ipv6: ipv6Lookup(via: 2, source: "2001:db8::3")).ipv6)
    }

    @Test func addressThatFinishesDuplicateDetectionBecomesUsable() {
        var fixture = TableFixture([
            Messages.veth(),
            MessageBuilder.address(index: 2, "2001:db8::2", prefix: 64, flags: UInt32(IFA_F_TENTATIVE)),
        ])
        let lookups = ipv6Lookup(via: 2, source: "2001:db8::2")
        #expect(fixture.derive(ipv6: lookups).state == .unreachable)
        fixture.apply(MessageBuilder.address(index: 2, "2001:db8::2", prefix: 64, flags: UInt32(IFA_F_PERMANENT)))
        #expect(fixture.table.addresses.count == 1, "the same address replaces its record")
        #expect(fixture.derive(ipv6: lookups).state == .reachable)
    }

    @Test func loopbackOnlyIsUnreachableAndListsNoInterface() {
        let fixture = TableFixture([Messages.loopback()] + Messages.loopbackAddresses())
        let failed = fixture.derive()
        #expect(failed.state == .unreachable)
        #expect(failed.interfaces.isEmpty)
        // Even an answer out of lo (a local route) does not count: loopback is never usable.
        let viaLoopback = fixture.derive(
            ipv4: ipv4Lookup(via: 1, source: "127.0.0.1", type: UInt8(RTN_LOCAL)),
            ipv6: ipv6Lookup(via: 1, source: "::1")
        )
        #expect(viaLoopback.state == .unreachable)
        #expect(!viaLoopback.ipv4 && !viaLoopback.ipv6)
    }

    @Test func failedLookupsAreUnreachableEvenWithDefaultRouteAndAddress() {
        let fixture = Self.ethernetWithIPv4()
        let path = fixture.derive(ipv4: .failed(errno: ENETUNREACH), ipv6: .failed(errno: EHOSTUNREACH))
        #expect(path.state == .unreachable)
        #expect(path.interface(named: "eth0")?.isDefaultRoute == true, "informational only")
        #expect(fixture.derive(ipv4: .notAsked, ipv6: .notAsked).state == .unreachable)
    }

    @Test(arguments: [RTN_UNREACHABLE, RTN_BLACKHOLE, RTN_PROHIBIT, RTN_THROW, RTN_LOCAL, RTN_MULTICAST])
    func nonUnicastLookupAnswerIsUnreachable(type: Int) {
        let fixture = Self.ethernetWithIPv4()
        let path = fixture.derive(ipv4: ipv4Lookup(via: 2, source: "198.18.0.2", type: UInt8(type)))
        #expect(path.state == .unreachable)
        #expect(path.transport == TransportSet(), "a family that does not count adds no transport")
    }

    @Test func lookupWhosePreferredSourceIsNotUsableDoesNotCount() {
        var fixture = Self.ethernetWithIPv4()
        fixture.apply(MessageBuilder.address(index: 2, "198.18.0.3", prefix: 24, flags: UInt32(IFA_F_DADFAILED)))
        #expect(fixture.derive(ipv4: ipv4Lookup(via: 2, source: "198.18.9.9")).state == .unreachable, "unknown source")
        #expect(fixture.derive(ipv4: ipv4Lookup(via: 2, source: "198.18.0.3")).state == .unreachable, "DAD failed")
        #expect(fixture.derive(ipv4: ipv4Lookup(via: 2, source: "0.0.0.0")).state == .unreachable, "no source")
        #expect(fixture.derive(ipv4: ipv4Lookup(via: 2, source: nil)).state == .unreachable, "no RTA_PREFSRC")
        #expect(fixture.derive(ipv4: ipv4Lookup(via: 2, source: "198.18.0.2")).state == .reachable)
    }

    /// The kernel may pick a source address living on another interface (a dummy, a loopback
    /// alias): it still counts, wherever it lives.
    @Test func preferredSourceOnAnotherInterfaceStillCounts() {
        let fixture = TableFixture([
            Messages.loopback(),
            Messages.veth(),
            MessageBuilder.link(
                index: 3, name: "dummy0", flags: LinkFlags.up, operState: UInt8(IF_OPER_DOWN), kind: "dummy"),
            MessageBuilder.address(index: 3, "198.19.0.1", prefix: 32),
            MessageBuilder.route(outputInterface: 2, gateway: "198.18.0.1"),
        ])
        let path = fixture.derive(ipv4: ipv4Lookup(via: 2, source: "198.19.0.1"))
        #expect(path.state == .reachable)
        #expect(path.ipv4)
        #expect(path.transport == TransportSet(ethernet: true), "the output interface's transport")
    }

    @Test func lookupWithoutKnownOutputInterfaceDoesNotCount() {
        let fixture = Self.ethernetWithIPv4()
        #expect(fixture.derive(ipv4: ipv4Lookup(via: nil, source: "198.18.0.2")).state == .unreachable)
        #expect(fixture.derive(ipv4: ipv4Lookup(via: 42, source: "198.18.0.2")).state == .unreachable)
    }

    @Test func deriveIsIndependentOfMessageOrder() {
        let messages = [
            Messages.loopback(),
            Messages.veth(index: 3, name: "eth1"),
            Messages.veth(index: 2, name: "eth0"),
            MessageBuilder.address(index: 2, "fd00::2", prefix: 64),
            MessageBuilder.address(index: 2, "198.18.0.9", prefix: 24),
            MessageBuilder.address(index: 2, "198.18.0.2", prefix: 24),
            MessageBuilder.route(outputInterface: 2, gateway: "198.18.0.1"),
        ]
        let forward = TableFixture(messages).derive(ipv4: ipv4Lookup(via: 2, source: "198.18.0.2"))
        let backward = TableFixture(messages.reversed()).derive(ipv4: ipv4Lookup(via: 2, source: "198.18.0.2"))
        #expect(forward == backward)
        #expect(forward.interfaces.map(\.name) == ["eth0", "eth1"], "sorted by index")
        #expect(forward.interface(named: "eth0")?.addresses == ["198.18.0.2/24", "198.18.0.9/24", "fd00::2/64"])
    }
}
