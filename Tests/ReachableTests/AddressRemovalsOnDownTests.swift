import CMnl
import Foundation
import Testing

@testable import Reachable

/// Which IPv6 addresses a link set down is about to lose, so the source waits for their
/// `RTM_DELADDR` before it publishes (one document per link going down): the kernel's
/// `addrconf_ifdown` rule, with `keep_addr_on_down` read from a sysctl directory of the test's.
@Suite struct AddressRemovalsOnDownTests {
    /// `ip link set eth0 down`: not up, no carrier.
    private static let down = LinkFlags.broadcast | LinkFlags.multicast

    private static func table(linkFlags: UInt32, addresses: [[UInt8]]) -> NetworkTable {
        TableFixture([Messages.veth(index: 2, name: "eth0", flags: linkFlags)] + addresses).table
    }

    private static let dualStack = [
        MessageBuilder.address(index: 2, "198.18.0.2", prefix: 24),
        MessageBuilder.address(index: 2, "2001:db8::2", prefix: 64),
        MessageBuilder.address(index: 2, "fe80::2", prefix: 64, scope: UInt8(RT_SCOPE_LINK.rawValue)),
    ]

    /// A sysctl tree with `keep_addr_on_down` for `all` and `eth0`.
    private static func sysctls(all: Int, eth0: Int) throws -> AddressRemovalsOnDown {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sysctl-\(UUID().uuidString)")
        for (name, value) in [("all", all), ("eth0", eth0)] {
            let directory = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try "\(value)\n".write(
                to: directory.appendingPathComponent("keep_addr_on_down"), atomically: true, encoding: .utf8)
        }
        return AddressRemovalsOnDown(sysctlDirectory: root.path)
    }

    @Test func aLinkSetDownWithIPv6AddressesIsWaitedForUntilTheyAreGone() throws {
        let removals = try Self.sysctls(all: 0, eth0: 0)
        var fixture = TableFixture([Messages.veth(index: 2, name: "eth0", flags: Self.down)] + Self.dualStack)
        #expect(removals.pending([2], in: fixture.table))
        fixture.apply([MessageBuilder.address(removed: true, index: 2, "2001:db8::2", prefix: 64)])
        #expect(removals.pending([2], in: fixture.table), "the link-local address is still there")
        fixture.apply([
            MessageBuilder.address(
                removed: true, index: 2, "fe80::2", prefix: 64, scope: UInt8(RT_SCOPE_LINK.rawValue))
        ])
        #expect(!removals.pending([2], in: fixture.table), "IPv4 addresses stay on a link set down")
    }

    @Test func nothingIsAwaitedForALinkThatIsUpOrNotSetDownOrWithoutIPv6() throws {
        let removals = try Self.sysctls(all: 0, eth0: 0)
        #expect(!removals.pending([2], in: Self.table(linkFlags: LinkFlags.running, addresses: Self.dualStack)))
        #expect(!removals.pending([], in: Self.table(linkFlags: Self.down, addresses: Self.dualStack)))
        let ipv4Only = [MessageBuilder.address(index: 2, "198.18.0.2", prefix: 24)]
        #expect(!removals.pending([2], in: Self.table(linkFlags: Self.down, addresses: ipv4Only)))
    }

    @Test(arguments: [(1, 0), (0, 1), (1, -1)])
    func keepAddrOnDownKeepsPermanentGlobalAddressesOnly(all: Int, eth0: Int) throws {
        let removals = try Self.sysctls(all: all, eth0: eth0)
        let globalOnly = [MessageBuilder.address(index: 2, "2001:db8::2", prefix: 64)]
        #expect(!removals.pending([2], in: Self.table(linkFlags: Self.down, addresses: globalOnly)))
        #expect(removals.pending([2], in: Self.table(linkFlags: Self.down, addresses: Self.dualStack)))
        let temporary = [MessageBuilder.address(index: 2, "2001:db8::9", prefix: 64, flags: 0)]
        #expect(removals.pending([2], in: Self.table(linkFlags: Self.down, addresses: temporary)))
    }

    @Test func theLinksOwnSettingCountsOnlyWhileAllIsZero() throws {
        let removals = try Self.sysctls(all: -1, eth0: 1)
        let globalOnly = [MessageBuilder.address(index: 2, "2001:db8::2", prefix: 64)]
        #expect(removals.pending([2], in: Self.table(linkFlags: Self.down, addresses: globalOnly)))
    }

    @Test func anUnreadableSettingCountsAsTheKernelsDefault() {
        let removals = AddressRemovalsOnDown(sysctlDirectory: "/nonexistent")
        let globalOnly = [MessageBuilder.address(index: 2, "2001:db8::2", prefix: 64)]
        #expect(removals.pending([2], in: Self.table(linkFlags: Self.down, addresses: globalOnly)))
    }
}
