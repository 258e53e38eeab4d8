import FoundationEssentials
import Reachable
import Testing

/// The diff behind `/changes` and `reachd watch`: named entries, whole objects, scalar arrays,
/// the bookkeeping left out, and the document's order.
struct DocumentDiffTests {
    private func diff(_ old: String, _ new: String) throws -> [String] {
        try DocumentDiff.changes(from: JSONValue(parsing: old), to: JSONValue(parsing: new)).map {
            "\($0.field): \($0.from.jsonText) → \($0.to.jsonText)"
        }
    }

    @Test func aTargetFlipIsItsStateAndReasonInDocumentOrder() throws {
        let old = #"{"state":"reachable","targets":[{"name":"db","state":"reachable","reason":null}]}"#
        let new = #"{"state":"reachable","targets":[{"name":"db","state":"unreachable","reason":"refused"}]}"#
        #expect(
            try diff(old, new) == [
                #"targets.db.state: "reachable" → "unreachable""#, #"targets.db.reason: null → "refused""#,
            ])
    }

    @Test func entriesAreNamedByNameOrAddressWhateverTheirPosition() throws {
        let old =
            #"{"interfaces":[{"name":"eth0","operState":"up"},{"name":"eth0.100","operState":"up"}],"#
            + #""dns":{"servers":[{"address":"198.18.0.1","state":"answering"}]}}"#
        let new =
            #"{"interfaces":[{"name":"eth0.100","operState":"down"},{"name":"eth0","operState":"up"}],"#
            + #""dns":{"servers":[{"address":"198.18.0.1","state":"failing"}]}}"#
        let changes = try DocumentDiff.changes(from: JSONValue(parsing: old), to: JSONValue(parsing: new))
        #expect(changes.map(\.field) == ["interfaces.eth0.100.operState", "dns.servers.198.18.0.1.state"])
        // The parts stay apart: a name with dots is one part.
        #expect(
            changes.map(\.path) == [
                ["interfaces", "eth0.100", "operState"], ["dns", "servers", "198.18.0.1", "state"],
            ])
    }

    @Test func anAddedOrRemovedEntryIsOneEntryWithNullOnTheOtherSide() throws {
        let old = #"{"targets":[{"name":"db","state":"reachable"}]}"#
        let new = #"{"targets":[{"name":"web","state":"unknown"}]}"#
        #expect(
            try diff(old, new) == [
                #"targets.db: {"name":"db","state":"reachable"} → null"#,
                #"targets.web: null → {"name":"web","state":"unknown"}"#,
            ])
    }

    @Test func aFamilyObjectThatAppearsIsOneEntry() throws {
        let old = #"{"targets":[{"name":"db","ipv6":null}]}"#
        let new = #"{"targets":[{"name":"db","ipv6":{"state":"reachable","reason":null}}]}"#
        #expect(try diff(old, new) == [#"targets.db.ipv6: null → {"state":"reachable","reason":null}"#])
    }

    @Test func aMemberAddedOrRemovedIsOneEntry() throws {
        #expect(try diff(#"{"a":1}"#, #"{"a":1,"targetsFile":null,"b":[1]}"#) == ["b: null → [1]"])
        #expect(try diff(#"{"a":1,"detail":"x"}"#, #"{"a":1}"#) == [#"detail: "x" → null"#])
    }

    @Test func scalarArraysCompareWhole() throws {
        let old = #"{"interfaces":[{"name":"eth0","addresses":["198.18.0.2/24","fe80::1/64"]}]}"#
        let new = #"{"interfaces":[{"name":"eth0","addresses":["fe80::1/64"]}]}"#
        #expect(
            try diff(old, new) == [
                #"interfaces.eth0.addresses: ["198.18.0.2/24","fe80::1/64"] → ["fe80::1/64"]"#
            ])
        #expect(try diff(#"{"a":["x","y"]}"#, #"{"a":["x","y"]}"#).isEmpty)
    }

    @Test func arraysWithoutDistinctNamesCompareWhole() throws {
        let old = #"{"a":[{"name":"x","v":1},{"name":"x","v":2}]}"#
        let new = #"{"a":[{"name":"x","v":1},{"name":"x","v":3}]}"#
        #expect(
            try diff(old, new) == [
                #"a: [{"name":"x","v":1},{"name":"x","v":2}] → [{"name":"x","v":1},{"name":"x","v":3}]"#
            ])
    }

    @Test func bookkeepingIsNeverAnEntry() throws {
        let old =
            #"{"state":"reachable","sequence":7,"changedAt":"t1","stateSince":"t0","targets":[{"name":"db","since":"t0"}]}"#
        let new =
            #"{"state":"reachable","sequence":9,"changedAt":"t2","stateSince":"t2","targets":[{"name":"db","since":"t2"}]}"#
        #expect(try diff(old, new).isEmpty)
        #expect(DocumentDiff.excludedKeys == ["sequence", "changedAt", "stateSince", "since"])
    }

    @Test func aValueOfAnotherKindIsOneEntry() throws {
        #expect(try diff(#"{"a":{"b":1}}"#, #"{"a":"x"}"#) == [#"a: {"b":1} → "x""#])
        #expect(try diff(#"{"a":1}"#, #"{"a":1.0}"#) == ["a: 1 → 1.0"])
    }

    @Test func aRealDocumentDiffsFromItsOwnEncoding() throws {
        let before = ReachabilityStatus(path: NetworkPath(state: .reachable, ipv4: true), sequence: 1, changedAt: .now)
        var after = before
        after.path = NetworkPath(state: .unreachable)
        after.sequence = 2
        let changes = DocumentDiff.changes(
            from: try JSONValue(parsing: before.jsonBytes()), to: try JSONValue(parsing: after.jsonBytes()))
        #expect(changes.map(\.field) == ["state", "isReachable", "ipv4"])
    }
}
