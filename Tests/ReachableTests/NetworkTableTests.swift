import CMnl
import Glibc
import Reachable
import Testing

/// The table behind `isDefaultRoute` and the address lists: applying, removing, replacing.
@Suite struct NetworkTableTests {
    private static let twoLinks: [[UInt8]] = [
        Messages.loopback(),
        Messages.veth(index: 2, name: "eth0"),
        Messages.veth(index: 3, name: "eth1"),
        MessageBuilder.address(index: 2, "198.18.0.2", prefix: 24),
        MessageBuilder.address(index: 2, "fd00::2", prefix: 64),
        MessageBuilder.address(index: 3, "198.18.1.2", prefix: 24),
    ]

    /// Point-to-point and policy-routed setups: a default route without a gateway, in table 100.
    @Test func gatewayLessDefaultRouteInAnotherTableCounts() {
        let fixture = TableFixture(Self.twoLinks + [MessageBuilder.route(table: 100, outputInterface: 3)])
        #expect(fixture.table.carriesDefaultRoute(3))
        #expect(!fixture.table.carriesDefaultRoute(2))
        let path = fixture.derive()
        #expect(path.interface(named: "eth1")?.isDefaultRoute == true)
        #expect(path.interface(named: "eth0")?.isDefaultRoute == false)
    }

    @Test func tableAbove255ComesFromTheTableAttribute() {
        let fixture = TableFixture(Self.twoLinks + [MessageBuilder.route(table: 1000, priority: 5, outputInterface: 2)])
        #expect(fixture.table.defaultRoutes.map(\.table) == [1000])
        #expect(fixture.table.carriesDefaultRoute(2))
    }

    @Test(arguments: [RTN_UNREACHABLE, RTN_BLACKHOLE, RTN_PROHIBIT, RTN_THROW])
    func nonUnicastDefaultRouteIsNotADefaultRoute(type: Int) {
        let fixture = TableFixture(Self.twoLinks + [MessageBuilder.route(type: UInt8(type), outputInterface: 2)])
        #expect(fixture.table.defaultRoutes.count == 1, "kept, so a later delete matches")
        #expect(!fixture.table.carriesDefaultRoute(2))
    }

    @Test func routesWithADestinationAreNotKept() {
        let fixture = TableFixture(
            Self.twoLinks + [
                MessageBuilder.route(destination: "198.18.0.0", destinationLength: 24, outputInterface: 2),
                MessageBuilder.route(
                    family: AF_INET6, destination: "fd00::", destinationLength: 64, outputInterface: 2),
            ])
        #expect(fixture.table.defaultRoutes.isEmpty)
        #expect(!fixture.table.carriesDefaultRoute(2))
    }

    @Test func multipathDefaultRouteMarksEveryNextHop() {
        let fixture = TableFixture(
            Self.twoLinks + [
                MessageBuilder.route(multipath: [(2, "198.18.0.1"), (3, "198.18.1.1")])
            ])
        #expect(fixture.table.defaultRoutes.first?.outputInterfaces == [2, 3])
        let path = fixture.derive()
        #expect(path.interfaces.filter(\.isDefaultRoute).map(\.name) == ["eth0", "eth1"])
    }

    @Test func ipv6MultipathDefaultRouteMarksEveryNextHop() {
        let fixture = TableFixture(
            Self.twoLinks + [
                MessageBuilder.route(family: AF_INET6, priority: 1024, multipath: [(3, "fe80::1"), (2, "fe80::2")])
            ])
        #expect(fixture.table.carriesDefaultRoute(2) && fixture.table.carriesDefaultRoute(3))
    }

    @Test func removedLinkTakesItsAddressesAndRoutesAlong() {
        var fixture = TableFixture(
            Self.twoLinks + [
                MessageBuilder.route(priority: 100, outputInterface: 2, gateway: "198.18.0.1"),
                MessageBuilder.route(priority: 200, outputInterface: 3, gateway: "198.18.1.1"),
            ])
        fixture.apply(MessageBuilder.link(removed: true, index: 2, name: "eth0", flags: 0))
        #expect(fixture.table.links[2] == nil)
        #expect(fixture.table.addresses(of: 2).isEmpty)
        #expect(!fixture.table.carriesDefaultRoute(2))
        #expect(fixture.table.links[3] != nil, "the other link stays")
        #expect(fixture.table.addresses(of: 3).count == 1)
        #expect(fixture.table.carriesDefaultRoute(3))
        #expect(fixture.derive().interfaces.map(\.name) == ["eth1"])
    }

