public import Reachable

/// One connection or request the engine makes: what, to which address, until when.
public struct ProbeJob: Sendable, Equatable {
    /// The target's URL; its kind probes the job.
    public let url: TargetURL
    /// The address to connect to: the one the caller resolved and routed. libcurl never resolves the
    /// URL's host itself (`CURLOPT_CONNECT_TO`), yet `Host:`, SNI and certificate checks still use it.
    public let address: IPAddress
    /// The HTTP proxy that carries the request (`ProxyChoice`); `address` is then the proxy's, and
    /// the URL's host is the proxy's to resolve. `nil`: `address` is the URL's host's.
    public let proxy: ProxyURL?
    /// The way out: a pinned probe binds its socket to the interface (`CURLOPT_INTERFACE`).
    public let egress: Egress
    /// The source address the route names for `address` out of `egress`: a pinned probe binds
    /// to it too, so that policy routing (rules by source) applies.
    public let sourceAddress: IPAddress?
    /// The interface the route leaves through: an `icmp://` probe's full-size echo is as large as
    /// its MTU allows. `nil` when not known (then 1,500 bytes are assumed).
    public let outputInterface: String?
    /// When the probe must have ended: the caller's budget for the whole probe, so a timeout of 3 s
    /// that spent 1 s in DNS leaves 2 s here.
    public let deadline: ContinuousClock.Instant
    /// For the connectivity check: the body prefix to compare (at most
    /// `ProbeLimits.maximumExpectedBody` bytes). Reading stops as soon as it is decided.
    public let expectedBodyPrefix: [UInt8]?

    public init(
        url: TargetURL, address: IPAddress, proxy: ProxyURL? = nil, egress: Egress = .kernelChoice,
        sourceAddress: IPAddress? = nil,
        outputInterface: String? = nil, deadline: ContinuousClock.Instant, expectedBodyPrefix: [UInt8]? = nil
    ) {
        precondition(
            (expectedBodyPrefix?.count ?? 0) <= ProbeLimits.maximumExpectedBody, "expected body prefix too long")
        self.url = url
        self.address = address
        self.proxy = proxy
        self.egress = egress
        self.sourceAddress = sourceAddress
        self.outputInterface = outputInterface
        self.deadline = deadline
        self.expectedBodyPrefix = expectedBodyPrefix?.isEmpty == true ? nil : expectedBodyPrefix
    }
}
