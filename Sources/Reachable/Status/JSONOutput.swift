public import FoundationEssentials

/// Where the status document's encoder (`ReachabilityStatus+JSON.swift`) writes: its text
/// (`JSONWriter`, for `/status` and every event) or its tree (`JSONTreeBuilder`, for what
/// `/changes` compares). The document's keys and their order are written once, in that encoder,
/// against these calls; nothing else names them.
public protocol JSONOutput: AnyObject {
    func object(_ body: () -> Void)
    func array<Element>(_ elements: [Element], _ body: (Element) -> Void)
    /// `array(_:_:)`, for an array a fleet makes large (the targets): the text writes it in parts
    /// on two threads, each part to a writer of its own, which `body` is given.
    func arrayInParts<Element>(_ elements: [Element], _ body: (Self, Element) -> Void)
    func field(_ name: String, _ value: () -> Void)
    func bool(_ value: Bool)
    /// A number, as its text.
    func raw(_ text: String)
    func string(_ text: String)
    /// A string the code spells (an enum's raw value): nothing to escape.
    func plain(_ text: String)
    func timestamp(_ date: Date, _ style: Timestamp)
    /// `null`.
    func null()
}

extension JSONOutput {
    /// A value, or `null` (a family without addresses).
    public func optional<Value>(_ value: Value?, _ body: (Value) -> Void) {
        if let value { body(value) } else { null() }
    }

    /// A string, or `null`: optional fields are always present, so clients see a stable shape.
    public func optionalString(_ text: String?) {
        if let text { string(text) } else { null() }
    }

    /// `plain(_:)`, or `null`.
    public func optionalPlain(_ text: String?) {
        if let text { plain(text) } else { null() }
    }
}
