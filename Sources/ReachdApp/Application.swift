public import FoundationEssentials
public import Logging
public import Probes
public import Reachable
public import ReachableServer
public import ServiceLifecycle
public import UnixSignals

/// What runs, as ServiceLifecycle services in dependency order — the monitor, the probes, the
/// HTTP server — so shutdown runs in reverse. Built by `buildApplication`, used by `reachd serve`,
/// `reachd wait` (no server), the tests and the fuzz targets alike.
public struct Application: Sendable {
    /// The one monitor every part shares.
    public let monitor: NetworkMonitor
    /// `nil` when nothing is probed.
    public let probes: ProbeService?
    /// `nil` without a server configuration.
    public let server: ReachabilityServer?
    /// In dependency order.
    public let services: [any Service]

    /// Runs every service until SIGTERM or SIGINT (or until the server ends), then shuts them
    /// down in reverse order.
    ///
    /// - Parameters:
    ///   - shutdownTimeout: the longest the graceful shutdown may take, in seconds.
    ///   - signals: what starts the graceful shutdown (tests trigger it themselves).
    public func run(
        logger: Logger, shutdownTimeout: Double, signals: [UnixSignal] = [.sigterm, .sigint]
    ) async throws {
        var configuration = ServiceGroupConfiguration(
            services: services.map { service in
                .init(
                    service: service,
                    successTerminationBehavior: service is ReachabilityServer ? .gracefullyShutdownGroup : .ignore)
            },
            gracefulShutdownSignals: signals,
            logger: logger
        )
        // The server cuts its own stragglers before this; the margin is for the group itself.
        configuration.maximumGracefulShutdownDuration = .seconds(shutdownTimeout + 1)
        try await ServiceGroup(configuration: configuration).run()
    }
}

/// Assembles reachd from its configuration: opens the monitor (its first reading taken), makes
/// the probes (nothing sent until they run), binds the server's socket. A failure at any step
/// releases everything already made — monitor, probe thread, socket — before it is thrown.
///
/// Call on a thread in the network namespace to watch: the monitor's and the route checker's
/// netlink sockets belong to the caller's.
///
/// - Parameters:
///   - metrics: what `/metrics` shows (the server keeps it up to date; the probes report into it).
/// - Throws: `ApplicationError`, naming the step that failed.
public func buildApplication(
    _ configuration: AppConfiguration, logger: Logger, metrics: ServerMetrics = ServerMetrics()
) throws(ApplicationError) -> Application {
    var monitorConfiguration = configuration.monitor
    let started = Date()
    monitorConfiguration.initialTargets = configuration.probes.initialTargets(since: started)
    monitorConfiguration.initialConnectivity = configuration.probes.initialConnectivity(since: started)
    monitorConfiguration.initialDNS = configuration.probes.initialDNS(since: started)

    let monitor: NetworkMonitor
    do {
        monitor = try NetworkMonitor(configuration: monitorConfiguration)
    } catch {
        throw ApplicationError(.monitor, cause: error)
    }
    let probes: ProbeService?
    do {
        // What the probes measure besides the document, for /metrics.
        let events = ProbeEvents(
            targetProbed: { target, duration, failure in
                metrics.recordProbe(target: target, duration: duration, failure: failure)
            },
            nameserverAsked: { server, duration, _ in
                metrics.recordNameserverQuery(server: server, duration: duration)
            })
        probes = try ProbeService.make(
            configuration.probes, monitor: monitor, trustedCertificates: configuration.trustedCertificates,
            events: events)
    } catch {
        monitor.close()
        throw ApplicationError(.probes, cause: error)
    }
    var server: ReachabilityServer?
    if let serverConfiguration = configuration.server {
        do {
            server = try ReachabilityServer(
                monitor: monitor, configuration: serverConfiguration, logger: logger, metrics: metrics)
        } catch {
            probes?.stop()
            monitor.close()
            throw ApplicationError(
                .server(host: serverConfiguration.host, port: serverConfiguration.port), cause: error)
        }
    }
    var services: [any Service] = [MonitorService(monitor: monitor)]
    if let probes { services.append(ProbesService(probes: probes)) }
    if let server { services.append(server) }
    return Application(monitor: monitor, probes: probes, server: server, services: services)
}

/// A step of `buildApplication` failed; everything made before it was released.
public struct ApplicationError: Error, Sendable, CustomStringConvertible {
    public enum Step: Sendable, Equatable {
        case monitor
        case probes
        case server(host: String, port: Int)
    }

    public let step: Step
    public let cause: any Error

    init(_ step: Step, cause: any Error) {
        self.step = step
        self.cause = cause
    }

    public var description: String {
        switch step {
        case .monitor: "cannot observe the network: \(cause)"
        case .probes: "cannot start the probes: \(cause)"
        case .server(let host, let port): "cannot serve on --host \(host) --port \(port): \(cause)"
        }
    }
}
