public import Reachable

/// `no_proxy`/`NO_PROXY`: the hosts an environment's proxy does not carry, matched as curl matches
/// them (`Curl_check_noproxy`), so reachd and the application beside it agree on what goes direct.
///
/// Comma-separated entries, spaces around each ignored: a name matches itself and its subdomains
/// (a leading dot changes nothing), case-insensitively; an IP literal or a CIDR range matches hosts
/// written as IP literals only — never a name that resolves into it, since the choice is made
/// before anything is resolved; `*` alone matches every host. An entry curl would not match
/// anything with is ignored, never refused.
public struct NoProxy: Sendable, Hashable {
    private enum Entry: Sendable, Hashable {
        /// Lower case, without a leading or trailing dot.
        case name(String)
        /// An address and how many leading bits of it must match.
        case range(IPAddress, bits: Int)
    }

    private let everything: Bool
    private let entries: [Entry]

    /// Nothing goes direct.
    public static let none = NoProxy("")

    public init(_ text: String) {
        everything = text.trimmed == "*"
        entries = text.split(separator: ",").compactMap { Self.entry($0.trimmed) }
    }

    /// Whether a URL whose host is written `host` (an IP literal: `literal`) goes direct.
    public func matches(host: String, literal: IPAddress?) -> Bool {
        if everything { return true }
        if let literal {
            return entries.contains { entry in
                if case .range(let network, let bits) = entry { return Self.contains(network, bits, literal) }
                return false
            }
        }
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return entries.contains { entry in
            guard case .name(let suffix) = entry else { return false }
            return name == suffix || name.hasSuffix("." + suffix)
        }
    }

    private static func entry(_ text: String) -> Entry? {
        if text.isEmpty { return nil }
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        var literalText = String(parts[0])
        if literalText.hasPrefix("["), literalText.hasSuffix("]") {
            literalText = String(literalText.dropFirst().dropLast())
        }
        if let address = IPAddress(literalText) {
            let width = address.isIPv6 ? 128 : 32
            guard parts.count == 2 else { return .range(address, bits: width) }
            guard let bits = Int(parts[1]), (0...width).contains(bits) else { return nil }
            // curl reads `/0` as the address alone, not as every address.
            return .range(address, bits: bits == 0 ? width : bits)
        }
        var name = text.lowercased()
        while name.hasPrefix(".") { name.removeFirst() }
        if name.hasSuffix(".") { name.removeLast() }
        return name.isEmpty ? nil : .name(name)
    }

    /// Whether `address` lies in `network`/`bits` (same family only).
    private static func contains(_ network: IPAddress, _ bits: Int, _ address: IPAddress) -> Bool {
        guard network.isIPv6 == address.isIPv6 else { return false }
        let (wanted, given) = (network.bytes, address.bytes)
        var left = bits
        for index in wanted.indices where left > 0 {
            let mask: UInt8 = left >= 8 ? 0xFF : ~(0xFF >> UInt8(left))
            if wanted[index] & mask != given[index] & mask { return false }
            left -= 8
        }
        return true
    }
}
