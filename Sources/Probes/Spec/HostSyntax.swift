import Reachable

/// The pieces of a URL's authority: host names, IP literals and ports, checked strictly.
///
/// Strict on purpose: a value that a lenient parser "fixes" (`127.1`, an unbracketed IPv6 literal, an
/// all-numeric name such as `999.1.1.1` that `inet_aton` or a resolver might read as an address)
/// would probe something other than what the operator meant; refusing it at start is kinder.
enum HostSyntax {
    /// Splits `HOST[:PORT]` or `[IPv6][:PORT]` (`AuthorityBounds`, the split the `Host` header
    /// uses too); the port is checked apart (`port`).
    static func split(_ authority: Substring) -> Result<(host: Substring, port: Substring?), SpecError.Problem> {
        let utf8 = authority.utf8
        let bounds =
            utf8.withContiguousStorageIfAvailable { AuthorityBounds($0, from: 0, to: $0.count) }
            ?? Array(utf8).withUnsafeBufferPointer { AuthorityBounds($0, from: 0, to: $0.count) }
        guard let bounds else { return .failure(.invalidHost) }
        // Offsets next to ASCII brackets and colons: they fall between Unicode scalars.
        func part(_ offsets: Range<Int>) -> Substring {
            let start = utf8.index(utf8.startIndex, offsetBy: offsets.lowerBound)
            return Substring(utf8[start..<utf8.index(start, offsetBy: offsets.count)])
        }
        return .success((part(bounds.host), bounds.port.map(part)))
    }

    /// Checks a host: in brackets it must be an IPv6 literal; otherwise an IPv4 literal or a name.
    ///
    /// - Returns: the address when the host is a literal, `nil` for a name.
    static func validate(_ host: Substring, bracketed: Bool) -> Result<IPAddress?, SpecError.Problem> {
        if bracketed {
            guard let address = IPAddress(String(host)), address.isIPv6 else { return .failure(.invalidHost) }
            return .success(address)
        }
        if let address = IPAddress(String(host)) { return .success(address) }
        return isHostName(host) ? .success(nil) : .failure(.invalidHost)
    }

    /// A DNS host name: labels of 1–63 ASCII letters, digits, `-` (not first or last) and `_`
    /// (service-style names exist in the wild), at most 253 characters, an optional final dot, and a
    /// last label that is not all digits (so it cannot be mistaken for a shortened IPv4 address).
    static func isHostName(_ host: Substring) -> Bool {
        guard HostName.isValid(host) else { return false }
        let labels = (host.hasSuffix(".") ? host.dropLast() : host).split(separator: ".")
        guard labels.allSatisfy({ $0.first != "-" && $0.last != "-" }) else { return false }
        return !labels.last!.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// A decimal port in 1…65535, digits only (no sign, no spaces).
    static func port(_ text: Substring) -> UInt16? {
        guard (1...5).contains(text.utf8.count), text.utf8.allSatisfy({ (48...57).contains($0) }),
            let value = Int(text), (1...65535).contains(value)
        else { return nil }
        return UInt16(value)
    }

    /// A request path libcurl will send as written: printable ASCII only (no spaces or control
    /// characters that would break the request line; non-ASCII must be percent-encoded).
    static func isSafePath(_ path: String) -> Bool {
        path.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
