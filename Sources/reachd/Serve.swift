import ArgumentParser
import CMicroHTTPD
import FoundationEssentials
import Logging
import Reachable
import ReachableServer
import ServiceLifecycle
import UnixSignals

/// `reachd serve` — also what plain `reachd` does: run the monitor and the HTTP server until
/// SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve /status, /events and health endpoints (what plain `reachd` does)."
    )

    @OptionGroup var options: ServeOptions

    func run() async throws {
        try await options.serve()
    }
}

/// Every option of serving, shared by `reachd` and `reachd serve`, so `reachd --help` lists them.
struct ServeOptions: ParsableArguments {
    @OptionGroup var address: ServerAddress

    @Option(help: "Seconds between SSE keep-alive comments (env: REACHD_HEARTBEAT, default: 15).")
    var heartbeat: Double?

    @Option(help: "When /readyz passes: reachable | always (env: REACHD_READY_WHEN, default: reachable).")
    var readyWhen: String?

    @Option(
        help:
            "Comma-separated interface name patterns whose traffic is metered, e.g. 'wwan*,usb*' (env: REACHD_METERED_INTERFACES)."
    )
    var meteredInterfaces: String?

    @Option(help: "Open connections at most, SSE clients included (env: REACHD_MAX_CONNECTIONS, default: 10000).")
    var maxConnections: Int?

    @Option(
        help:
            "Open connections per client address at most; 0 = no limit, right behind a proxy (env: REACHD_MAX_CONNECTIONS_PER_IP, default: 0)."
    )
    var maxConnectionsPerIp: Int?

    @Option(
        help: "Seconds before an idle non-streaming connection is closed (env: REACHD_CONNECTION_TIMEOUT, default: 30)."
    )
    var connectionTimeout: Int?

    @Option(
        help:
            "Bytes of memory per connection; bounds request headers to about half of it, and each SSE stream costs about this much (env: REACHD_CONNECTION_MEMORY, default: 8192)."
    )
    var connectionMemory: Int?

    @Option(help: "Seconds a graceful shutdown may take (env: REACHD_SHUTDOWN_TIMEOUT, default: 10).")
    var shutdownTimeout: Double?

    @Option(help: "HTTP worker threads (env: REACHD_THREADS, default: 2).")
    var threads: Int?

    @Option(
        help:
            "Outside IPv4 address whose route decides ipv4; no packet is sent (env: REACHD_IPV4_DESTINATION, default: 8.8.8.8)."
    )
    var ipv4Destination: String?

    @Option(
        help:
            "Outside IPv6 address whose route decides ipv6; no packet is sent (env: REACHD_IPV6_DESTINATION, default: 2001:4860:4860::8888)."
    )
    var ipv6Destination: String?

    @Option(help: "trace | debug | info | notice | warning | error | critical (env: REACHD_LOG_LEVEL, default: info).")
    var logLevel: String?

    @Option(help: "text | json (env: REACHD_LOG_FORMAT, default: text).")
    var logFormat: String?

    func serve() async throws {
        let logger = try makeLogger()
        let server = try ServerConfiguration.resolve(self, address: address)
        let monitorConfiguration = try monitorConfiguration()
        ProcessLimits.prepare(forConnections: server.maxConnections, logger: logger)

        let monitor: NetworkMonitor
        do {
            monitor = try NetworkMonitor(configuration: monitorConfiguration)
        } catch {
            logger.critical("cannot observe the network: \(error)")
            throw ExitCode(1)
        }
        let service: ReachabilityServer
        do {
            service = try ReachabilityServer(monitor: monitor, configuration: server, logger: logger)
        } catch {
            monitor.close()
            logger.critical("cannot serve: \(error)")
            throw ExitCode(1)
        }
        logger.info(
            "reachd listening",
            metadata: [
                "address": "\(server.host):\(service.port)", "version": "\(Reachd.version)",
                "libmicrohttpd": "\(String(cString: MHD_get_version()))",
                "state": "\(monitor.current.state.rawValue)", "readyWhen": "\(server.readiness.rawValue)",
            ]
        )
        var groupConfiguration = ServiceGroupConfiguration(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        // The server cuts its own stragglers before this; the margin is for the group itself.
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(server.shutdownTimeout + 1)
        let group = ServiceGroup(configuration: groupConfiguration)
        try await group.run()
    }

    private func makeLogger() throws -> Logger {
        let levelName = try Setting.resolve(logLevel, env: "REACHD_LOG_LEVEL", default: "info")
        guard let level = Logger.Level(rawValue: levelName.lowercased()) else {
            throw ValidationError("unknown log level \(levelName)")
        }
        let format = try Setting.resolve(logFormat, env: "REACHD_LOG_FORMAT", default: "text")
        guard format == "text" || format == "json" else { throw ValidationError("--log-format is text or json") }
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                format == "json" ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "reachd")
    }

    private func monitorConfiguration() throws -> MonitorConfiguration {
        var configuration = MonitorConfiguration()
        configuration.ipv4Destination = try Setting.resolve(
            ipv4Destination, env: "REACHD_IPV4_DESTINATION", default: configuration.ipv4Destination
        )
        configuration.ipv6Destination = try Setting.resolve(
            ipv6Destination, env: "REACHD_IPV6_DESTINATION", default: configuration.ipv6Destination
        )
        for destination in [configuration.ipv4Destination, configuration.ipv6Destination]
        where IPAddressText.parse(destination) == nil {
            throw ValidationError("\(destination) is not an IP address")
        }
        let patterns = try Setting.resolve(meteredInterfaces, env: "REACHD_METERED_INTERFACES", default: "")
        configuration.meteredInterfacePatterns = patterns.split(separator: ",").map(\.trimmed).filter { !$0.isEmpty }
        return configuration
    }
}
