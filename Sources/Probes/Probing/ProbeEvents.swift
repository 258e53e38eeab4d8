public import Reachable

/// What the probes tell besides the document: measurements that change on every probe and
/// would make each one an event (durations, failures a threshold still hides). For `/metrics`.
/// Called on the probe engine's thread; each must return at once.
public struct ProbeEvents: Sendable {
    /// Every finished probe of a target, once per family probed (a failure decided before any
    /// packet, such as `dns` or `no-route`, counts too, with the time it took).
    public var targetProbed: @Sendable (_ target: String, _ duration: Duration, _ failure: ProbeFailureReason?) -> Void
    /// Every finished probe of a target family that measured something of the path (round trips,
    /// echoes, the path MTU): for the quality series of `/metrics`.
    public var targetMeasured: @Sendable (_ target: String, _ family: AddressFamily, _ quality: ProbeQuality) -> Void
    /// Every finished query to one nameserver (`--dns-check`).
    public var nameserverAsked: @Sendable (_ server: String, _ duration: Duration, _ failure: DNSFailureReason?) -> Void
    /// c-ares refused a configuration (resolv.conf, or one nameserver to ask alone), with its
    /// message; said once until the message changes. For the log.
    public var resolverProblem: @Sendable (_ message: String) -> Void

    public init(
        targetProbed: @escaping @Sendable (String, Duration, ProbeFailureReason?) -> Void = { _, _, _ in },
        targetMeasured: @escaping @Sendable (String, AddressFamily, ProbeQuality) -> Void = { _, _, _ in },
        nameserverAsked: @escaping @Sendable (String, Duration, DNSFailureReason?) -> Void = { _, _, _ in },
        resolverProblem: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.targetProbed = targetProbed
        self.targetMeasured = targetMeasured
        self.nameserverAsked = nameserverAsked
        self.resolverProblem = resolverProblem
    }
}