    @Test func removedAddressAndRouteAreForgotten() {
        var fixture = TableFixture(Self.twoLinks + [MessageBuilder.route(priority: 100, outputInterface: 2)])
        fixture.apply([
            MessageBuilder.address(removed: true, index: 2, "198.18.0.2", prefix: 24),
            MessageBuilder.route(removed: true, priority: 100, outputInterface: 2),
        ])
        #expect(fixture.table.addresses(of: 2).map(\.description) == ["fd00::2/64"])
        #expect(fixture.table.defaultRoutes.isEmpty)
        #expect(fixture.table.usableAddress(IPAddress("198.18.0.2")!) == nil)
    }

    @Test func sameDefaultRouteAnnouncedAgainReplacesTheOldOne() {
        var fixture = TableFixture(Self.twoLinks + [MessageBuilder.route(priority: 100, outputInterface: 2)])
        fixture.apply(MessageBuilder.route(priority: 100, outputInterface: 3))
        #expect(fixture.table.defaultRoutes.count == 1)
        #expect(!fixture.table.carriesDefaultRoute(2))
        #expect(fixture.table.carriesDefaultRoute(3))
    }

    /// After a silent flush (link down) the source re-dumps routes and replaces them all.
    @Test func replaceRoutesDropsRoutesMissingFromTheDump() {
        var fixture = TableFixture(
            Self.twoLinks + [
                MessageBuilder.route(priority: 100, outputInterface: 2),
                MessageBuilder.route(table: 100, outputInterface: 3),
                MessageBuilder.route(family: AF_INET6, priority: 1024, outputInterface: 2),
            ])
        var parser = NetlinkParser()
        let dump = parser.parse(
            MessageBuilder.route(table: 100, outputInterface: 3, flags: UInt16(NLM_F_MULTI))
                + MessageBuilder.route(destination: "198.18.1.0", destinationLength: 24, outputInterface: 3)
                + MessageBuilder.done()
        ).map(\.message)
        #expect(dump.count == 3)
        fixture.table.removeAllRoutes()
        for message in dump { fixture.table.apply(message) }
        #expect(fixture.table.defaultRoutes.map(\.table) == [100])
        #expect(!fixture.table.carriesDefaultRoute(2))
        #expect(fixture.table.carriesDefaultRoute(3))
        #expect(fixture.table.addresses.count == 3, "addresses untouched")
        #expect(fixture.table.links.count == 3, "links untouched")
    }

    @Test func aParserThatKeepsOnlyDefaultRoutesNotesTheOthers() {
        var parser = NetlinkParser(keepsSpecificRoutes: false)
        let messages = parser.parse(
            MessageBuilder.route(outputInterface: 2)
                + MessageBuilder.route(destination: "198.18.1.0", destinationLength: 24, outputInterface: 3)
        ).map(\.message)
        #expect(messages.count == 2)
        guard case .route(let route) = messages.first else {
            Issue.record("a default route is parsed in full: \(messages)")
            return
        }
        #expect(route.outputInterfaces == [2])
        #expect(messages.last == .specificRoute(removed: false))
        #expect(parser.malformedCount == 0)
    }

    @Test func messagesThatChangeNoStateLeaveTheTableAlone() {
        var table = NetworkTable()
        var parser = NetlinkParser()
        let messages = parser.parse(
            Messages.veth() + MessageBuilder.rule() + MessageBuilder.done() + MessageBuilder.error(-ENOBUFS)
        ).map(\.message)
        for message in messages { table.apply(message) }
        #expect(messages[1] == .other(type: UInt16(RTM_NEWRULE)))
        #expect(messages[3] == .error(code: -ENOBUFS))
        #expect(table.links.count == 1 && table.addresses.isEmpty && table.defaultRoutes.isEmpty)
    }

    @Test func usableAddressFindsItOnAnyInterface() {
        let fixture = TableFixture(Self.twoLinks)
        #expect(fixture.table.usableAddress(IPAddress("198.18.1.2")!)?.interfaceIndex == 3)
        #expect(fixture.table.usableAddress(IPAddress("198.18.9.9")!) == nil)
    }
}
