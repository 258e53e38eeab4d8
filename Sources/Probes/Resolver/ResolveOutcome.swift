public import Reachable

/// The result of resolving one host.
public struct ResolveOutcome: Sendable, Equatable {
    /// Every A and AAAA address asked for, de-duplicated and sorted (IPv4 first, then
    /// numerically); for an IP literal, the literal. Empty on failure — and, for one family's
    /// query, when the name has no address of that family.
    public var addresses: [IPAddress]
    /// `nil` on success; otherwise `dns` (a failing or refusing server; for both families at
    /// once also NXDOMAIN and no data), `timeout` (no answer before the deadline) or `error`.
    public var failure: ProbeFailureReason?
    /// c-ares' message (`ares_strerror`) for logs.
    public var detail: String?
    /// The nameservers asked, when the query failed (empty otherwise): whether the kernel has a
    /// route to them decides the failure's words (`ProbePipeline`).
    public var nameservers: [IPAddress] = []
    /// From submission to the answer: the DNS part of a probe's duration.
    public var duration: Duration
    /// The engine stopped before the answer came (`failure` is then `error`).
    public var wasCancelled: Bool

    public init(
        addresses: [IPAddress], failure: ProbeFailureReason?, detail: String? = nil, duration: Duration = .zero,
        wasCancelled: Bool = false
    ) {
        self.addresses = addresses
        self.failure = failure
        self.detail = detail
        self.duration = duration
        self.wasCancelled = wasCancelled
    }

    /// What a resolution under way or not yet started comes to when the engine stops.
    static let engineStopped = ResolveOutcome(
        addresses: [], failure: .error, detail: "the engine stopped", wasCancelled: true)
}
