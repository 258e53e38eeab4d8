public import FoundationEssentials
public import Reachable

/// What one probed thing — a target's family, a nameserver — is judged to be, plus the counts
/// that decide the next step.
public struct ThresholdEvaluation<Reason: Sendable & Equatable>: Sendable, Equatable {
    public var state: TargetStatus.State
    /// `nil` unless `state` is `unreachable`.
    public var reason: Reason?
    /// The counts in 32 bits, saturating, beside `state` and `reason` (in the bytes their
    /// alignment left free): 40 bytes, not 48, and a target's book holds three (the fleet bench's RSS per
    /// target). 4.3 billion probes in a row are 136 years of one a second.
    private var failures: UInt32 = 0
    /// The failure that set `reason`, in words; `nil` unless `state` is `unreachable`.
    public var detail: String?
    /// When `state` last changed (for `unknown`, when it was configured).
    public var since: Date
    private var successes: UInt32 = 0

    /// Failed probes in a row since the last success (0 after a success).
    public var consecutiveFailures: Int {
        get { Int(failures) }
        set { failures = UInt32(clamping: newValue) }
    }
    /// Successful probes in a row since the last failure (0 after a failure).
    public var consecutiveSuccesses: Int {
        get { Int(successes) }
        set { successes = UInt32(clamping: newValue) }
    }

    public init(
        state: TargetStatus.State, reason: Reason?, detail: String? = nil, since: Date, consecutiveFailures: Int = 0,
        consecutiveSuccesses: Int = 0
    ) {
        self.state = state
        self.reason = reason
        self.detail = detail
        self.since = since
        failures = UInt32(clamping: consecutiveFailures)
        successes = UInt32(clamping: consecutiveSuccesses)
    }

    /// Nothing probed yet.
    public static func unknown(since: Date) -> ThresholdEvaluation {
        ThresholdEvaluation(state: .unknown, reason: nil, since: since)
    }

}

/// A target family's evaluation.
public typealias TargetEvaluation = ThresholdEvaluation<ProbeFailureReason>

/// Turns an evaluation and one new result into the next: the contract's `--target-failures` and
/// `--target-successes` rules (and `--dns-failures` for nameservers), and nothing else. Pure, so
/// the rules are tested without a network.
///
/// - The first result after start decides at once (there is nothing to protect from flapping yet).
/// - A failure that `decidesAtOnce` (a missing route: the kernel said so, it does not flap) does.
/// - A `reachable` thing turns `unreachable` only after `failureThreshold` failures in a row (a
///   Kubernetes probe's failureThreshold), so one lost probe makes no event.
/// - An `unreachable` thing turns `reachable` after `successThreshold` successes in a row (its
///   successThreshold, 1 by default).
/// - An `unreachable` thing that fails differently keeps its `since` but updates its `reason`.
public struct ThresholdEvaluator: Sendable, Equatable {
    /// `--target-failures`, at least 1.
    public let failureThreshold: Int
    /// `--target-successes`, at least 1.
    public let successThreshold: Int

    public init(failureThreshold: Int, successThreshold: Int = 1) {
        precondition(failureThreshold >= 1, "--target-failures is at least 1")
        precondition(successThreshold >= 1, "--target-successes is at least 1")
        self.failureThreshold = failureThreshold
        self.successThreshold = successThreshold
    }

    /// When to probe again (confirming quickly): while it has failed fewer than `failureThreshold`
    /// times in a row — or, after failing, succeeded fewer than `successThreshold` times — 1 s
    /// after the first result of the run, then 2 s, 4 s …, never later than `interval`; else
    /// `interval`. So a stopped server reads `unreachable` about 3 s after its first failed probe
    /// with the defaults, not 3 intervals; the thresholds still count every probe.
    public func confirmationDelay<Reason>(after evaluation: ThresholdEvaluation<Reason>, interval: Duration) -> Duration
    {
        let failures = evaluation.consecutiveFailures
        let successes = evaluation.state == .unreachable ? evaluation.consecutiveSuccesses : 0
        let run: Int
        if (1..<failureThreshold).contains(failures) {
            run = failures
        } else if (1..<successThreshold).contains(successes) {
            run = successes
        } else {
            return interval
        }
        return min(.seconds(Int64(1) << min(run - 1, 40)), interval)
    }

    /// The next evaluation of a target family (`no-route` decides at once).
    public func next(
        after previous: TargetEvaluation, failure: ProbeFailureReason?, detail: String? = nil, at now: Date
    ) -> TargetEvaluation {
        next(after: previous, failure: failure, detail: detail, decidesAtOnce: failure == .noRoute, at: now)
    }

    /// The next evaluation.
    ///
    /// - Parameters:
    ///   - previous: the current evaluation.
    ///   - failure: `nil` when the probe succeeded, otherwise why it failed.
    ///   - detail: the failure in words (kept while `unreachable`).
    ///   - decidesAtOnce: the failure needs no threshold (a missing route).
    ///   - now: when the result came, the new `since` if the state changes.
    public func next<Reason>(
        after previous: ThresholdEvaluation<Reason>, failure: Reason?, detail: String? = nil, decidesAtOnce: Bool,
        at now: Date
    ) -> ThresholdEvaluation<Reason> {
        guard let failure else {
            let successes = previous.consecutiveSuccesses + 1
            guard previous.state != .unreachable || successes >= successThreshold else {
                var waiting = previous
                waiting.consecutiveFailures = 0
                waiting.consecutiveSuccesses = successes
                return waiting
            }
            return ThresholdEvaluation(
                state: .reachable, reason: nil, since: previous.state == .reachable ? previous.since : now,
                consecutiveSuccesses: successes)
        }
        let failures = previous.consecutiveFailures + 1
        let decides = previous.state != .reachable || decidesAtOnce || failures >= failureThreshold
        guard decides else {
            return ThresholdEvaluation(
                state: .reachable, reason: nil, since: previous.since, consecutiveFailures: failures)
        }
        return ThresholdEvaluation(
            state: .unreachable, reason: failure, detail: detail,
            since: previous.state == .unreachable ? previous.since : now, consecutiveFailures: failures)
    }
}
