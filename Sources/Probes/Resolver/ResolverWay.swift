public import Reachable

/// The way a name is resolved out: the probe's egress, and — when pinned — the interface's source
/// addresses the queries leave from (a nameserver of either family may be asked whatever the
/// family resolved). A key of the resolver's channels: an interface whose address changed gets a
/// new channel, the old one is dropped when idle.
public struct ResolverWay: Hashable, Sendable {
    public var egress: Egress
    public var ipv4Source: IPAddress?
    public var ipv6Source: IPAddress?

    public init(_ egress: Egress = .kernelChoice, ipv4Source: IPAddress? = nil, ipv6Source: IPAddress? = nil) {
        self.egress = egress
        self.ipv4Source = ipv4Source
        self.ipv6Source = ipv6Source
    }
}
