import Reachable

/// The parts of a DNS answer (RFC 1035, section 4) a `dns://` target judges: its rcode and the
/// values of its answer records of one type. Read in Swift, bounds-checked, rather than by
/// c-ares' nine `ares_parse_*_reply` functions: one reader gives every type in one shape (with
/// CNAME, which c-ares 1.18 has no parser for), and unit tests and fuzzing need no library.
struct DNSMessage: Sendable, Equatable {
    /// The header's RCODE: 0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED, ….
    var rcode: UInt8
    /// The values of the answer records of the type asked for (class IN), in the answer's order.
    var values: [DNSValue]

    /// Reads `bytes`; `nil` when it is cut off or malformed (a name that loops, a record longer
    /// than the message, a record of `type` whose data is not its shape).
    init?(_ bytes: [UInt8], type: DNSRecordType) {
        var reader = Reader(bytes: bytes)
        guard let flags = reader.uint16(at: 2), let questions = reader.uint16(at: 4),
            let answerCount = reader.uint16(at: 6)
        else { return nil }
        rcode = UInt8(flags & 0x000F)
        reader.offset = 12
        for _ in 0..<questions {
            guard reader.skipName(), reader.skip(4) else { return nil }
        }
        values = []
        for _ in 0..<answerCount {
            guard reader.skipName(), let recordType = reader.uint16(), let recordClass = reader.uint16(),
                reader.skip(4), let length = reader.uint16(), reader.offset + Int(length) <= bytes.count
            else { return nil }
            let data = reader.offset..<reader.offset + Int(length)
            reader.offset = data.upperBound
            // A CNAME on the way to the records asked for is not one of them.
            guard recordClass == 1, recordType == type.number else { continue }
            guard let value = Self.value(of: type, data, in: bytes) else { return nil }
            values.append(value)
        }
    }

    /// One record's data as `expect` compares it.
    private static func value(of type: DNSRecordType, _ data: Range<Int>, in bytes: [UInt8]) -> DNSValue? {
        var reader = Reader(bytes: bytes, offset: data.lowerBound)
        let value: DNSValue?
        switch type {
        case .a, .aaaa:
            guard data.count == (type == .a ? 4 : 16) else { return nil }
            return IPAddress(bytes: Array(bytes[data])).map(DNSValue.address)
        case .cname, .ns, .ptr, .soa:
            // An SOA record's first name is its primary server (MNAME).
            value = reader.name().map(DNSValue.name(normalising:))
        case .mx:
            guard reader.skip(2) else { return nil }  // preference
            value = reader.name().map(DNSValue.name(normalising:))
        case .srv:
            guard reader.skip(6) else { return nil }  // priority, weight, port
            value = reader.name().map(DNSValue.name(normalising:))
        case .txt:
            var text: [UInt8] = []
            while reader.offset < data.upperBound {
                let length = Int(bytes[reader.offset])
                guard reader.offset + 1 + length <= data.upperBound else { return nil }
                text += bytes[reader.offset + 1..<reader.offset + 1 + length]
                reader.offset += 1 + length
            }
            return .text(String(decoding: text, as: UTF8.self))
        }
        // A name must end inside its record's data.
        return reader.offset <= data.upperBound ? value : nil
    }

    /// A cursor over the message.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        func uint16(at position: Int) -> UInt16? {
            guard position >= 0, position + 2 <= bytes.count else { return nil }
            return UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
        }

        mutating func uint16() -> UInt16? {
            defer { offset += 2 }
            return uint16(at: offset)
        }

        mutating func skip(_ count: Int) -> Bool {
            offset += count
            return offset <= bytes.count
        }

        mutating func skipName() -> Bool { name() != nil }

        /// The name at the cursor, compression pointers followed (the cursor moves past the name
        /// as written); `nil` when it runs off the message, loops, or is longer than 255 bytes.
        mutating func name() -> String? {
            var labels: [String] = []
            var position = offset
            var jumped = false
            var length = 0
            for _ in 0..<128 {
                guard position < bytes.count else { return nil }
                let byte = bytes[position]
                switch byte & 0xC0 {
                case 0xC0:
                    guard position + 1 < bytes.count else { return nil }
                    if !jumped { offset = position + 2 }
                    jumped = true
                    position = Int(byte & 0x3F) << 8 | Int(bytes[position + 1])
                case 0x00:
                    if byte == 0 {
                        if !jumped { offset = position + 1 }
                        return labels.isEmpty ? "." : labels.joined(separator: ".")
                    }
                    let end = position + 1 + Int(byte)
                    length += Int(byte) + 1
                    guard end <= bytes.count, length <= 255 else { return nil }
                    labels.append(Self.label(bytes[position + 1..<end]))
                    position = end
                default:
                    return nil  // 0x40 and 0x80: label types RFC 6891 retired
                }
            }
            return nil
        }

        /// A label as text: printable ASCII as it is (a dot or backslash escaped), any other
        /// byte as `\DDD` (RFC 4343's presentation).
        private static func label(_ bytes: ArraySlice<UInt8>) -> String {
            var text = ""
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "."), UInt8(ascii: "\\"): text += "\\" + String(UnicodeScalar(byte))
                case 0x21...0x7E: text.unicodeScalars.append(UnicodeScalar(byte))
                default:
                    let digits = String(byte)
                    text += "\\" + String(repeating: "0", count: 3 - digits.count) + digits
                }
            }
            return text
        }
    }
}
