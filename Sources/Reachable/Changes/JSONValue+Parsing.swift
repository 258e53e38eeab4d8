/// Reading JSON text (RFC 8259) into a `JSONValue`: the document of `/status` and `/events`, on
/// the server to diff what it publishes and in `reachd watch` to diff what it receives. A typed
/// decoder would forget key order and fields this build does not know yet; a generic tree keeps
/// both, so the diff follows the document as it grows.
extension JSONValue {
    /// Why a text is not one JSON value, and where.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var reason: String
        /// Bytes read before the problem.
        public var offset: Int

        public var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    /// Nesting deeper than this is refused: the parser recurses, and the text may come from a
    /// peer (`reachd watch` reads whatever answers on the port). The document nests four deep.
    public static let maximumDepth = 64

    /// The one value `bytes` holds, with nothing but whitespace around it.
    public init(parsing bytes: some Collection<UInt8>) throws(ParseError) {
        var parser = Parser(bytes: Array(bytes))
        self = try parser.document()
    }

    public init(parsing text: String) throws(ParseError) {
        try self.init(parsing: text.utf8)
    }
}

private struct Parser {
    let bytes: [UInt8]
    var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func document() throws(JSONValue.ParseError) -> JSONValue {
        let value = try value(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw failure("text after the value") }
        return value
    }

    private mutating func value(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        guard depth < JSONValue.maximumDepth else { throw failure("nested deeper than \(JSONValue.maximumDepth)") }
        skipWhitespace()
        guard let byte = peek() else { throw failure("a value is missing") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("unexpected character")
        }
    }

    private mutating func object(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        index += 1
        var members: [JSONValue.Member] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw failure("a member name is missing") }
            let key = try string()
            skipWhitespace()
            try expect(":")
            members.append(JSONValue.Member(key, try value(depth: depth + 1)))
            skipWhitespace()
            if peek() == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect("}")
            return .object(members)
        }
    }

    private mutating func array(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try value(depth: depth + 1))
            skipWhitespace()
            if peek() == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect("]")
            return .array(elements)
        }
    }

    private mutating func string() throws(JSONValue.ParseError) -> String {
        index += 1
        // Most strings have no escape: validated in place, one allocation (docs/scale.md).
        let start = index
        var isASCII = true
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                // ASCII is valid UTF-8 as it is (most strings): the validating initialiser, generic,
                // looked up its type metadata on every call (a tenth of parsing a link-down's document).
                let text = bytes.withUnsafeBufferPointer { all in
                    let run = UnsafeBufferPointer(rebasing: all[start..<index - 1])
                    return isASCII ? String(decoding: run, as: UTF8.self) : String(validating: run, as: UTF8.self)
                }
                guard let text else { throw failure("invalid UTF-8 in a string") }
                return text
            case UInt8(ascii: "\\"):
                index = start
                return try escapedString()
            case 0..<0x20:
                index += 1
                throw failure("a control character in a string")
            case 0x80...:
                isASCII = false
                index += 1
            default:
                index += 1
            }
        }
        throw failure("a string is not closed")
    }

    /// A string with escapes, from just after its opening quote.
    private mutating func escapedString() throws(JSONValue.ParseError) -> String {
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        while true {
            guard let byte = peek() else { throw failure("a string is not closed") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                scalars.append(contentsOf: try utf8(run))
                return String(scalars)
            case UInt8(ascii: "\\"):
                scalars.append(contentsOf: try utf8(run))
                run = []
                scalars.append(try escape())
            case 0..<0x20:
                throw failure("a control character in a string")
            default:
                run.append(byte)
            }
        }
    }

    /// Bytes of a string between escapes, which must be valid UTF-8.
    private func utf8(_ run: [UInt8]) throws(JSONValue.ParseError) -> String.UnicodeScalarView {
        guard let text = String(validating: run, as: UTF8.self) else { throw failure("invalid UTF-8 in a string") }
        return text.unicodeScalars
    }

    private mutating func escape() throws(JSONValue.ParseError) -> Unicode.Scalar {
        guard let byte = peek() else { throw failure("a string is not closed") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hexUnit()
            if (0xD800..<0xDC00).contains(unit) {
                // A high surrogate: its low half must follow as another \u escape.
                guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                else { throw failure("a lone surrogate") }
                index += 2
                let low = try hexUnit()
                guard (0xDC00..<0xE000).contains(low) else { throw failure("a lone surrogate") }
                return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(unit) else { throw failure("a lone surrogate") }
            return scalar
        default:
            throw failure("an unknown escape")
        }
    }

    /// Four hex digits after `\u`.
    private mutating func hexUnit() throws(JSONValue.ParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("a short \\u escape") }
        var unit: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            guard let digit = Self.hexDigit(byte) else { throw failure("a bad \\u escape") }
            unit = unit << 4 | digit
        }
        index += 4
        return unit
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, kept as text.
    private mutating func number() throws(JSONValue.ParseError) -> String {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        if peek() == UInt8(ascii: "0") {
            index += 1
        } else {
            guard digits() > 0 else { throw failure("a number without digits") }
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw failure("a fraction without digits") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("an exponent without digits") }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Skips decimal digits; how many there were.
    private mutating func digits() -> Int {
        let start = index
        while let byte = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
        return index - start
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws(JSONValue.ParseError) -> JSONValue {
        guard bytes[index...].starts(with: word.utf8) else { throw failure("unexpected character") }
        index += word.utf8.count
        return value
    }

    private mutating func expect(_ character: Unicode.Scalar) throws(JSONValue.ParseError) {
        guard peek() == UInt8(ascii: character) else { throw failure("\"\(character)\" expected") }
        index += 1
    }

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = peek(),
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        {
            index += 1
        }
    }

    private func failure(_ reason: String) -> JSONValue.ParseError {
        JSONValue.ParseError(reason: reason, offset: index)
    }
}
