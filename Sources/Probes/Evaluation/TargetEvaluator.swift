public import FoundationEssentials
public import Reachable

/// What the document says about one target, plus the failure count that decides the next step.
public struct TargetEvaluation: Sendable, Equatable {
    public var state: TargetStatus.State
    /// `nil` unless `state` is `unreachable`.
    public var reason: ProbeFailureReason?
    /// When `state` last changed (for `unknown`, when the target was configured).
    public var since: Date
    /// Failed probes in a row since the last success (0 after a success).
    public var consecutiveFailures: Int

    public init(state: TargetStatus.State, reason: ProbeFailureReason?, since: Date, consecutiveFailures: Int = 0) {
        self.state = state
        self.reason = reason
        self.since = since
        self.consecutiveFailures = consecutiveFailures
    }

    /// A target nobody has probed yet.
    public static func unknown(since: Date) -> TargetEvaluation {
        TargetEvaluation(state: .unknown, reason: nil, since: since)
    }
}

/// Turns a target's previous evaluation and one new probe result into the next: DESIGN's
/// `--target-failures` rule, and nothing else. Pure, so the rule is tested without a network.
///
/// - The first result after start decides at once (there is nothing to protect from flapping yet).
/// - `no-route` decides at once: the kernel said so, and it does not flap.
/// - A `reachable` target turns `unreachable` only after `failureThreshold` failures in a row (a
///   Kubernetes probe's `failureThreshold`), so one lost probe does not make an event.
/// - One success makes any target `reachable` again.
/// - An `unreachable` target that fails differently keeps its `since` but updates its `reason`.
public struct TargetEvaluator: Sendable, Equatable {
    /// `--target-failures`, at least 1.
    public let failureThreshold: Int

    public init(failureThreshold: Int) {
        precondition(failureThreshold >= 1, "--target-failures is at least 1")
        self.failureThreshold = failureThreshold
    }

    /// The next evaluation.
    ///
    /// - Parameters:
    ///   - previous: the target's current evaluation.
    ///   - failure: `nil` when the probe succeeded, otherwise why it failed.
    ///   - now: when the result came, the new `since` if the state changes.
    public func next(after previous: TargetEvaluation, failure: ProbeFailureReason?, at now: Date) -> TargetEvaluation {
        guard let failure else {
            return TargetEvaluation(
                state: .reachable, reason: nil, since: previous.state == .reachable ? previous.since : now)
        }
        let failures = previous.consecutiveFailures + 1
        let decidesNow =
            previous.state != .reachable || failure == .noRoute || failures >= failureThreshold
        guard decidesNow else {
            return TargetEvaluation(
                state: .reachable, reason: nil, since: previous.since, consecutiveFailures: failures)
        }
        return TargetEvaluation(
            state: .unreachable, reason: failure, since: previous.state == .unreachable ? previous.since : now,
            consecutiveFailures: failures)
    }
}
