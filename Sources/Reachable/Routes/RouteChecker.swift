import CMnl
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

    /// The verdict for one IPv4 (4 bytes) or IPv6 (16 bytes) address.
    public func route(to address: [UInt8]) -> RouteVerdict {
        let answer = requester.withLock { $0.lookup(address) }
        return Self.verdict(for: answer, snapshot: monitor.routingSnapshot)
    }

    /// Pure: the kernel's answer judged against what is usable.
    package static func verdict(for answer: RouteLookup, snapshot: RoutingSnapshot) -> RouteVerdict {
        switch answer {
        case .route(let type, let interface?, let source) where type == UInt8(RTN_LOCAL):
            _ = source
            return .routable(interface: snapshot.interfaceNames[interface] ?? "lo")
        case .route(let type, let interface?, let source) where type == UInt8(RTN_UNICAST):
            guard snapshot.usableInterfaces.contains(interface),
                source.map(snapshot.usableAddresses.contains) ?? true,
                let name = snapshot.interfaceNames[interface]
            else { return .noRoute }
            return .routable(interface: name)
        case .route:
            return .noRoute
        case .failed(let code):
            return SystemError("route lookup", code: code).isTransient ? .unknown : .noRoute
        case .notAsked:
            return .unknown
        }
    }
}
