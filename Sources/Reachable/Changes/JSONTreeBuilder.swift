public import FoundationEssentials

/// The status document as a `JSONValue` tree, built from its values by the one encoder that
/// writes its text (`ReachabilityStatus+JSON.swift`): what `/changes` compares, without writing
/// the document's JSON and parsing it again.
public final class JSONTreeBuilder: JSONOutput {
    /// The objects and arrays being built, innermost last.
    private var open: [Container] = []
    /// The key of each member being written, innermost last.
    private var keys: [String] = []
    /// The value written at the top level.
    public private(set) var value: JSONValue = .null

    private enum Container {
        case object([JSONValue.Member])
        case array([JSONValue])
    }

    public init() {}

    /// The tree `write` builds.
    public static func tree(_ write: (JSONTreeBuilder) -> Void) -> JSONValue {
        let builder = JSONTreeBuilder()
        write(builder)
        return builder.value
    }

    public func object(_ body: () -> Void) {
        open.append(.object([]))
        body()
        guard case .object(let members) = open.removeLast() else { preconditionFailure("unbalanced object") }
        put(.object(members))
    }

    public func array<Element>(_ elements: [Element], _ body: (Element) -> Void) {
        open.append(.array([]))
        for element in elements { body(element) }
        guard case .array(let entries) = open.removeLast() else { preconditionFailure("unbalanced array") }
        put(.array(entries))
    }

    public func arrayInParts<Element>(_ elements: [Element], _ body: (JSONTreeBuilder, Element) -> Void) {
        array(elements) { body(self, $0) }
    }

    public func field(_ name: StaticString, _ value: () -> Void) {
        field(name.description, value)
    }

    public func field(_ name: String, _ value: () -> Void) {
        keys.append(name)
        value()
        keys.removeLast()
    }

    public func bool(_ value: Bool) { put(.bool(value)) }
    public func raw(_ text: String) { put(.number(text)) }
    public func string(_ text: String) { put(.string(text)) }
    public func plain(_ text: String) { put(.string(text)) }
    public func timestamp(_ date: Date, _ style: Timestamp) { put(.string(style.format(date))) }
    public func null() { put(.null) }

    /// Adds `value` to the innermost object (under the innermost key) or array.
    private func put(_ value: JSONValue) {
        guard let last = open.indices.last else { return self.value = value }
        switch open[last] {
        case .object(var members):
            // Taken out before it grows, so the members are not copied.
            open[last] = .array([])
            members.append(JSONValue.Member(keys.last ?? "", value))
            open[last] = .object(members)
        case .array(var entries):
            open[last] = .object([])
            entries.append(value)
            open[last] = .array(entries)
        }
    }
}
