package import FoundationEssentials

/// How a probing source joins the document that publishes a batch of netlink changes: when the
/// batch leaves its last known addresses without a usable route, that same document already says
/// so (targets `no-route`, connectivity `none`, nameservers `failing`) — one change, one event.
///
/// The monitor asks the kernel about `addresses()` on the netlink thread, outside every lock
/// (microseconds each, on the netlink source's own request socket), then calls `apply` inside
/// the document update that publishes the batch. `apply` must be pure and quick: it runs under
/// the monitor's lock (a source may take its own short lock inside it, never the other way round).
package struct RouteGate: Sendable {
    /// The addresses whose route decides at once: what the source last resolved or asks.
    package var addresses: @Sendable () -> [IPAddress]
    /// Rewrites the source's part of the document: `unroutable` are those of `addresses()` the
    /// kernel has no usable route to now.
    package var apply:
        @Sendable (_ document: inout ReachabilityStatus, _ unroutable: Set<IPAddress>, _ now: Date) -> Void

    package init(
        addresses: @escaping @Sendable () -> [IPAddress],
        apply: @escaping @Sendable (inout ReachabilityStatus, Set<IPAddress>, Date) -> Void
    ) {
        self.addresses = addresses
        self.apply = apply
    }
}
