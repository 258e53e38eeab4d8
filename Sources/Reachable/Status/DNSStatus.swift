public import FoundationEssentials

/// DNS as its own signal (`--dns-check NAME`): each nameserver of resolv.conf asked on its own,
/// so "it's always DNS" is told apart from the targets themselves.
public struct DNSStatus: Sendable, Equatable, Decodable {
    public enum State: String, Sendable, Hashable, CaseIterable, Decodable {
        /// No `--dns-check`.
        case disabled
        /// Not checked yet.
        case unknown
        /// Every server answers.
        case ok
        /// Some answer, some fail: lookups slow down (the resolver waits on a failing one first).
        case degraded
        /// None answers.
        case failing
    }

    public var state: State
    /// The name asked for, exactly as given; `nil` when disabled.
    public var name: String?
    /// Why `failing`: the first server's reason, or `no-servers`; `nil` otherwise.
    public var reason: DNSFailureReason?
    /// When `state` last changed.
    public var since: Date
    /// Every nameserver of resolv.conf, in its order.
    public var servers: [NameserverStatus]

    public init(
        state: State, name: String?, reason: DNSFailureReason? = nil, since: Date, servers: [NameserverStatus] = []
    ) {
        self.state = state
        self.name = name
        self.reason = reason
        self.since = since
        self.servers = servers
    }

    public static func disabled(since: Date) -> DNSStatus {
        DNSStatus(state: .disabled, name: nil, since: since)
    }

    /// Sets `state` and `reason` from the servers, each as the contract's table says (`ok`: every
    /// server answering; `failing`: none, the first server's reason). While a server has not been
    /// asked yet nothing is known of *every* server: the state stays as it was (`unknown` at
    /// start), so neither a server added to resolv.conf nor a slow first answer makes it blink
    /// (`ok`, then `degraded` a timeout later); `since` moves only when `state` changes.
    public mutating func deriveOverall(at now: Date) {
        let next: State
        if servers.isEmpty {
            next = .failing
            reason = .noServers
        } else if servers.contains(where: { $0.state == .unknown }) {
            // `no-servers` no longer holds once resolv.conf lists some.
            next = reason == .noServers ? .unknown : state
            if next == .unknown { reason = nil }
        } else if servers.allSatisfy({ $0.state == .answering }) {
            next = .ok
            reason = nil
        } else if servers.contains(where: { $0.state == .answering }) {
            next = .degraded
            reason = nil
        } else {
            next = .failing
            reason = servers[0].reason
        }
        if next != state { since = now }
        state = next
    }
}

/// One nameserver of resolv.conf.
public struct NameserverStatus: Sendable, Equatable, Decodable {
    public enum State: String, Sendable, Hashable, CaseIterable, Decodable {
        /// Not asked yet.
        case unknown
        /// A well-formed answer with rcode NOERROR or NXDOMAIN.
        case answering
        case failing
    }

    /// As resolv.conf writes it (canonical text).
    public var address: String
    public var state: State
    /// Why `failing`; `nil` otherwise.
    public var reason: DNSFailureReason?
    /// When `state` last changed.
    public var since: Date

    public init(address: String, state: State = .unknown, reason: DNSFailureReason? = nil, since: Date) {
        self.address = address
        self.state = state
        self.reason = reason
        self.since = since
    }
}

/// Why a nameserver fails, or why DNS as a whole does.
public enum DNSFailureReason: String, Sendable, Hashable, CaseIterable, Decodable {
    /// No usable route to the server's address: decided at once, nothing sent.
    case noRoute = "no-route"
    /// No answer within `--dns-timeout`.
    case timeout
    /// rcode REFUSED, or the port is closed (ICMP port unreachable).
    case refused
    /// rcode SERVFAIL: the server is up but cannot resolve.
    case servfail
    /// A malformed answer, another rcode, anything else.
    case error
    /// resolv.conf lists no nameserver (only for the overall state).
    case noServers = "no-servers"
}
