import Foundation
import Reachable
import Testing

@testable import ReachableServer

/// `/changes`: the baseline is no change, each change is diffed once, the ring keeps the newest.
struct ChangeHistoryTests {
    private static func document(_ sequence: Int, state: String) -> ArraySlice<UInt8> {
        Array(#"{"state":"\#(state)","sequence":\#(sequence),"changedAt":"t\#(sequence)"}"#.utf8)[...]
    }

    private static func changes(_ history: ChangeHistory) throws -> JSONValue {
        try JSONValue(parsing: history.response.body)
    }

    @Test func theBaselineIsNoChange() throws {
        let history = ChangeHistory(capacity: 5, baseline: Self.document(1, state: "reachable"))
        #expect(history.count == 0)
        #expect(String(decoding: history.response.body, as: UTF8.self) == #"{"changes":[]}"#)
    }

    @Test func eachChangeIsItsSequenceTimeAndDiff() throws {
        let history = ChangeHistory(capacity: 5, baseline: Self.document(1, state: "reachable"))
        #expect(history.record(Self.document(2, state: "unreachable")) == 1)
        #expect(
            String(decoding: history.response.body, as: UTF8.self)
                == #"{"changes":[{"sequence":2,"changedAt":"t2","diff":[{"field":"state","from":"reachable","to":"unreachable"}]}]}"#
        )
        #expect(history.response.headers.first == HTTPField("Content-Type", "application/json"))
    }

    @Test func theRingKeepsTheNewestOldestFirst() throws {
        let history = ChangeHistory(capacity: 3, baseline: Self.document(1, state: "reachable"))
        for sequence in 2...8 {
            history.record(Self.document(sequence, state: sequence % 2 == 0 ? "unreachable" : "reachable"))
        }
        #expect(history.count == 3)
        guard case .array(let entries) = try Self.changes(history)["changes"] else {
            Issue.record("no changes array")
            return
        }
        #expect(entries.map { $0["sequence"] } == [.number("6"), .number("7"), .number("8")])
        // Each diffed against the one before it, not against the baseline.
        #expect(entries[0]["diff"]?.jsonText == #"[{"field":"state","from":"reachable","to":"unreachable"}]"#)
    }

    @Test func aChangeOfBookkeepingOnlyIsKeptWithAnEmptyDiff() throws {
        let history = ChangeHistory(capacity: 2, baseline: Self.document(1, state: "reachable"))
        history.record(Self.document(2, state: "reachable"))
        #expect(try Self.changes(history)["changes"]?.jsonText == #"[{"sequence":2,"changedAt":"t2","diff":[]}]"#)
    }

    @Test func textThatIsNotJSONIsLeftOutAndTheNextChangeDiffsFromTheLastGoodOne() throws {
        let history = ChangeHistory(capacity: 5, baseline: Self.document(1, state: "reachable"))
        #expect(history.record(Array("{not json".utf8)[...]) == 0)
        history.record(Self.document(3, state: "unreachable"))
        #expect(
            try Self.changes(history)["changes"]?.jsonText
                == #"[{"sequence":3,"changedAt":"t3","diff":[{"field":"state","from":"reachable","to":"unreachable"}]}]"#
        )
    }

    @Test func aBaselineThatIsNotJSONSharesNothingWithTheFirstChange() throws {
        // The scan takes this baseline's entry for the new document's (same bytes), but the
        // baseline does not parse: the first change is the whole document, as from `null`.
        let baseline = #"{"targets":[{"name":"a","s":1}],"x":tru,"sequence":1}"#
        let history = ChangeHistory(capacity: 2, baseline: Array(baseline.utf8)[...])
        let next = #"{"targets":[{"name":"a","s":1}],"x":true,"sequence":2,"changedAt":"t2"}"#
        history.record(Array(next.utf8)[...])
        let expected = DocumentDiff.changes(from: .null, to: try JSONValue(parsing: next))
        #expect(expected.count == 1)
        #expect(
            try Self.changes(history)["changes"]?.jsonText
                == #"[{"sequence":2,"changedAt":"t2","diff":[{"field":"","from":null,"to":"#
                + #"{"targets":[{"name":"a","s":1}],"x":true,"sequence":2,"changedAt":"t2"}}]}]"#)
    }

    @Test func aRequestSharesTheRenderedAnswer() {
        let history = ChangeHistory(capacity: 2, baseline: Self.document(1, state: "reachable"))
        history.record(Self.document(2, state: "unreachable"))
        #expect(history.response === history.response)
    }

    @Test func theCountBoundHoldsForOne() {
        var one = KeptChanges(capacity: 1)
        one.append([1])
        one.append([2])
        #expect(Array(one.elements) == [[2]] && one.bytes == 1)
        var three = KeptChanges(capacity: 3)
        for value in UInt8(1)...200 { three.append([value]) }
        #expect(Array(three.elements) == [[198], [199], [200]] && three.count == 3 && three.bytes == 3)
    }

    /// A few changes of many targets must not hold hundreds of megabytes: the oldest go first
    /// once the bytes pass the budget, and the newest stays even when it alone is larger.
    @Test func theByteBudgetDropsTheOldestButNeverTheNewest() {
        var kept = KeptChanges(capacity: 500, byteBudget: 10)
        for value in UInt8(1)...4 { kept.append([UInt8](repeating: value, count: 3)) }
        #expect(kept.elements.map(\.first) == [2, 3, 4] && kept.bytes == 9, "12 bytes did not fit in 10")
        kept.append([UInt8](repeating: 5, count: 25))
        #expect(kept.elements.map(\.first) == [5] && kept.count == 1 && kept.bytes == 25)
        kept.append([6])
        #expect(kept.elements.map(\.first) == [6] && kept.bytes == 1, "the large one went with the next change")
        kept.append([7])
        #expect(kept.elements.map(\.first) == [6, 7])
    }

    @Test func aHistoryOverItsBudgetAnswersWithTheNewestChanges() throws {
        let history = ChangeHistory(capacity: 500, byteBudget: 200, baseline: Self.document(1, state: "reachable"))
        for sequence in 2...20 {
            history.record(Self.document(sequence, state: sequence % 2 == 0 ? "unreachable" : "reachable"))
        }
        guard case .array(let entries) = try Self.changes(history)["changes"] else {
            Issue.record("no changes array")
            return
        }
        // Each entry is about 90 bytes: two fit in 200.
        #expect(entries.map { $0["sequence"] } == [.number("19"), .number("20")])
        #expect(history.count == 2)
    }

    /// The answer is rendered by the first request after a change, then shared; a change makes
    /// the next request render again, with it.
    @Test func theAnswerIsRenderedOncePerChangeAndFollowsTheNext() throws {
        let history = ChangeHistory(capacity: 5, baseline: Self.document(1, state: "reachable"))
        history.record(Self.document(2, state: "unreachable"))
        let first = history.response
        #expect(first === history.response)
        history.record(Self.document(3, state: "reachable"))
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
