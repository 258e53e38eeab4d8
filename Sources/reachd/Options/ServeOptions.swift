import ArgumentParser
import Logging
import Reachable
import ReachableServer

/// Every option of serving, shared by `reachd` and `reachd serve`, so `reachd --help` lists them.
/// Each is declared in `Settings`; here it only gets its place in the command line.
struct ServeOptions: ParsableArguments {
    @OptionGroup var address: ServerAddress

    @Option(Settings.heartbeat) var heartbeat: Double?
    @Option(Settings.readyWhen) var readyWhen: [ReadinessCondition]?
    @Option(Settings.meteredInterfaces) var meteredInterfaces: [String]?
    @Option(Settings.maxConnections) var maxConnections: Int?
    @Option(Settings.maxConnectionsPerIP) var maxConnectionsPerIP: Int?
    @Option(Settings.connectionTimeout) var connectionTimeout: Int?
    @Option(Settings.connectionMemory) var connectionMemory: Int?
    @Option(Settings.shutdownTimeout) var shutdownTimeout: Double?
    @Option(Settings.threads) var threads: Int?
    @Option(Settings.ipv4Destination) var ipv4Destination: String?
    @Option(Settings.ipv6Destination) var ipv6Destination: String?
    @Option(Settings.logLevel) var logLevel: Logger.Level?
    @Option(Settings.logFormat) var logFormat: LogFormat?

    /// The server's settings from the flags, the environment and the defaults, validated.
    func serverConfiguration() throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.host = try address.serverHost()
        configuration.port = try address.resolvedPort()
        configuration.heartbeat = try Settings.heartbeat.resolve(heartbeat)
        configuration.readiness = try Settings.readyWhen.resolve(readyWhen)
        configuration.maxConnections = try Settings.maxConnections.resolve(maxConnections)
        configuration.maxConnectionsPerIP = try Settings.maxConnectionsPerIP.resolve(maxConnectionsPerIP)
        configuration.connectionTimeout = try Settings.connectionTimeout.resolve(connectionTimeout)
        configuration.connectionMemoryLimit = try Settings.connectionMemory.resolve(connectionMemory)
        configuration.shutdownTimeout = try Settings.shutdownTimeout.resolve(shutdownTimeout)
        configuration.threads = try Settings.threads.resolve(threads)
        return configuration
    }

    /// The monitor's settings, likewise.
    func monitorConfiguration() throws -> MonitorConfiguration {
        var configuration = MonitorConfiguration()
        configuration.ipv4Destination = try Settings.ipv4Destination.resolve(ipv4Destination)
        configuration.ipv6Destination = try Settings.ipv6Destination.resolve(ipv6Destination)
        configuration.meteredInterfacePatterns = try Settings.meteredInterfaces.resolve(meteredInterfaces)
        return configuration
    }
}
