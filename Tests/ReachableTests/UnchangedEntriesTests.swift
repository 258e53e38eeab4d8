import FoundationEssentials
import Reachable
import Testing

/// `/changes` diffs texts without the entries they share: the diff must be exactly the diff of the
/// whole texts, and only entries that are certainly the same may be taken out.
struct UnchangedEntriesTests {
    /// The diff of the whole texts and the diff of what `UnchangedEntries` leaves, as lines.
    private func bothDiffs(_ old: String, _ new: String) throws -> (whole: [String], pruned: [String]) {
        let oldText = Array(old.utf8)
        let newText = Array(new.utf8)
        let (before, after) = UnchangedEntries.removed(from: oldText, newText) ?? (oldText, newText)
        func lines(_ changes: [FieldChange]) -> [String] {
            changes.map { "\($0.field): \($0.from.jsonText) → \($0.to.jsonText)" }
        }
        let whole = DocumentDiff.changes(from: try JSONValue(parsing: oldText), to: try JSONValue(parsing: newText))
        let pruned = DocumentDiff.changes(from: try JSONValue(parsing: before), to: try JSONValue(parsing: after))
        return (lines(whole), lines(pruned))
    }

    private func expectSameDiff(_ old: String, _ new: String, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let (whole, pruned) = try bothDiffs(old, new)
        #expect(whole == pruned, sourceLocation: sourceLocation)
    }

    private static func targets(_ count: Int, changed: Set<Int> = [], state: String = "reachable") -> String {
        (0..<count).map { index in
            let entryState = changed.contains(index) ? "unreachable" : state
            return #"{"name":"t\#(index)","url":"tcp://198.18.0.\#(index % 250):\#(1000 + index)","#
                + #""state":"\#(entryState)","since":"2026-11-28T07:00:00Z","addresses":["198.18.0.1"],"#
                + #""ipv4":{"state":"\#(entryState)","rtt":0.001}}"#
        }.joined(separator: ",")
    }

    @Test func aFewChangedTargetsAmongManyLeaveOnlyThemAndTheSameDiff() throws {
        let old = #"{"state":"reachable","sequence":1,"targets":[\#(Self.targets(1000))],"interfaces":[]}"#
        let new =
            #"{"state":"reachable","sequence":2,"targets":[\#(Self.targets(1000, changed: [3, 700]))],"interfaces":[]}"#
        let removed = try #require(UnchangedEntries.removed(from: Array(old.utf8), Array(new.utf8)))
        let after = try JSONValue(parsing: removed.new)
        guard case .array(let left) = after["targets"] else {
            Issue.record("no targets left")
            return
        }
        #expect(left.map { $0["name"] } == [.string("t3"), .string("t700")])
        #expect(removed.old.count < 1000 && removed.new.count < 1000)
        let (whole, pruned) = try bothDiffs(old, new)
        #expect(whole == pruned)
        #expect(whole.count == 4)
    }

    @Test func aRealDocumentWithTargetsGivesTheSameDiff() throws {
        let since = Date(timeIntervalSince1970: 1_800_000_000)
        let targets = (0..<50).map {
            TargetStatus(name: "t\($0)", url: "tcp://198.18.0.1:\(1000 + $0)", state: .reachable, since: since)
        }
        let before = ReachabilityStatus(
            path: NetworkPath(state: .reachable, ipv4: true), targets: targets, sequence: 1, changedAt: since)
        var after = before
        after.sequence = 2
        after.targets[7].state = .unreachable
        after.targets[7].reason = .refused
        after.targets.remove(at: 20)
        after.targets.append(TargetStatus(name: "new", url: "tcp://198.18.0.2:1", since: since))
        let old = String(decoding: before.jsonBytes(), as: UTF8.self)
        let new = String(decoding: after.jsonBytes(), as: UTF8.self)
        let (whole, pruned) = try bothDiffs(old, new)
        #expect(whole == pruned)
        #expect(whole.contains { $0.hasPrefix("targets.t7.state") } && whole.contains { $0.hasPrefix("targets.t20") })
        #expect(whole.contains { $0.hasPrefix("targets.new") })
    }

