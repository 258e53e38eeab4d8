public import FoundationEssentials

/// The status document as a `JSONValue` tree, built from its values by the one encoder that
/// writes its text (`ReachabilityStatus+JSON.swift`): what `/changes` compares, without writing
/// the document's JSON and parsing it again.
///
/// The values of every open object and array wait on one stack, and each container is made once,
/// when it closes, from its run of that stack: no container is grown in place inside another.
public final class JSONTreeBuilder: JSONOutput {
    /// The values of the open containers, innermost last, each with its key (`""` in an array).
    private var pending: [JSONValue.Member] = []
    /// Where each open container's values begin in `pending`, and whether it is an array.
    private var open: [(start: Int, isArray: Bool)] = []
    /// The key of each member being written, innermost last.
    private var keys: [String] = []
    /// The last time written, and its text: a link-down's targets all change at one instant.
    private var lastTime: (date: Date, text: String)?
    /// The value written at the top level.
    public private(set) var value: JSONValue = .null

    public init() {}

    /// The tree `write` builds.
    public static func tree(_ write: (JSONTreeBuilder) -> Void) -> JSONValue {
        let builder = JSONTreeBuilder()
        write(builder)
        return builder.value
    }

    public func object(_ body: () -> Void) {
        open.append((pending.count, false))
        body()
        let start = open.removeLast().start
        let members = Array(pending[start...])
        pending.removeSubrange(start...)
        put(.object(members))
    }

    public func array<Element>(_ elements: [Element], _ body: (Element) -> Void) {
        open.append((pending.count, true))
        for element in elements { body(element) }
        let start = open.removeLast().start
        let entries = pending[start...].map(\.value)
        pending.removeSubrange(start...)
        put(.array(entries))
    }

    public func arrayInParts<Element>(_ elements: [Element], _ body: (JSONTreeBuilder, Element) -> Void) {
        array(elements) { body(self, $0) }
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
    public func null() { put(.null) }

    public func timestamp(_ date: Date, _ style: Timestamp) {
        if let lastTime, lastTime.date == date { return put(.string(lastTime.text)) }
        let text = style.format(date)
        lastTime = (date, text)
        put(.string(text))
    }

    /// Adds `value` to the innermost open container, under the innermost key in an object.
    private func put(_ value: JSONValue) {
        guard let container = open.last else { return self.value = value }
        pending.append(JSONValue.Member(container.isArray ? "" : keys.last ?? "", value))
    }
}
