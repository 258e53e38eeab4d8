import Reachable

/// A route gate's judgement of the targets, as the document takes it: the judged books' entries
/// with their places — or, when most questions lost their route (a link-down), every book's entry
/// in order, made in the one pass that judged the books. (A list of judged entries, moved into a
/// new list in a second pass, is one more large block and a copy of every entry, on the netlink
/// thread before the document: docs/scale.md.)
struct JudgedTargets: Sendable {
    /// Each judged book's place and new entry; empty when `list` is made.
    var entries: [(index: Int, status: TargetStatus)] = []
    /// Every book's entry in order, judged or not; `nil` unless most questions lost their route.
    var list: [TargetStatus]?
    /// The places in `list` of the books not judged: their entries there are the books' own, which
    /// the document's replace (the document is not changed where nothing was judged).
    var unjudged: [Int] = []
}

extension ReachabilityStatus {
    /// Puts a route gate's judgement in the document: a made list as the new list, where its
    /// entries line up with the document's by name (they do, unless the target set was reloaded
    /// between the judgement and the batch's document), else each judged entry by name.
    mutating func replaceTargets(_ judged: consuming JudgedTargets) {
        var judged = judged
        guard var list = judged.list.take() else {
            // Moved out, so the entries' array is not shared while it is taken apart.
            let entries = judged.entries
            judged.entries = []
            return replaceTargets(entries)
        }
        guard list.count == targets.count, targets.indices.allSatisfy({ list[$0].name == targets[$0].name }) else {
            let kept = Set(judged.unjudged)
            return replaceTargets(list.indices.filter { !kept.contains($0) }.map { ($0, list[$0]) })
        }
        for index in judged.unjudged { list[index] = targets[index] }
        targets = list
    }

    /// Puts a route gate's judged entries in their places. When they are most of the list, the
    /// list is made anew with them moved in: replaced one by one, the list shared with the last
    /// document was first copied whole (every entry's strings retained) and each copied entry then
    /// released again, on the netlink thread before the document (docs/scale.md).
    mutating func replaceTargets(_ judged: consuming [(index: Int, status: TargetStatus)]) {
        guard judged.count * 2 > targets.count else {
            for (index, status) in judged { replaceTarget(status, at: index) }
            return
        }
        let old = targets
        var placed = [Bool](repeating: false, count: old.count)
        var elsewhere: [TargetStatus] = []  // not at its hinted place: looked up by name below
        var judged = judged
        targets = [TargetStatus](unsafeUninitializedCapacity: old.count) { entries, count in
            while let (index, status) = judged.popLast() {  // moved out, not copied
                guard old.indices.contains(index), !placed[index], old[index].name == status.name else {
                    elsewhere.append(status)
                    continue
                }
                (entries.baseAddress! + index).initialize(to: status)
                placed[index] = true
            }
            for index in old.indices where !placed[index] {
                (entries.baseAddress! + index).initialize(to: old[index])
            }
            count = old.count
        }
        for status in elsewhere { replaceTarget(status) }
    }
}
