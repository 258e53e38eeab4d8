/// The fuzzer's bytes, taken from the front: a target reads its own small format from them (a
/// tag, a length, a text), and whatever is missing at the end reads as zero or empty, so every
/// input means something.
public struct FuzzInput {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size > 0 ? size : 0)
    }

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    public var isEmpty: Bool { offset >= bytes.count }

    /// What is left, without taking it.
    public var remaining: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[offset...]) }

    public mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func bool() -> Bool { byte() & 1 == 1 }

    /// Two bytes, little-endian.
    public mutating func uint16() -> UInt16 {
        UInt16(byte()) | UInt16(byte()) << 8
    }

    /// Up to `count` bytes (fewer at the end of the input).
    public mutating func take(_ count: Int) -> UnsafeRawBufferPointer {
        let end = min(bytes.count, offset + max(0, count))
        defer { offset = end }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
    }

    /// Everything that is left.
    public mutating func rest() -> UnsafeRawBufferPointer {
        take(bytes.count - offset)
    }

    /// A length byte, then that many bytes as text. Invalid UTF-8 is repaired as `String(cString:)`
    /// would repair it; `allowingNUL: false` cuts at the first NUL, as a C string (argv, an
    /// environment variable, what libmicrohttpd hands over) can hold none.
    public mutating func text(allowingNUL: Bool = false) -> String {
        let raw = take(Int(byte()))
        let kept = allowingNUL ? Array(raw) : Array(raw.prefix { $0 != 0 })
        return String(decoding: kept, as: UTF8.self)
    }

    /// Texts separated by a byte `0xFF` (never part of UTF-8), up to the end of the input.
    public mutating func texts(allowingNUL: Bool = false) -> [String] {
        rest().split(separator: 0xFF, omittingEmptySubsequences: false).map { piece in
            String(decoding: allowingNUL ? Array(piece) : Array(piece.prefix { $0 != 0 }), as: UTF8.self)
        }
    }
}
