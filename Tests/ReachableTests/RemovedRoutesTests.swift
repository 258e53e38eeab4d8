import CMnl
import Glibc
import Testing

@testable import Reachable

/// Which entries a batch removed: what a lookup must not be answered by (`RemovedRoutes`).
@Suite struct RemovedRoutesTests {
    private static func entry(_ bytes: [UInt8]) -> RouteRecord.Entry? {
        var parser = NetlinkParser()
        guard case .route(let route)? = parser.parse(bytes).first?.message else { return nil }
        return route.entry
    }

    private static func removals(_ messages: [[UInt8]]) -> RemovedRoutes {
        var parser = NetlinkParser()
        var removed = RemovedRoutes()
        for envelope in parser.parse(messages.flatMap { $0 }) { removed.note(envelope.message) }
        return removed
    }

    @Test func aRemovedDefaultOrSpecificRouteIsNotedInEitherFamily() throws {
        let routes: [(Bool) -> [UInt8]] = [
            { MessageBuilder.route(removed: $0, outputInterface: 2, gateway: "198.18.0.1") },
            { MessageBuilder.route(removed: $0, destination: "128.0.0.0", destinationLength: 1, outputInterface: 3) },
            { MessageBuilder.route(removed: $0, family: AF_INET6, priority: 1024, outputInterface: 2) },
        ]
        for route in routes {
            let removed = Self.removals([route(true)])
            #expect(!removed.isEmpty)
            #expect(removed.contains(try #require(Self.entry(route(false)))))
        }
    }

    @Test func anEntryIsItsPrefixTableMetricAndFamilyNotItsNextHop() throws {
        let removed = Self.removals([MessageBuilder.route(removed: true, priority: 100, outputInterface: 2)])
        // The same entry answered by a lookup names the next hop too: still the removed one.
        #expect(
            removed.contains(
                try #require(
                    Self.entry(
                        MessageBuilder.route(priority: 100, outputInterface: 7, gateway: "198.18.0.9")))))
        for other in [
            MessageBuilder.route(priority: 200, outputInterface: 2),
            MessageBuilder.route(table: 100, priority: 100, outputInterface: 2),
            MessageBuilder.route(destination: "0.0.0.0", destinationLength: 1, priority: 100, outputInterface: 2),
            MessageBuilder.route(family: AF_INET6, priority: 100, outputInterface: 2),
        ] {
            #expect(!removed.contains(try #require(Self.entry(other))))
        }
    }

    @Test func aRouteAddedBackLaterInTheBatchIsNotRemoved() {
        let removedThenAdded = Self.removals([
            MessageBuilder.route(removed: true, outputInterface: 2), MessageBuilder.route(outputInterface: 2),
        ])
        #expect(removedThenAdded.isEmpty)
        let addedThenRemoved = Self.removals([
            MessageBuilder.route(outputInterface: 2), MessageBuilder.route(removed: true, outputInterface: 2),
        ])
        #expect(!addedThenRemoved.isEmpty)
    }

    @Test func otherMessagesRemoveNothing() {
        let removed = Self.removals([
            MessageBuilder.link(index: 2, name: "v0", flags: 1), MessageBuilder.rule(), MessageBuilder.done(),
        ])
        #expect(removed.isEmpty)
    }
}
