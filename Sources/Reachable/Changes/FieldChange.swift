/// One field that differs between two status documents: a `diff` entry of `/changes`, and a
/// line of `reachd watch`.
public struct FieldChange: Equatable, Sendable {
    /// Where the field is: member names, and for an entry of a named array (targets, interfaces,
    /// DNS servers) its `name` or `address`. Kept as parts, not only as `field`: a name may itself
    /// hold dots (a nameserver `198.18.0.1`, a VLAN `eth0.100`).
    public var path: [String]
    /// The value before; `null` for something added.
    public var from: JSONValue
    /// The value after; `null` for something removed.
    public var to: JSONValue

    public init(path: [String], from: JSONValue, to: JSONValue) {
        self.path = path
        self.from = from
        self.to = to
    }

    /// The dotted path of the wire form: `targets.db.state`.
    public var field: String { path.joined(separator: ".") }

    /// `{"field": …, "from": …, "to": …}`.
    public func write(to json: JSONWriter) {
        json.object {
            json.field("field") { json.string(joining: path, separator: ".") }
            json.field("from") { from.write(to: json) }
            json.field("to") { to.write(to: json) }
        }
    }
}
