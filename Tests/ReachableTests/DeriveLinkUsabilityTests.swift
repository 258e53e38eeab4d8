import CMnl
import Glibc
import Reachable
import Testing

/// "A usable interface is not loopback, is administratively up, and has carrier."
@Suite struct DeriveLinkUsabilityTests {
    /// One link, an address and a default route through it; the lookup points at the link.
    private func derive(flags: UInt32, operState: UInt8, kind: String? = "veth", hardwareType: Int32 = ARPHRD_ETHER)
        -> NetworkPath
    {
        let fixture = TableFixture([
            MessageBuilder.link(
                index: 5, name: "if5", flags: flags, hardwareType: hardwareType, operState: operState, kind: kind),
            MessageBuilder.address(index: 5, "198.18.5.2", prefix: 24),
            MessageBuilder.route(outputInterface: 5),
        ])
        return fixture.derive(ipv4: ipv4Lookup(via: 5, source: "198.18.5.2"))
    }

    @Test func upWithCarrierIsUsable() {
        #expect(derive(flags: LinkFlags.running, operState: UInt8(IF_OPER_UP)).state == .reachable)
    }

    @Test func defaultRouteOnALinkWithoutCarrierIsNotUsable() {
        let path = derive(flags: LinkFlags.up, operState: UInt8(IF_OPER_DOWN))
        #expect(path.state == .unreachable)
        #expect(path.interface(named: "if5")?.operState == "down")
        #expect(path.interface(named: "if5")?.isDefaultRoute == true, "the route is there, the link is not usable")
    }

    @Test func administrativelyDownLinkIsNotUsableWhateverItsOperstate() {
        let flags = LinkFlags.running & ~reachd_iff_up
        #expect(derive(flags: flags, operState: UInt8(IF_OPER_UP)).state == .unreachable)
        #expect(derive(flags: flags, operState: UInt8(IF_OPER_UNKNOWN)).state == .unreachable)
    }

    @Test(arguments: [
        (IF_OPER_LOWERLAYERDOWN, "lowerlayerdown"), (IF_OPER_DORMANT, "dormant"), (IF_OPER_TESTING, "testing"),
        (IF_OPER_NOTPRESENT, "notpresent"), (IF_OPER_DOWN, "down"),
    ])
    func operstatesOtherThanUpOrUnknownAreNotUsable(operState: Int, name: String) {
        let path = derive(flags: LinkFlags.running, operState: UInt8(operState))
        #expect(path.state == .unreachable)
        #expect(path.interface(named: "if5")?.operState == name)
    }

    /// tun never reports carrier: operstate `unknown` with `LOWER_UP` counts (systemd-networkd's rule).
    @Test func unknownOperstateWithLowerUpIsUsableLikeTun() {
        let path = derive(
            flags: reachd_iff_up | LinkFlags.pointToPoint | reachd_iff_lower_up, operState: UInt8(IF_OPER_UNKNOWN),
            kind: "tun", hardwareType: ARPHRD_NONE
        )
        #expect(path.state == .reachable)
        #expect(path.interface(named: "if5")?.operState == "unknown")
        #expect(path.transport == TransportSet(other: true))
    }

    @Test func unknownOperstateWithRunningIsUsable() {
        #expect(
            derive(flags: reachd_iff_up | reachd_iff_running, operState: UInt8(IF_OPER_UNKNOWN)).state == .reachable)
    }

    @Test func unknownOperstateButDormantIsNotUsable() {
        let flags = LinkFlags.running | reachd_iff_dormant
        #expect(derive(flags: flags, operState: UInt8(IF_OPER_UNKNOWN)).state == .unreachable)
    }

    @Test func unknownOperstateWithoutCarrierFlagsIsNotUsable() {
        #expect(derive(flags: LinkFlags.up, operState: UInt8(IF_OPER_UNKNOWN)).state == .unreachable)
    }

    @Test func linkWithoutOperstateAttributeReadsAsUnknown() {
        let fixture = TableFixture([
            MessageBuilder.link(index: 5, name: "if5", flags: LinkFlags.running, operState: nil, kind: "veth"),
            MessageBuilder.address(index: 5, "198.18.5.2", prefix: 24),
        ])
        let path = fixture.derive(ipv4: ipv4Lookup(via: 5, source: "198.18.5.2"))
        #expect(path.interface(named: "if5")?.operState == "unknown")
        #expect(path.state == .reachable, "unknown with carrier flags")
    }

    @Test func loopbackFlagMakesAnyLinkUnusable() {
        let flags = LinkFlags.running | reachd_iff_loopback
        let path = derive(flags: flags, operState: UInt8(IF_OPER_UP))
        #expect(path.state == .unreachable)
        #expect(path.interfaces.isEmpty)
    }
}
