public import FoundationEssentials

/// The NetworkManager/Android-style check: is this the internet, a captive portal, or less?
/// Checked for each address family of the URL's host on its own; the overall state is the best
/// family's. Never changes the route-based `state`; `/readyz` can require it (`--ready-when online`).
public struct ConnectivityStatus: Sendable, Equatable, Decodable {
    public enum State: String, Sendable, Hashable, CaseIterable, Decodable {
        /// No URL configured.
        case disabled
        /// Not checked yet.
        case unknown
        /// No usable route toward the check's host.
        case none
        /// The check cannot get through (`reason` says why).
        case limited
        /// Another answer in 200–399: a redirect, a login page, an unexpected body.
        case portal
        /// The expected answer: 204, or a 2xx starting with the expected text.
        case full

        /// NetworkManager's order: `full` > `limited` > `portal` > `none` > `unknown`.
        public var rank: Int {
            switch self {
            case .disabled, .unknown: 0
            case .none: 1
            case .portal: 2
            case .limited: 3
            case .full: 4
            }
        }
    }

    public var state: State
    /// The check URL; `nil` when disabled.
    public var url: String?
    /// The proxy the check goes through, without credentials (`http://198.18.0.1:3128`); `nil`
    /// when direct (an uplink's check always is).
    public var proxy: String?
    /// Why it is `limited`; `nil` otherwise.
    public var reason: ProbeFailureReason?
    /// When `state` last changed.
    public var since: Date
    /// Each family's own check; `nil` while the URL's host has no address of that family.
    public var ipv4: ConnectivityFamilyStatus?
    public var ipv6: ConnectivityFamilyStatus?
    /// `full`, while a family with addresses is not.
    public var degraded: Bool
    /// The families the check is for that show no verdict because the host's name does not
    /// resolve (or, for an uplink's check, has not been resolved yet): those of its last
    /// successful resolution — an uplink's, of those the interface is an uplink of, and every one
    /// of them before its first answer; empty while each shows one. Not on the wire, where such a
    /// family is `null` like one the host never had: `/metrics` keeps a family's series while it
    /// is one of these, since a failure never removes a series.
    public var unresolvedFamilies: AddressFamilies = []

    public init(
        state: State, url: String?, proxy: String? = nil, reason: ProbeFailureReason? = nil, since: Date,
        ipv4: ConnectivityFamilyStatus? = nil, ipv6: ConnectivityFamilyStatus? = nil, degraded: Bool = false,
        unresolvedFamilies: AddressFamilies = []
    ) {
        self.state = state
        self.url = url
        self.proxy = proxy
        self.reason = reason
        self.since = since
        self.ipv4 = ipv4
        self.ipv6 = ipv6
        self.degraded = degraded
        self.unresolvedFamilies = unresolvedFamilies
    }

    /// The wire's fields: `unresolvedFamilies` is reachd's own.
    private enum CodingKeys: String, CodingKey {
        case state, url, proxy, reason, since, ipv4, ipv6, degraded
    }

    public static func disabled(since: Date) -> ConnectivityStatus {
        ConnectivityStatus(state: .disabled, url: nil, since: since)
    }

    public subscript(family: AddressFamily) -> ConnectivityFamilyStatus? {
        get { family == .ipv4 ? ipv4 : ipv6 }
        set { if family == .ipv4 { ipv4 = newValue } else { ipv6 = newValue } }
    }

    /// Sets `state`, `reason` and `degraded` from the families: the best family's state and
    /// reason (IPv6 first on a tie); `since` moves only when `state` changes.
    ///
    /// - Parameter withoutFamilies: the state and reason when no family has addresses (the name
    ///   did not resolve, or no route before it ever did).
    public mutating func deriveOverall(
        withoutFamilies: (state: State, reason: ProbeFailureReason?), at now: Date
    ) {
        let families = [ipv6, ipv4].compactMap { $0 }
        var next = withoutFamilies
        if let best = families.max(by: { $0.state.rank < $1.state.rank }) {
            // `max` keeps the first of equals: IPv6, listed first.
            next = (best.state, best.reason)
        }
        degraded = next.state == .full && families.contains { $0.state != .full }
        if next.state != state { since = now }
        state = next.state
        reason = next.reason
    }
}

/// One address family of the connectivity check.
public struct ConnectivityFamilyStatus: Sendable, Equatable, Decodable {
    public var state: ConnectivityStatus.State
    /// Why it is `limited`; `nil` otherwise.
    public var reason: ProbeFailureReason?
    /// The last failure in words (`HTTP 302`, `ETIMEDOUT …`); `nil` unless it failed.
    public var detail: String?

    public init(state: ConnectivityStatus.State, reason: ProbeFailureReason? = nil, detail: String? = nil) {
        self.state = state
        self.reason = reason
        self.detail = detail
    }
}
