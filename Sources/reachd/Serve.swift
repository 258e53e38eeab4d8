import ArgumentParser
import Logging
import Probes
import Reachable
import ReachableServer
import ReachdApp

/// `reachd serve` — also what plain `reachd` does: run the monitor and the HTTP server until
/// SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand, ClaimsSignals {
    static let configuration = CommandConfiguration(
        abstract: "Serve /status, /events and health endpoints (what plain `reachd` does)."
    )

    @OptionGroup var options: ServeOptions

    func run() async throws {
        try await options.serve()
    }
}

/// Plain `reachd` serves.
extension Reachd: ClaimsSignals {}

extension ServeOptions {
    /// Runs the monitor, the probes and the HTTP server until SIGTERM or SIGINT.
    func serve() async throws {
        // First: a SIGTERM held while the command line was read, or sent while the rest starts, is
        // answered once the group runs; a SIGHUP is a reload, never the end of the process.
        let requests = ProcessSignals.claim()
        LargeDocuments.applyAllocatorPolicy()
        let logger = try monitoring.makeLogger()
        guard let (application, shutdownTimeout) = try start(logger: logger) else { return }
        try await application.run(logger: logger, shutdownTimeout: shutdownTimeout, requests: requests)
    }

    /// Builds the application from the configuration and says where it listens. The configuration
    /// is not kept while it runs: its parsed targets file, megabytes for a fleet, is the books'.
    private func start(logger: Logger) throws -> (Application, shutdownTimeout: Double)? {
        let configuration = try appConfiguration()
        guard let server = configuration.server else { return nil }
        ProcessLimits.prepare(forConnections: server.maxConnections, logger: logger)

        let application: Application
        do {
            application = try buildApplication(
                configuration, logger: logger, metrics: ServerMetrics(version: Reachd.version))
        } catch {
            logger.critical("\(error)")
            throw ExitCode(1)
        }
        let probes = configuration.probes
        logger.info(
            "reachd listening",
            metadata: [
                "address": "\(server.host):\(application.server?.port ?? server.port)",
                "version": "\(Reachd.version)", "libmicrohttpd": "\(MicroHTTPDVersion.libmicrohttpd)",
                "state": "\(application.monitor.current.state.rawValue)",
                "readyWhen": "\(server.readiness.commaSeparated)",
                "targets": .stringConvertible(probes.targets.count),
                "targetsFile": probes.targetsFile.map { .string($0.path) } ?? LogFields.null,
                "connectivity": probes.connectivity.map { .string($0.url.text) } ?? LogFields.null,
                "dnsCheck": probes.dnsCheck.map { .string($0) } ?? LogFields.null,
                // Which proxy the http(s):// checks take, never with its credentials.
                "proxy": "\(probes.proxies)",
                // Whether the web config took: HTTPS only, and how many basic_auth_users.
                "tls": "\(server.security?.servesTLS == true ? "on" : "off")",
                "users": .stringConvertible(server.security?.config.users.count ?? 0),
            ]
        )
        return (application, server.shutdownTimeout)
    }

    /// The whole configuration from the flags, the environment and the defaults, validated: a
    /// usage error is refused here, before anything runs.
    func appConfiguration() throws -> AppConfiguration {
        var configuration = AppConfiguration()
        // The probes' settings first: `--ready-when` is checked against their targets.
        configuration.probes = try monitoring.probeConfiguration()
        configuration.server = try serverConfiguration(probes: configuration.probes)
        // The readiness list is fixed for the process: a reload must keep every target it names.
        configuration.probes.targetsFile?.requiredNames =
            configuration.server?.readiness.compactMap { condition in
                if case .target(let name) = condition { name } else { nil }
            } ?? []
        configuration.monitor = try monitoring.monitorConfiguration()
        return configuration
    }
}
