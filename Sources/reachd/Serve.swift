import ArgumentParser
import FoundationEssentials
import Logging
import Probes
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

extension ServeOptions {
    /// Runs the monitor and the HTTP server until SIGTERM or SIGINT.
    func serve() async throws {
        let logger = try makeLogger()
        // The probes' settings first: `--ready-when` is checked against their targets.
        let probes = try probeConfiguration()
        let server = try serverConfiguration(probes: probes)
        var monitorConfiguration = try monitorConfiguration()
        let started = Date()
        monitorConfiguration.initialTargets = probes.initialTargets(since: started)
        monitorConfiguration.initialConnectivity = probes.initialConnectivity(since: started)
        monitorConfiguration.initialDNS = probes.initialDNS(since: started)
        ProcessLimits.prepare(forConnections: server.maxConnections, logger: logger)

        let monitor: NetworkMonitor
        do {
            monitor = try NetworkMonitor(configuration: monitorConfiguration)
        } catch {
            logger.critical("cannot observe the network: \(error)")
            throw ExitCode(1)
        }
        let metrics = ServerMetrics(version: Reachd.version, configured: started)
        let service: ReachabilityServer
        do {
            service = try ReachabilityServer(monitor: monitor, configuration: server, logger: logger, metrics: metrics)
        } catch {
            monitor.close()
            logger.critical("cannot serve on --host \(server.host) --port \(server.port): \(error)")
            throw ExitCode(1)
        }
        // What the probes measure besides the document, for /metrics.
        let events = ProbeEvents(
            targetProbed: { target, duration, failure in
                metrics.recordProbe(target: target, duration: duration, failure: failure)
            },
            nameserverAsked: { server, duration, _ in
                metrics.recordNameserverQuery(server: server, duration: duration)
            })
        // Outbound probes only when targets, a connectivity URL or a DNS check are configured.
        let prober: ProbeService?
        do {
            // TODO(issue 18, probe side): hand `events` to the service whole once it takes them;
            // until then a probe reports only its duration, so no failure is counted by reason.
            prober = try ProbeService.start(probes, monitor: monitor) { target, duration in
                events.targetProbed(target, duration, nil)
            }
        } catch {
            monitor.close()
            logger.critical("cannot start the probes: \(error)")
            throw ExitCode(1)
        }
        defer { prober?.stop() }
        logger.info(
            "reachd listening",
            metadata: [
                "address": "\(server.host):\(service.port)", "version": "\(Reachd.version)",
                "libmicrohttpd": "\(EngineVersion.libmicrohttpd)",
                "state": "\(monitor.current.state.rawValue)", "readyWhen": "\(server.readiness.commaSeparated)",
                "targets": "\(probes.targets.count)",
                "connectivity": "\(probes.connectivity?.url.text ?? "disabled")",
                "dns": "\(probes.dnsCheck ?? "disabled")",
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
        let level = try Settings.logLevel.resolve(logLevel)
        let format = try Settings.logFormat.resolve(logFormat)
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                switch format {
                case .json: JSONLogHandler(label: label)
                case .text: StreamLogHandler.standardError(label: label)
                }
            handler.logLevel = level
            return handler
        }
        return Logger(label: "reachd")
    }
}
