import FoundationEssentials
import Reachable
import ReachdClient
import Testing

/// What `reachd watch` prints per document: the summary, the diff in words, and the notes of a
/// reconnection or a restart.
struct WatchLinesTests {
    private static func words(_ old: String, _ new: String) throws -> [String] {
        let document = try JSONValue(parsing: new)
        return ChangeText.lines(DocumentDiff.changes(from: try JSONValue(parsing: old), to: document), in: document)
    }

    @Test func aTargetFlipReadsWithItsReasonAndDetail() throws {
        let old = #"{"targets":[{"name":"db","state":"reachable","reason":null,"detail":null}]}"#
        let new =
            #"{"targets":[{"name":"db","state":"unreachable","reason":"refused","detail":"ECONNREFUSED: connection refused"}]}"#
        #expect(
            try Self.words(old, new) == [
                "target db: reachable → unreachable (refused: ECONNREFUSED: connection refused)"
            ])
    }

    @Test func withoutADetailTheReasonAloneWithoutEitherNothing() throws {
        let old = #"{"targets":[{"name":"db","state":"reachable","reason":null}]}"#
        #expect(
            try Self.words(old, #"{"targets":[{"name":"db","state":"unreachable","reason":"timeout"}]}"#)
                == ["target db: reachable → unreachable (timeout)"])
        #expect(
            try Self.words(
                #"{"targets":[{"name":"db","state":"unknown"}]}"#, #"{"targets":[{"name":"db","state":"reachable"}]}"#)
                == ["target db: unknown → reachable"])
    }

    @Test func aChangedCauseReadsFirstAsItsNewWordsInOneLine() throws {
        let old = #"{"cause":null,"targets":[{"name":"db","state":"reachable","reason":null}]}"#
        let new =
            #"{"cause":{"layer":"link","family":null,"subject":"eth0","text":"eth0 is down (no carrier)"},"#
            + #""targets":[{"name":"db","state":"unreachable","reason":"no-route"}]}"#
        #expect(
            try Self.words(old, new) == [
                "cause: eth0 is down (no carrier)", "target db: reachable → unreachable (no-route)",
            ])
        #expect(try Self.words(new, old).first == "cause: none (nothing known to be wrong)")
        let reworded = new.split(separator: "(no carrier)").joined(separator: "(no carrier, 2 targets)")
        #expect(try Self.words(new, reworded) == ["cause: eth0 is down (no carrier, 2 targets)"])
    }

    @Test func aNewReasonWithoutANewStateSaysStill() throws {
        let old = #"{"targets":[{"name":"db","state":"unreachable","reason":"timeout","detail":null}]}"#
        let new = #"{"targets":[{"name":"db","state":"unreachable","reason":"refused","detail":"ECONNREFUSED"}]}"#
        #expect(try Self.words(old, new) == ["target db: still unreachable (refused: ECONNREFUSED)"])
    }

    @Test func theNetworkFamiliesNameserversAndWholeEntriesReadInWords() throws {
        let old = #"""
            {"state":"reachable","isReachable":true,"ipv4":true,"interfaces":[{"name":"eth0","addresses":["198.18.0.2/24"]}],
             "targets":[{"name":"db","state":"reachable","ipv6":{"state":"reachable","reason":null}}],
             "dns":{"state":"ok","servers":[{"address":"198.18.0.1","state":"answering","reason":null}]}}
            """#
        let new = #"""
            {"state":"unreachable","isReachable":false,"ipv4":false,"interfaces":[{"name":"eth0","addresses":[]},{"name":"wlan0","addresses":[]}],
             "targets":[{"name":"db","state":"reachable","ipv6":{"state":"unreachable","reason":"no-route"}},{"name":"web","state":"unknown"}],
             "dns":{"state":"degraded","servers":[{"address":"198.18.0.1","state":"failing","reason":"timeout"}]}}
            """#
        #expect(
            try Self.words(old, new) == [
                "network: reachable → unreachable", "ipv4: true → false",
                "interface eth0 addresses: [198.18.0.2/24] → []",
                "interface wlan0 added", "target db ipv6: reachable → unreachable (no-route)",
                "target web added: unknown",
                "dns: ok → degraded", "nameserver 198.18.0.1: answering → failing (timeout)",
            ])
        #expect(
            try Self.words(#"{"targets":[{"name":"db","state":"reachable"}],"x":null}"#, #"{"targets":[],"x":{"a":1}}"#)
                == ["target db removed", "x added"])
        #expect(
            try Self.words(#"{"targetsFile":{"error":null}}"#, #"{"targetsFile":{"error":"line 3"}}"#) == [
                "targetsFile error: none → line 3"
            ])
    }

    @Test func controlCharactersInNamesAreShownEscaped() throws {
        // The words are the document's (the server's `/changes` sends them JSON-escaped); the
        // terminal's lines make them visible.
        #expect(
            try Self.words(#"{"interfaces":[]}"#, #"{"interfaces":[{"name":"e\u001bx"}]}"#) == [
                "interface e\u{1b}x added"
            ])
        var watch = WatchLines()
        let (first, firstDocument) = try Self.status(1, .reachable)
        _ = watch.lines(for: first, document: firstDocument)
        let (second, _) = try Self.status(2, .reachable)
        let renamed = try JSONValue(parsing: #"{"sequence":2,"interfaces":[{"name":"e\u001bx"}]}"#)
        #expect(watch.lines(for: second, document: renamed).dropFirst().contains("  interface e\\x1bx added"))
    }

    private static func status(_ sequence: UInt64, _ state: NetworkPath.State) throws -> (ReachabilityStatus, JSONValue)
    {
        let status = ReachabilityStatus(
            path: NetworkPath(state: state), sequence: sequence, changedAt: Date(timeIntervalSince1970: 1_800_000_000))
        return (status, try JSONValue(parsing: status.jsonBytes()))
    }

    @Test func theFirstDocumentIsItsSummaryAndEachNextOneAddsItsDiff() throws {
        var lines = WatchLines()
        lines.streamOpened()
        let (first, firstJSON) = try Self.status(4, .reachable)
        #expect(lines.lines(for: first, document: firstJSON) == [StatusText.summary(first)])
        let (second, secondJSON) = try Self.status(5, .unreachable)
        #expect(
            lines.lines(for: second, document: secondJSON)
                == [
                    StatusText.summary(second), "  network: reachable → unreachable", "  isReachable: true → false",
                ].filter { !$0.contains("isReachable") })
    }

    @Test func aReconnectionAndARestartAreSaid() throws {
        var lines = WatchLines()
        lines.streamOpened()
        let (first, firstJSON) = try Self.status(7, .reachable)
        _ = lines.lines(for: first, document: firstJSON)
        lines.streamOpened()
        let (same, sameJSON) = try Self.status(7, .reachable)
        #expect(lines.lines(for: same, document: sameJSON).first == "reconnected at #7 (last seen #7, nothing missed)")
        lines.streamOpened()
        let (later, laterJSON) = try Self.status(9, .unreachable)
        let afterGap = lines.lines(for: later, document: laterJSON)
        #expect(afterGap.first == "reconnected at #9 (last seen #7, 2 changes since)")
        #expect(afterGap.last == "  network: reachable → unreachable")
        lines.streamOpened()
        let (restarted, restartedJSON) = try Self.status(2, .reachable)
        let afterRestart = lines.lines(for: restarted, document: restartedJSON)
        #expect(afterRestart.first == "reachd restarted: its sequence went back from #9 to #2")
        #expect(afterRestart.dropFirst().first == StatusText.summary(restarted))
        // Within one stream a document without a reconnection has no note.
        let (next, nextJSON) = try Self.status(3, .unreachable)
        #expect(lines.lines(for: next, document: nextJSON).first == StatusText.summary(next))
    }
}
