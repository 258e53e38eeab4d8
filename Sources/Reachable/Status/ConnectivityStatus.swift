public import FoundationEssentials

/// The NetworkManager/Android-style check: is this the internet, a captive portal, or less?
/// Never changes the route-based `state`; `/readyz` can require it (`--ready-when online`).
public struct ConnectivityStatus: Sendable, Equatable {
    public enum State: String, Sendable, Hashable, CaseIterable {
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
    }

    public var state: State
    /// The check URL; `nil` when disabled.
    public var url: String?
    /// Why it is `limited`; `nil` otherwise.
    public var reason: ProbeFailureReason?
    /// When `state` last changed.
    public var since: Date

    public init(state: State, url: String?, reason: ProbeFailureReason? = nil, since: Date) {
        self.state = state
        self.url = url
        self.reason = reason
        self.since = since
    }

    public static func disabled(since: Date) -> ConnectivityStatus {
        ConnectivityStatus(state: .disabled, url: nil, since: since)
    }
}
