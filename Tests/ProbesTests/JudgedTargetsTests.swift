import Foundation
import Reachable
import Testing

@testable import Probes

/// A route gate's judged entries put into the document at once (`replaceTargets`): made anew
/// when they are most of the list, one by one otherwise, or taken as the gate's whole new list
/// (`JudgedTargets.list`, a link-down) — the same document every way as putting each in its place
/// with `replaceTarget`, whatever the hints say.
@Suite struct JudgedTargetsTests {
    static let start = Date(timeIntervalSince1970: 1_000)

    static func document(_ count: Int) -> ReachabilityStatus {
        ReachabilityStatus(
            path: NetworkPath(state: .reachable),
            targets: (0..<count).map {
                TargetStatus(name: "t\($0)", url: "http://198.18.1.\($0 % 250 + 1)/", state: .reachable, since: start)
            }, sequence: 1, changedAt: start)
    }

    static func judged(_ index: Int, hint: Int? = nil) -> (index: Int, status: TargetStatus) {
        (
            hint ?? index,
            TargetStatus(
                name: "t\(index)", url: "http://198.18.1.\(index % 250 + 1)/", state: .unreachable,
                reason: .noRoute, since: start.addingTimeInterval(5))
        )
    }

    /// What putting each entry in its place one by one makes.
    static func oneByOne(_ document: ReachabilityStatus, _ judged: [(index: Int, status: TargetStatus)])
        -> ReachabilityStatus
    {
        var expected = document
        for (index, status) in judged { expected.replaceTarget(status, at: index) }
        return expected
    }

    @Test(arguments: [
        // every target (a link-down), most of them, a few, none
        Array(0..<100), Array(0..<80).filter { $0 % 7 != 3 }, [4, 50, 99], [],
    ])
    func theSameDocumentAsOneByOne(indices: [Int]) {
        let before = Self.document(100)
        let judged = indices.map { Self.judged($0) }
        var document = before
        document.replaceTargets(judged)
        #expect(document == Self.oneByOne(before, judged))
        #expect(before == Self.document(100), "the document it was copied from is left as it was")
    }

    @Test func anEntryWhoseHintIsWrongIsPutInItsPlaceByName() {
        let before = Self.document(10)
        // Most of the list, with two hints off (swapped), one out of range and one repeated.
        var judged = (0..<8).map { Self.judged($0) }
        judged[2] = Self.judged(2, hint: 3)
        judged[3] = Self.judged(3, hint: 2)
        judged[5] = Self.judged(5, hint: 42)
        judged.append(Self.judged(6))
        var document = before
        document.replaceTargets(judged)
        #expect(document == Self.oneByOne(before, judged))
        #expect(document.targets.map(\.name) == (0..<10).map { "t\($0)" })
        #expect(document.targets.prefix(8).allSatisfy { $0.state == .unreachable })
        #expect(document.targets.suffix(2).allSatisfy { $0.state == .reachable })
    }

    /// A gate's whole list: every book's entry in order, the unjudged ones the books' own.
    static func list(_ count: Int, judged: Set<Int>) -> JudgedTargets {
        JudgedTargets(
            list: (0..<count).map { index in
                judged.contains(index)
                    ? Self.judged(index).status
                        // The book's own entry: not what the document shows, which must stay.
                    : TargetStatus(name: "t\(index)", url: "http://198.18.1.\(index % 250 + 1)/", since: start)
            },
            unjudged: (0..<count).filter { !judged.contains($0) })
    }

    @Test(arguments: [Set(0..<100), Set((0..<100).filter { $0 % 9 != 4 }), Set([4, 50, 99]), Set<Int>()])
    func aWholeListIsTheSameDocumentAsOneByOne(judged: Set<Int>) {
        let before = Self.document(100)
        let list = Self.list(100, judged: judged)
        #expect(list.judgedPlaces == judged.sorted())
        var document = before
        document.replaceTargets(list)
        #expect(document == Self.oneByOne(before, judged.sorted().map { Self.judged($0) }))
        #expect(before == Self.document(100), "the document it was copied from is left as it was")
    }

    @Test func aListThatDoesNotLineUpWithTheDocumentIsPutInByName() {
        // The document lists the targets in another order (or another set): each judged entry by name.
        var before = Self.document(10)
        before.targets.reverse()
        let list = Self.list(10, judged: Set(0..<8))
        var document = before
        document.replaceTargets(list)
        #expect(document == Self.oneByOne(before, (0..<8).map { Self.judged($0) }))
        #expect(document.targets.map(\.name) == (0..<10).reversed().map { "t\($0)" })
        let shorter = ReachabilityStatus(
            path: before.path, targets: Array(before.targets.prefix(5)), sequence: 1, changedAt: Self.start)
        document = shorter
        document.replaceTargets(list)
        #expect(document == Self.oneByOne(shorter, (0..<8).map { Self.judged($0) }))
    }
}

extension JudgedTargets {
    /// The places of the judged books, in order, whichever form the judgement took.
    var judgedPlaces: [Int] {
        guard let list else { return entries.map(\.index) }
        let kept = Set(unjudged)
        return list.indices.filter { !kept.contains($0) }
    }
}
