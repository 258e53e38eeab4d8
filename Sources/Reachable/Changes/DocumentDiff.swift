/// What changed between two status documents, read from their JSON rather than from the Swift
/// model: a field added to the document later (a target's `detail`, `targetsFile`) is compared
/// without a line here, and the server and `reachd watch` (which may be of another version than
/// the server it follows) compute the same diff.
///
/// The rules (docs/endpoints.md, "GET /changes"):
/// - objects are compared member by member, in the new document's order, then members that are
///   gone;
/// - an array whose entries are all objects with a distinct `name` (targets, interfaces) or
///   `address` (DNS servers) is compared entry by entry, each named by that value; any other
///   array (`addresses`) is one value, compared whole;
/// - something added or removed whole (a target, an interface, a family's object) is one entry
///   whose `from` or `to` is `null`; a value of another kind is one entry too;
/// - `excludedKeys` are never entries, at any depth.
public enum DocumentDiff {
    /// The document's bookkeeping: `sequence`, `changedAt` and `stateSince` change with every
    /// document or with `state`, and every `since` (of a target, connectivity, DNS, a nameserver)
    /// changes exactly when the `state` beside it does — an entry for it would repeat that one.
    public static let excludedKeys: Set<String> = [
        DocumentKey.sequence, DocumentKey.changedAt, DocumentKey.stateSince, DocumentKey.since,
    ]

    /// The members that name an array's entries, in the order they are tried.
    public static let entryNames = [DocumentKey.name, DocumentKey.address]

    /// Every field of `new` that differs from `old`, in document order.
    public static func changes(from old: JSONValue, to new: JSONValue) -> [FieldChange] {
        var changes: [FieldChange] = []
        var path: [String] = []
        compare(old, new, at: &path, into: &changes)
        return changes
    }

    // The path is one array, a part appended before each comparison and removed after it, and
    // copied only into a change: a fleet's link-down compares hundreds of thousands of members,
    // and a new path for each was a third of the diff's time (docs/scale.md).
    private static func compare(
        _ old: JSONValue, _ new: JSONValue, at path: inout [String], into changes: inout [FieldChange]
    ) {
        switch (old, new) {
        case (.object(let oldMembers), .object(let newMembers)):
            compareObjects(oldMembers, newMembers, at: &path, into: &changes)
        case (.array(let oldEntries), .array(let newEntries)):
            if let oldNamed = named(oldEntries, newEntries) {
                compareNamed(oldNamed.old, oldNamed.new, at: &path, into: &changes)
            } else if old != new {
                changes.append(FieldChange(path: path, from: old, to: new))
            }
        default:
            if old != new { changes.append(FieldChange(path: path, from: old, to: new)) }
        }
    }

    private static func compareObjects(
        _ old: [JSONValue.Member], _ new: [JSONValue.Member], at path: inout [String],
        into changes: inout [FieldChange]
    ) {
        // Two documents of one encoder list the same keys in the same order: each key is looked
        // for at its own place first, and only a key elsewhere is searched for.
        var sameKeys = old.count == new.count
        for (place, member) in new.enumerated() {
            let before: JSONValue
            if place < old.count, old[place].key == member.key {
                before = old[place].value
            } else {
                sameKeys = false
                before = old.first { $0.key == member.key }?.value ?? .null
            }
            guard !isExcluded(member.key) else { continue }
            path.append(member.key)
            compare(before, member.value, at: &path, into: &changes)
            path.removeLast()
        }
        guard !sameKeys else { return }
        for member in old where !isExcluded(member.key) && !new.contains(where: { $0.key == member.key }) {
            changes.append(FieldChange(path: path + [member.key], from: member.value, to: .null))
        }
    }

    /// `excludedKeys.contains(key)`, without hashing the key: asked for every member compared.
    static func isExcluded(_ key: String) -> Bool {
        switch key {
        case DocumentKey.sequence, DocumentKey.changedAt, DocumentKey.stateSince, DocumentKey.since: true
        default: false
        }
    }

    private static func compareNamed(
        _ old: [(name: String, value: JSONValue)], _ new: [(name: String, value: JSONValue)], at path: inout [String],
        into changes: inout [FieldChange]
    ) {
        // By name through a dictionary, never a search per entry: a search is quadratic in the
        // targets (docs/scale.md).
        let newIndex = Dictionary(new.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        let oldNames = Set(old.map(\.name))
        for entry in old {
            let after = newIndex[entry.name].map { new[$0].value } ?? .null
            path.append(entry.name)
            compare(entry.value, after, at: &path, into: &changes)
            path.removeLast()
        }
        for entry in new where !oldNames.contains(entry.name) {
            changes.append(FieldChange(path: path + [entry.name], from: .null, to: entry.value))
        }
    }

    /// Both arrays' entries with their names, when one of `entryNames` names every entry of both
    /// arrays, each once; `nil` when none does (the arrays are then compared whole).
    private static func named(
        _ old: [JSONValue], _ new: [JSONValue]
    ) -> (old: [(name: String, value: JSONValue)], new: [(name: String, value: JSONValue)])? {
        for key in entryNames {
            if let oldNamed = named(old, by: key), let newNamed = named(new, by: key) {
                return (oldNamed, newNamed)
            }
        }
        return nil
    }

    private static func named(_ entries: [JSONValue], by key: String) -> [(name: String, value: JSONValue)]? {
        var names = Set<String>()
        var result: [(name: String, value: JSONValue)] = []
        for entry in entries {
            guard let name = entry[key]?.stringValue, names.insert(name).inserted else { return nil }
            result.append((name, entry))
        }
        return result
    }
}
