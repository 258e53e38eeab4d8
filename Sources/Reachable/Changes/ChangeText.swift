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
        var document = Subjects(document)
        var lines: [String] = []
        lines.reserveCapacity(changes.count)
        // The cause first, in one line however many of its fields changed.
        if changes.contains(where: { $0.path.first == "cause" }) {
            let text = document.subject(["cause"])?["text"]
            lines.append("cause: " + (text.map(word) ?? "none (nothing known to be wrong)"))
        }
        // The document writes a thing's `state` before its `reason` and `detail` (and the
        // network's before `isReachable`), so the diff, in document order, meets a state's change
        // before what it folds; a thing's own fields come before those of what it holds.
        var stated: ArraySlice<String>?
        var explained: ArraySlice<String>?
        for change in changes where change.path.first != "cause" {
            let subject = change.path.dropLast()
            let leaf = change.path.last ?? ""
            if isWhole(change) {
                lines.append(wholeLine(change))
            } else if leaf == "state" {
                stated = subject
                var line = label(subject)
                line += ": "
                line += word(change.from)
                line += " → "
                line += word(change.to)
                why(document.subject(subject), into: &line)
                lines.append(line)
            } else if (leaf == "reason" || leaf == "detail") && (stated == subject || explained == subject) {
                continue  // folded into the state's line, or said once already
            } else if leaf == "reason" || leaf == "detail", let entry = document.subject(subject),
                let state = entry["state"]
            {
                explained = subject
                var line = label(subject)
                line += ": still "
                line += word(state)
                why(entry, into: &line)
                lines.append(line)
            } else if leaf == "isReachable", subject.isEmpty, stated == subject {
                continue  // the network's state says it
            } else {
                var line = subject.isEmpty ? leaf : label(subject) + " " + leaf
                line += ": "
                line += word(change.from)
                line += " → "
                line += word(change.to)
                lines.append(line)
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
        guard case .object = change.to else { return label(change.path[...]) + " removed" }
        return label(change.path[...]) + " added" + (change.to["state"].map { ": " + word($0) } ?? "")
    }

    /// ` (refused: ECONNREFUSED: connection refused)`, ` (timeout)`, or nothing, appended to
    /// `line`: the reason and the detail of `entry` (a thing in the new document), each when present.
    private static func why(_ entry: JSONValue?, into line: inout String) {
        var opened = false
        for key in ["reason", "detail"] {
            guard let value = entry?[key], value != .null else { continue }
            line += opened ? ": " : " ("
            line += word(value)
            opened = true
        }
        if opened { line += ")" }
    }

    /// The things of the new document by diff path: members by key, named entries (`name`,
    /// `address`) by that value, each named array's entries found through a dictionary made
    /// once (a link-down's lines each look up their target: a search each is quadratic in the
    /// targets).
    private struct Subjects {
        let document: JSONValue
        /// The named arrays met, by their path: a document has a few (targets, interfaces, DNS
        /// servers), so they are searched, not hashed.
        private var named: [(path: ArraySlice<String>, byName: [String: JSONValue])] = []

        init(_ document: JSONValue) { self.document = document }

        mutating func subject(_ path: ArraySlice<String>) -> JSONValue? {
            var current = document
            for depth in path.indices {
                switch current {
                case .object: current = current[path[depth]] ?? .null
                case .array(let entries):
                    let array = path[..<depth]
                    let place =
                        named.firstIndex { $0.path == array }
                        ?? {
                            named.append((array, Self.byName(entries)))
                            return named.count - 1
                        }()
                    guard let entry = named[place].byName[path[depth]] else { return nil }
                    current = entry
                default: return nil
                }
            }
            return current
        }

        /// Each entry under each of its names, the first entry of a name winning.
        private static func byName(_ entries: [JSONValue]) -> [String: JSONValue] {
            var byName: [String: JSONValue] = [:]
            byName.reserveCapacity(entries.count)
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
    private static func label(_ path: ArraySlice<String>) -> String {
        guard let first = path.first else { return "network" }
        var parts = path
        var text = ""
        text.reserveCapacity(96)
        switch first {
        case "targets" where path.count > 1: text += "target"
        case "interfaces" where path.count > 1: text += "interface"
        case "dns" where path.count > 2 && path[path.startIndex + 1] == "servers":
            text += "nameserver"
            parts = parts.dropFirst()
        default:
            return path.joined(separator: " ")
        }
        for part in parts.dropFirst() {
            text += " "
            text += part
        }
        return text
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
