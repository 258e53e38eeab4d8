/// Takes out of two encoded status documents the entries they share unchanged, so that the diff
/// parses only what may differ. At 10,000 targets a document is 3.4 MB; parsing every one whole
/// (and keeping the last one parsed to compare the next with) cost 150–250 ms of CPU per document
/// and 26 MB of tree, about 2.6 KB per target, for a diff that is usually a few fields.
///
/// What is taken out: an entry of an array that is the value of a top-level member (`targets`,
/// `interfaces`), when the same array of the other document holds an entry with the same name
/// and byte for byte the same text. `DocumentDiff` gives the same result without them: it pairs
/// such an array's entries by name, and two entries with the same text differ in nothing.
///
/// Only where that pairing is certain: both arrays' entries are all objects named by `name` (the
/// first of `DocumentDiff.entryNames`; the first such member of each entry, a string), the names
/// are distinct and have no escapes (two spellings of one name would look distinct here), and the
/// member occurs once at the top level of both documents. Anywhere else nothing is
/// taken out, which is always correct: the diff then compares the entries itself.
///
/// The texts are only scanned, not validated: a shared entry is never parsed. Both come from
/// reachd's own encoder, and whatever differs is still parsed whole.
public enum UnchangedEntries {
    /// `old` and `new` without the entries they share unchanged; `nil` when either is not an
    /// object as far as the scan can tell (the caller then diffs the texts whole).
    public static func removed(from old: [UInt8], _ new: [UInt8]) -> (old: [UInt8], new: [UInt8])? {
        guard let oldMembers = EntryScan.topLevelArrays(old), let newMembers = EntryScan.topLevelArrays(new)
        else { return nil }
        var oldCuts: [(range: Range<Int>, kept: [Range<Int>])] = []
        var newCuts: [(range: Range<Int>, kept: [Range<Int>])] = []
        for (key, newArray) in newMembers {
            guard let newArray, let oldArray = oldMembers[key] ?? nil,
                let (oldNames, newNames) = names(oldArray, newArray, old, new)
            else { continue }
            var oldIndex: [ArraySlice<UInt8>: Int] = [:]
            oldIndex.reserveCapacity(oldNames.count)
            for (position, name) in oldNames.enumerated() { oldIndex[old[name]] = position }
            var sharedOld = Array(repeating: false, count: oldNames.count)
            var sharedNew = Array(repeating: false, count: newNames.count)
            for (position, name) in newNames.enumerated() {
                guard let oldPosition = oldIndex[new[name]],
                    old[oldArray.entries[oldPosition]] == new[newArray.entries[position]]
                else { continue }
                sharedOld[oldPosition] = true
                sharedNew[position] = true
            }
            guard sharedNew.contains(true) else { continue }
            oldCuts.append((oldArray.range, zip(oldArray.entries, sharedOld).filter { !$1 }.map(\.0)))
            newCuts.append((newArray.range, zip(newArray.entries, sharedNew).filter { !$1 }.map(\.0)))
        }
        return (rebuilt(old, oldCuts), rebuilt(new, newCuts))
    }

    /// Each entry's name in both arrays (as ranges of its text), when the diff pairs them by its
    /// first naming key (`name`) and a name's bytes say which entry it is. Not by a later key
    /// (`address`): taking out an entry that has no `name` could leave entries that all have one,
    /// and the diff would then pair what is left by `name` instead.
    private static func names(
        _ old: EntryScan.ArrayEntries, _ new: EntryScan.ArrayEntries, _ oldText: [UInt8], _ newText: [UInt8]
    ) -> ([Range<Int>], [Range<Int>])? {
        guard let oldNames = distinctNames(old, 0, oldText), let newNames = distinctNames(new, 0, newText)
        else { return nil }
        return (oldNames, newNames)
    }

    private static func distinctNames(
        _ array: EntryScan.ArrayEntries, _ keyIndex: Int, _ text: [UInt8]
    ) -> [Range<Int>]? {
        var names: [Range<Int>] = []
        names.reserveCapacity(array.names.count)
        var seen = Set<ArraySlice<UInt8>>()
        for entryNames in array.names {
            guard let name = entryNames?[keyIndex] ?? nil, !text[name].contains(UInt8(ascii: "\\")),
                seen.insert(text[name]).inserted
            else { return nil }
            names.append(name)
        }
        return names
    }

    /// `text` with each cut array written again with only its kept entries.
    private static func rebuilt(_ text: [UInt8], _ cuts: [(range: Range<Int>, kept: [Range<Int>])]) -> [UInt8] {
        guard !cuts.isEmpty else { return text }
        var result: [UInt8] = []
        var copied = 0
        for cut in cuts.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
            result += text[copied..<cut.range.lowerBound]
            result.append(UInt8(ascii: "["))
            for (position, entry) in cut.kept.enumerated() {
                if position > 0 { result.append(UInt8(ascii: ",")) }
                result += text[entry]
            }
            result.append(UInt8(ascii: "]"))
            copied = cut.range.upperBound
        }
        result += text[copied...]
        return result
    }
}

