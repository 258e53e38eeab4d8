public import Reachable

/// How long each phase of one probe took, from libcurl's `*_TIME_T` counters (each measured from the
/// start of the transfer). For `/metrics`; never part of the status document, since it changes on
/// every probe.
public struct ProbeTimings: Sendable, Equatable {
    /// Until the name was resolved: near zero, since the engine pins an address (resolution is timed
    /// by the resolver instead).
    public var nameLookup: Duration
    /// Until the TCP connection was established.
    public var connect: Duration
    /// Until the TLS handshake was done (zero for `http` and `tcp`).
    public var appConnect: Duration
    /// The whole transfer.
    public var total: Duration

    public init(
        nameLookup: Duration = .zero, connect: Duration = .zero, appConnect: Duration = .zero, total: Duration = .zero
    ) {
        self.nameLookup = nameLookup
        self.connect = connect
        self.appConnect = appConnect
        self.total = total
    }
}

/// The result of one probe job.
public struct ProbeOutcome: Sendable, Equatable {
    /// `nil` when the probe succeeded (connected, or answered 200–399).
    public var failure: ProbeFailureReason?
    /// The HTTP status, whenever an answer came (also with `http-status`); `nil` for `tcp`.
    public var statusCode: Int?
    /// With an expected body prefix: whether the body started with it (`false` also when the body
    /// ended first). `nil` when no prefix was expected or no answer came.
    public var bodyPrefixMatched: Bool?
    public var timings: ProbeTimings
    /// The failure in the document's words (`FailureDetail`): `HTTP 404`,
    /// `ECONNREFUSED: connection refused`, `certificate has expired`; `nil` on success.
    public var detail: String?
    /// The engine stopped before the job ended (`failure` is then `error`).
    public var wasCancelled: Bool
    /// Round trips, echoes and path MTU, for the quality window.
    public var quality: ProbeQuality

    public init(
        failure: ProbeFailureReason?, statusCode: Int? = nil, bodyPrefixMatched: Bool? = nil,
        timings: ProbeTimings = ProbeTimings(), detail: String? = nil, wasCancelled: Bool = false,
        quality: ProbeQuality = ProbeQuality()
    ) {
        self.failure = failure
        self.statusCode = statusCode
        self.bodyPrefixMatched = bodyPrefixMatched
        self.timings = timings
        self.detail = detail
        self.wasCancelled = wasCancelled
        self.quality = quality
    }

    public var succeeded: Bool { failure == nil }

    /// What a probe under way or not yet started comes to when the engine stops.
    static let engineStopped = ProbeOutcome(failure: .error, detail: "the engine stopped", wasCancelled: true)

    /// An outcome decided before any packet was sent (a missing route, a failed resolution), so the
    /// evaluators take one type whichever stage failed.
    public static func failed(_ reason: ProbeFailureReason, detail: String? = nil) -> ProbeOutcome {
        ProbeOutcome(failure: reason, detail: detail)
    }
}
