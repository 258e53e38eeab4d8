import ArgumentParser
import Logging
import Probes
import Reachable
import ReachableServer
import ReachdApp

/// `reachd wait`: what `systemd-networkd-wait-online` and `nm-online` are to a host, for init
/// containers and boot scripts. The monitor and the probes run in this process (the same app
/// builder as serving, without the server: no port is bound) until every condition holds.
struct WaitCommand: AsyncParsableCommand, ClaimsSignals {
    static let configuration = CommandConfiguration(
        commandName: "wait",
        abstract: "Wait until every --for condition holds (exit 0), or give up at --timeout (exit 1).",
        discussion: """
            For init containers and boot scripts: runs the monitor, and the targets, connectivity \
            check and DNS check it is given, in this process, binds no port, and follows every \
            change (no polling) until each condition of --for holds. Then, or at --timeout, or on \
            SIGTERM or SIGINT, it prints one line per condition on stdout:

              CONDITION pass|fail [STATE] [(REASON)]

            the condition as --for names it, whether it holds, the state it observed (none for \
            `always`) and that state's reason when there is one, such as `reachable pass reachable` \
            or `target:db fail unreachable (timeout)`. Logs go to stderr.
            Exit status: 0 when every condition holds; 1 at --timeout, on SIGTERM or SIGINT, or when \
            the network cannot be observed; 64 for a usage error (an unknown condition, a malformed \
            option, a condition nothing configured could satisfy), before anything is probed.
            """
    )

    @Option(Settings.waitFor) var conditions: [ReadinessCondition]?
    @Option(Settings.waitTimeout) var timeout: Double?
    @OptionGroup var monitoring: MonitoringOptions

    /// The longest the probes and the monitor may take to stop once the wait has ended.
    static let shutdownTimeout = 5.0

    /// Usage errors here rather than in `run()`, so the message ends with `reachd wait`'s usage.
    func validate() throws {
        _ = try waitConfiguration()
    }

    func run() async throws {
        // First: SIGTERM or SIGINT, even one held while the command line was read, ends the wait
        // with its lines.
        let requests = ProcessSignals.claim()
        let logger = try monitoring.makeLogger()
        let (configuration, conditions, timeout) = try waitConfiguration()
        let application: Application
        do {
            application = try buildApplication(configuration, logger: logger)
        } catch {
            logger.critical("\(error)")
            throw ExitCode(1)
        }
        let wait = ConditionWait(conditions: conditions, timeout: timeout, monitor: application.monitor, logger: logger)
        try await application.run(
            logger: logger, shutdownTimeout: Self.shutdownTimeout, requests: requests, until: wait)
        // Every service has stopped: the probes' thread joined, the monitor closed.
        let outcome =
            wait.outcome ?? WaitOutcome(.interrupted, conditions: conditions, status: application.monitor.current)
        Output.write(outcome.lines.map { $0 + "\n" }.joined())
        guard outcome.ending == .held else { throw ExitCode(1) }
    }

    /// Everything validated, a usage error thrown (exit 64) before anything runs. The monitor's
    /// settings last, as for serving (scripts/check-packaging.sh stops reachd on the last one).
    private func waitConfiguration() throws -> (AppConfiguration, [ReadinessCondition], Duration?) {
        var configuration = AppConfiguration()
        configuration.server = nil
        configuration.probes = try monitoring.probeConfiguration()
        let conditions = try Settings.waitFor.resolve(self.conditions)
        try configuration.probes.refuseUnsatisfiable(
            conditions, source: Settings.waitFor.source(flagGiven: self.conditions != nil))
        // A reload of the targets file (SIGHUP, or the file changing) must keep every target waited for.
        configuration.probes.targetsFile?.requiredNames = conditions.compactMap { condition in
            if case .target(let name) = condition { name } else { nil }
        }
        let seconds = try Settings.waitTimeout.resolve(timeout)
        configuration.monitor = try monitoring.monitorConfiguration()
        return (configuration, conditions, seconds == 0 ? nil : .seconds(seconds))
    }
}
