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
        if changes.contains(where: { $0.path.first == DocumentKey.cause }) {
            let text = document.subject([DocumentKey.cause])?[DocumentKey.text]
            lines.append("cause: " + (text.map(word) ?? "none (nothing known to be wrong)"))
        }
        // The document writes a thing's `state` before its `reason` and `detail` (and the
        // network's before `isReachable`), so the diff, in document order, meets a state's change
        // before what it folds; a thing's own fields come before those of what it holds.
        var stated: ArraySlice<String>?
        var explained: ArraySlice<String>?
        for change in changes where change.path.first != DocumentKey.cause {
            let subject = change.path.dropLast()
            let leaf = change.path.last ?? ""
            var line = Line()
            if isWhole(change) {
                line.label(change.path[...])
                if case .object = change.to {
                    line += " added"
                    if let state = change.to[DocumentKey.state] {
                        line += ": "
                        line.word(state)
                    }
                } else {
                    line += " removed"
                }
            } else if leaf == DocumentKey.state {
                stated = subject
                line.label(subject)
                line.fromTo(change)
                line.why(document.subject(subject))
            } else if (leaf == DocumentKey.reason || leaf == DocumentKey.detail)
                && (stated == subject || explained == subject)
            {
                continue  // folded into the state's line, or said once already
            } else if leaf == DocumentKey.reason || leaf == DocumentKey.detail, let entry = document.subject(subject),
                let state = entry[DocumentKey.state]
            {
                explained = subject
                line.label(subject)
                line += ": still "
                line.word(state)
                line.why(entry)
            } else if leaf == DocumentKey.isReachable, subject.isEmpty, stated == subject {
                continue  // the network's state says it
            } else {
                if !subject.isEmpty {
                    line.label(subject)
                    line += " "
                }
                line += leaf
                line.fromTo(change)
            }
            lines.append(line.text)
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

    /// One line, written as UTF-8 bytes: a `String` grown piece by piece cost a link-down of
    /// 1,000 targets a fifth of its instructions.
    private struct Line {
        private var bytes: [UInt8] = []

        var text: String { String(decoding: bytes, as: UTF8.self) }

        static func += (line: inout Line, text: String) {
            // Room at the first word, not before: a line folded into another is never written.
            if line.bytes.isEmpty { line.bytes.reserveCapacity(128) }
            line.bytes.append(contentsOf: text.utf8)
        }

        /// `: from → to`.
        mutating func fromTo(_ change: FieldChange) {
            self += ": "
            word(change.from)
            self += " → "
            word(change.to)
        }

        /// ` (refused: ECONNREFUSED: connection refused)`, ` (timeout)`, or nothing: the reason and
        /// the detail of `entry` (a thing in the new document), each when present.
        mutating func why(_ entry: JSONValue?) {
            var opened = false
            for key in [DocumentKey.reason, DocumentKey.detail] {
                guard let value = entry?[key], value != .null else { continue }
                self += opened ? ": " : " ("
                word(value)
                opened = true
            }
            if opened { self += ")" }
        }

        /// How a person names the thing at `path`: `network`, `target db`, `target db ipv6`,
        /// `interface eth0`, `nameserver 198.18.0.1`, else the path's parts (`connectivity ipv4`).
        mutating func label(_ path: ArraySlice<String>) {
            guard let first = path.first else { return self += "network" }
            var parts = path.dropFirst()
            switch first {
            case DocumentKey.targets where path.count > 1: self += "target"
            case DocumentKey.interfaces where path.count > 1: self += "interface"
            case DocumentKey.dns where path.count > 2 && path[path.startIndex + 1] == DocumentKey.servers:
                self += "nameserver"
                parts = parts.dropFirst()
            default:
                self += first
            }
            for part in parts {
                self += " "
                self += part
            }
        }

        /// `value` as a word (`ChangeText.word`).
        mutating func word(_ value: JSONValue) {
            self += ChangeText.word(value)
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
