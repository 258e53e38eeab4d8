import Testing

@testable import Probes

/// After a round (start, a network change) the targets' next runs are spread across the interval
/// in groups of 100 (`ProbeScheduler.groupDelay`): never later than the interval, 100 targets or
/// fewer exactly at it.
struct RoundSpreadTests {
    let interval = Duration.seconds(10)

    @Test func aHundredTargetsOrFewerKeepTheInterval() {
        for items in [1, 2, 99, 100] {
            for item in 0..<items {
                #expect(ProbeScheduler<Int>.groupDelay(item: item, items: items, interval: interval) == interval)
            }
        }
    }

    @Test func moreAreSpreadInGroupsOfAHundredAcrossTheInterval() {
        let delays = (0..<1_000).map { ProbeScheduler<Int>.groupDelay(item: $0, items: 1_000, interval: interval) }
        #expect(Set(delays).count == 10, "ten groups")
        #expect(delays[0] == .seconds(1) && delays[99] == .seconds(1))
        #expect(delays[100] == .seconds(2))
        #expect(delays[999] == interval, "the last group at the interval")
        #expect(delays.allSatisfy { $0 > .zero && $0 <= interval })
        let perGroup = Dictionary(grouping: delays, by: { $0 }).mapValues(\.count)
        #expect(perGroup.values.allSatisfy { $0 == 100 })
    }

    @Test func aPartLastGroupEndsAtTheInterval() {
        #expect(ProbeScheduler<Int>.groupDelay(item: 149, items: 150, interval: interval) == interval)
        #expect(ProbeScheduler<Int>.groupDelay(item: 0, items: 150, interval: interval) == .seconds(5))
    }
}
