import Reachable
import ReachableServer

/// The options only `reachd wait` has; it takes `MonitoringOptions` besides.
extension Settings {
    /// The `--ready-when` syntax and parsing; whether each condition can hold is checked against
    /// the probes' settings, as for `--ready-when` (`ProbeConfiguration.refuseUnsatisfiable`).
    static let waitFor = Setting<[ReadinessCondition]>(
        "for", environment: "REACHD_WAIT_FOR",
        "Comma-separated conditions that must all hold, as --ready-when takes them: reachable (the route-based state), always, online (connectivity full), dns (a nameserver answers), target:NAME (that target reachable)",
        default: [.reachable], invalid: "must be \(ReadinessCondition.syntax)",
        reasoning: { text throws(InvalidValue) in try readyWhen.parse(text) },
        show: \.commaSeparated
    )

    /// Not `Double(positiveSeconds:)`: 0 is a value here (it waits for ever), and more than 86400 is
    /// refused, not counted as 86400 as the intervals and timeouts do.
    static let waitTimeout = Setting<Double>(
        "timeout", environment: "REACHD_WAIT_TIMEOUT",
        "Seconds to wait before giving up (exit 1); 0 waits for ever",
        default: 60, defaultText: "60", invalid: "must be 0...86400 s (0 waits for ever)",
        parse: { text in Double(text).flatMap { (0...86_400).contains($0) ? $0 : nil } }
    )
}
