import FoundationEssentials
import Reachable
import Testing

/// What makes the monitor publish: a document equal to the last apart from its bookkeeping is no
/// change. The targets are compared entry by entry, an entry with the very same bits skipped.
struct SameContentTests {
    private let start = Date(timeIntervalSinceReferenceDate: 812_000_000)

    private func document(_ targets: [TargetStatus]) -> ReachabilityStatus {
        ReachabilityStatus(path: .unknown, targets: targets, sequence: 1, changedAt: start)
    }

    private func targets(_ count: Int, prefix: String = "t") -> [TargetStatus] {
        (0..<count).map { index in
            TargetStatus(
                name: "\(prefix)\(index)-a-name-longer-than-a-small-string",
                url: "http://198.18.\(index / 250).\(index % 250 + 1)/",
                state: .reachable, addresses: ["198.18.\(index / 250).\(index % 250 + 1)"], since: start,
                ipv4: TargetFamilyStatus(state: .reachable, address: "198.18.0.1", interface: "v0"))
        }
    }

    @Test func onlyTheBookkeepingDifferingIsTheSameContent() {
        let last = document(targets(300))
        var next = last
        next.sequence = 9
        next.changedAt = start.addingTimeInterval(5)
        next.stateSince = start.addingTimeInterval(5)
        next.targets[150].since = start  // written, but to what it was: a separate buffer, equal entries
        #expect(next.hasSameContent(as: last))
    }

    @Test func equalEntriesMadeApartAreTheSameContent() {
        // The same values in strings of their own: the bits differ, the values do not.
        #expect(document(targets(300)).hasSameContent(as: document(targets(300))))
    }

    @Test(arguments: [0, 150, 299])
    func oneEntryThatDiffersIsAChange(index: Int) {
        let last = document(targets(300))
        var next = last
        next.targets[index].state = .unreachable
        #expect(!next.hasSameContent(as: last))
        var renamed = last
        renamed.targets[index].name = "other"
        #expect(!renamed.hasSameContent(as: last))
        var fewer = last
        fewer.targets.removeLast()
        #expect(!fewer.hasSameContent(as: last))
    }

    @Test func aChangeOutsideTheTargetsIsAChange() {
        let last = document(targets(3))
        var next = last
        next.ipv4 = true
        #expect(!next.hasSameContent(as: last))
    }
}
