/// A JSON value as read, keeping what a diff needs and a typed decoder loses: the order of an
/// object's keys (a diff reads in the document's order) and a number's text (a `sequence` is a
/// `UInt64`, which a `Double` would round).
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's text as it was written (`7`, `-0.5`, `1e3`): compared and written back as is.
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in the order they were written.
    case object([Member])

    public struct Member: Equatable, Sendable {
        public var key: String
        public var value: JSONValue

        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The member named `key` of an object; `nil` for a missing key or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The text of a string value; `nil` for any other value.
    public var stringValue: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// Writes the value as compact JSON, escaped by the one JSON writer reachd has.
    public func write(to json: JSONWriter) {
        switch self {
        case .null: json.raw("null")
        case .bool(let value): json.bool(value)
        case .number(let text): json.raw(text)
        case .string(let text): json.string(text)
        case .array(let elements): json.array(elements) { $0.write(to: json) }
        case .object(let members):
            json.object {
                for member in members { json.field(member.key) { member.value.write(to: json) } }
            }
        }
    }

    /// The value as one line of compact JSON.
    public var jsonText: String {
        let json = JSONWriter()
        write(to: json)
        return String(decoding: json.bytes, as: UTF8.self)
    }
}
