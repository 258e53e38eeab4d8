import Foundation
import Reachable
import Testing

@testable import ReachableServer

/// `/changes`: the baseline is no change, each change is diffed once, the ring keeps the newest.
struct ChangeHistoryTests {
    private static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A document whose route state is `state`, `sequence` seconds after `start`.
    private static func document(_ sequence: UInt64, state: NetworkPath.State) -> ReachabilityStatus {
        ReachabilityStatus(
            path: NetworkPath(state: state), sequence: sequence,
            changedAt: start.addingTimeInterval(TimeInterval(sequence)))
    }

    private static func time(_ sequence: UInt64) -> String {
        ReachabilityStatus.timestampStyle.format(start.addingTimeInterval(TimeInterval(sequence)))
    }

    private static func changes(_ history: ChangeHistory) throws -> JSONValue {
        try JSONValue(parsing: history.response.body)
    }

    @Test func theBaselineIsNoChange() throws {
        let history = ChangeHistory(capacity: 5, baseline: Self.document(1, state: .reachable))
        #expect(history.count == 0)
        #expect(String(decoding: history.response.body, as: UTF8.self) == #"{"changes":[]}"#)
    }

    @Test func eachChangeIsItsSequenceTimeAndDiff() throws {
        let history = ChangeHistory(capacity: 5, baseline: Self.document(1, state: .reachable))
        #expect(history.record(Self.document(2, state: .unreachable)) == 1)
        let diff = try #require(try Self.changes(history)["changes"]?.jsonText)
        #expect(
            diff.hasPrefix(
                #"[{"sequence":2,"changedAt":"\#(Self.time(2))","diff":[{"field":"state","from":"reachable","to":"unreachable"}"#
            ))
        #expect(history.response.headers.first == HTTPField("Content-Type", "application/json"))
    }

    @Test func theRingKeepsTheNewestOldestFirst() throws {
        let history = ChangeHistory(capacity: 3, baseline: Self.document(1, state: .reachable))
        for sequence in UInt64(2)...8 {
            history.record(Self.document(sequence, state: sequence % 2 == 0 ? .unreachable : .reachable))
        }
        #expect(history.count == 3)
        guard case .array(let entries) = try Self.changes(history)["changes"] else {
            Issue.record("no changes array")
            return
        }
        #expect(entries.map { $0["sequence"] } == [.number("6"), .number("7"), .number("8")])
        // Each diffed against the one before it, not against the baseline.
        guard case .array(let diff) = entries[0]["diff"] else {
            Issue.record("no diff")
            return
        }
        #expect(diff.first?.jsonText == #"{"field":"state","from":"reachable","to":"unreachable"}"#)
    }

    @Test func aChangeOfBookkeepingOnlyIsKeptWithAnEmptyDiff() throws {
        let history = ChangeHistory(capacity: 2, baseline: Self.document(1, state: .reachable))
        history.record(Self.document(2, state: .reachable))
        #expect(
            try Self.changes(history)["changes"]?.jsonText
                == #"[{"sequence":2,"changedAt":"\#(Self.time(2))","diff":[],"lines":[]}]"#)
    }

    @Test func aTargetThatChangedAmongManyIsItsFieldsOnly() throws {
        let targets = (0..<500).map {
            TargetStatus(name: "t\($0)", url: "tcp://198.18.0.1:\(1000 + $0)", state: .reachable, since: Self.start)
        }
        var before = Self.document(1, state: .reachable)
        before.targets = targets
        var after = Self.document(2, state: .reachable)
        after.targets = targets
        after.targets[250].state = .unreachable
        after.targets[250].reason = .refused
        let history = ChangeHistory(capacity: 2, baseline: before)
        history.record(after)
        #expect(
            try Self.changes(history)["changes"]?.jsonText
                == #"[{"sequence":2,"changedAt":"\#(Self.time(2))","diff":[{"field":"targets.t250.state","#
                + #""from":"reachable","to":"unreachable"},{"field":"targets.t250.reason","from":null,"to":"refused"}],"#
                + #""lines":["target t250: reachable → unreachable (refused)"]}]"#
        )
    }

    /// Each change is computed from the values, without the entries both documents share: its
    /// diff is the one of the two whole documents' text, and its lines are that diff in words.
    @Test func theDiffOfTheValuesIsTheDiffOfTheWholeText() throws {
        let names = (0..<20).map { "t\($0)" }
        func document(_ sequence: UInt64, down: Set<String>) -> ReachabilityStatus {
            var status = Self.document(sequence, state: down.isEmpty ? .reachable : .unreachable)
            status.targets = names.map {
                TargetStatus(
                    name: $0, url: "tcp://198.18.0.1:1", state: down.contains($0) ? .unreachable : .reachable,
                    reason: down.contains($0) ? .noRoute : nil, since: Self.start)
            }
            return status
        }
        let documents = [
            document(1, down: []), document(2, down: Set(names)), document(3, down: ["t3"]), document(4, down: []),
        ]
        let history = ChangeHistory(capacity: 5, baseline: documents[0])
        for step in documents.dropFirst() { history.record(step) }
        guard case .array(let entries) = try Self.changes(history)["changes"] else {
            Issue.record("no changes array")
            return
        }
        #expect(entries.count == 3)
        for (entry, (old, new)) in zip(entries, zip(documents, documents.dropFirst())) {
            let whole = try JSONValue(parsing: new.jsonBytes())
            let diff = DocumentDiff.changes(from: try JSONValue(parsing: old.jsonBytes()), to: whole)
            #expect(entry["diff"]?.jsonText == JSONValue.array(diff.map(Self.tree)).jsonText)
            #expect(entry["lines"] == .array(ChangeText.lines(diff, in: whole).map(JSONValue.string)))
        }
        #expect(
            entries[2]["lines"]
                == .array([.string("network: unreachable → reachable"), .string("target t3: unreachable → reachable")]))
    }

    private static func tree(_ change: FieldChange) -> JSONValue {
        .object([.init("field", .string(change.field)), .init("from", change.from), .init("to", change.to)])
    }

    @Test func aRequestSharesTheRenderedAnswer() {
        let history = ChangeHistory(capacity: 2, baseline: Self.document(1, state: .reachable))
        history.record(Self.document(2, state: .unreachable))
        #expect(history.response === history.response)
    }

    @Test func theCountBoundHoldsForOne() {
        var one = KeptChanges(capacity: 1)
        one.append(KeptChange([1]))
        one.append(KeptChange([2]))
        #expect(one.elements.map(\.json) == [[2]] && one.bytes == 1)
        var three = KeptChanges(capacity: 3)
        for value in UInt8(1)...200 { three.append(KeptChange([value])) }
        #expect(three.elements.map(\.json) == [[198], [199], [200]] && three.count == 3 && three.bytes == 3)
    }

    /// A few changes of many targets must not hold hundreds of megabytes: the oldest go first
    /// once the bytes pass the budget, and the newest stays even when it alone is larger.
    @Test func theByteBudgetDropsTheOldestButNeverTheNewest() {
        var kept = KeptChanges(capacity: 500, byteBudget: 10)
        for value in UInt8(1)...4 { kept.append(KeptChange([UInt8](repeating: value, count: 3))) }
        #expect(kept.elements.map(\.json.first) == [2, 3, 4] && kept.bytes == 9, "12 bytes did not fit in 10")
        kept.append(KeptChange([UInt8](repeating: 5, count: 25)))
        #expect(kept.elements.map(\.json.first) == [5] && kept.count == 1 && kept.bytes == 25)
        kept.append(KeptChange([6]))
        #expect(kept.elements.map(\.json.first) == [6] && kept.bytes == 1, "the large one went with the next change")
        kept.append(KeptChange([7]))
        #expect(kept.elements.map(\.json.first) == [6, 7])
    }

    /// A change's JSON (its field names repeat) as a change of many targets writes it.
    static func changeText(targets: Int) -> [UInt8] {
        let fields = (0..<targets).map { index in
            #"{"field":"targets.t\#(index).state","from":"unknown","to":"reachable"}"#
        }
        return Array(#"{"sequence":3,"changedAt":"2026-11-29T16:15:09.685Z","diff":["#.utf8)
            + Array(fields.joined(separator: ",").utf8) + Array("]}".utf8)
    }

    /// A large change is kept compressed and read back whole; a small one, or one that does not
    /// compress, is kept as it is.
    @Test func aLargeChangeIsKeptCompressedAndReadBackWhole() {
        let large = Self.changeText(targets: 1_000)
        let kept = KeptChange(large)
        #expect(
            kept.count == large.count && kept.storedCount < large.count / 5, "\(kept.storedCount) of \(large.count)")
        #expect(kept.json == large)
        var body = Array("[".utf8)
        kept.append(to: &body)
        #expect(body == Array("[".utf8) + large, "appended after what the body holds")

        let small = Self.changeText(targets: 2)
        #expect(small.count < KeptChange.compressedFrom)
        #expect(KeptChange(small).storedCount == small.count && KeptChange(small).json == small)

        var generator = SystemRandomNumberGenerator()
        let noise = (0..<8_192).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(KeptChange(noise).storedCount == noise.count && KeptChange(noise).json == noise)
    }

    /// The byte budget counts the JSON a change adds to the answer, not the fewer bytes it holds
    /// compressed: a `/changes` answer stays within the budget however well changes compress.
    @Test func theByteBudgetCountsTheAnswerNotTheCompressedBytes() {
        let large = Self.changeText(targets: 1_000)
        var kept = KeptChanges(capacity: 500, byteBudget: large.count * 3 / 2)
        kept.append(KeptChange(large))
        kept.append(KeptChange(large))
        #expect(kept.count == 1 && kept.bytes == large.count, "two did not fit")
        #expect(kept.storedBytes < large.count / 5)
    }

    /// The first readings of many targets are one large change: kept compressed, answered whole.
    @Test func aLargeChangeIsAnsweredWhole() throws {
        let count = 300
        func document(_ sequence: UInt64, _ state: TargetStatus.State) -> ReachabilityStatus {
            var status = Self.document(sequence, state: .reachable)
            status.targets = (0..<count).map {
                TargetStatus(name: "t\($0)", url: "tcp://198.18.0.1:1", state: state, since: status.changedAt)
            }
            return status
        }
        let history = ChangeHistory(capacity: 10, baseline: document(1, .unknown))
        history.record(document(2, .reachable))
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(history.response.body)) as? [String: Any])
        let changes = try #require(answer["changes"] as? [[String: Any]])
        let diff = try #require(changes.first?["diff"] as? [[String: Any]])
        #expect(changes.count == 1 && diff.count == count)
        #expect(diff.allSatisfy { ($0["from"] as? String) == "unknown" && ($0["to"] as? String) == "reachable" })
    }

    @Test func aHistoryOverItsBudgetAnswersWithTheNewestChanges() throws {
        // One change alone: how many bytes an entry of these documents is.
        let one = ChangeHistory(capacity: 1, baseline: Self.document(1, state: .reachable))
        one.record(Self.document(2, state: .unreachable))
        let entryBytes = one.response.body.count - #"{"changes":[]}"#.utf8.count
        let history = ChangeHistory(
            capacity: 500, byteBudget: entryBytes * 5 / 2, baseline: Self.document(1, state: .reachable))
        for sequence in UInt64(2)...20 {
            history.record(Self.document(sequence, state: sequence % 2 == 0 ? .unreachable : .reachable))
        }
        guard case .array(let entries) = try Self.changes(history)["changes"] else {
            Issue.record("no changes array")
            return
        }
        // Two fit in two and a half entries' bytes.
        #expect(entries.map { $0["sequence"] } == [.number("19"), .number("20")])
        #expect(history.count == 2)
    }

    /// The answer is rendered by the first request after a change, then shared; a change makes
    /// the next request render again, with it.
    @Test func theAnswerIsRenderedOncePerChangeAndFollowsTheNext() throws {
        let history = ChangeHistory(capacity: 5, baseline: Self.document(1, state: .reachable))
        history.record(Self.document(2, state: .unreachable))
        let first = history.response
        #expect(first === history.response)
        history.record(Self.document(3, state: .reachable))
        let second = history.response
        #expect(second !== first && second === history.response)
        guard case .array(let entries) = try JSONValue(parsing: second.body)["changes"] else {
            Issue.record("no changes array")
            return
        }
        #expect(entries.map { $0["sequence"] } == [.number("2"), .number("3")])
        #expect(try JSONValue(parsing: first.body)["changes"]?.jsonText.contains(#""sequence":3"#) == false)
    }
}
