public import Logging
public import Reachable
public import ReachableServer
public import ServiceLifecycle
import Synchronization

/// `reachd wait` as a service: follows the monitor's documents — the current one at once, then
/// each change, never polling — until every condition holds or `timeout` passes. Run last in
/// the application's group (`Application.run(until:)`): its end shuts the probes and the monitor
/// down; a signal's graceful shutdown ends it first, as `interrupted`.
public final class ConditionWait: Service, Sendable {
    public let conditions: [ReadinessCondition]
    /// `nil` waits for ever.
    public let timeout: Duration?
    private let monitor: NetworkMonitor
    private let logger: Logger
    private let ended = Mutex<WaitOutcome?>(nil)

    public init(conditions: [ReadinessCondition], timeout: Duration?, monitor: NetworkMonitor, logger: Logger) {
        self.conditions = conditions
        self.timeout = timeout
        self.monitor = monitor
        self.logger = logger
    }

    /// How the wait ended; `nil` until it has.
    public var outcome: WaitOutcome? { ended.withLock { $0 } }

    public func run() async {
        // A signal sent once this line is out is answered with the lines, never a default death:
        // `reachd wait` claimed SIGTERM and SIGINT before it built anything (`ProcessSignals`).
        logger.info(
            "reachd waiting",
            metadata: [
                "for": "\(conditions.commaSeparated)",
                "timeout": timeout.map { "\($0)" } ?? "none",
            ])
        let outcome = await cancelWhenGracefulShutdown { await self.firstEnding() }
        ended.withLock { $0 = outcome }
    }

    /// Whichever comes first: every condition holding, the timeout, or cancellation.
    private func firstEnding() async -> WaitOutcome {
        await withTaskGroup(of: WaitOutcome.self) { group in
            group.addTask { await self.untilEveryConditionHolds() }
            if let timeout {
                group.addTask {
                    let finished: Void? = try? await Task.sleep(for: timeout)
                    return self.outcome(finished == nil ? .interrupted : .timedOut, status: self.monitor.current)
                }
            }
            let first = await group.next() ?? outcome(.interrupted, status: monitor.current)
            group.cancelAll()
            return first
        }
    }

    /// `held` with the first document in which every condition holds; `interrupted` when the
    /// updates end first (cancelled, or the monitor closed).
    private func untilEveryConditionHolds() async -> WaitOutcome {
        for await status in monitor.updates where WaitOutcome.holds(conditions, in: status) {
            return outcome(.held, status: status)
        }
        return outcome(.interrupted, status: monitor.current)
    }

    private func outcome(_ ending: WaitOutcome.Ending, status: ReachabilityStatus) -> WaitOutcome {
        WaitOutcome(ending, conditions: conditions, status: status)
    }
}
