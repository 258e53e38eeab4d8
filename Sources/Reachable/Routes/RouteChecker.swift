import Synchronization

/// Asks the kernel, on a request socket of its own, which route it would use for one address
/// (`RTM_GETROUTE`, as `ip route get`; no packet is sent), for the target probes and the
/// connectivity check. Safe from any thread: one question at a time, each a few microseconds.
public final class RouteChecker: Sendable {
    private let requester: Mutex<NetlinkRequester>
    private let monitor: NetworkMonitor

    /// Opens the request socket in the calling thread's network namespace (the monitor's).
    public init(monitor: NetworkMonitor) throws(SystemError) {
        requester = Mutex(try NetlinkRequester(calls: .live))
        self.monitor = monitor
    }

    /// Whether `egress` can carry `family` at all: the kernel's choice always may (each address
    /// is judged on its own); a pinned interface only while it is an uplink of the family — it
    /// has a routing-table entry toward the family's outside address that leaves through it.
    public func carries(_ family: AddressFamily, via egress: Egress) -> Bool {
        guard egress != .kernelChoice else { return true }
        guard let outside = monitor.outsideDestinations[family] else { return false }
        return route(to: outside, via: egress) != .noRoute
    }

    /// The verdict for one address out of `egress`.
    public func route(to address: IPAddress, via egress: Egress = .kernelChoice) -> RouteVerdict {
        RouteVerdict.asking(address, via: egress, by: monitor.routingSnapshot) { address, interface, source in
            requester.withLock { $0.lookup(address, outputInterface: interface, source: source) }
        }
    }

    /// The source address a probe of `family` pinned to `egress` binds to (the interface's
    /// preferred one, so that policy routing by source applies); `nil` for the kernel's choice.
    public func source(of family: AddressFamily, via egress: Egress) -> IPAddress? {
        monitor.routingSnapshot.preferredSource(of: family, via: egress)
    }
}
