import Testing

@testable import ReachableServer

/// The series of what comes and goes with the document, kept in an array with each key's place
/// beside it: made on first sight, kept in order, removed (and the rest moved up) when the document
/// stops listing them.
struct KeyedSeriesTests {
    /// Each item's series counts the updates that named it.
    private static func update(_ keyed: inout KeyedSeries<Int>, _ names: [String]) {
        keyed.update(names, key: { $0 }, make: { _ in 0 }, update: { count, _ in count += 1 })
    }

    @Test func seriesAreMadeKeptInOrderAndRemovedWhenNoLongerListed() {
        var keyed = KeyedSeries<Int>()
        Self.update(&keyed, ["a", "b", "c", "b"])
        #expect(
            keyed.all.map(\.0) == ["a", "b", "c"] && keyed.all.map(\.1) == [1, 1, 1], "a name listed twice counts once")
        Self.update(&keyed, ["c", "a", "d"])
        #expect(keyed.all.map(\.0) == ["a", "c", "d"] && keyed.all.map(\.1) == [2, 2, 1], "b's series went")
        // The places moved with the removal: each key still finds its own series.
        keyed.modify("d", make: { _ in 0 }) { $0 += 10 }
        keyed.modify("c", make: { _ in 0 }) { $0 += 100 }
        keyed.modify("a", make: { _ in -1 }) { $0 += 1000 }
        #expect(keyed.all.map(\.1) == [1002, 102, 11])
    }

    /// A probe may name a target before any document lists it: its series is made then, and the
    /// next document that does not list it removes it.
    @Test func aSeriesMadeBeforeTheDocumentListsItIsKeptOnlyWhileListed() {
        var keyed = KeyedSeries<Int>()
        keyed.modify("early", make: { _ in 5 }) { $0 += 1 }
        keyed.modify("late", make: { _ in 7 }) { _ in }
        #expect(keyed.all.map(\.0) == ["early", "late"])
        Self.update(&keyed, ["early"])
        #expect(keyed.all.map(\.0) == ["early"] && keyed.all.map(\.1) == [7])
        Self.update(&keyed, [])
        #expect(keyed.all.map(\.0).isEmpty)
    }
}
