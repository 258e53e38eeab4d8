/// Takes out of two status documents the entries they share unchanged, so that the `/changes`
/// diff encodes and parses only what may differ. At 10,000 targets a document is 3.4 MB: parsing
/// every one whole (and keeping the last one parsed) cost 150–250 ms of CPU and 26 MB of tree per
/// document; scanning both texts for the entries they share byte for byte still cost 23 ms for a
/// change of one target. Compared as values, the targets that did not change are found in about a
/// millisecond, and a document without them is a few hundred bytes to encode and parse.
///
/// What is taken out: a target or an interface equal in both documents, and — when one was, so the
/// documents are encoded again anyway — the cause when it is the same in both (most changes leave
/// it as it was); a document left whole is diffed from the text already encoded for it. `DocumentDiff` gives the
/// same result without them: it pairs those arrays' entries by `name`, and two equal entries are
/// written the same and differ in nothing. Only where that pairing is certain — the names of
/// each array are distinct in both documents —; elsewhere nothing is taken out, which is always
/// correct: the diff then compares the entries itself.
public enum UnchangedEntries {
    /// `old` and `new` without the targets and interfaces they share unchanged.
    public static func removed(
        from old: ReachabilityStatus, _ new: ReachabilityStatus
    ) -> (old: ReachabilityStatus, new: ReachabilityStatus) {
        var (old, new) = (old, new)
        var tookOut = false
        if let (oldTargets, newTargets) = unshared(old.targets, new.targets, name: \.name) {
            old.targets = oldTargets
            new.targets = newTargets
            tookOut = true
        }
        if let (oldInterfaces, newInterfaces) = unshared(old.interfaces, new.interfaces, name: \.name) {
            old.interfaces = oldInterfaces
            new.interfaces = newInterfaces
            tookOut = true
        }
        if tookOut && old.cause == new.cause {
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
