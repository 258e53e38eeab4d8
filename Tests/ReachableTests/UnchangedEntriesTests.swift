import FoundationEssentials
import Reachable
import Testing

/// `/changes` diffs two documents without the entries they share: the diff must be exactly the
/// diff of the whole documents, and only entries that are certainly the same may be taken out.
struct UnchangedEntriesTests {
    private static let since = Date(timeIntervalSince1970: 1_800_000_000)

    /// The diff of the whole documents and the diff of what `UnchangedEntries` leaves, as lines.
    private func bothDiffs(
        _ old: ReachabilityStatus, _ new: ReachabilityStatus
    ) throws -> (whole: [String], pruned: [String]) {
        let (before, after) = UnchangedEntries.removed(from: old, new)
        func lines(_ old: ReachabilityStatus, _ new: ReachabilityStatus) throws -> [String] {
            DocumentDiff.changes(
                from: try JSONValue(parsing: old.jsonBytes()), to: try JSONValue(parsing: new.jsonBytes())
            )
            .map { "\($0.field): \($0.from.jsonText) → \($0.to.jsonText)" }
        }
        return (try lines(old, new), try lines(before, after))
    }

    private func expectSameDiff(
        _ old: ReachabilityStatus, _ new: ReachabilityStatus, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let (whole, pruned) = try bothDiffs(old, new)
        #expect(whole == pruned, sourceLocation: sourceLocation)
    }

    private static func document(_ targets: [TargetStatus], sequence: UInt64 = 1) -> ReachabilityStatus {
        ReachabilityStatus(
            path: NetworkPath(state: .reachable, ipv4: true), targets: targets, sequence: sequence, changedAt: since)
    }

    private static func target(_ name: String, _ state: TargetStatus.State = .reachable) -> TargetStatus {
        TargetStatus(
            name: name, url: "tcp://198.18.0.1:1", state: state, reason: state == .unreachable ? .refused : nil,
            addresses: ["198.18.0.1"], since: since,
            ipv4: TargetFamilyStatus(
                state: state, reason: state == .unreachable ? .refused : nil, address: "198.18.0.1"))
    }

    @Test func aFewChangedTargetsAmongManyLeaveOnlyThemAndTheSameDiff() throws {
        let old = Self.document((0..<1000).map { Self.target("t\($0)") })
        var new = old
        new.sequence = 2
        for index in [3, 700] { new.targets[index] = Self.target("t\(index)", .unreachable) }
        let removed = UnchangedEntries.removed(from: old, new)
        #expect(removed.old.targets.map(\.name) == ["t3", "t700"])
        #expect(removed.new.targets.map(\.name) == ["t3", "t700"])
        let (whole, pruned) = try bothDiffs(old, new)
        #expect(whole == pruned)
        #expect(whole.count == 8, "state, reason and the family's state and reason, of each")
    }

    @Test func addedRemovedAndReorderedTargetsGiveTheSameDiff() throws {
        let old = Self.document(["a", "b", "c"].map { Self.target($0) })
        let reordered = Self.document([Self.target("c"), Self.target("a", .unreachable), Self.target("d")])
        let removed = UnchangedEntries.removed(from: old, reordered)
        #expect(removed.old.targets.map(\.name) == ["a", "b"] && removed.new.targets.map(\.name) == ["a", "d"])
        try expectSameDiff(old, reordered)
        try expectSameDiff(old, Self.document([]))
        try expectSameDiff(Self.document([]), old)
        try expectSameDiff(old, old)
        #expect(UnchangedEntries.removed(from: old, old).new.targets.isEmpty)
    }

    @Test func aLinkDownSharesNothingAndIsLeftWhole() throws {
        let old = Self.document((0..<20).map { Self.target("t\($0)") })
        let new = Self.document((0..<20).map { Self.target("t\($0)", .unreachable) }, sequence: 2)
        let removed = UnchangedEntries.removed(from: old, new)
        #expect(removed.old == old && removed.new == new)
        try expectSameDiff(old, new)
    }

    @Test func namesThatRepeatAreLeftWhole() throws {
        // The diff compares an array whose names repeat whole: nothing may be taken out of it.
        let old = Self.document([Self.target("a"), Self.target("a"), Self.target("b")])
        var new = old
        new.targets[2] = Self.target("b", .unreachable)
        let removed = UnchangedEntries.removed(from: old, new)
        #expect(removed.old.targets.count == 3 && removed.new.targets.count == 3)
        try expectSameDiff(old, new)
        try expectSameDiff(Self.document([Self.target("a"), Self.target("b")]), new)
    }

    @Test func interfacesAreTakenOutTheSameWay() throws {
        func interface(_ name: String, _ operState: String) -> InterfaceStatus {
            InterfaceStatus(
                name: name, index: 2, transport: .ethernet, kind: nil, operState: operState, isDefaultRoute: true,
                addresses: ["198.18.0.2/24"])
        }
        var old = Self.document([Self.target("a")])
        old.interfaces = [interface("eth0", "up"), interface("eth1", "up"), interface("eth0.100", "up")]
        var new = old
        new.sequence = 2
        new.interfaces[2] = interface("eth0.100", "down")
        let removed = UnchangedEntries.removed(from: old, new)
        #expect(removed.new.interfaces.map(\.name) == ["eth0.100"] && removed.new.targets.isEmpty)
        let (whole, pruned) = try bothDiffs(old, new)
        #expect(whole == ["interfaces.eth0.100.operState: \"up\" → \"down\""] && pruned == whole)
    }

    @Test func theCauseIsTakenOutWhenTheSameAndKeptWhenItChanged() throws {
        let cause = Cause(layer: .target, subject: "a", text: "a is unreachable (refused)", since: Self.since)
        var old = Self.document([Self.target("a", .unreachable), Self.target("b")])
        old.cause = cause
        var new = old
        new.sequence = 2
        new.targets[1] = Self.target("b", .unreachable)
        let removed = UnchangedEntries.removed(from: old, new)
        #expect(removed.old.cause == nil && removed.new.cause == nil)
        try expectSameDiff(old, new)
        var moved = new
        moved.cause = Cause(layer: .link, subject: "eth0", text: "eth0 is down", since: Self.since)
        #expect(UnchangedEntries.removed(from: new, moved).new.cause == moved.cause)
        try expectSameDiff(new, moved)
        var cleared = new
        cleared.cause = nil
        try expectSameDiff(new, cleared)
    }
}
