/// Takes out of two status documents what they share unchanged, so that the `/changes` diff
/// builds and compares only what may differ: a change of one target's state then costs a tree of
/// one target, not of the whole fleet.
///
/// What is taken out: a target or an interface equal in both documents, and the cause when it is
/// the same in both (most changes leave it as it was). `DocumentDiff` gives the same result
/// without them: it pairs those arrays' entries by `name`, and two equal entries are written the
/// same and differ in nothing. Only where that pairing is certain — the names of each array are
/// distinct in both documents —; elsewhere nothing is taken out, which is always correct: the
/// diff then compares the entries itself.
public enum UnchangedEntries {
    /// `old` and `new` without the targets, interfaces and cause they share unchanged.
    public static func removed(
        from old: ReachabilityStatus, _ new: ReachabilityStatus
    ) -> (old: ReachabilityStatus, new: ReachabilityStatus) {
        var (old, new) = (old, new)
        if let (oldTargets, newTargets) = unshared(old.targets, new.targets, name: \.name) {
            old.targets = oldTargets
            new.targets = newTargets
        }
        if let (oldInterfaces, newInterfaces) = unshared(old.interfaces, new.interfaces, name: \.name) {
            old.interfaces = oldInterfaces
            new.interfaces = newInterfaces
        }
        if old.cause == new.cause {
            old.cause = nil
            new.cause = nil
        }
        return (old, new)
    }

    /// Both arrays without the entries equal in both (paired by name); `nil` when nothing is
    /// shared or the names are not distinct.
    private static func unshared<Entry: Equatable>(
        _ old: [Entry], _ new: [Entry], name: (Entry) -> String
    ) -> ([Entry], [Entry])? {
        guard isDistinct(old.map(name)), isDistinct(new.map(name)) else { return nil }
        var sharedOld = [Bool](repeating: false, count: old.count)
        var sharedNew = [Bool](repeating: false, count: new.count)
        for (place, oldPlace) in NamePairing.oldPlaces(old, new, name: name).enumerated() {
            guard let oldPlace, old[oldPlace] == new[place] else { continue }
            sharedOld[oldPlace] = true
            sharedNew[place] = true
        }
        guard sharedNew.contains(true) else { return nil }
        return (kept(old, unless: sharedOld), kept(new, unless: sharedNew))
    }

    private static func isDistinct(_ names: [String]) -> Bool {
        Set(names).count == names.count
    }

    private static func kept<Entry>(_ entries: [Entry], unless shared: [Bool]) -> [Entry] {
        entries.indices.filter { !shared[$0] }.map { entries[$0] }
    }
}
