/// The kernel's answer to "which way would a packet to this outside address go?" — an
/// `RTM_GETROUTE` for one address, exactly what `ip route get` asks. No packet is sent.
public enum RouteLookup: Sendable, Equatable {
    /// The route the kernel chose.
    case route(type: UInt8, outputInterface: Int32?, preferredSource: IPAddress?)
    /// The kernel refused (`ENETUNREACH`, `EHOSTUNREACH`, …): no way out for this family.
    case failed(errno: Int32)
    /// Not asked (this family's lookup is turned off).
    case notAsked
}

/// One lookup per address family.
public struct RouteLookups: Sendable, Equatable {
    public var ipv4: RouteLookup
    public var ipv6: RouteLookup

    public init(ipv4: RouteLookup, ipv6: RouteLookup) {
        self.ipv4 = ipv4
        self.ipv6 = ipv6
    }
}
