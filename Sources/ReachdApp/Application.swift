import FoundationEssentials
public import Logging
public import Probes
public import Reachable
public import ReachableServer
public import ServiceLifecycle

/// What runs, as ServiceLifecycle services in dependency order — the monitor, the probes, the
/// HTTP server — so shutdown runs in reverse. Built by `buildApplication`, used by `reachd serve`,
/// `reachd wait` (no server), the tests and the fuzz targets alike.
public struct Application: Sendable {
    /// The one monitor every part shares.
    public let monitor: NetworkMonitor
    /// `nil` when nothing is probed.
    public let probes: ProbeSources?
    /// `nil` without a server configuration.
    public let server: ReachabilityServer?
    /// `nil` without `--web-config-file`.
    public let webConfig: WebConfigReloader?
    /// In dependency order.
    public let services: [any Service]

    /// Runs every service until `requests` asks for the graceful shutdown (SIGTERM or SIGINT), the
    /// server ends, or `finisher` does; then shuts them down in reverse order. Each reload request
    /// (SIGHUP) meanwhile reads `--targets-file` and `--web-config-file` again (`HangupService`).
    ///
    /// - Parameters:
    ///   - shutdownTimeout: the longest the graceful shutdown may take, in seconds.
    ///   - requests: where shutdown and reload requests come from (`ProcessSignals.claim()` for
    ///     the process's signals); `nil`: none but the group's own graceful shutdown (tests).
    ///   - finisher: a service run last whose end shuts the group down (`reachd wait`'s
    ///     `ConditionWait`); the first stopped on a shutdown request.
    public func run(
        logger: Logger, shutdownTimeout: Double, requests: ControlRequests? = nil,
        until finisher: (any Service)? = nil
    ) async throws {
        var running = services
        if let requests {
            // Before the server: it stops first, and a SIGHUP while it drains is still harmless.
            let hangup = HangupService(reloads: requests.reloads, probes: probes, webConfig: webConfig, logger: logger)
            running.insert(hangup, at: server == nil ? running.endIndex : running.endIndex - 1)
        }
        if let webConfig {
            running.insert(WebConfigWatchService(reloader: webConfig), at: running.endIndex - 1)
        }
        let ending: ServiceGroupConfiguration.ServiceConfiguration? = finisher.map {
            .init(service: $0, successTerminationBehavior: .gracefullyShutdownGroup)
        }
        // No signals of its own: ServiceGroup's are libdispatch signal sources, which can lose one
        // (`ProcessSignals`).
        var configuration = ServiceGroupConfiguration(
            services: running.map { service in
                .init(
                    service: service,
                    successTerminationBehavior: service is ReachabilityServer ? .gracefullyShutdownGroup : .ignore)
            } + (ending.map { [$0] } ?? []),
            logger: logger
        )
        // The server cuts its own stragglers before this; the margin is for the group itself.
        configuration.maximumGracefulShutdownDuration = .seconds(shutdownTimeout + 1)
        let group = ServiceGroup(configuration: configuration)
        guard let requests else { return try await group.run() }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            // The group's own graceful shutdown, as its signal handling started it: the same order
            // and log lines. One asked for before the group runs is kept by the group until it does.
            tasks.addTask {
                for await _ in requests.shutdowns { await group.triggerGracefulShutdown() }
            }
            defer { tasks.cancelAll() }
            try await group.run()
        }
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
    monitorConfiguration.initialTargetsFile = configuration.probes.initialTargetsFile(since: started)
    monitorConfiguration.initialConnectivity = configuration.probes.initialConnectivity(since: started)
    monitorConfiguration.initialDNS = configuration.probes.initialDNS(since: started)
    // --per-uplink needs every uplink found on every reading; nothing else does.
    monitorConfiguration.discoversUplinks = configuration.probes.perUplink && configuration.probes.connectivity != nil

    let monitor: NetworkMonitor
    do {
        monitor = try NetworkMonitor(configuration: monitorConfiguration)
    } catch {
        throw ApplicationError(.monitor, cause: error)
    }
    // The command line (and the targets file in it) was read and applied.
    metrics.recordConfigReload(successful: true, at: started)
    let probes: ProbeSources?
    do {
        // What the probes measure besides the document, for /metrics.
        let events = ProbeEvents(
            targetProbed: { target, duration, failure in
                metrics.recordProbe(target: target, duration: duration, failure: failure)
            },
            targetMeasured: { target, family, quality in
                metrics.recordQuality(
                    target: target, family: family, roundTrips: quality.roundTrips, echoesSent: quality.echoesSent,
                    echoesAnswered: quality.echoesAnswered, pathMTU: quality.pathMTU?.bytes)
            },
            nameserverAsked: { server, duration, _ in
                metrics.recordNameserverQuery(server: server, duration: duration)
            },
            resolverProblem: { message in
                logger.warning("the resolver cannot use a nameserver", metadata: ["error": "\(message)"])
            })
        probes = try ProbeSources.make(
            configuration.probes, monitor: monitor, trustedCertificates: configuration.trustedCertificates,
            events: events,
            targetsReloaded: { reload in
                logTargetsReload(reload, logger: logger)
                metrics.recordConfigReload(successful: (try? reload.outcome.get()) != nil, at: reload.at)
            })
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
    if let probes { services.append(ProbeSourcesService(probes: probes)) }
    if let server { services.append(server) }
    let webConfig = configuration.server?.security.map {
        WebConfigReloader(security: $0, logger: logger, metrics: metrics, monitor: monitor)
    }
    return Application(monitor: monitor, probes: probes, server: server, webConfig: webConfig, services: services)
}

/// One line per reading of `--targets-file`: what changed, or why it was not applied (the error
/// names the line) and that the previous targets stay.
private func logTargetsReload(_ reload: TargetsReload, logger: Logger) {
    var metadata: Logger.Metadata = ["file": "\(reload.path)", "cause": "\(reload.cause.rawValue)"]
    switch reload.outcome {
    case .success(let change):
        metadata["added"] = .array(change.added.map { .string($0) })
        metadata["removed"] = .array(change.removed.map { .string($0) })
        metadata["changed"] = .array(change.changed.map { .string($0) })
        metadata["kept"] = .stringConvertible(change.kept.count)
        logger.info("targets file applied", metadata: metadata)
    case .failure(let error):
        metadata["error"] = "\(error)"
        if let line = error.line { metadata["line"] = .stringConvertible(line) }
        logger.error("targets file not applied; the previous targets stay", metadata: metadata)
    }
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
