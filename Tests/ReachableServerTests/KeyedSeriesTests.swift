import Testing

@testable import ReachableServer

/// The series of what comes and goes with the document, kept in an array with each key's place
/// beside it: made on first sight, kept in order, removed (and the rest moved up) when the document
/// stops listing them.
struct KeyedSeriesTests {
    /// Each item's series counts the updates that named it.
    private static func update(_ keyed: inout KeyedSeries<Int>, _ names: [String], removed: inout [Int]) {
        keyed.update(
            names, key: { $0 }, make: { _ in 0 }, update: { count, _ in count += 1 }, remove: { removed.append($0) })
    }

    @Test func seriesAreMadeKeptInOrderAndRemovedWhenNoLongerListed() {
        var keyed = KeyedSeries<Int>()
        var removed: [Int] = []
        Self.update(&keyed, ["a", "b", "c", "b"], removed: &removed)
        #expect(
            keyed.all.map(\.0) == ["a", "b", "c"] && keyed.all.map(\.1) == [1, 1, 1], "a name listed twice counts once")
        Self.update(&keyed, ["c", "a", "d"], removed: &removed)
        #expect(removed == [1], "b's series was handed to remove")
        #expect(keyed.all.map(\.0) == ["a", "c", "d"] && keyed.all.map(\.1) == [2, 2, 1])
        // The places moved with the removal: each key still finds its own series.
        keyed.modify("d", make: { _ in 0 }) { $0 += 10 }
        keyed.modify("c", make: { _ in 0 }) { $0 += 100 }
        #expect(keyed.all.map(\.1) == [2, 102, 11])
        #expect(keyed.series("a", make: { _ in -1 }) == 2)
    }

    /// A probe may name a target before any document lists it: its series is made then, and the
    /// next document that does not list it removes it.
    @Test func aSeriesMadeBeforeTheDocumentListsItIsKeptOnlyWhileListed() {
        var keyed = KeyedSeries<Int>()
        var removed: [Int] = []
        keyed.modify("early", make: { _ in 5 }) { $0 += 1 }
        #expect(keyed.series("late", make: { _ in 7 }) == 7)
        Self.update(&keyed, ["early"], removed: &removed)
        #expect(keyed.all.map(\.0) == ["early"] && keyed.all.map(\.1) == [7] && removed == [7])
        Self.update(&keyed, [], removed: &removed)
        #expect(keyed.all.map(\.0).isEmpty && removed == [7, 7])
    }
}
