import ArgumentParser
import Logging
import Probes

/// The options of what observes and probes the network — the monitor, the targets, the
/// connectivity check, the DNS check — and of the log: shared by serving (`ServeOptions`) and `reachd wait`,
/// so an option added here applies to both. Each is declared in `Settings`; the configurations
/// are built from them in `ServeOptions.swift` (`probeConfiguration()`, `monitorConfiguration()`).
struct MonitoringOptions: ParsableArguments {
    @Option(Settings.meteredInterfaces) var meteredInterfaces: [String]?
    @Option(Settings.ipv4Destination) var ipv4Destination: String?
    @Option(Settings.ipv6Destination) var ipv6Destination: String?
    @Option(Settings.targets) var targets: [TargetSpec] = []
    @Option(Settings.targetInterval) var targetInterval: Double?
    @Option(Settings.targetTimeout) var targetTimeout: Double?
    @Option(Settings.targetFailures) var targetFailures: Int?
    @Option(Settings.icmpCount) var icmpCount: Int?
    @Option(Settings.qualityWindow) var qualityWindow: Int?
    @Option(Settings.maxLoss) var maxLoss: Double?
    @Option(Settings.maxRTT) var maxRTT: Double?
    @Option(Settings.connectivityURL) var connectivityURL: String?
    @Option(Settings.connectivityResponse) var connectivityResponse: String?
    @Option(Settings.connectivityInterval) var connectivityInterval: Double?
    @Option(Settings.connectivityTimeout) var connectivityTimeout: Double?
    @Flag(Settings.perUplink) var perUplink = false
    @Option(Settings.proxy) var proxy: String?
    @Option(Settings.targetSuccesses) var targetSuccesses: Int?
    @Option(Settings.targetsFile) var targetsFile: String?
    @Option(Settings.dnsCheck) var dnsCheck: String?
    @Option(Settings.dnsInterval) var dnsInterval: Double?
    @Option(Settings.dnsTimeout) var dnsTimeout: Double?
    @Option(Settings.dnsFailures) var dnsFailures: Int?
    @Option(Settings.logLevel) var logLevel: Logger.Level?
    @Option(Settings.logFormat) var logFormat: LogFormat?
}

extension MonitoringOptions {
    /// Bootstraps logging (to stderr) as `--log-level` and `--log-format` say.
    func makeLogger() throws -> Logger {
        let level = try Settings.logLevel.resolve(logLevel)
        let format = try Settings.logFormat.resolve(logFormat)
        LoggingSystem.bootstrap { label in
            var handler = LineLogHandler(label: label, format: format)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "reachd")
    }
}