    @Test func addedRemovedAndReorderedEntriesGiveTheSameDiff() throws {
        let old = #"{"targets":[{"name":"a","s":1},{"name":"b","s":1},{"name":"c","s":1}]}"#
        try expectSameDiff(old, #"{"targets":[{"name":"c","s":1},{"name":"a","s":2},{"name":"d","s":1}]}"#)
        try expectSameDiff(old, #"{"targets":[]}"#)
        try expectSameDiff(#"{"targets":[]}"#, old)
        try expectSameDiff(old, #"{"targets":{"name":"a"}}"#)
        try expectSameDiff(old, #"{"other":[{"name":"a","s":1}]}"#)
        try expectSameDiff(old, old)
    }

    @Test func arraysTheDiffComparesWholeAreLeftWhole() throws {
        // Names that repeat, entries without a name, entries that are not objects, a name that is
        // not a string, a name member that is not the first with its key: the diff compares the
        // array whole, so nothing may be taken out of it.
        let cases = [
            (#"{"t":[{"name":"a","s":1},{"name":"a","s":2}]}"#, #"{"t":[{"name":"a","s":1},{"name":"a","s":3}]}"#),
            (#"{"t":[{"name":"a","s":1},{"s":2}]}"#, #"{"t":[{"name":"a","s":1},{"s":3}]}"#),
            (#"{"t":[{"name":"a","s":1},7]}"#, #"{"t":[{"name":"a","s":1},8]}"#),
            (#"{"t":[{"name":"a","s":1},{"name":5}]}"#, #"{"t":[{"name":"a","s":1},{"name":6}]}"#),
            (
                #"{"t":[{"name":"a","s":1},{"name":5,"name":"b"}]}"#,
                #"{"t":[{"name":"a","s":1},{"name":6,"name":"b"}]}"#
            ),
        ]
        for (old, new) in cases {
            let removed = try #require(UnchangedEntries.removed(from: Array(old.utf8), Array(new.utf8)))
            #expect(removed.old == Array(old.utf8) && removed.new == Array(new.utf8))
            try expectSameDiff(old, new)
        }
    }

    @Test func namesByAddressAndNamesWithEscapes() throws {
        // Named by `address` when not every entry has a `name` (the diff's order of keys).
        try expectSameDiff(
            #"{"servers":[{"address":"198.18.0.1","s":1},{"address":"2001:db8::1","name":"x","s":1}]}"#,
            #"{"servers":[{"address":"198.18.0.1","s":2},{"address":"2001:db8::1","name":"x","s":1}]}"#)
        // Taking out the one entry without a `name` would make the diff pair the rest by `name`
        // (`servers.x.s`, not `servers.2.s`): an array named by `address` is left whole.
        let byAddress = #"{"servers":[{"address":"1","s":1},{"name":"x","address":"2","s":1}]}"#
        let next = #"{"servers":[{"address":"1","s":1},{"name":"x","address":"2","s":2}]}"#
        #expect(UnchangedEntries.removed(from: Array(byAddress.utf8), Array(next.utf8))?.new == Array(next.utf8))
        let (whole, pruned) = try bothDiffs(byAddress, next)
        #expect(whole == ["servers.2.s: 1 → 2"] && pruned == whole)
        // Two spellings of one name: left whole (the diff sees one name twice).
        let old = #"{"t":[{"name":"a","s":1},{"name":"\u0061","s":2}]}"#
        let removed = try #require(UnchangedEntries.removed(from: Array(old.utf8), Array(old.utf8)))
        #expect(removed.old == Array(old.utf8))
        try expectSameDiff(old, old)
        // An escaped key could spell `name`: that entry has no name here.
        let escapedKey = #"{"t":[{"n\u0061me":"b","name":"a","s":1}]}"#
        #expect(
            UnchangedEntries.removed(from: Array(escapedKey.utf8), Array(escapedKey.utf8))?.new
                == Array(escapedKey.utf8))
        try expectSameDiff(escapedKey, #"{"t":[{"n\u0061me":"b","name":"a","s":2}]}"#)
    }

    @Test func aTopLevelKeyTwiceOrEscapedIsLeftWhole() throws {
        let twice = #"{"t":[{"name":"a","s":1}],"t":[{"name":"a","s":2}]}"#
        #expect(UnchangedEntries.removed(from: Array(twice.utf8), Array(twice.utf8))?.new == Array(twice.utf8))
        try expectSameDiff(twice, #"{"t":[{"name":"a","s":1}],"t":[{"name":"a","s":3}]}"#)
        let escaped = #"{"\u0074":[{"name":"a","s":1}]}"#
        #expect(UnchangedEntries.removed(from: Array(escaped.utf8), Array(escaped.utf8)) == nil)
    }

    @Test func textThatIsNotAnObjectIsNotScanned() {
        for text in ["", "[]", "{", #"{"t":[{"name":"a"}"#, #"{"t":[1,]}"#, #"{"t" 1}"#, #"{"t":1} x"#, #"{"t":"x}"#] {
            #expect(UnchangedEntries.removed(from: Array(text.utf8), Array(#"{"t":[]}"#.utf8)) == nil, "\(text)")
            #expect(UnchangedEntries.removed(from: Array(#"{"t":[]}"#.utf8), Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func whitespaceAndNestingAreScannedAsTheParserReadsThem() throws {
        let old = """
            { "t" : [ { "name" : "a" , "x" : { "y" : [ 1 , "]}" , { } ] } } ,
                      { "name" : "b" , "x" : null } ] , "n" : -1.5e3 }
            """
        let new = """
            { "t" : [ { "name" : "a" , "x" : { "y" : [ 1 , "]}" , { } ] } } ,
                      { "name" : "b" , "x" : true } ] , "n" : -1.5e3 }
            """
        let removed = try #require(UnchangedEntries.removed(from: Array(old.utf8), Array(new.utf8)))
        guard case .array(let left) = try JSONValue(parsing: removed.new)["t"] else {
            Issue.record("no t")
            return
        }
        #expect(left.map { $0["name"] } == [.string("b")])
        try expectSameDiff(old, new)
    }
}
