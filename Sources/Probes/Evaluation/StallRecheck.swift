import Reachable

/// When a probe that starts failing runs a connectivity check at once, as Android's data-stall
/// detection re-validates a network when its DNS or TCP traffic starts failing: while `full`, a
/// check otherwise waits `--connectivity-interval` (300 s), and a network gone dark past the
/// gateway read `full` for minutes while its targets already read `refused`. Pure.
///
/// - Only the first failed probe after a success counts: a target that stays failing triggers
///   nothing more.
/// - Only while the check reads `full`: otherwise it is already backing off from 1 s.
/// - At most once per `spacing`, however many targets start failing together: a network gone dark
///   fails them all at once, and the check's server must not get one request per target.
///
/// A missing route is no stall: the netlink batch that took the route runs every check already.
struct StallRecheck: Sendable, Equatable {
    /// The least time between two checks run for failing probes.
    static let spacing = Duration.seconds(10)

    private var lastRecheck: ContinuousClock.Instant?

    init() {}

    /// Whether the check runs now for a probe that started failing (and, if so, counts it).
    mutating func allows(checkReads state: ConnectivityStatus.State, at now: ContinuousClock.Instant) -> Bool {
        guard state == .full else { return false }
        if let lastRecheck, now - lastRecheck < Self.spacing { return false }
        lastRecheck = now
        return true
    }

    /// Whether a target family's probe ending in `failure` starts a failure: the probe before it
    /// succeeded.
    static func startsFailing(after previous: TargetEvaluation, failure: ProbeFailureReason?) -> Bool {
        guard let failure, failure != .noRoute else { return false }
        return previous.consecutiveSuccesses > 0
    }

    /// The same for a nameserver's answer.
    static func startsFailing(
        after previous: ThresholdEvaluation<DNSFailureReason>, failure: DNSFailureReason?
    ) -> Bool {
        guard let failure, failure != .noRoute else { return false }
        return previous.consecutiveSuccesses > 0
    }
}
