/// Whether the kernel would carry a packet to one address, judged like the status itself: a
/// unicast route out of a usable interface with a usable source address — or a `local` route
/// (an address of this host, `127.0.0.1`, `::1`): a sidecar's own pod is the commonest target.
public enum RouteVerdict: Sendable, Equatable {
    /// Routable; the output interface the kernel chose (`lo` for a local address).
    case routable(interface: String)
    /// No usable route: none at all, an `unreachable`/`blackhole`/`prohibit` one, or one out of
    /// an interface that is down.
    case noRoute
    /// The kernel could not be asked just now (a passing error): decide nothing.
    case unknown
}
