/// A diff in words, one line per thing that changed: `target db: reachable → unreachable
/// (refused: ECONNREFUSED: connection refused)`. A `state` change reads with the `reason` and
/// `detail` beside it in the new document (either may be absent or `null`), and their own entries
/// are folded into that line; whatever the document holds besides reads as `SUBJECT FIELD: from
/// → to`, so a field added to the document later still shows. A change of the cause reads first,
/// as its new words (`cause: eth0 is down (no carrier)`).
///
/// The server words each change once, for `/changes` (and the page, which shows those lines);
/// `reachd watch` words the diffs it computes between the documents it receives.
public enum ChangeText {
    /// - Parameters:
    ///   - changes: the diff (`DocumentDiff.changes`), in document order.
    ///   - document: the new document, where a state's reason and detail are read.
    /// - Returns: the lines, as they are: a terminal's reader makes control characters visible.
    public static func lines(_ changes: [FieldChange], in document: JSONValue) -> [String] {
        var document = Lookup(document)
        let stateSubjects = Set(changes.filter { $0.path.last == "state" }.map { Array($0.path.dropLast()) })
        var explained = Set<[String]>()
        var lines: [String] = []
        // The cause first, in one line however many of its fields changed.
        if changes.contains(where: { $0.path.first == "cause" }) {
            let text = document.value(at: ["cause", "text"])
            lines.append("cause: " + (text.map(word) ?? "none (nothing known to be wrong)"))
        }
        for change in changes where change.path.first != "cause" {
            let subject = Array(change.path.dropLast())
            let leaf = change.path.last ?? ""
            if isWhole(change) {
                lines.append(wholeLine(change))
            } else if leaf == "state" {
                lines.append(
                    "\(label(subject)): \(word(change.from)) → \(word(change.to))" + why(at: subject, in: &document))
            } else if leaf == "reason" || leaf == "detail", let state = document.value(at: subject + ["state"]) {
                // Folded into the state's line, or, without one, a line of its own once.
                guard !stateSubjects.contains(subject), explained.insert(subject).inserted else { continue }
                lines.append("\(label(subject)): still \(word(state))" + why(at: subject, in: &document))
            } else if leaf == "isReachable", subject.isEmpty, stateSubjects.contains([]) {
                continue  // the network's state says it
            } else {
                let name = subject.isEmpty ? leaf : "\(label(subject)) \(leaf)"
                lines.append("\(name): \(word(change.from)) → \(word(change.to))")
            }
        }
        return lines
    }

    /// A target, an interface, a nameserver or a family that came or went.
    private static func isWhole(_ change: FieldChange) -> Bool {
        switch (change.from, change.to) {
        case (.null, .object), (.object, .null): true
        default: false
        }
    }

    /// `target db added: unknown`, `interface wlan0 removed`.
    private static func wholeLine(_ change: FieldChange) -> String {
        guard case .object = change.to else { return "\(label(change.path)) removed" }
        return "\(label(change.path)) added" + (change.to["state"].map { ": \(word($0))" } ?? "")
    }

    /// ` (refused: ECONNREFUSED: connection refused)`, ` (timeout)`, or nothing: the reason and
    /// the detail of the thing at `subject` in the new document, each when present.
    private static func why(at subject: [String], in document: inout Lookup) -> String {
        let parts = ["reason", "detail"].compactMap { key -> String? in
            guard let value = document.value(at: subject + [key]), value != .null else { return nil }
            return word(value)
        }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: ": ") + ")"
    }

    /// The values at diff paths: members by key, named entries (`name`, `address`) by that value,
    /// each array's entries found through a dictionary made once (a link-down's 10,000 lines each
    /// look up their target's reason: a search each was 100 million comparisons).
    private struct Lookup {
        let document: JSONValue
        private var named: [[String]: [String: JSONValue]] = [:]

        init(_ document: JSONValue) { self.document = document }

        mutating func value(at path: [String]) -> JSONValue? {
            var current = document
            for (depth, part) in path.enumerated() {
                switch current {
                case .object: current = current[part] ?? .null
                case .array(let entries):
                    let array = Array(path[..<depth])
                    if named[array] == nil { named[array] = Self.byName(entries) }
                    guard let entry = named[array]?[part] else { return nil }
                    current = entry
                default: return nil
                }
            }
            return current
        }

        /// Each entry under each of its names, the first entry of a name winning.
        private static func byName(_ entries: [JSONValue]) -> [String: JSONValue] {
            var byName: [String: JSONValue] = [:]
            for entry in entries {
                for key in DocumentDiff.entryNames {
                    if let name = entry[key]?.stringValue, byName[name] == nil { byName[name] = entry }
                }
            }
            return byName
        }
    }

    /// How a person names the thing at `path`: `network`, `target db`, `target db ipv6`,
    /// `interface eth0`, `nameserver 198.18.0.1`, else the path's parts (`connectivity ipv4`).
    private static func label(_ path: [String]) -> String {
        switch path.first {
        case nil: "network"
        case "targets" where path.count > 1: (["target"] + path.dropFirst()).joined(separator: " ")
        case "interfaces" where path.count > 1: (["interface"] + path.dropFirst()).joined(separator: " ")
        case "dns" where path.count > 2 && path[1] == "servers":
            (["nameserver"] + path.dropFirst(2)).joined(separator: " ")
        default: path.joined(separator: " ")
        }
    }

    /// A value as it reads in a sentence: strings without quotes, `none` for null, lists in
    /// brackets, objects as JSON.
    private static func word(_ value: JSONValue) -> String {
        switch value {
        case .null: "none"
        case .bool(let flag): flag ? "true" : "false"
        case .number(let text): text
        case .string(let text): text
        case .array(let entries): "[" + entries.map(word).joined(separator: ", ") + "]"
        case .object: value.jsonText
        }
    }
}