/// The scan `UnchangedEntries` needs: where each top-level member's array is, where its entries
/// are, and each entry's name members. No allocation per value, no validation beyond structure.
private struct EntryScan {
    struct ArrayEntries {
        /// The array, from `[` to just after `]`.
        var range: Range<Int>
        var entries: [Range<Int>] = []
        /// Per entry: for each of `DocumentDiff.entryNames`, its value's text (without quotes), if
        /// it is a name (`objectNames`); `nil` for an entry that is not an object or whose names
        /// cannot be told.
        var names: [[Range<Int>?]?] = []
    }

    let bytes: [UInt8]
    var index = 0
    let nameKeys = DocumentDiff.entryNames.map { Array($0.utf8) }

    /// Each top-level member's array (`nil` for a member that is not an array, or that occurs
    /// twice); `nil` when the text is not an object, or a top-level key has an escape (it could
    /// spell another key).
    static func topLevelArrays(_ bytes: [UInt8]) -> [ArraySlice<UInt8>: ArrayEntries?]? {
        var scan = EntryScan(bytes: bytes)
        return scan.topLevel()
    }

    private mutating func topLevel() -> [ArraySlice<UInt8>: ArrayEntries?]? {
        skipWhitespace()
        guard take(UInt8(ascii: "{")) else { return nil }
        var members: [ArraySlice<UInt8>: ArrayEntries?] = [:]
        skipWhitespace()
        if take(UInt8(ascii: "}")) { return members }
        while true {
            skipWhitespace()
            guard let key = string(), !bytes[key].contains(UInt8(ascii: "\\")) else { return nil }
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipWhitespace()
            let value: ArrayEntries?
            if peek() == UInt8(ascii: "[") {
                guard let array = array() else { return nil }
                value = array
            } else {
                guard skipValue() else { return nil }
                value = nil
            }
            let name = bytes[key]
            members[name] = members.keys.contains(name) ? .some(nil) : value
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            guard take(UInt8(ascii: "}")) else { return nil }
            skipWhitespace()
            return index == bytes.count ? members : nil
        }
    }

    private mutating func array() -> ArrayEntries? {
        var array = ArrayEntries(range: index..<index)
        index += 1
        skipWhitespace()
        if !take(UInt8(ascii: "]")) {
            while true {
                skipWhitespace()
                let start = index
                let names: [Range<Int>?]?
                if peek() == UInt8(ascii: "{") {
                    guard let found = objectNames() else { return nil }
                    names = found
                } else {
                    guard skipValue() else { return nil }
                    names = nil
                }
                array.entries.append(start..<index)
                array.names.append(names)
                skipWhitespace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "]")) else { return nil }
                break
            }
        }
        array.range = array.range.lowerBound..<index
        return array
    }

    /// Skips an entry that is an object, noting its name members; `nil` when it is malformed.
    /// A name member must be the first member with its key and a string, as `JSONValue`'s
    /// subscript reads it; an entry with an escaped key has no names here (it could spell one).
    private mutating func objectNames() -> [Range<Int>?]?? {
        index += 1
        var names = [Range<Int>?](repeating: nil, count: nameKeys.count)
        var keysSeen = Array(repeating: false, count: nameKeys.count)
        var escapedKey = false
        skipWhitespace()
        if take(UInt8(ascii: "}")) { return .some(names) }
        while true {
            skipWhitespace()
            guard let key = string() else { return nil }
            skipWhitespace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipWhitespace()
            escapedKey = escapedKey || bytes[key].contains(UInt8(ascii: "\\"))
            let which = nameKeys.firstIndex { bytes[key].elementsEqual($0) }
            if peek() == UInt8(ascii: "\""), let which, !keysSeen[which] {
                guard let text = string() else { return nil }
                names[which] = text
            } else {
                guard skipValue() else { return nil }
            }
            if let which { keysSeen[which] = true }
            skipWhitespace()
            if take(UInt8(ascii: ",")) { continue }
            guard take(UInt8(ascii: "}")) else { return nil }
            return escapedKey ? .some(nil) : .some(names)
        }
    }

    /// A string's text between its quotes (escapes left as written).
    private mutating func string() -> Range<Int>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                return start..<index - 1
            case UInt8(ascii: "\\"):
                index += 2
            default:
                index += 1
            }
        }
        return nil
    }

    /// Skips one value of any kind (nesting counted, strings skipped whole).
    private mutating func skipValue() -> Bool {
        var depth = 0
        repeat {
            skipWhitespace()
            guard let byte = peek() else { return false }
            switch byte {
            case UInt8(ascii: "\""):
                guard string() != nil else { return false }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { return false }
                depth -= 1
                index += 1
            case UInt8(ascii: ","), UInt8(ascii: ":"):
                guard depth > 0 else { return false }
                index += 1
            default:
                // A number or a literal: up to the next delimiter.
                let start = index
                while let next = peek(), !Self.delimiters.contains(next) { index += 1 }
                guard index > start else { return false }
            }
        } while depth > 0
        return true
    }

    private static let delimiters: Set<UInt8> = Set(",:{}[]\" \n\r\t".utf8)

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipWhitespace() {
        while let byte = peek(),
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        {
            index += 1
        }
    }
}
