import FoundationEssentials

/// The wire form of the status document, written by hand: Foundation's encoder on Linux emits
/// keys in hash order, and clients (and people reading `curl` output) deserve the contract's
/// order. It is one line of JSON, as an SSE `data:` field needs.
extension ReachabilityStatus {
    public func jsonBytes() -> [UInt8] {
        let json = JSONWriter()
        json.object {
            json.field("state") { json.string(path.state.rawValue) }
            json.field("isReachable") { json.bool(path.isReachable) }
            json.field("ipv4") { json.bool(path.ipv4) }
            json.field("ipv6") { json.bool(path.ipv6) }
            json.field("transport") {
                json.object {
                    for transport in Transport.allCases {
                        json.field(transport.rawValue) { json.bool(path.transport.contains(transport)) }
                    }
                }
            }
            json.field("isDataMetered") { json.bool(path.isDataMetered) }
            json.field("interfaces") {
                json.array(path.interfaces) { interface in
                    json.object {
                        json.field("name") { json.string(interface.name) }
                        json.field("index") { json.raw(String(interface.index)) }
                        json.field("transport") { json.string(interface.transport.rawValue) }
                        json.field("kind") { interface.kind.map { json.string($0) } ?? json.raw("null") }
                        json.field("operState") { json.string(interface.operState) }
                        json.field("isDefaultRoute") { json.bool(interface.isDefaultRoute) }
                        json.field("addresses") { json.array(interface.addresses) { json.string($0) } }
                    }
                }
            }
            json.field("sequence") { json.raw(String(sequence)) }
            json.field("changedAt") { json.string(Self.timestampStyle.format(changedAt)) }
        }
        return json.bytes
    }
}

/// A minimal JSON writer (a class, so nested closures can write to it): objects, arrays, strings with RFC 8259 escaping, literals.
final class JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma = false

    init() {
        bytes.reserveCapacity(512)
    }

    func object(_ body: () -> Void) {
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body()
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    func array<Element>(_ elements: [Element], _ body: (Element) -> Void) {
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

    func field(_ name: String, _ value: () -> Void) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        string(name)
        bytes.append(UInt8(ascii: ":"))
        value()
        needsComma = true
    }

    func bool(_ value: Bool) {
        raw(value ? "true" : "false")
    }

    func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        needsComma = true
    }

    func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }
}
