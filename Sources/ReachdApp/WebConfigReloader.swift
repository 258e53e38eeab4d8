public import Logging
public import Reachable
public import ReachableServer

/// Reads `--web-config-file` again (SIGHUP, or a change of it or of a file it names) and says
/// what came of it: a log line, `reachd_web_config_last_reload_successful` and, while a reading
/// is refused, a cause of layer `config`. A reading that fails is not applied: the configuration
/// in force stays.
public final class WebConfigReloader: Sendable {
    /// Why the file was read again, for the log.
    public enum Cause: String, Sendable {
        case hangup = "SIGHUP"
        case fileChanged = "file changed"
    }

    public let security: WebSecurity
    private let logger: Logger
    private let metrics: ServerMetrics
    private let monitor: NetworkMonitor

    public init(security: WebSecurity, logger: Logger, metrics: ServerMetrics, monitor: NetworkMonitor) {
        self.security = security
        self.logger = logger
        self.metrics = metrics
        self.monitor = monitor
        // The reading at start was applied (a bad one refused the start).
        metrics.recordWebConfigReload(successful: true)
    }

    /// - Returns: whether the new reading was applied.
    @discardableResult
    public func reload(_ cause: Cause) -> Bool {
        let metadata: Logger.Metadata = ["file": "\(security.path)", "cause": "\(cause.rawValue)"]
        switch security.reload() {
        case .success(let config):
            metrics.recordWebConfigReload(successful: true)
            monitor.setWebConfigRefusal(nil)
            var applied = metadata
            applied["tls"] = .stringConvertible(config.tls != nil)
            applied["users"] = .stringConvertible(config.users.count)
            logger.info("web config applied: new connections use it", metadata: applied)
            return true
        case .failure(let error):
            metrics.recordWebConfigReload(successful: false)
            monitor.setWebConfigRefusal(CauseMemory.RefusedFile(file: security.path, error: "\(error)"))
            var refused = metadata
            refused["error"] = "\(error)"
            logger.error("web config not applied; the previous one stays", metadata: refused)
            return false
        }
    }
}
