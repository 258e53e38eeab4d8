public import FoundationEssentials

/// One configured target (`--target NAME=URL`) as the document shows it: per-host reachability,
/// as `SCNetworkReachabilityCreateWithName` and Nexum report it, decided by real probes.
///
/// Only what changes the answer is here — durations and probe times change on every probe and
/// would make each one an event; they belong in metrics.
public struct TargetStatus: Sendable, Equatable {
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Not evaluated yet.
        case unknown
        case reachable
        case unreachable
    }

    public var name: String
    public var url: String
    public var state: State
    /// Why it is unreachable; `nil` otherwise.
    public var reason: ProbeFailureReason?
    /// What the name resolved to, sorted (for an IP literal, the literal).
    public var addresses: [String]
    /// The output interface the kernel chose for the address that was probed.
    public var interface: String?
    /// When `state` last changed.
    public var since: Date

    public init(
        name: String, url: String, state: State = .unknown, reason: ProbeFailureReason? = nil,
        addresses: [String] = [], interface: String? = nil, since: Date
    ) {
        self.name = name
        self.url = url
        self.state = state
        self.reason = reason
        self.addresses = addresses
        self.interface = interface
        self.since = since
    }
}

/// Why a target is unreachable or the connectivity check could not get through.
public enum ProbeFailureReason: String, Sendable, Hashable, CaseIterable {
    /// The name did not resolve (NXDOMAIN, no A/AAAA data, a refusing or failing server).
    case dns
    /// The kernel has no usable route to any address.
    case noRoute = "no-route"
    /// No answer within the timeout (DNS, connect, TLS or HTTP).
    case timeout
    /// The connection was refused.
    case refused
    /// An HTTP answer outside 200–399.
    case httpStatus = "http-status"
    /// The TLS handshake or the certificate check failed.
    case tls
    /// Anything else.
    case error
}
