import Reachable
import Testing

/// Pairing an array's entries with the old one's by name: at their own place, else wherever.
@Suite struct NamePairingTests {
    @Test func entriesArePairedAtTheirPlaceThenAnywhere() {
        let old = ["a", "b", "c", "d"]
        let new = ["a", "c", "b", "e", "d"]
        #expect(NamePairing.oldPlaces(old, new, name: { $0 }) == [0, 2, 1, nil, 3])
    }

    @Test func anEmptyOldArrayPairsNothingAndARepeatedNameTheFirst() {
        #expect(NamePairing.oldPlaces([String](), ["a", "b"], name: { $0 }) == [nil, nil])
        #expect(NamePairing.oldPlaces(["x", "a", "a"], ["a"], name: { $0 }) == [1])
        #expect(NamePairing.oldPlaces(["a", "b"], [String](), name: { $0 }) == [])
    }
}
