import Glibc
import Reachable

/// What one `Host` field names, as the DNS rebinding check compares it: the port and one
/// trailing dot dropped, letters lowercased.
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
        // libmicrohttpd keeps the spaces or tabs that may end a field value (RFC 9110 §5.5: not
        // part of it).
        var rest = Substring(value.trimmed)
        guard !rest.isEmpty else {
            self = .empty
            return
        }
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"), Self.isPort(rest[rest.index(after: close)...]),
                IPAddress(String(rest[rest.index(after: rest.startIndex)..<close]))?.isIPv6 == true
            else {
                self = .malformed
                return
            }
            self = .ipLiteral
            return
        }
        if let colon = rest.firstIndex(of: ":") {
            guard Self.isPort(rest[colon...]) else {
                self = .malformed
                return
            }
            rest = rest[..<colon]
        }
        guard let name = Self.normalisedName(rest) else {
            self = .malformed
            return
        }
        self = IPAddress(name)?.isIPv6 == false ? .ipLiteral : .name(name)
    }

    /// A host name as compared: lowercase, without one trailing dot; `nil` unless it is a DNS
    /// name (`HostName`: what DNS names and `gethostname` hold).
    static func normalisedName(_ text: Substring) -> String? {
        guard HostName.isValid(text) else { return nil }
        return (text.hasSuffix(".") ? text.dropLast() : text).lowercased()
    }

    /// Nothing, or `:` and at most five digits (RFC 3986 allows an empty port).
    private static func isPort(_ text: Substring) -> Bool {
        guard let first = text.first else { return true }
        let digits = text.dropFirst()
        return first == ":" && digits.count <= 5 && digits.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }
}
