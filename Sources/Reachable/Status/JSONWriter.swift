/// A minimal JSON writer (a class, so nested closures can write to it): objects, arrays, strings
/// with RFC 8259 escaping, literals. It writes the status document and the server's health and
/// problem bodies, so every JSON reachd sends is escaped by the same code.
public final class JSONWriter {
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    public init() {
        bytes.reserveCapacity(512)
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

    public func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        needsComma = true
    }

    public func string(_ text: String) {
        JSONString.append(text, to: &bytes)
        needsComma = true
    }
}
