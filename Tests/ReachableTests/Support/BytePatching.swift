/// Small edits to built messages, for the malformed-input and fuzz tests (native byte order,
/// as netlink uses).
extension Array where Element == UInt8 {
    /// Offset of the first attribute after a netlink header and a fixed header of `fixed` bytes.
    static func firstAttributeOffset(fixedHeader fixed: Int) -> Int { 16 + ((fixed + 3) & ~3) }

    mutating func patch(_ value: UInt32, at offset: Int) {
        Swift.withUnsafeBytes(of: value) { replaceSubrange(offset..<offset + 4, with: $0) }
    }

    mutating func patch(_ value: UInt16, at offset: Int) {
        Swift.withUnsafeBytes(of: value) { replaceSubrange(offset..<offset + 2, with: $0) }
    }

    /// Sets `nlmsg_len` of the message at the start.
    mutating func setMessageLength(_ length: UInt32) { patch(length, at: 0) }

    func uint16(at offset: Int) -> UInt16 { UInt16(self[offset]) | UInt16(self[offset + 1]) << 8 }

    /// Offsets of every top-level attribute of the single message in `self`.
    func attributeOffsets(fixedHeader fixed: Int) -> [Int] {
        var offsets: [Int] = []
        var offset = Self.firstAttributeOffset(fixedHeader: fixed)
        while offset + 4 <= count {
            offsets.append(offset)
            let length = Int(uint16(at: offset))
            guard length >= 4 else { break }
            offset += (length + 3) & ~3
        }
        return offsets
    }
}
