public import Reachable
public import ReachableServer

/// How `reachd wait` ended, with the check of each condition against the document it ended on.
public struct WaitOutcome: Sendable {
    public enum Ending: Sendable, Equatable {
        /// Every condition held.
        case held
        /// `--timeout` passed first.
        case timedOut
        /// A signal (graceful shutdown) ended the wait, or the monitor closed.
        case interrupted
    }

    public let ending: Ending
    /// Each condition with its check, in the order given.
    public let checks: [(condition: ReadinessCondition, check: HealthCheck)]

    /// Evaluates `conditions` against `status` with the readiness rules of `/readyz`.
    public init(_ ending: Ending, conditions: [ReadinessCondition], status: ReachabilityStatus) {
        self.ending = ending
        checks = conditions.map { ($0, HealthCheck($0, status: status)) }
    }

    /// Whether every condition holds in `status`.
    public static func holds(_ conditions: [ReadinessCondition], in status: ReachabilityStatus) -> Bool {
        conditions.allSatisfy { HealthCheck($0, status: status).holds }
    }

    /// One line per condition: `CONDITION pass|fail [STATE] [(REASON)]` — the condition as
    /// `--for` names it, whether it holds, the state it observed (none for `always`) and that
    /// state's reason when the document gives one: `reachable pass reachable`,
    /// `target:db fail unreachable (timeout)`, `online fail limited (dns)`, `dns pass degraded`.
    public var lines: [String] {
        checks.map { condition, check in
            var line = "\(condition) \(check.holds ? "pass" : "fail")"
            if let observed = check.observedValue { line += " \(observed)" }
            if let reason = check.reason { line += " (\(reason))" }
            return line
        }
    }
}
