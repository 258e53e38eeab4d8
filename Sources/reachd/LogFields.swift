import FoundationEssentials
import Logging
import Reachable

/// How a log line's values are written, the same for both formats: numbers and booleans as
/// such, `LogFields.null` as null, strings as strings, lists and dictionaries as JSON. Log
/// shippers (Vector, Fluent Bit, Loki) then read `"sequence":7` and `"ipv4":true`, not text.
///
/// A value is typed by how it was logged: `.stringConvertible(7)` is a number, `"\(7)"`
/// (`.string`) stays text — a target named `123` is still a name.
enum LogFields {
    /// A metadata value that is JSON's `null` (`text` shows `null`).
    static let null = Logger.MetadataValue.stringConvertible(Null())

    struct Null: CustomStringConvertible, Sendable {
        var description: String { "null" }
    }

    /// The time of a line: RFC 3339, UTC, milliseconds, `Z` — as the status document writes
    /// its own times (`2026-11-25T13:53:50.405Z`).
    static func timestamp(_ date: Date = Date()) -> String {
        ReachabilityStatus.timestampStyle.format(date)
    }

    /// `value` as JSON text.
    static func json(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text):
            return quoted(text)
        case .stringConvertible(let convertible):
            return scalar(convertible) ?? quoted(convertible.description)
        case .array(let values):
            return "[" + values.map(json).joined(separator: ",") + "]"
        case .dictionary(let fields):
            return object(fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        }
    }

    /// `{"a":1,"b":"x"}` with the fields in the order given.
    static func object(_ fields: [(String, Logger.MetadataValue)]) -> String {
        "{" + fields.map { quoted($0.0) + ":" + json($0.1) }.joined(separator: ",") + "}"
    }

    /// `value` as a text line shows it after `key=`: a plain word as is; text with spaces,
    /// quotes, `=` or control characters quoted as JSON does; lists and dictionaries as JSON.
    static func text(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text):
            return isPlain(text) ? text : quoted(text)
        case .stringConvertible(let convertible):
            if let scalar = scalar(convertible) { return scalar }
            return isPlain(convertible.description) ? convertible.description : quoted(convertible.description)
        case .array, .dictionary:
            return json(value)
        }
    }

    /// A number, a boolean or null as JSON writes it; `nil` for anything else.
    private static func scalar(_ value: any CustomStringConvertible & Sendable) -> String? {
        switch value {
        case is Null: return "null"
        case let flag as Bool: return flag ? "true" : "false"
        case let number as any BinaryInteger: return "\(number)"
        case let number as Double: return number.isFinite ? "\(number)" : quoted("\(number)")
        default: return nil
        }
    }

    private static func isPlain(_ text: String) -> Bool {
        !text.isEmpty
            && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F && $0 != "\"" && $0 != "=" }
    }

    /// A JSON string, as the status document writes one (`JSONString`).
    static func quoted(_ text: String) -> String {
        JSONString.quoted(text)
    }
}
