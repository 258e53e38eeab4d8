import Glibc
import Reachable

/// What one `Host` field names, as the DNS rebinding check compares it: the port and one
/// trailing dot dropped, letters lowercased.
///
/// Read byte by byte in one pass over the field's UTF-8 (no `String` slicing, no generic
/// collection code): it runs for every request, and a keep-alive `/status` answer costs only a
/// few microseconds in all — the `Substring`-based reading it replaces took half of reachd's
/// samples under `wrk` (a profile under wrk).
enum HostHeader: Equatable, Sendable {
    /// An empty `Host`: a request without an authority (RFC 9110 §7.2), as a missing one.
    case empty
    /// `198.18.0.2`, `[2001:db8::2]`, with or without a port: no DNS name is involved.
    case ipLiteral
    /// A DNS name, normalised: `Reachd.Example.` → `reachd.example`.
    case name(String)
    /// Neither: a bare IPv6 address, a port that is not a number, characters no name has.
    case malformed

    init(_ value: String) {
        if let parsed = value.utf8.withContiguousStorageIfAvailable({ Self.parse($0) }) {
            self = parsed
        } else {
            self = Array(value.utf8).withUnsafeBufferPointer { Self.parse($0) }
        }
    }

    /// A host name as compared: lowercase, without one trailing dot; `nil` unless it is a DNS
    /// name (`HostName`: what DNS names and `gethostname` hold).
    static func normalisedName(_ text: Substring) -> String? {
        guard HostName.isValid(text) else { return nil }
        return (text.hasSuffix(".") ? text.dropLast() : text).lowercased()
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> HostHeader {
        // libmicrohttpd keeps the spaces or tabs that may end a field value (RFC 9110 §5.5: not
        // part of it).
        var start = 0
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        guard start < end else { return .empty }
        guard let authority = AuthorityBounds(bytes, from: start, to: end), isPort(bytes, authority.port) else {
            return .malformed
        }
        let host = authority.host
        if authority.isBracketed {
            return isAddress(bytes, from: host.lowerBound, to: host.upperBound, family: .ipv6) ? .ipLiteral : .malformed
        }
        // One trailing dot is the root label: `Reachd.Example.` is `reachd.example`.
        let nameEnd =
            !host.isEmpty && bytes[host.upperBound - 1] == UInt8(ascii: ".") ? host.upperBound - 1 : host.upperBound
        guard isName(bytes, from: host.lowerBound, to: nameEnd) else { return .malformed }
        if isAddress(bytes, from: host.lowerBound, to: nameEnd, family: .ipv4) { return .ipLiteral }
        return .name(lowercased(bytes, from: host.lowerBound, to: nameEnd))
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }

    /// No port, or at most five digits after the `:` (RFC 3986 allows an empty port).
    private static func isPort(_ bytes: UnsafeBufferPointer<UInt8>, _ port: Range<Int>?) -> Bool {
        guard let port else { return true }
        guard port.count <= 5 else { return false }
        for index in port where !isDigit(bytes[index]) { return false }
        return true
    }

    /// `HostName.isValid`'s rule on bytes without the trailing dot: labels of 1–63 letters,
    /// digits, `-` or `_`, at most 253 bytes in all.
    private static func isName(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Bool {
        guard start < end, end - start <= 253 else { return false }
        var labelLength = 0
        for index in start..<end {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                guard labelLength > 0 else { return false }
                labelLength = 0
            } else {
                guard isLabelByte(byte) else { return false }
                labelLength += 1
                guard labelLength <= 63 else { return false }
            }
        }
        return labelLength > 0
    }

    private static func isLabelByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Whether the bytes are an address of `family` (`IPAddress`'s rule); an IPv4 literal has
    /// digits and dots only, so a name is never handed to the address parser (`IPAddress`).
    private static func isAddress(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, family: AddressFamily
    ) -> Bool {
        if family == .ipv4 {
            for index in start..<end where !isDigit(bytes[index]) && bytes[index] != UInt8(ascii: ".") {
                return false
            }
        }
        return IPAddress.isLiteral(UnsafeBufferPointer(rebasing: bytes[start..<end]), family: family)
    }

    private static func lowercased(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> String {
        String(unsafeUninitializedCapacity: end - start) { text in
            for offset in 0..<(end - start) {
                let byte = bytes[start + offset]
                text[offset] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            }
            return end - start
        }
    }
}
