public import FoundationEssentials

/// A minimal JSON writer (a class, so nested closures can write to it): objects, arrays, strings
/// with RFC 8259 escaping, literals. It writes the status document and the server's health and
/// problem bodies, so every JSON reachd sends is escaped by the same code.
///
/// A document of 10,000 targets is about 3.5 MB written in some 300,000 appends, on the way from a
/// link-down to its event (issue 28): `bytes` is exempt from the runtime's exclusivity checks (every
/// access is a method of this class, none overlaps another), key names written as literals skip
/// the escape scan, and the caller can say how large the result will be.
public final class JSONWriter {
    @exclusivity(unchecked) public private(set) var bytes: [UInt8] = []
    @exclusivity(unchecked) private var needsComma = false

    /// - Parameter capacity: the bytes to reserve: about what the result will hold.
    public init(capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    public func object(_ body: () -> Void) {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body()
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public func array<Element>(_ elements: [Element], _ body: (Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for element in elements {
            if needsComma { bytes.append(UInt8(ascii: ",")) }
            body(element)
            needsComma = true
        }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    public func field(_ name: String, _ value: () -> Void) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        string(name)
        bytes.append(UInt8(ascii: ":"))
        value()
        needsComma = true
    }

    /// A key written as a literal in the code: nothing in it needs escaping (a JSON-safe ASCII
    /// name is a precondition, checked in debug builds).
    public func field(_ name: StaticString, _ value: () -> Void) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { utf8 in
            assert(!utf8.contains { $0 < 0x20 || $0 >= 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
            bytes.append(contentsOf: utf8)
        }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        value()
        needsComma = true
    }

    public func bool(_ value: Bool) {
        raw(value ? "true" : "false")
    }

    /// A string, or `null`: optional fields are always present, so clients see a stable shape.
    public func optionalString(_ text: String?) {
        if let text { string(text) } else { raw("null") }
    }

    /// A value, or `null` (a family without addresses).
    public func optional<Value>(_ value: Value?, _ body: (Value) -> Void) {
        if let value { body(value) } else { raw("null") }
    }

    /// Bytes that are not a JSON value (an SSE frame's head and tail around the document): as
    /// they are, with no comma before or after.
    public func verbatim(_ text: some Collection<UInt8>) {
        bytes.append(contentsOf: text)
    }

    public func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        needsComma = true
    }

    /// A time of the document (`Timestamp`), quoted.
    public func timestamp(_ date: Date, _ style: Timestamp) {
        style.appendQuoted(date, to: &bytes)
        needsComma = true
    }

    public func string(_ text: String) {
        JSONString.append(text, to: &bytes)
        needsComma = true
    }
}
