import Foundation
import Reachable
import Testing

@testable import Probes

/// `--per-uplink`'s books: which interfaces are checked, and what each shows, as the netlink
/// source's readings of the uplinks come in (`UplinkBooks.follow`).
@Suite struct UplinkBooksTests {
    static let v4 = IPAddress("198.18.1.10")!
    static let v6 = IPAddress("2001:db8:1::10")!
    static let start = Date(timeIntervalSince1970: 1_000)

    static func books() throws -> UplinkBooks {
        UplinkBooks(spec: try ConnectivitySpec.parse(url: "http://check.test/generate_204"), interval: .seconds(300))
    }

    static func full(_ addresses: [IPAddress]) -> ProbePipeline.Result {
        ProbePipeline.Result(
            addresses: addresses,
            families: addresses.map {
                ProbePipeline.FamilyResult(
                    family: $0.addressFamily, address: $0, interface: "wan1",
                    outcome: ProbeOutcome(failure: nil, statusCode: 204))
            })
    }

    @Test func anInterfaceThatBecomesAnUplinkIsUnknownAndOneThatStopsLeaves() throws {
        var books = try Self.books()
        let first = books.follow(["wan0": [.ipv4, .ipv6], "wan1": [.ipv4]], unroutable: [], at: Self.start)
        #expect(first)
        #expect(books.uplinks.map(\.interface) == ["wan0", "wan1"], "in name order: the scheduler's items")
        #expect(books.statuses["wan1"]?.state == .unknown && books.statuses["wan1"]?.ipv4 == nil)
        let same = books.follow(["wan1": [.ipv4], "wan0": [.ipv4, .ipv6]], unroutable: [], at: Self.start)
        #expect(!same, "the same set: the items keep their numbers")
        let fewer = books.follow(["wan0": [.ipv4, .ipv6]], unroutable: [], at: Self.start)
        #expect(fewer)
        #expect(books.statuses["wan1"] == nil, "no longer an uplink: its connectivity is null")
    }

    @Test func aFamilyItIsNoUplinkOfIsNullAndOneItStopsBeingIsNone() throws {
        var books = try Self.books()
        _ = books.follow(["wan1": [.ipv4]], unroutable: [], at: Self.start)
        var uplink = try #require(books[0])
        // The pipeline judged IPv6 `no-route` (the interface carries no IPv6): not shown.
        var result = Self.full([Self.v4])
        result.families.append(
            ProbePipeline.FamilyResult(
                family: .ipv6, address: nil, interface: nil, outcome: ProbeOutcome(failure: .noRoute)))
        result.covers = [.ipv4, .ipv6]
        _ = uplink.book.record(result, pathUnreachable: false, at: Self.start)
        books[0] = uplink
        #expect(books.statuses["wan1"]?.state == .full)
        #expect(books.statuses["wan1"]?.ipv6 == nil && books.statuses["wan1"]?.degraded == false)

        // It becomes an IPv6 uplink too: IPv6 is checked (shown once a check says so).
        _ = books.follow(["wan1": [.ipv4, .ipv6]], unroutable: [], at: Self.start)
        uplink = try #require(books[0])
        _ = uplink.book.record(Self.full([Self.v4, Self.v6]), pathUnreachable: false, at: Self.start)
        books[0] = uplink
        #expect(books.statuses["wan1"]?.ipv6?.state == .full)

        // Its IPv6 default route goes: IPv6 is `none` in that same reading, IPv4 still full.
        _ = books.follow(["wan1": [.ipv4]], unroutable: [], at: Self.start)
        let status = try #require(books.statuses["wan1"])
        #expect(status.ipv6?.state == ConnectivityStatus.State.none && status.ipv4?.state == .full)
        #expect(status.state == .full && status.degraded)
    }

    @Test func anAddressThatLostItsRouteOutOfTheInterfaceIsNone() throws {
        var books = try Self.books()
        _ = books.follow(["wan1": [.ipv4]], unroutable: [], at: Self.start)
        var uplink = try #require(books[0])
        _ = uplink.book.record(Self.full([Self.v4]), pathUnreachable: false, at: Self.start)
        books[0] = uplink
        // Unroutable by the kernel's choice only: not this uplink's question.
        _ = books.follow(["wan1": [.ipv4]], unroutable: [RouteQuestion(Self.v4)], at: Self.start)
        #expect(books.statuses["wan1"]?.state == .full)
        _ = books.follow(
            ["wan1": [.ipv4]], unroutable: [RouteQuestion(Self.v4, via: .pinned(to: "wan1"))], at: Self.start)
        #expect(books.statuses["wan1"]?.state == ConnectivityStatus.State.none)
    }

    @Test func aResultForAnItemThatIsAnotherInterfaceNowIsNotKept() throws {
        var books = try Self.books()
        _ = books.follow(["wan0": [.ipv4], "wan1": [.ipv4]], unroutable: [], at: Self.start)
        var stale = try #require(books[0])
        _ = books.follow(["wan1": [.ipv4]], unroutable: [], at: Self.start)
        _ = stale.book.record(Self.full([Self.v4]), pathUnreachable: false, at: Self.start)
        books[0] = stale
        #expect(books.uplinks.map(\.interface) == ["wan1"] && books.statuses["wan1"]?.state == .unknown)
        #expect(books[1] == nil)
    }

    @Test func theDocumentShowsEachCheckBesideItsInterface() throws {
        var document = ReachabilityStatus(
            path: NetworkPath(
                state: .reachable,
                interfaces: ["wan0", "wan1", "lan0"].enumerated().map { index, name in
                    InterfaceStatus(
                        name: name, index: Int32(index + 2), transport: .ethernet, kind: "veth", operState: "up",
                        isDefaultRoute: name != "lan0", addresses: [])
                }),
            sequence: 1, changedAt: Self.start)
        var books = try Self.books()
        _ = books.follow(["wan0": [.ipv4], "wan1": [.ipv4]], unroutable: [], at: Self.start)
        document.setUplinkConnectivity(books.statuses)
        #expect(document.interfaces.map { $0.connectivity?.state } == [.unknown, .unknown, nil])
        _ = books.follow(["wan0": [.ipv4]], unroutable: [], at: Self.start)
        document.setUplinkConnectivity(books.statuses)
        #expect(document.interfaces.map { $0.connectivity?.state } == [.unknown, nil, nil])
    }
}
