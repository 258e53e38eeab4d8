import Foundation
import Logging
import Reachable
import Testing

@testable import ReachableServer

/// The `status changed` log line: every target of a small document; of a fleet's, the targets
/// that changed and counts of all.
@Suite struct StatusChangeLineTests {
    static func document(_ targets: [TargetStatus], sequence: UInt64) -> ReachabilityStatus {
        var status = ReachabilityStatus(
            path: NetworkPath(state: .reachable, ipv4: true), sequence: sequence, changedAt: Date())
        status.targets = targets
        return status
    }

    static func target(_ index: Int, _ state: TargetStatus.State = .reachable) -> TargetStatus {
        TargetStatus(name: "t\(index)", url: "tcp://198.18.0.1:\(1000 + index)", state: state, since: Date())
    }

    static func names(_ value: Logger.MetadataValue?) -> [String] {
        guard case .array(let entries) = value else { return [] }
        return entries.compactMap { entry in
            guard case .dictionary(let fields) = entry, case .string(let name) = fields["name"] else { return nil }
            return name
        }
    }

    static func number(_ value: Logger.MetadataValue?) -> String? {
        guard case .stringConvertible(let number) = value else { return nil }
        return number.description
    }

    @Test func aSmallDocumentListsEveryTargetAndNoCounts() {
        let targets = (0..<StatusChangeLine.listedInFull).map { Self.target($0) }
        let before = Self.document(targets, sequence: 1)
        let line = StatusChangeLine.metadata(for: Self.document(targets, sequence: 2), after: before)
        #expect(Self.names(line["targets"]) == targets.map(\.name), "nothing changed, yet every target is listed")
        #expect(line["targetsChanged"] == nil && line["targetCounts"] == nil && line["unreachableReasons"] == nil)
        #expect(Self.number(line["sequence"]) == "2")
    }

    @Test func theLineCarriesTheCause() {
        let before = Self.document([], sequence: 1)
        let none = StatusChangeLine.metadata(for: before, after: before)
        #expect(none["cause"] == "none" && none["causeText"] == nil)
        var after = Self.document([Self.target(0, .unreachable)], sequence: 2)
        after.cause = Cause(layer: .target, subject: "t0", text: "t0 is unreachable", since: Date())
        let line = StatusChangeLine.metadata(for: after, after: before)
        #expect(line["cause"] == "target" && line["causeText"] == "t0 is unreachable")
    }

    @Test func aFleetsDocumentListsTheTargetsThatChangedAndCountsThemAll() throws {
        let count = StatusChangeLine.listedInFull + 50
        let before = Self.document((0..<count).map { Self.target($0) }, sequence: 7)
        var targets = before.targets
        targets[3].state = .unreachable
        targets[3].reason = .noRoute
        targets[90].degraded = true
        targets[140].state = .unreachable
        targets[140].reason = .refused
        targets.swapAt(10, 11)  // moved, not changed: paired by name
        targets.append(Self.target(count))  // new: changed
        let line = StatusChangeLine.metadata(for: Self.document(targets, sequence: 8), after: before)
        #expect(Self.names(line["targets"]) == ["t3", "t90", "t140", "t\(count)"])
        #expect(Self.number(line["targetsChanged"]) == "4")
        guard case .dictionary(let counts) = line["targetCounts"],
            case .dictionary(let reasons) = line["unreachableReasons"]
        else { Issue.record("no counts: \(line)"); return }
        #expect(Self.number(counts["reachable"]) == "\(count - 1)")
        #expect(Self.number(counts["unreachable"]) == "2")
        #expect(Self.number(counts["unknown"]) == "0")
        #expect(Self.number(counts["degraded"]) == "1")
        #expect(Self.number(reasons["no-route"]) == "1" && Self.number(reasons["refused"]) == "1" && reasons.count == 2)
        guard case .array(let listed) = line["targets"], case .dictionary(let first) = listed.first else {
            Issue.record("no entries"); return
        }
        #expect(first["reason"].map { "\($0)" } == "no-route" && first["state"].map { "\($0)" } == "unreachable")
    }

    /// A link-down of 10,000 targets lists the first `listedInFull`, and counts every one.
    @Test func everyTargetChangedListsAsManyAsInFullAndCountsTheRest() {
        let before = Self.document((0..<1_000).map { Self.target($0) }, sequence: 1)
        let after = Self.document(
            before.targets.map { target in
                var target = target
                target.state = .unreachable
                target.reason = .noRoute
                return target
            }, sequence: 2)
        let line = StatusChangeLine.metadata(for: after, after: before)
        #expect(Self.names(line["targets"]) == (0..<StatusChangeLine.listedInFull).map { "t\($0)" })
        #expect(Self.number(line["targetsChanged"]) == "1000")
        guard case .dictionary(let reasons) = line["unreachableReasons"] else { Issue.record("no reasons"); return }
        #expect(Self.number(reasons["no-route"]) == "1000")
    }
}
