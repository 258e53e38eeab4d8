/// The one JSON string escaper of every module: the status document (`JSONWriter`) and the log
/// lines (`LogFields`) write strings the same way.
///
/// `"` and `\` escaped; `\n`, `\r`, `\t` by name; every other C0 control, DEL and the C1
/// controls (U+0080–U+009F) as `\u00XX` — valid JSON either way, and nothing that reaches a
/// terminal through `curl` or a log can move its cursor or change its colours. Interface names
/// come from the kernel, which allows such characters in them.
package enum JSONString {
    /// Appends `text`, quoted and escaped, to `bytes`.
    package static func append(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings (names, states, addresses, times) need no escape: copied in one go, not
        // scalar by scalar — a fleet's document is strings by the hundred thousand.
        var text = text
        let copied = text.withUTF8 { utf8 in
            guard isPlain(utf8) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if !copied { appendEscaping(text, to: &bytes) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether `utf8` is written as it is, between quotes (most strings: names, states, addresses).
    /// Eight bytes at a time: a fleet's document is strings by the hundred thousand, and a
    /// byte-by-byte scan was much of the time to write it (docs/scale.md).
    package static func isPlain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = utf8.baseAddress else { return true }
        let bytes = UnsafeRawPointer(start)
        guard utf8.count >= 8 else {
            // A short string (a state, a reason) as one word, padded with a plain byte.
            // (Built in a register: a word read back from bytes just copied to memory stalled.)
            var word = 0x6161_6161_6161_6161 as UInt64
            var shift: UInt64 = 0
            for byte in utf8 {
                word ^= UInt64(byte ^ 0x61) << shift
                shift += 8
            }
            return !mayNeedEscape(word: word)
        }
        var offset = 0
        while offset + 8 <= utf8.count {
            if mayNeedEscape(word: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) { return false }
            offset += 8
        }
        // The last word, overlapping the one before.
        return offset == utf8.count
            || !mayNeedEscape(word: bytes.loadUnaligned(fromByteOffset: utf8.count - 8, as: UInt64.self))
    }

    /// Whether any of eight bytes may begin something written escaped: a C0 control, `"`, `\`,
    /// DEL, or the lead byte of U+0080–U+00BF (the C1 controls among them). Exact: the classic
    /// "has a zero byte" and "has a byte less than n" tests, which never answer yes for a word
    /// without one.
    private static func mayNeedEscape(word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
        let control = (word &- 0x20 &* ones) & ~word & highs != 0
        return control || hasZeroByte(word ^ (0x22 &* ones)) || hasZeroByte(word ^ (0x5C &* ones))
            || hasZeroByte(word ^ (0x7F &* ones)) || hasZeroByte(word ^ (0xC2 &* ones))
    }

    private static func appendEscaping(_ text: String, to bytes: inout [UInt8]) {
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case "\\": bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case "\n": bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case "\r": bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case "\t": bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                let value = Int(scalar.value)
                bytes.append(contentsOf: Array("\\u00".utf8) + [hexDigits[value >> 4], hexDigits[value & 0xF]])
            default:
                UTF8.encode(scalar) { bytes.append($0) }
            }
        }
    }

    /// `text` quoted and escaped.
    package static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2)
        append(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
