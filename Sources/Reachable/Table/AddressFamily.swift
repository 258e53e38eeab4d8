/// IPv4 or IPv6: the two families the document reports apart (`ipv4`, `ipv6`), in that order.
public enum AddressFamily: String, Sendable, Hashable, CaseIterable, Comparable {
    case ipv4
    case ipv6

    public static func < (lhs: AddressFamily, rhs: AddressFamily) -> Bool { lhs == .ipv4 && rhs == .ipv6 }
}
